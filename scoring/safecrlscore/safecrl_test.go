package safecrlscore_test

import (
	"errors"
	"github.com/crlbatch/crlbatch/pipeline"
	"math"
	"strings"
	"testing"

	"github.com/crlbatch/crlbatch/readers"
	"github.com/crlbatch/crlbatch/scoring"
	"github.com/crlbatch/crlbatch/scoring/protocoltest"
	"github.com/crlbatch/crlbatch/scoring/safecrlscore"
)

func lookup(t *testing.T) scoring.Protocol {
	t.Helper()
	p, err := scoring.Lookup("safecrl")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// newJob binds the protocol with the default identity and flags (nil: the defaults).
func newJob(t *testing.T, flags scoring.Flags) scoring.Job {
	return protocoltest.Job(t, "safecrl", flags)
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(1, math.Abs(b)) }

// TestScoreByHand: a run visits a (returns 1, 2, 3), b (5), a again (0),
// W = 2. Final reward of a: mean of its last two episodes (3, 0) = 1.5;
// forgetting of a: mean(2, 3) − mean(0) = 2.5; b: 5, never revisited. Run
// values average the tasks' values that exist.
func TestScoreByHand(t *testing.T) {
	p := lookup(t)
	j := newJob(t, scoring.DefaultValues(p).Set(safecrlscore.FlagWindowEpisodes, 2))
	rows := `{"run_id":"r","seed":1,"algorithm_id":"cpo","task":"a","episode":0,"return":1,"cost":1,"success":true}
{"run_id":"r","seed":1,"algorithm_id":"cpo","task":"a","episode":1,"return":2,"cost":0}
{"run_id":"r","seed":1,"algorithm_id":"cpo","task":"a","episode":2,"return":3,"success":0}
{"run_id":"r","seed":1,"algorithm_id":"cpo","task":"b","episode":3,"return":5}
{"run_id":"r","seed":1,"algorithm_id":"cpo","task":"a","episode":4,"return":0,"success":1}
`
	rs, err := protocoltest.Runs(j, "r.jsonl", rows)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 1 || rs[0].Rows != 5 || rs[0].Key != "run_id=r|seed=1|algorithm_id=cpo" {
		t.Fatalf("runs: %+v", rs)
	}
	if err := j.Check(rs[0]); err != nil {
		t.Fatal(err)
	}
	s, err := j.Score(rs[0])
	if err != nil {
		t.Fatal(err)
	}
	if s.Key != rs[0].Key || s.Rows != 5 || s.Meta["algorithm_id"] != "cpo" || s.Meta["source"] != "r.jsonl" {
		t.Errorf("scored %q, %d rows, meta %v", s.Key, s.Rows, s.Meta)
	}
	want := map[string]float64{
		"final_task_reward": (1.5 + 5) / 2,
		"forgetting":        2.5,
		"success_rate":      0.5, // a's last two episodes carrying success: 0, 1
		"n_tasks":           2,
		"n_episodes":        5,
	}
	for m, w := range want {
		if v := s.Value(m); !v.OK || !near(v.V, w) {
			t.Errorf("%s = %v, want %v", m, v, w)
		}
	}
	// a: costs 1 + 0 over the one visit that records cost; b has none.
	if v := s.Value("total_cost"); !v.OK || !near(v.V, 1) {
		t.Errorf("total_cost = %v, want 1", v)
	}
	if v := s.Value("mean_episode_cost"); !v.OK || !near(v.V, 0.5) {
		t.Errorf("mean_episode_cost = %v, want 0.5", v)
	}
	if v := s.Value("no_such"); v.OK || v.Reason != scoring.NoSuchMetric {
		t.Errorf("an unknown metric reads %v", v)
	}
	var names []string
	for _, m := range j.Metrics([]*scoring.Scored{s}) {
		names = append(names, m.Name)
		if _, ok := s.Values[m.Name]; !ok {
			t.Errorf("metric %s has no value", m.Name)
		}
	}
	if got := strings.Join(names, ","); got != "final_task_reward,total_cost,mean_episode_cost,forgetting,normalized_forgetting,success_rate,forgetting_success,n_tasks,n_episodes" {
		t.Errorf("metrics %s", got)
	}
	if j.AdvantageMetric() != "" {
		t.Error("an advantage metric")
	}
}

// A row whose field has the wrong type, or lacks a required one, is a bad
// row naming object, line and field, found while decoding.
func TestBadRow(t *testing.T) {
	for _, c := range []struct{ row, want string }{
		{`{"task":"a","return":"x"}`, "mem://in/o.jsonl: line 2: return: "},
		{`{"task":"a"}`, "mem://in/o.jsonl: line 2: return: "},
		{`{"task":7,"return":1}`, "mem://in/o.jsonl: line 2: task: "},
		{`{"task":"a","return":1,"success":0.5}`, "mem://in/o.jsonl: line 2: success: got 0.5, want true, false, 0 or 1"},
		{`{"task":"a","return":1,"episode":1.5}`, "mem://in/o.jsonl: line 2: episode: "},
	} {
		j := newJob(t, nil)
		_, err := protocoltest.Runs(j, "o.jsonl", `{"task":"a","return":1}`+"\n"+c.row+"\n")
		var de *readers.DataError
		if !errors.As(err, &de) || de.Line != 2 || de.URL != "mem://in/o.jsonl" || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q…", c.row, err, c.want)
		}
	}
}

func TestFlags(t *testing.T) {
	p := lookup(t)
	for _, c := range []struct {
		w    int
		want string
	}{
		{0, "--window-episodes 0: want at least 1"},
		{-3, "--window-episodes -3: want at least 1"},
	} {
		_, err := p.New(scoring.DefaultValues(p).Set(safecrlscore.FlagWindowEpisodes, c.w), scoring.Env{})
		var ue *scoring.UsageError
		if !errors.As(err, &ue) || err.Error() != c.want {
			t.Errorf("W %d: %v, want the usage error %q", c.w, err, c.want)
		}
	}
	// An identity field that is a row field is a usage error of the decoder.
	j, err := p.New(scoring.DefaultValues(p), scoring.Env{Reader: readers.Options{IdentityFields: []string{"run_id", "task"}}})
	if err != nil {
		t.Fatal(err)
	}
	var ue *scoring.UsageError
	if err := j.Decoder().Check(); !errors.As(err, &ue) || !strings.Contains(err.Error(), `"task" is a row field of safecrl`) {
		t.Errorf("identity task: %v", err)
	}
}

func TestDescribe(t *testing.T) {
	d := lookup(t).Describe()
	if strings.Join(d.Identity, ",") != "run_id,seed,algorithm_id,policy_id" || strings.Join(d.GroupBy, ",") != "algorithm_id" {
		t.Errorf("identity %v, group by %v", d.Identity, d.GroupBy)
	}
	if len(d.Flags) != 1 || d.Flags[0].Name != "window-episodes" || d.Flags[0].Category != "Other protocols" {
		t.Errorf("flags %+v", d.Flags)
	}
	if d.Default || d.Labels {
		t.Error("safecrl claims to be the default or to have labels")
	}
}

// The run tables' identity columns are the job's identity fields.
func TestIdentityColumns(t *testing.T) {
	out := protocoltest.Score(t, "safecrl", "../../configs/examples/safecrl", func(c *pipeline.Config) {
		c.Reader.IdentityFields = []string{"run_id", "seed"}
	})
	for _, name := range []string{"runs.parquet", "run_summary.parquet"} {
		got := strings.Join(out.Tables[name].Columns[:6], ",")
		if got != "run_key,source,family,run_id,seed,run_meta" {
			t.Errorf("%s: columns %s", name, got)
		}
	}
	if !strings.Contains(out.Report, "| identity_fields     |") || !strings.Contains(out.Report, "`[\"run_id\",\"seed\"]`") {
		t.Errorf("report header:\n%s", out.Report[:800])
	}
}
