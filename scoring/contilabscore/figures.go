package contilabscore

import (
	"github.com/crlbatch/crlbatch/figures"
	"github.com/crlbatch/crlbatch/scoring"
)

// headlines are contilab's metrics drawn as interval estimates.
var headlines = []figures.Headline{
	{Metric: "acc", Label: "ACC (final average accuracy)"},
	{Metric: "aia", Label: "AIA"},
	{Metric: "bwt", Label: "BWT"},
	{Metric: "fwt", Label: "FWT"},
	{Metric: "forgetting", Label: "Forgetting"},
}

// Figures draws the interval estimates and the probability of
// improvement.
func (j *job) Figures(res *scoring.Results) (*scoring.Drawn, error) {
	return &scoring.Drawn{Figures: scoring.StandardFigures(res, headlines)}, nil
}
