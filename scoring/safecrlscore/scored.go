package safecrlscore

import (
	"github.com/crlbatch/crlbatch/protocol/safecrl"
	"github.com/crlbatch/crlbatch/scoring"
)

// EncodeResult encodes a scored run's Result (a *safecrl.RunResult); safecrl
// draws no per-run Figure (scoring.ScoredCodec, for Beam).
func (j *job) EncodeResult(s *scoring.Scored) (result, figure []byte, err error) {
	return scoring.EncodeResultOf[safecrl.RunResult]("safecrl", s)
}

// DecodeResult reads back what EncodeResult wrote.
func (j *job) DecodeResult(result, figure []byte, s *scoring.Scored) error {
	return scoring.DecodeResultOf[safecrl.RunResult]("safecrl", result, figure, s)
}

var _ scoring.ScoredCodec = (*job)(nil)
