package skillshiftscore

import (
	"github.com/crlbatch/crlbatch/figures"
	"github.com/crlbatch/crlbatch/protocol/skillshift"
	"github.com/crlbatch/crlbatch/scoring"
)

// headlines are skillshift's metrics drawn as interval estimates.
var headlines = []figures.Headline{
	{Metric: skillshift.SR, Label: "SR (success rate)"},
	{Metric: skillshift.AS, Label: "AS"},
	{Metric: skillshift.ASC, Label: "ASC"},
	{Metric: skillshift.SFR, Label: "SFR"},
}

// Figures draws the interval estimates and the probability of
// improvement.
func (j *job) Figures(res *scoring.Results) (*scoring.Drawn, error) {
	return &scoring.Drawn{Figures: scoring.StandardFigures(res, headlines)}, nil
}
