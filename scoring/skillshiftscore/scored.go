package skillshiftscore

import (
	"github.com/crlbatch/crlbatch/protocol/skillshift"
	"github.com/crlbatch/crlbatch/scoring"
)

// EncodeResult encodes a scored run's Result (a *skillshift.RunResult); skillshift
// draws no per-run Figure (scoring.ScoredCodec, for Beam).
func (j *job) EncodeResult(s *scoring.Scored) (result, figure []byte, err error) {
	return scoring.EncodeResultOf[skillshift.RunResult]("skillshift", s)
}

// DecodeResult reads back what EncodeResult wrote.
func (j *job) DecodeResult(result, figure []byte, s *scoring.Scored) error {
	return scoring.DecodeResultOf[skillshift.RunResult]("skillshift", result, figure, s)
}

var _ scoring.ScoredCodec = (*job)(nil)
