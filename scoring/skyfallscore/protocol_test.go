package skyfallscore_test

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/crlbatch/crlbatch/pipeline"
	"github.com/crlbatch/crlbatch/scoring"
	"github.com/crlbatch/crlbatch/scoring/protocoltest"
	"github.com/crlbatch/crlbatch/scoring/skyfallscore"
)

func TestRegistered(t *testing.T) {
	p, err := scoring.Lookup(skyfallscore.Name)
	if err != nil {
		t.Fatal(err)
	}
	d := p.Describe()
	if !d.Default || scoring.Default() != skyfallscore.Name || !d.Labels {
		t.Errorf("skyfall must be the default protocol, with labels: %+v", d)
	}
	if strings.Join(d.Outputs, ",") != "runs.parquet,intervals.parquet,run_summary.parquet,families.parquet,curves.parquet" {
		t.Errorf("outputs %v", d.Outputs)
	}
}

// Flag combinations New refuses, each a usage error saying why.
func TestNewRefuses(t *testing.T) {
	p, _ := scoring.Lookup(skyfallscore.Name)
	for _, c := range []struct {
		set  map[string]any
		want string
	}{
		{map[string]any{"epsilon": 0.1}, "--epsilon is the ceiling anchor's tolerance"},
		{map[string]any{"anchor": "ceiling", "epsilon-fraction": 0.1, "bound": 1.0}, "--epsilon-fraction shapes the segment anchor's recovery band"},
		{map[string]any{"anchor": "ceiling"}, "--anchor ceiling needs a ceiling"},
		{map[string]any{"bound": 1.0, "spec": "experiment"}, "--bound, --bound-map and --spec are alternatives"},
		{map[string]any{"ceiling": "per_step"}, "--ceiling per_step needs --spec"},
		{map[string]any{"ceiling": "data_relative", "bound": 1.0}, "--ceiling data_relative derives its own ceiling"},
		{map[string]any{"ceiling": "nonsense"}, `--ceiling "nonsense": want`},
		{map[string]any{"episode-end-from-spec": true}, "--episode-end-from-spec needs --spec"},
		{map[string]any{"spec": "nosuchspec"}, "--spec nosuchspec: no such file"},
		{map[string]any{"tail-fraction": 1.5}, "tail"},
	} {
		v := scoring.DefaultValues(p)
		for k, x := range c.set {
			v.Set(k, x)
		}
		_, err := p.New(v, scoring.Env{Concurrency: 1})
		var ue *scoring.UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: got %v, want a usage error with %q", c.set, err, c.want)
		}
	}
	if _, err := p.New(scoring.DefaultValues(p), scoring.Env{Concurrency: 1}); err != nil {
		t.Errorf("the defaults are refused: %v", err)
	}
}

// The run tables' identity columns are the job's identity fields.
func TestIdentityColumns(t *testing.T) {
	out := protocoltest.Score(t, skyfallscore.Name, "../../configs/example-sweep", func(c *pipeline.Config) {
		c.Reader.IdentityFields = []string{"run_id", "seed"}
	})
	for _, name := range []string{"runs.parquet", "run_summary.parquet"} {
		if got := strings.Join(out.Tables[name].Columns[:6], ","); got != "run_key,source,family,run_id,seed,run_meta" {
			t.Errorf("%s: columns %s", name, got)
		}
	}
}

// A data-relative ceiling is, per label, the best reward observed over the
// runs kept: recomputed here from the example's rows with encoding/json,
// and compared with runs.parquet's upper_bound column exactly.
func TestDataRelativeCeiling(t *testing.T) {
	const in = "../../configs/example-sweep"
	best := map[string]float64{}
	err := filepath.WalkDir(in, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		var r io.Reader = f
		switch {
		case strings.HasSuffix(p, ".gz"):
			if r, err = gzip.NewReader(f); err != nil {
				return err
			}
		case strings.HasSuffix(p, ".zst"):
			zr, err := zstd.NewReader(f)
			if err != nil {
				return err
			}
			defer zr.Close()
			r = zr
		}
		sc := bufio.NewScanner(r)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var row struct {
				Reward float64 `json:"reward"`
				Label  string  `json:"regime_id"`
			}
			if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
				return err
			}
			if b, ok := best[row.Label]; !ok || row.Reward > b {
				best[row.Label] = row.Reward
			}
		}
		return sc.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	out := protocoltest.Score(t, skyfallscore.Name, in, func(c *pipeline.Config) {
		c.ProtocolFlags = scoring.DefaultValues(mustLookup(t)).Set("ceiling", "data_relative")
	})
	rows := out.Tables["runs.parquet"].Rows
	if len(rows) == 0 {
		t.Fatal("no rows")
	}
	for _, r := range rows {
		l := r["regime_id"].(string)
		if got := r["upper_bound"].(float64); got != best[l] {
			t.Errorf("run %s label %s: ceiling %v, want the best reward observed, %v", r["run_key"], l, got, best[l])
		}
	}
	if !strings.Contains(out.Report, "Derivation `data_relative`, from `--ceiling data_relative`.") {
		t.Error("the report does not say the ceiling is data-relative")
	}
}

func mustLookup(t *testing.T) scoring.Protocol {
	p, err := scoring.Lookup(skyfallscore.Name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
