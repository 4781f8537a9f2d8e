package skyfallscore

import (
	"github.com/crlbatch/crlbatch/protocol"

	"github.com/crlbatch/crlbatch/protocol/family"
	"github.com/crlbatch/crlbatch/protocol/skyfall"
	"github.com/crlbatch/crlbatch/writers"
)

// reportRows are the fifteen rows of the seed's table, in its order.
var reportRows = []writers.ReportRow{
	{Title: "Per-configuration reward", Metric: "per_configuration_reward", PerLabel: true},
	{Title: "Adaptation speed", Metric: "adaptation_speed", PerLabel: true},
	{Title: "Forgetting", Metric: "forgetting", PerLabel: true},
	{Title: "Recovery time", Metric: "recovery_time", PerLabel: true},
	{Title: "Stability (variance)", Metric: "stability_variance", PerLabel: true},
	{Title: "Performance gap", Metric: "performance_gap", PerLabel: true},
	{Title: "Zero-shot reward", Metric: "zero_shot_reward", PerLabel: true},
	{Title: "Regret", Metric: "regret", PerLabel: false},
	{Title: "Effective rank", Metric: "effective_rank", PerLabel: true},
	{Title: "Settled reward", Metric: "settled_reward", PerLabel: true},
	{Title: "Settled reward (policy)", Metric: "settled_reward_policy", PerLabel: true},
	{Title: "Return (discounted)", Metric: "return_discounted", PerLabel: false},
	{Title: "Return (undiscounted)", Metric: "return_undiscounted", PerLabel: false},
	{Title: "Invalid-action rate", Metric: "invalid_action_rate", PerLabel: false},
	{Title: "Solve rate", Metric: "solve_rate", PerLabel: false},
}

// titles name the metrics of families.parquet that have no row above.
var titles = map[string]string{
	"effective_rank_run": "Effective rank (run)",
	"n_steps":            "Steps",
	"n_intervals":        "Intervals",
	"n_shifts":           "Shifts",
	"n_labels":           "Labels",
}

// report renders report.md for skyfall. notes are the job's notes in
// order (they follow the family notes); seedReasons says why runs have no
// seed value (scoring.Results.SeedReasons).
func report(h writers.ReportHeader, o *output, notes []string, seedReasons func(family, metric string) []string) string {
	byFamily := map[string][]*skyfall.RunResult{}
	for i := range o.Runs {
		r := &o.Runs[i]
		if !r.Excluded {
			byFamily[r.Family] = append(byFamily[r.Family], r.Result)
		}
	}
	// byKey[family][label] are the family's results of that label, in run
	// order then label order, built on first use: KeyReasons is asked for
	// every absent cell, and a scan of every label of every run per cell
	// cost the square of the labels (100,000 labels per run: minutes).
	type labelRef struct {
		r *skyfall.RunResult
		i int
	}
	byKey := map[string]map[string][]labelRef{}
	metricIndex := map[string]int{}
	for i, m := range skyfall.LabelMetrics {
		metricIndex[m] = i
	}
	rep := &writers.Report{
		Header:          h,
		Rows:            reportRows,
		KeyNoun:         "label",
		Families:        o.Families,
		Titles:          titles,
		AdvantageMetric: "adaptation_speed",
		Notes:           notes,
		SeedReasons:     seedReasons,
		KeyReasons: func(fam, key, metric string) []string {
			idx, ok := byKey[fam]
			if !ok {
				idx = map[string][]labelRef{}
				for _, r := range byFamily[fam] {
					for i := range r.Labels {
						k := r.Labels[i].Label
						idx[k] = append(idx[k], labelRef{r, i})
					}
				}
				byKey[fam] = idx
			}
			return writers.AbsentReasons(func(add func(protocol.Value)) {
				for _, l := range idx[key] {
					v, _ := l.r.Labels[l.i].Metric(metric)
					add(v)
				}
			})
		},
		Columns: func(fam string) ([]string, func(k int, metric string) family.Cell) {
			sum := skyfall.SummarizeLabels(byFamily[fam])
			return sum.Keys, func(k int, metric string) family.Cell {
				return sum.Cells[k][metricIndex[metric]]
			}
		},
	}
	return rep.Render()
}
