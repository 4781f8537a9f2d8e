// Package skillshiftscore is the skillshift protocol (PROTOCOLS 5: per-task
// web-agent records) on the scoring seam: its row fields and identity, how
// its rows become a skillshift.Run, how a run (one method's tasks) is
// scored, its metrics, tables (cells, table, families) and report. It has
// no flag of its own. It registers itself under the name "skillshift";
// import it for its side effect:
//
//	import _ "github.com/crlbatch/crlbatch/scoring/skillshiftscore"
package skillshiftscore

import (
	"fmt"

	"github.com/crlbatch/crlbatch/protocol"
	"github.com/crlbatch/crlbatch/protocol/skillshift"
	"github.com/crlbatch/crlbatch/readers"
	"github.com/crlbatch/crlbatch/scoring"
	"github.com/crlbatch/crlbatch/scoring/records"
)

// Name is the protocol's --protocol value.
const Name = "skillshift"

func init() { scoring.Register(Protocol{}) }

// Protocol is skillshift.
type Protocol struct{}

// Name returns "skillshift".
func (Protocol) Name() string { return Name }

// rowFields are the fields of a row (PROTOCOLS 5), never run metadata.
var rowFields = []scoring.Field{
	{Name: "uid", Type: "string", Doc: "the task's identifier"},
	{Name: "site", Type: "string", Required: true, Doc: "the website (gitlab, magento, wordpress, …); not empty"},
	{Name: "condition", Type: "string", Required: true, Doc: "the condition (src, src-perc, src-exec, tgt, tgt-perc, tgt-exec, …); not empty"},
	{Name: "success", Type: "boolean", Required: true, Doc: "whether the task succeeded (true, false, 0 or 1)"},
	{Name: "steps", Type: "number", Required: true, Doc: "the steps taken; not negative"},
	{Name: "skill_calls", Type: "number", Doc: "the skill invocations; not negative"},
	{Name: "skill_failures", Type: "number", Doc: "the failed skill invocations: with skill_calls, at most as many"},
}

// Describe declares skillshift's rows, identity and outputs.
func (Protocol) Describe() scoring.Description {
	return scoring.Description{
		Summary:  "per-task web-agent records",
		Rows:     rowFields,
		Identity: []string{"method", "run_id", "seed", "algorithm_id", "policy_id"},
		GroupBy:  []string{"method"},
		Outputs:  []string{"cells.parquet", "table.parquet", "families.parquet"},
	}
}

// New binds the reader settings into a job.
func (p Protocol) New(_ scoring.Flags, env scoring.Env) (scoring.Job, error) {
	opts := records.Options(Name, p.Describe(), env, func(r *readers.Record) error { _, err := task(r); return err })
	return &job{dec: records.NewDecoder(opts)}, nil
}

// job is skillshift bound to its reader settings.
type job struct {
	dec *records.Decoder
}

func (j *job) Decoder() scoring.Decoder { return j.dec }

// Score scores one run: each metric's overall (O/A) value and the task
// count; the run's notes are named by its key.
func (j *job) Score(run *scoring.Run) (*scoring.Scored, error) {
	rr, sr, err := records.Read(run, readRun)
	if err != nil {
		return nil, err
	}
	res, err := skillshift.Score(sr)
	if err != nil {
		return nil, &scoring.DataError{Err: fmt.Errorf("run %s (from %s): %w", rr.Key, rr.Meta[readers.SourceField], err)}
	}
	values := make(map[string]protocol.Value, len(skillshift.Metrics)+1)
	for _, m := range skillshift.Metrics {
		values[m] = res.SeedValue(m)
	}
	values["n_tasks"] = protocol.Some(float64(res.NTasks))
	s := &scoring.Scored{Key: rr.Key, Meta: rr.Meta, Rows: len(rr.Rows), Values: values, Result: res}
	for _, n := range res.Notes {
		s.Notes = append(s.Notes, "run "+rr.Key+": "+n)
	}
	return s, nil
}

// Check scores the run, for what its rows contradict together.
func (j *job) Check(run *scoring.Run) error {
	_, sr, err := records.Read(run, readRun)
	if err != nil {
		return err
	}
	_, err = skillshift.Score(sr)
	return err
}

// Metrics are SR, AS, ASC, SFR, then the task count.
func (j *job) Metrics([]*scoring.Scored) []scoring.Metric {
	return records.Metrics(skillshift.HigherIsBetter, skillshift.Metrics, []string{"n_tasks"})
}

func (j *job) AdvantageMetric() string { return "" }
