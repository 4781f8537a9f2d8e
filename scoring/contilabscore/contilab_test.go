package contilabscore_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/crlbatch/crlbatch/pipeline"
	"github.com/crlbatch/crlbatch/protocol/contilab"
	"github.com/crlbatch/crlbatch/readers"
	"github.com/crlbatch/crlbatch/scoring"
	"github.com/crlbatch/crlbatch/scoring/contilabscore"
	"github.com/crlbatch/crlbatch/scoring/protocoltest"
)

func lookup(t *testing.T) scoring.Protocol {
	t.Helper()
	p, err := scoring.Lookup("contilab")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func newJob(t *testing.T) scoring.Job { return protocoltest.Job(t, "contilab", nil) }

// TestScoreByHand is contilab's ExampleScore through rows: a Class-IL run
// of two tasks, R = [[0.9, -], [0.6, 0.8]], and a diagnostic.
func TestScoreByHand(t *testing.T) {
	j := newJob(t)
	rows := `{"run_id":"r","seed":0,"algorithm_id":"ewc","scenario":"class-il","kind":"matrix","after_task":0,"eval_task":0,"acc":0.9}
{"run_id":"r","seed":0,"algorithm_id":"ewc","scenario":"class-il","kind":"matrix","after_task":1,"eval_task":0,"acc":0.6}
{"run_id":"r","seed":0,"algorithm_id":"ewc","scenario":"class-il","kind":"matrix","after_task":1,"eval_task":1,"acc":0.8}
{"run_id":"r","seed":0,"algorithm_id":"ewc","scenario":"class-il","kind":"diag","name":"effective_rank","task":0,"value":3}
{"run_id":"r","seed":0,"algorithm_id":"ewc","scenario":"class-il","kind":"diag","name":"effective_rank","task":1,"value":5}
`
	rs, err := protocoltest.Runs(j, "r.jsonl", rows)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 1 || rs[0].Rows != 5 || rs[0].Meta["scenario"] != "class-il" {
		t.Fatalf("runs: %+v", rs)
	}
	s, err := j.Score(rs[0])
	if err != nil {
		t.Fatal(err)
	}
	for m, w := range map[string]float64{"acc": 0.7, "bwt": -0.3, "n_tasks": 2, "diag_effective_rank": 4} {
		if v := s.Value(m); !v.OK || math.Abs(v.V-w) > 1e-12 {
			t.Errorf("%s = %v, want %v", m, v, w)
		}
	}
	if v := s.Value("fwt"); v.OK || !strings.Contains(v.Reason, "Class-IL") {
		t.Errorf("fwt = %v, want absent in Class-IL", v)
	}
	if v := s.Value("intransigence"); v.OK || v.Reason != "no joint-training rows" {
		t.Errorf("intransigence = %v", v)
	}
	if v := s.Value("diag_dormant_ratio"); v.OK || v.Reason != scoring.NoSuchMetric {
		t.Errorf("a diagnostic the run lacks reads %v", v)
	}
	var names []string
	for _, m := range j.Metrics([]*scoring.Scored{s}) {
		names = append(names, m.Name)
	}
	want := append(append(append([]string{}, contilab.Metrics...), "diag_effective_rank"), contilab.CountMetrics...)
	if strings.Join(names, ",") != strings.Join(want, ",") {
		t.Errorf("metrics %v, want %v", names, want)
	}
}

// A run whose rows contradict each other: Score and Check name both rows;
// Check returns the bare error, Score wraps it.
func TestRepeatedCell(t *testing.T) {
	j := newJob(t)
	rows := `{"run_id":"r","kind":"matrix","after_task":0,"eval_task":0,"acc":0.9}
{"run_id":"r","kind":"matrix","after_task":0,"eval_task":0,"acc":0.8}
`
	rs, err := protocoltest.Runs(j, "o.jsonl", rows)
	if err != nil {
		t.Fatal(err)
	}
	want := "mem://in/o.jsonl: line 2: kind: run run_id=r: the matrix cell (after_task 0, eval_task 0) is recorded twice (first at mem://in/o.jsonl line 1)"
	if err := j.Check(rs[0]); err == nil || err.Error() != want {
		t.Errorf("Check: %v, want %s", err, want)
	}
	_, err = j.Score(rs[0])
	var de *readers.DataError
	if !errors.As(err, &de) || err.Error() != want {
		t.Errorf("Score: %v", err)
	}
}

// A row of the wrong shape is a bad row naming object, line and field.
func TestBadRow(t *testing.T) {
	for _, c := range []struct{ row, want string }{
		{`{"kind":"matrix","after_task":0,"eval_task":0,"acc":-0.1}`, "mem://in/o.jsonl: line 2: acc: negative accuracy -0.1"},
		{`{"kind":"matrix","after_task":0,"acc":0.5}`, "mem://in/o.jsonl: line 2: eval_task: "},
		{`{"kind":"nope"}`, `mem://in/o.jsonl: line 2: kind: unknown kind "nope" (want matrix, initial, joint, stream, curve or diag)`},
		{`{"acc":1}`, "mem://in/o.jsonl: line 2: kind: "},
		{`{"kind":"curve","task":-1,"batch":0,"acc":1}`, "mem://in/o.jsonl: line 2: task: task and batch indices run from 0 to"},
	} {
		j := newJob(t)
		_, err := protocoltest.Runs(j, "o.jsonl", `{"kind":"initial","eval_task":0,"acc":0.1}`+"\n"+c.row+"\n")
		var de *readers.DataError
		if !errors.As(err, &de) || de.Line != 2 || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q…", c.row, err, c.want)
		}
	}
}

func TestFlags(t *testing.T) {
	p := lookup(t)
	for _, c := range []struct {
		flag string
		v    any
		want string
	}{
		{contilabscore.FlagWindowFraction, 0.0, "--window-fraction 0: want 0 < x ≤ 1"},
		{contilabscore.FlagWindowFraction, 1.5, "--window-fraction 1.5: want 0 < x ≤ 1"},
		{contilabscore.FlagWindowFraction, math.NaN(), "--window-fraction NaN: want 0 < x ≤ 1"},
		{contilabscore.FlagRankMetric, "n_tasks", `--rank-metric "n_tasks": want a metric with a better direction (acc, aia, bwt, fwt, …)`},
		{contilabscore.FlagRankMetric, "nope", `--rank-metric "nope": want a metric with a better direction (acc, aia, bwt, fwt, …)`},
	} {
		_, err := p.New(scoring.DefaultValues(p).Set(c.flag, c.v), scoring.Env{})
		var ue *scoring.UsageError
		if !errors.As(err, &ue) || err.Error() != c.want {
			t.Errorf("--%s %v: %v, want the usage error %q", c.flag, c.v, err, c.want)
		}
	}
	for _, v := range []float64{1, 0.05} {
		if _, err := p.New(scoring.DefaultValues(p).Set(contilabscore.FlagWindowFraction, v), scoring.Env{}); err != nil {
			t.Errorf("--window-fraction %v: %v", v, err)
		}
	}
}

// The bundled example through every step gives the bytes of the goldens of
// The run table's identity columns are the job's identity fields: none
// under --identity-fields "".
func TestIdentityColumns(t *testing.T) {
	out := protocoltest.Score(t, "contilab", "../../configs/examples/contilab", func(c *pipeline.Config) {
		c.Reader.IdentityFields = []string{}
	})
	if got := strings.Join(out.Tables["runs.parquet"].Columns[:5], ","); got != "run_key,source,family,run_meta,excluded" {
		t.Errorf("runs.parquet: columns %s", got)
	}
}
