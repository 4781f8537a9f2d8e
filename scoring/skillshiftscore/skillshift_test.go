package skillshiftscore_test

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/crlbatch/crlbatch/readers"
	"github.com/crlbatch/crlbatch/scoring"
	"github.com/crlbatch/crlbatch/scoring/protocoltest"
)

func lookup(t *testing.T) scoring.Protocol {
	t.Helper()
	p, err := scoring.Lookup("skillshift")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func newJob(t *testing.T) scoring.Job { return protocoltest.Job(t, "skillshift", nil) }

// TestScoreByHand: method M, cell gitlab/src with two tasks (one success;
// 4 and 6 steps; 2 calls each, 1 failure in all) and cell gitlab/tgt with
// one (a success, 10 steps, no call). Per cell SR 50 and 100, AS 5 and 10,
// ASC 2 and 0, SFR 25 and none (no call); O/A the unweighted means of the
// cells that have a value.
func TestScoreByHand(t *testing.T) {
	j := newJob(t)
	rows := `{"method":"M","uid":"t1","site":"gitlab","condition":"src","success":true,"steps":4,"skill_calls":2,"skill_failures":1}
{"method":"M","uid":"t1","site":"gitlab","condition":"src","success":false,"steps":6,"skill_calls":2,"skill_failures":0}
{"method":"M","uid":"t2","site":"gitlab","condition":"tgt","success":1,"steps":10,"skill_calls":0}
`
	rs, err := protocoltest.Runs(j, "M.jsonl", rows)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 1 || rs[0].Key != "method=M" || rs[0].Rows != 3 {
		t.Fatalf("runs: %+v", rs)
	}
	if err := j.Check(rs[0]); err != nil {
		t.Fatal(err)
	}
	s, err := j.Score(rs[0])
	if err != nil {
		t.Fatal(err)
	}
	for m, w := range map[string]float64{"SR": 75, "AS": 7.5, "ASC": 1, "SFR": 25, "n_tasks": 3} {
		if v := s.Value(m); !v.OK || math.Abs(v.V-w) > 1e-12 {
			t.Errorf("%s = %v, want %v", m, v, w)
		}
	}
	dup := `run method=M: task "t1" appears 2 times in cell gitlab/src; each record is counted`
	if !slices.Contains(s.Notes, dup) {
		t.Errorf("notes %q lack %q", s.Notes, dup)
	}
	var names []string
	for _, m := range j.Metrics([]*scoring.Scored{s}) {
		names = append(names, m.Name)
	}
	if strings.Join(names, ",") != "SR,AS,ASC,SFR,n_tasks" {
		t.Errorf("metrics %v", names)
	}
}

// A row the protocol cannot take is a bad row naming object, line and
// field, found while decoding.
func TestBadRow(t *testing.T) {
	for _, c := range []struct{ row, want string }{
		{`{"site":"a","condition":"src","success":true,"steps":1,"skill_calls":2,"skill_failures":3}`, "mem://in/o.jsonl: line 2: skill_failures: 3 failures exceed 2 skill calls"},
		{`{"site":"a","condition":"src","success":true,"steps":1,"skill_failures":0}`, "mem://in/o.jsonl: line 2: skill_failures: recorded without skill_calls"},
		{`{"site":"","condition":"src","success":true,"steps":1}`, "mem://in/o.jsonl: line 2: site: empty site"},
		{`{"site":"a","condition":"src","steps":1}`, "mem://in/o.jsonl: line 2: success: "},
		{`{"site":"a","condition":"src","success":true,"steps":-1}`, "mem://in/o.jsonl: line 2: steps: negative step count -1"},
	} {
		j := newJob(t)
		_, err := protocoltest.Runs(j, "o.jsonl", `{"site":"a","condition":"src","success":true,"steps":1}`+"\n"+c.row+"\n")
		var de *readers.DataError
		if !errors.As(err, &de) || de.Line != 2 || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q…", c.row, err, c.want)
		}
	}
}

func TestDescribe(t *testing.T) {
	d := lookup(t).Describe()
	if strings.Join(d.Identity, ",") != "method,run_id,seed,algorithm_id,policy_id" || strings.Join(d.GroupBy, ",") != "method" || len(d.Flags) != 0 {
		t.Errorf("identity %v, group by %v, flags %v", d.Identity, d.GroupBy, d.Flags)
	}
}
