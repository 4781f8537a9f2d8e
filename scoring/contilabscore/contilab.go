// Package contilabscore is the contilab protocol (PROTOCOLS 4: accuracy
// matrices of continual supervised learning) on the scoring seam: its row
// fields and identity, its flags (--window-fraction, --rank-metric), how its
// rows become a contilab.Run, how a run is scored, its metrics, tables
// (runs, matrix, families, benchmarks) and report. It registers itself
// under the name "contilab"; import it for its side effect:
//
//	import _ "github.com/crlbatch/crlbatch/scoring/contilabscore"
package contilabscore

import (
	"fmt"
	"math"

	"github.com/crlbatch/crlbatch/protocol"
	"github.com/crlbatch/crlbatch/protocol/contilab"
	"github.com/crlbatch/crlbatch/readers"
	"github.com/crlbatch/crlbatch/scoring"
	"github.com/crlbatch/crlbatch/scoring/records"
)

// Name is the protocol's --protocol value.
const Name = "contilab"

// The protocol's flags.
const (
	// FlagWindowFraction is windowed forgetting's window as a share of a
	// task's length.
	FlagWindowFraction = "window-fraction"
	// FlagRankMetric is the metric ranked across benchmarks.
	FlagRankMetric = "rank-metric"
)

func init() { scoring.Register(Protocol{}) }

// Protocol is contilab.
type Protocol struct{}

// Name returns "contilab".
func (Protocol) Name() string { return Name }

// rowFields are the fields of a row (PROTOCOLS 4), never run metadata.
var rowFields = []scoring.Field{
	{Name: "kind", Type: "string", Required: true, Doc: "matrix, initial, joint, stream, curve or diag"},
	{Name: "after_task", Type: "integer", Doc: "matrix: the task just learned (0-based)"},
	{Name: "eval_task", Type: "integer", Doc: "matrix, initial, joint, stream: the task evaluated"},
	{Name: "acc", Type: "number", Doc: "the accuracy (every kind but diag; not negative)"},
	{Name: "step", Type: "integer", Doc: "stream: the training step"},
	{Name: "train_task", Type: "integer", Doc: "stream: the task being trained"},
	{Name: "task", Type: "integer", Doc: "curve, diag: the task"},
	{Name: "batch", Type: "integer", Doc: "curve: the batch of the learning curve"},
	{Name: "name", Type: "string", Doc: "diag: the diagnostic's name"},
	{Name: "value", Type: "number", Doc: "diag: the diagnostic's value"},
}

// Describe declares contilab's rows, identity, flags and outputs.
func (Protocol) Describe() scoring.Description {
	return scoring.Description{
		Summary:  "accuracy matrices",
		Rows:     rowFields,
		Identity: []string{"run_id", "seed", "algorithm_id", "policy_id"},
		GroupBy:  []string{"algorithm_id"},
		Flags: []scoring.Flag{
			{Name: FlagWindowFraction, Kind: scoring.FlagFloat, Value: contilab.DefaultWindowFraction, Category: "Other protocols",
				Usage: "windowed forgetting's window as a share of a task's length"},
			{Name: FlagRankMetric, Kind: scoring.FlagString, Value: contilab.DefaultRankMetric, Category: "Other protocols",
				Usage: "the `METRIC` ranked across benchmarks when the runs carry several benchmark values"},
		},
		Outputs: []string{"runs.parquet", "matrix.parquet", "families.parquet", "benchmarks.parquet"},
	}
}

// New binds --window-fraction, --rank-metric and the reader settings into
// a job.
func (p Protocol) New(flags scoring.Flags, env scoring.Env) (scoring.Job, error) {
	params := contilab.DefaultParams()
	wf := flags.Float(FlagWindowFraction)
	if flags.IsSet(FlagWindowFraction) && !(wf > 0 && wf <= 1) {
		return nil, scoring.Usagef("--window-fraction %v: want 0 < x ≤ 1", wf)
	}
	if wf > 0 && !math.IsNaN(wf) {
		params.WindowFraction = wf
	}
	if err := params.Check(); err != nil {
		return nil, &scoring.UsageError{Err: fmt.Errorf("--window-fraction: %w", err)}
	}
	rank := flags.String(FlagRankMetric)
	if rank == "" {
		rank = contilab.DefaultRankMetric
	}
	hib, ok := contilab.HigherIsBetter(rank)
	if !ok {
		return nil, scoring.Usagef("--rank-metric %q: want a metric with a better direction (acc, aia, bwt, fwt, …)", rank)
	}
	opts := records.Options(Name, p.Describe(), env, func(r *readers.Record) error { var run contilab.Run; return addRow(r, &run) })
	return &job{params: params, rank: rank, rankHigher: hib, dec: records.NewDecoder(opts)}, nil
}

// job is contilab bound to its parameters.
type job struct {
	params     contilab.Params
	rank       string
	rankHigher bool
	dec        *records.Decoder
}

func (j *job) Decoder() scoring.Decoder { return j.dec }

// Score scores one run: every metric of contilab.Metrics, the run's
// diagnostics and the task count; the run's notes are named by its key.
func (j *job) Score(run *scoring.Run) (*scoring.Scored, error) {
	rr, cr, err := records.Read(run, readRun)
	if err != nil {
		return nil, err
	}
	res, err := contilab.Score(cr, &j.params)
	if err != nil {
		return nil, &scoring.DataError{Err: fmt.Errorf("run %s (from %s): %w", rr.Key, rr.Meta[readers.SourceField], err)}
	}
	values := make(map[string]protocol.Value, len(contilab.Metrics)+len(res.Diagnostics)+len(contilab.CountMetrics))
	for _, m := range contilab.Metrics {
		values[m], _ = res.Metric(m)
	}
	for _, d := range res.Diagnostics {
		values[d.Column] = d.Value
	}
	for _, m := range contilab.CountMetrics {
		values[m], _ = res.Metric(m)
	}
	s := &scoring.Scored{Key: rr.Key, Meta: rr.Meta, Rows: len(rr.Rows), Values: values, Result: res}
	for _, n := range res.Notes {
		s.Notes = append(s.Notes, "run "+rr.Key+": "+n)
	}
	return s, nil
}

// Check scores the run, for what its rows contradict together (a cell
// recorded twice, names both rows).
func (j *job) Check(run *scoring.Run) error {
	_, cr, err := records.Read(run, readRun)
	if err != nil {
		return err
	}
	_, err = contilab.Score(cr, &j.params)
	return err
}

// Metrics are contilab.Metrics, the diagnostic columns of the runs (in
// order of first appearance), then the task count.
func (j *job) Metrics(runs []*scoring.Scored) []scoring.Metric {
	names := append([]string{}, contilab.Metrics...)
	names = append(names, contilab.DiagColumns(results(runs))...)
	names = append(names, contilab.CountMetrics...)
	return records.Metrics(contilab.HigherIsBetter, nil, names)
}

func (j *job) AdvantageMetric() string { return "" }

// results are the runs' contilab results (nil for a run scored by another
// protocol, which the engine never hands over).
func results(runs []*scoring.Scored) []*contilab.RunResult {
	out := make([]*contilab.RunResult, 0, len(runs))
	for _, r := range runs {
		if res, ok := r.Result.(*contilab.RunResult); ok {
			out = append(out, res)
		}
	}
	return out
}
