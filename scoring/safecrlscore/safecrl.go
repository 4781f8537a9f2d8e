// Package safecrlscore is the safecrl protocol (PROTOCOLS 3: per-episode
// records of safe continual RL) on the scoring seam: its row fields and
// identity, its flag (--window-episodes), how its rows become a safecrl.Run,
// how a run is scored, its metrics, tables and report. It registers itself
// under the name "safecrl"; import it for its side effect:
//
//	import _ "github.com/crlbatch/crlbatch/scoring/safecrlscore"
package safecrlscore

import (
	"fmt"

	"github.com/crlbatch/crlbatch/protocol"
	"github.com/crlbatch/crlbatch/protocol/safecrl"
	"github.com/crlbatch/crlbatch/readers"
	"github.com/crlbatch/crlbatch/scoring"
	"github.com/crlbatch/crlbatch/scoring/records"
)

// Name is the protocol's --protocol value.
const Name = "safecrl"

// FlagWindowEpisodes is W, the episodes of each window.
const FlagWindowEpisodes = "window-episodes"

func init() { scoring.Register(Protocol{}) }

// Protocol is safecrl.
type Protocol struct{}

// Name returns "safecrl".
func (Protocol) Name() string { return Name }

// rowFields are the fields of a row (PROTOCOLS 3), never run metadata.
var rowFields = []scoring.Field{
	{Name: "task", Type: "string", Required: true, Doc: "the task of the episode; a visit is a maximal run of consecutive rows with one task"},
	{Name: "episode", Type: "integer", Doc: "the episode's number (rows are taken in training order whatever it says)"},
	{Name: "return", Type: "number", Required: true, Doc: "the episode's return"},
	{Name: "cost", Type: "number", Doc: "the episode's safety cost"},
	{Name: "success", Type: "boolean", Doc: "whether the episode succeeded (true, false, 0 or 1)"},
}

// Describe declares safecrl's rows, identity, flags and outputs.
func (Protocol) Describe() scoring.Description {
	return scoring.Description{
		Summary:  "per-episode safe RL",
		Rows:     rowFields,
		Identity: []string{"run_id", "seed", "algorithm_id", "policy_id"},
		GroupBy:  []string{"algorithm_id"},
		Flags: []scoring.Flag{
			{Name: FlagWindowEpisodes, Kind: scoring.FlagInt, Value: safecrl.DefaultWindowEpisodes, Category: "Other protocols",
				Usage: "`W`, the episodes of each window (final reward, forgetting, success rate)"},
		},
		Outputs: []string{"runs.parquet", "run_summary.parquet", "families.parquet"},
	}
}

// New binds --window-episodes and the reader settings into a job.
func (p Protocol) New(flags scoring.Flags, env scoring.Env) (scoring.Job, error) {
	params := safecrl.DefaultParams()
	if flags.IsSet(FlagWindowEpisodes) {
		w := flags.Int(FlagWindowEpisodes)
		if w < 1 {
			return nil, scoring.Usagef("--window-episodes %d: want at least 1", w)
		}
		params.WindowEpisodes = w
	} else if w := flags.Int(FlagWindowEpisodes); w > 0 {
		params.WindowEpisodes = w
	}
	if err := params.Check(); err != nil {
		return nil, &scoring.UsageError{Err: fmt.Errorf("--window-episodes: %w", err)}
	}
	opts := records.Options(Name, p.Describe(), env, func(r *readers.Record) error { _, err := episode(r); return err })
	return &job{params: params, dec: records.NewDecoder(opts)}, nil
}

// job is safecrl bound to its parameters.
type job struct {
	params safecrl.Params
	dec    *records.Decoder
}

func (j *job) Decoder() scoring.Decoder { return j.dec }

// Score scores one run: its seed values are the task metrics' means over
// tasks and the run counts.
func (j *job) Score(run *scoring.Run) (*scoring.Scored, error) {
	rr, sr, err := records.Read(run, readRun)
	if err != nil {
		return nil, err
	}
	res, err := safecrl.Score(sr, &j.params)
	if err != nil {
		return nil, &scoring.DataError{Err: fmt.Errorf("run %s: %w", rr.Key, err)}
	}
	values := make(map[string]protocol.Value, len(safecrl.TaskMetrics)+len(safecrl.RunCounts))
	for _, m := range safecrl.TaskMetrics {
		values[m] = res.SeedValue(m)
	}
	for _, m := range safecrl.RunCounts {
		values[m], _ = res.RunMetric(m)
	}
	return &scoring.Scored{Key: rr.Key, Meta: rr.Meta, Rows: len(rr.Rows), Values: values, Result: res}, nil
}

// Check scores the run, for what its rows contradict together.
func (j *job) Check(run *scoring.Run) error {
	_, sr, err := records.Read(run, readRun)
	if err != nil {
		return err
	}
	_, err = safecrl.Score(sr, &j.params)
	return err
}

// Metrics are the task metrics, then the run counts.
func (j *job) Metrics([]*scoring.Scored) []scoring.Metric {
	return records.Metrics(safecrl.HigherIsBetter, safecrl.TaskMetrics, safecrl.RunCounts)
}

func (j *job) AdvantageMetric() string { return "" }
