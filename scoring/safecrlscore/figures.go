package safecrlscore

import (
	"github.com/crlbatch/crlbatch/figures"
	"github.com/crlbatch/crlbatch/scoring"
)

// headlines are safecrl's metrics drawn as interval estimates.
var headlines = []figures.Headline{
	{Metric: "final_task_reward", Label: "Final-task reward"},
	{Metric: "total_cost", Label: "Total cost"},
	{Metric: "forgetting", Label: "Forgetting"},
	{Metric: "success_rate", Label: "Success rate"},
}

// Figures draws the interval estimates, the probability of improvement,
// and reward against cost per family.
func (j *job) Figures(res *scoring.Results) (*scoring.Drawn, error) {
	d := &scoring.Drawn{Figures: scoring.StandardFigures(res, headlines)}
	var pts []figures.RunPoint
	for _, r := range res.Runs {
		if !r.Excluded {
			pts = append(pts, figures.RunPoint{Family: r.Family, Run: r.Key, X: r.Value("total_cost"), Y: r.Value("final_task_reward")})
		}
	}
	d.Figures = append(d.Figures, figures.Tradeoff("reward-vs-cost", "Reward against cost", pts, "total cost (seed value: mean over tasks)", "final-task reward (seed value)"))
	return d, nil
}
