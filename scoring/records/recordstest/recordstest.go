// Package recordstest drives a protocol's job through every step of the
// scoring seam over a local folder, as the engine does (decode, assemble,
// --where, score, reduce, render), for the adapters' tests. It is a test
// helper: no listing through storage, no concurrency, no bad-row budget.
package recordstest

import (
	"bytes"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/crlbatch/crlbatch/protocol/family"
	"github.com/crlbatch/crlbatch/readers"
	"github.com/crlbatch/crlbatch/scoring"
	"github.com/crlbatch/crlbatch/writers"
)

// DefaultPatterns are the engine's default --pattern values.
var DefaultPatterns = []string{"*.jsonl", "*.jsonl.gz", "*.jsonl.zst", "*.ndjson"}

// Version is the crlbatch version the goldens were written with.
const Version = "0.1.0-dev"

// SchemaVersion is the engine's crlbatch.schema_version.
const SchemaVersion = "1"

// Config is one job.
type Config struct {
	// Dir is the input folder; Input names it in the report (Dir when "").
	Dir, Input string
	// Flags are the protocol's flag values (its defaults when nil).
	Flags scoring.Flags
	// GroupBy (nil: the protocol's), Baseline, MinSteps, Where and
	// IdentityFields (nil: the protocol's) as the engine's flags give them.
	GroupBy        []string
	Baseline       string
	MinSteps       int
	Where          []scoring.Filter
	IdentityFields []string
	Resamples      int // 0: 10000
	Seed           uint64
	// Reader limits.
	Reader readers.Options
}

// Run runs the job and returns what Render made of it, with the results it
// was rendered from.
func Run(p scoring.Protocol, c Config) (*scoring.Rendered, *scoring.Results, error) {
	d := p.Describe()
	flags := c.Flags
	if flags == nil {
		flags = scoring.DefaultValues(p)
	}
	env := scoring.Env{Reader: c.Reader, Concurrency: 1}
	env.Reader.IdentityFields = c.IdentityFields
	if env.Reader.IdentityFields == nil {
		env.Reader.IdentityFields = slices.Clone(d.Identity)
	}
	job, err := p.New(flags, env)
	if err != nil {
		return nil, nil, err
	}
	dec := job.Decoder()
	if err := dec.Check(); err != nil {
		return nil, nil, err
	}
	defer dec.Close()
	keys, err := list(c.Dir)
	if err != nil {
		return nil, nil, err
	}
	var objs []scoring.Object
	for _, k := range keys {
		f, err := os.Open(filepath.Join(c.Dir, filepath.FromSlash(k)))
		if err != nil {
			return nil, nil, err
		}
		o, err := dec.Decode("file://"+path.Join(filepath.ToSlash(c.Dir), k), k, f, nil)
		f.Close()
		if err != nil {
			return nil, nil, err
		}
		objs = append(objs, o)
	}
	if cs := dec.Conflicts(objs); len(cs) > 0 {
		return nil, nil, &scoring.DataError{Err: cs[0]}
	}
	var runs []*scoring.Run
	total := 0
	err = dec.Assemble(objs, func(r *scoring.Run) error {
		total++
		if keep(c.Where, r.Meta) {
			runs = append(runs, r)
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	var scored []*scoring.Scored
	for _, r := range runs {
		s, err := job.Score(r)
		if err != nil {
			return nil, nil, err
		}
		scored = append(scored, s)
	}
	var notes []string
	for _, s := range scored {
		notes = append(notes, s.DataNotes...)
	}
	if len(c.Where) > 0 {
		notes = append(notes, fmt.Sprintf("--where kept %d of %d runs", len(runs), total))
	}
	for _, s := range scored {
		notes = append(notes, s.Notes...)
	}
	groupBy := c.GroupBy
	if groupBy == nil {
		groupBy = d.GroupBy
	}
	metrics := job.Metrics(scored)
	fruns := make([]family.Run, len(scored))
	for i, s := range scored {
		seed, hasSeed := s.Meta["seed"]
		fr := family.Run{Key: s.Key, Family: familyOf(groupBy, s.Meta), Seed: seed, HasSeed: hasSeed, NSteps: s.Rows, Remarks: s.Remarks}
		if c.MinSteps > 0 && s.Rows < c.MinSteps {
			fr.Excluded, fr.ExcludedWhy = true, fmt.Sprintf("%d rows, fewer than --min-steps %d", s.Rows, c.MinSteps)
		}
		for _, m := range metrics {
			fr.Values = append(fr.Values, s.Value(m.Name))
		}
		fruns[i] = fr
	}
	fopt := family.DefaultOptions()
	fopt.Baseline = c.Baseline
	fopt.Resamples = c.Resamples
	if fopt.Resamples == 0 {
		fopt.Resamples = 10000
	}
	fopt.Seed = c.Seed
	fopt.GroupBy = strings.Join(groupBy, ",")
	fopt.AdvantageMetric = job.AdvantageMetric()
	fres, err := family.Aggregate(metrics, fruns, fopt)
	if err != nil {
		return nil, nil, err
	}
	input := c.Input
	if input == "" {
		input = c.Dir
	}
	res := &scoring.Results{Input: input, Version: Version, Families: fres, Notes: notes,
		Common: scoring.Common{
			GroupBy: groupBy, MinSteps: c.MinSteps, Where: c.Where, IdentityFields: env.Reader.IdentityFields,
			Patterns: DefaultPatterns, BootstrapResamples: fopt.Resamples, BootstrapSeed: c.Seed, ConfidenceLevel: fopt.Level,
		}}
	if fres.BaselineFound || fres.Baseline != "" {
		b := fres.Baseline
		res.Common.Baseline = &b
	}
	for _, f := range fres.Families {
		for _, i := range f.Runs {
			res.Runs = append(res.Runs, scoring.RunResult{Scored: scored[i], Family: f.Name, Excluded: fruns[i].Excluded})
		}
	}
	out, err := job.Render(res)
	if err != nil {
		return nil, nil, err
	}
	for _, o := range objs {
		o.Release()
	}
	return out, res, nil
}

// Files encodes what Render made as the engine writes it: each Parquet
// file with the job's metadata, and report.md.
func Files(name string, r *scoring.Rendered) (map[string][]byte, error) {
	md, err := writers.NewMetadata(Version, name, SchemaVersion, r.Params)
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{"report.md": []byte(r.Report)}
	for _, t := range r.Tables {
		var buf bytes.Buffer
		if err := writers.WriteParquet(&buf, t.Table, md); err != nil {
			return nil, fmt.Errorf("writing %s: %w", t.Name, err)
		}
		out[t.Name] = buf.Bytes()
	}
	return out, nil
}

// Golden compares files with the goldens of cmd/crlbatch (dir holds one
// case: report.md and the Parquet files; manifest.json is not compared).
// It returns one line per difference.
func Golden(files map[string][]byte, dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var diffs []string
	seen := map[string]bool{}
	for _, e := range ents {
		name := e.Name()
		if name == "manifest.json" {
			continue
		}
		seen[name] = true
		want, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		got, ok := files[name]
		switch {
		case !ok:
			diffs = append(diffs, name+": not written")
		case !bytes.Equal(got, want):
			diffs = append(diffs, name+": "+firstDiff(got, want))
		}
	}
	for name := range files {
		if !seen[name] {
			diffs = append(diffs, name+": written, not in the goldens")
		}
	}
	slices.Sort(diffs)
	return diffs, nil
}

func firstDiff(got, want []byte) string {
	gl, wl := bytes.Split(got, []byte("\n")), bytes.Split(want, []byte("\n"))
	for i := 0; i < len(gl) || i < len(wl); i++ {
		var g, w []byte
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if !bytes.Equal(g, w) {
			if len(g) > 200 || len(w) > 200 { // binary
				return fmt.Sprintf("%d bytes, want %d; differ from line %d", len(got), len(want), i+1)
			}
			return fmt.Sprintf("line %d: got %q, want %q", i+1, g, w)
		}
	}
	return "differs"
}

// list lists the objects of dir matching DefaultPatterns, as keys relative
// to dir, in bytewise order.
func list(dir string) ([]string, error) {
	var keys []string
	err := filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		for _, pat := range DefaultPatterns {
			if ok, _ := path.Match(pat, e.Name()); ok {
				rel, err := filepath.Rel(dir, p)
				if err != nil {
					return err
				}
				keys = append(keys, filepath.ToSlash(rel))
				break
			}
		}
		return nil
	})
	slices.Sort(keys)
	return keys, err
}

func familyOf(groupBy []string, meta map[string]string) string {
	parts := make([]string, len(groupBy))
	for i, g := range groupBy {
		v, ok := meta[g]
		if !ok {
			return ""
		}
		parts[i] = v
	}
	return strings.Join(parts, "/")
}

func keep(where []scoring.Filter, meta map[string]string) bool {
	for _, f := range where {
		v, ok := meta[f.Field]
		if !ok || !slices.Contains(f.Values, v) {
			return false
		}
	}
	return true
}
