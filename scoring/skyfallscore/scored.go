package skyfallscore

import (
	"fmt"

	"github.com/crlbatch/crlbatch/figures"
	"github.com/crlbatch/crlbatch/protocol/skyfall"
	"github.com/crlbatch/crlbatch/scoring"
)

// EncodeResult encodes a scored run's Result (a *skyfall.RunResult) and Figure
// (scoring.ScoredCodec, for Beam).
func (j *job) EncodeResult(s *scoring.Scored) (result, figure []byte, err error) {
	if s.Result != nil {
		if _, ok := s.Result.(*skyfall.RunResult); !ok {
			return nil, nil, fmt.Errorf("skyfall: cannot encode a result %T", s.Result)
		}
	}
	if result, err = scoring.EncodeJSON(s.Result); err != nil {
		return nil, nil, err
	}
	if figure, err = scoring.EncodeJSON(s.Figure); err != nil {
		return nil, nil, err
	}
	return result, figure, nil
}

// DecodeResult reads back what EncodeResult wrote.
func (j *job) DecodeResult(result, figure []byte, s *scoring.Scored) error {
	if result != nil {
		r := new(skyfall.RunResult)
		if err := scoring.DecodeJSON(result, r); err != nil {
			return err
		}
		s.Result = r
	}
	if figure != nil {
		var c figures.Curve
		if err := scoring.DecodeJSON(figure, &c); err != nil {
			return err
		}
		s.Figure = c
	}
	return nil
}

var _ scoring.ScoredCodec = (*job)(nil)
