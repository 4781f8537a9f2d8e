package skillshiftscore

import (
	"fmt"

	"github.com/crlbatch/crlbatch/protocol/skillshift"
	"github.com/crlbatch/crlbatch/scoring"
)

// EncodeResult encodes a scored run's Result (a *skillshift.RunResult) and Figure
// (scoring.ScoredCodec, for Beam).
func (j *job) EncodeResult(s *scoring.Scored) (result, figure []byte, err error) {
	if s.Result != nil {
		if _, ok := s.Result.(*skillshift.RunResult); !ok {
			return nil, nil, fmt.Errorf("skillshift: cannot encode a result %T", s.Result)
		}
	}
	if result, err = scoring.EncodeJSON(s.Result); err != nil {
		return nil, nil, err
	}
	if s.Figure != nil {
		return nil, nil, fmt.Errorf("skillshift: cannot encode a figure %T", s.Figure)
	}
	return result, nil, nil
}

// DecodeResult reads back what EncodeResult wrote.
func (j *job) DecodeResult(result, figure []byte, s *scoring.Scored) error {
	if result != nil {
		r := new(skillshift.RunResult)
		if err := scoring.DecodeJSON(result, r); err != nil {
			return err
		}
		s.Result = r
	}
	if figure != nil {
		return fmt.Errorf("skillshift: a scored run with a figure")
	}
	return nil
}

var _ scoring.ScoredCodec = (*job)(nil)
