package contilabscore

import (
	"github.com/crlbatch/crlbatch/protocol/contilab"
	"github.com/crlbatch/crlbatch/scoring"
)

// EncodeResult encodes a scored run's Result (a *contilab.RunResult); contilab
// draws no per-run Figure (scoring.ScoredCodec, for Beam).
func (j *job) EncodeResult(s *scoring.Scored) (result, figure []byte, err error) {
	return scoring.EncodeResultOf[contilab.RunResult]("contilab", s)
}

// DecodeResult reads back what EncodeResult wrote.
func (j *job) DecodeResult(result, figure []byte, s *scoring.Scored) error {
	return scoring.DecodeResultOf[contilab.RunResult]("contilab", result, figure, s)
}

var _ scoring.ScoredCodec = (*job)(nil)
