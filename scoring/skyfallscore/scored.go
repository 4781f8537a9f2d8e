package skyfallscore

import (
	"fmt"

	"github.com/crlbatch/crlbatch/figures"
	"github.com/crlbatch/crlbatch/protocol/skyfall"
	"github.com/crlbatch/crlbatch/scoring"
)

// EncodeResult encodes a scored run's Result (a *skyfall.RunResult) and Figure
// (a figures.Curve) exactly (scoring.AppendExact; scoring.ScoredCodec, for
// --cache's run entries and Beam).
func (j *job) EncodeResult(s *scoring.Scored) (result, figure []byte, err error) {
	if s.Result != nil {
		if _, ok := s.Result.(*skyfall.RunResult); !ok {
			return nil, nil, fmt.Errorf("skyfall: cannot encode a result %T", s.Result)
		}
	}
	if s.Result != nil {
		if result, err = scoring.AppendExact(nil, s.Result); err != nil {
			return nil, nil, err
		}
	}
	if s.Figure != nil {
		c, ok := s.Figure.(figures.Curve)
		if !ok {
			return nil, nil, fmt.Errorf("skyfall: cannot encode a figure %T", s.Figure)
		}
		if figure, err = scoring.AppendExact(nil, &c); err != nil {
			return nil, nil, err
		}
	}
	return result, figure, nil
}

// DecodeResult reads back what EncodeResult wrote.
func (j *job) DecodeResult(result, figure []byte, s *scoring.Scored) error {
	if result != nil {
		r := new(skyfall.RunResult)
		if err := scoring.DecodeExact(result, r); err != nil {
			return err
		}
		s.Result = r
	}
	if figure != nil {
		var c figures.Curve
		if err := scoring.DecodeExact(figure, &c); err != nil {
			return err
		}
		s.Figure = c
	}
	return nil
}

var _ scoring.ScoredCodec = (*job)(nil)
