package main

// A fifth protocol, defined here and nowhere else: the mean reward per task.
// It registers itself like the four of crlbatch and passes the same
// conformance suite through the real command (TestConformance), which
// shows that a protocol is one package and one registration: nothing
// outside this file (and its example, testdata/toymean) knows it.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/crlbatch/crlbatch/protocol"
	"github.com/crlbatch/crlbatch/protocol/family"
	"github.com/crlbatch/crlbatch/readers"
	"github.com/crlbatch/crlbatch/scoring"
	"github.com/crlbatch/crlbatch/scoring/records"
	"github.com/crlbatch/crlbatch/writers"
)

const toyName = "toymean"

func init() {
	scoring.Register(toyProtocol{})
	conformanceExamples[toyName] = "testdata/toymean"
}

type toyProtocol struct{}

func (toyProtocol) Name() string { return toyName }

func (toyProtocol) Describe() scoring.Description {
	return scoring.Description{
		Summary: "a test protocol: the mean reward per task",
		Rows: []scoring.Field{
			{Name: "task", Type: "string", Required: true},
			{Name: "reward", Type: "number", Required: true},
		},
		Identity: []string{"run_id", "seed", "algorithm_id"},
		GroupBy:  []string{"algorithm_id"},
		Outputs:  []string{"runs.parquet", "families.parquet"},
		Flags: []scoring.Flag{{Name: "toy-min-episodes", Kind: scoring.FlagInt, Value: 1,
			Usage: "tasks with fewer episodes have no mean"}},
	}
}

type toyJob struct {
	dec         *records.Decoder
	minEpisodes int
}

func (p toyProtocol) New(f scoring.Flags, env scoring.Env) (scoring.Job, error) {
	j := &toyJob{minEpisodes: f.Int("toy-min-episodes")}
	if j.minEpisodes < 1 {
		return nil, scoring.Usagef("--toy-min-episodes %d: want at least 1", j.minEpisodes)
	}
	j.dec = records.NewDecoder(records.Options(toyName, p.Describe(), env, func(r *readers.Record) error {
		_, _, err := toyRow(r)
		return err
	}))
	return j, nil
}

func toyRow(r *readers.Record) (string, float64, error) {
	task, ok, err := r.String("task")
	if err != nil {
		return "", 0, err
	} else if !ok {
		return "", 0, r.MissingError("task", "string")
	}
	x, ok, err := r.Number("reward")
	if err != nil {
		return "", 0, err
	} else if !ok {
		return "", 0, r.MissingError("reward", "number")
	}
	return task, x, nil
}

// toyTask is one task's mean reward in a run.
type toyTask struct {
	Task     string
	Episodes int
	Mean     protocol.Value
}

type toyResult struct{ Tasks []toyTask }

func (j *toyJob) Decoder() scoring.Decoder { return j.dec }
func (j *toyJob) Check(*scoring.Run) error { return nil }
func (j *toyJob) AdvantageMetric() string  { return "" }
func (j *toyJob) Metrics([]*scoring.Scored) []scoring.Metric {
	hib := true
	return []scoring.Metric{{Name: "mean_reward", HigherIsBetter: &hib, PerKey: true}, {Name: "n_tasks"}}
}

func (j *toyJob) Score(run *scoring.Run) (*scoring.Scored, error) {
	rr := run.Data.(*readers.RecordRun)
	res := &toyResult{}
	idx := map[string]int{}
	sums := []float64{}
	for _, r := range rr.Rows {
		task, x, err := toyRow(r)
		if err != nil {
			return nil, err
		}
		i, ok := idx[task]
		if !ok {
			i = len(res.Tasks)
			idx[task] = i
			res.Tasks = append(res.Tasks, toyTask{Task: task})
			sums = append(sums, 0)
		}
		res.Tasks[i].Episodes++
		sums[i] += x
	}
	var sum float64
	n := 0
	for i := range res.Tasks {
		t := &res.Tasks[i]
		if t.Episodes < j.minEpisodes {
			t.Mean = protocol.None(fmt.Sprintf("%d episodes, fewer than --toy-min-episodes %d", t.Episodes, j.minEpisodes))
			continue
		}
		t.Mean = protocol.Some(sums[i] / float64(t.Episodes))
		sum += t.Mean.V
		n++
	}
	mean := protocol.None("no task has a mean")
	if n > 0 {
		mean = protocol.Some(sum / float64(n))
	}
	return &scoring.Scored{Key: run.Key, Meta: run.Meta, Rows: run.Rows, Result: res,
		Values: map[string]protocol.Value{"mean_reward": mean, "n_tasks": protocol.Some(float64(len(res.Tasks)))}}, nil
}

func (j *toyJob) Render(res *scoring.Results) (*scoring.Rendered, error) {
	t := writers.NewTable()
	var metas []map[string]string
	for _, r := range res.Runs {
		metas = append(metas, r.Meta)
	}
	rc := writers.DeclareRunColumns(t, metas, res.Common.IdentityFields, true)
	task := t.String("task")
	eps := t.Int64("n_episodes")
	mean := t.Metric("mean_reward")
	t.Reasons()
	for i := range res.Runs {
		r := &res.Runs[i]
		for _, tk := range r.Result.(*toyResult).Tasks {
			rc.Append(r.Key, r.Source(), r.Family, r.Meta, &r.Excluded)
			task.Append(tk.Task)
			eps.Append(int64(tk.Episodes))
			mean.Append(tk.Mean)
			if err := t.EndRow(); err != nil {
				return nil, err
			}
		}
	}
	if t.Err() != nil {
		return nil, t.Err()
	}
	fam, err := writers.FamiliesTable(res.Families)
	if err != nil {
		return nil, err
	}
	params := struct {
		Protocol    string `json:"protocol"`
		MinEpisodes int    `json:"toy_min_episodes"`
		scoring.Common
	}{toyName, j.minEpisodes, res.Common}
	rep := &writers.Report{
		Header:   writers.ReportHeader{Title: "crlbatch report: " + toyName, Input: res.Input, Protocol: toyName, Version: res.Version},
		Rows:     []writers.ReportRow{{Title: "Mean reward", Metric: "mean_reward"}, {Title: "Tasks", Metric: "n_tasks"}},
		KeyNoun:  "task",
		Families: res.Families,
		Notes:    res.Notes,
		Columns: func(string) ([]string, func(int, string) family.Cell) {
			return nil, func(int, string) family.Cell { return family.Cell{} }
		},
	}
	return &scoring.Rendered{Params: params, Report: rep.Render(),
		Tables: []scoring.Table{{Name: "runs.parquet", Table: t}, {Name: "families.parquet", Table: fam}}}, nil
}

// TestToyNumbers checks the toy's numbers against the rows, recomputed here
// from the JSON with no code of crlbatch.
func TestToyNumbers(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "out")
	if code, _, stderr := crl(t, "score", "testdata/toymean", "--protocol", toyName, "--out", out, "--quiet"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := map[[2]string][2]float64{} // run, task → sum, count
	files, _ := filepath.Glob("testdata/toymean/*.jsonl")
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			var row struct {
				RunID  string  `json:"run_id"`
				Task   string  `json:"task"`
				Reward float64 `json:"reward"`
			}
			if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
				t.Fatal(err)
			}
			k := [2]string{row.RunID, row.Task}
			want[k] = [2]float64{want[k][0] + row.Reward, want[k][1] + 1}
		}
		fh.Close()
	}
	rb := readParquet(t, filepath.Join(out, "runs.parquet"))
	if len(rb.Rows) != len(want) {
		t.Fatalf("%d rows in runs.parquet, want %d (run × task)", len(rb.Rows), len(want))
	}
	for _, row := range rb.Rows {
		k := [2]string{row["run_id"].(string), row["task"].(string)}
		w := want[k][0] / want[k][1]
		if got := row["mean_reward"].(float64); math.Abs(got-w) > 1e-12 {
			t.Errorf("%v: mean reward %v, want %v", k, got, w)
		}
	}
}
