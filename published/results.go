package published

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"

	"github.com/crlbatch/crlbatch/protocol"
	"github.com/crlbatch/crlbatch/protocol/family"
	"github.com/crlbatch/crlbatch/storage"
	"github.com/crlbatch/crlbatch/writers"
)

// Row is one family × metric row of families.parquet: the columns a
// comparison of results reads.
type Row struct {
	Family string
	Metric string
	// HigherIsBetter is nil for a count.
	HigherIsBetter *bool
	N              int64
	Mean, IQM      protocol.Value
	// CILow, CIHigh bound the mean, IQMCILow and IQMCIHigh the IQM
	// (bootstrap intervals).
	CILow, CIHigh, IQMCILow, IQMCIHigh protocol.Value
}

// Run is one run of a result: its key and family.
type Run struct {
	Key    string
	Family string
}

// Build names the crlbatch build that wrote a result: manifest.json's
// version and commit, each "" when unknown (a manifest of an older layout
// without them, a binary built without VCS information).
type Build struct {
	Version string
	Commit  string
}

// Result is one published result.
type Result struct {
	// URL names the result's folder (redacted).
	URL string
	// Build (version, commit), Input and FinishedAt are those of
	// manifest.json.
	Build
	Input      string
	FinishedAt string
	// Params is the result's parameter set: manifest.json's params, else
	// families.parquet's crlbatch.params.
	Params map[string]any
	// Rows are families.parquet's rows in order.
	Rows []Row
	// Families are the families in order of first appearance.
	Families []string
	// Runs are the runs of its run tables in order, each once.
	Runs []Run
}

// manifest is what Load reads of manifest.json; other fields are ignored.
type manifest struct {
	Version    string          `json:"version"`
	Commit     string          `json:"commit"`
	Input      string          `json:"input"`
	FinishedAt string          `json:"finished_at"`
	Params     json.RawMessage `json:"params"`
	Outputs    []struct {
		Name string `json:"name"`
	} `json:"outputs"`
}

// runTables are the tables that list runs, in order of preference: the
// first one a result holds gives its runs.
var runTables = []string{"run_summary.parquet", "runs.parquet", "cells.parquet"}

// Open opens the bucket of a location given on the command line (a blob
// URL or a local folder) for reading; release closes it.
func Open(ctx context.Context, op storage.Opener, where string) (b *blob.Bucket, loc storage.Location, release func() error, err error) {
	loc, err = storage.ParseLocation(where, false)
	if err != nil {
		return nil, loc, nil, err
	}
	if loc.Local && loc.Path != "" {
		return nil, loc, nil, storage.Usagef("%s: not a folder", loc)
	}
	b, release, err = storage.OpenBucket(ctx, op, loc)
	return b, loc, release, err
}

// Load reads the result under prefix (a key prefix ending in "/", or "")
// of b; url names it in messages.
func Load(ctx context.Context, b *blob.Bucket, loc storage.Location, prefix string) (*Result, error) {
	url := strings.TrimSuffix(loc.ObjectURL(prefix), "/")
	data, err := read(ctx, b, loc, prefix+"manifest.json")
	if errors.Is(err, errNotFound) {
		// A nightly history OUTPUT named as a result: say how to compare
		// its nights (the user meant one of them, or --nights).
		var ok bool
		_ = storage.DefaultRetry().Retry(ctx, func(ctx context.Context, _ func()) error {
			var err error
			ok, err = b.Exists(ctx, prefix+LatestFile)
			return err
		})
		if ok {
			return nil, storage.Usagef("%s: not a complete result (no manifest.json); it holds a nightly history (%s): compare its nights with crlbatch diff --nights N %s, or name one result, %s/<attempt-id>",
				url, LatestFile, url, strings.TrimSuffix(loc.ObjectURL(prefix+ResultsDir), "/"))
		}
		return nil, storage.Usagef("%s: not a complete result (no manifest.json)", url)
	}
	if err != nil {
		return nil, err
	}
	var m manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, &storage.DataError{Err: fmt.Errorf("%s: %w", loc.ObjectURL(prefix+"manifest.json"), err)}
	}
	res := &Result{URL: url, Build: Build{Version: m.Version, Commit: m.Commit}, Input: m.Input, FinishedAt: m.FinishedAt}
	if len(m.Params) > 0 && string(m.Params) != "null" {
		if err := json.Unmarshal(m.Params, &res.Params); err != nil {
			return nil, &storage.DataError{Err: fmt.Errorf("%s: params: %w", loc.ObjectURL(prefix+"manifest.json"), err)}
		}
	}
	outputs := map[string]bool{}
	for _, o := range m.Outputs {
		outputs[o.Name] = true
	}
	if !outputs["families.parquet"] {
		return nil, storage.Usagef("%s: the manifest lists no families.parquet", url)
	}
	fam, err := readParquet(ctx, b, loc, prefix+"families.parquet")
	if err != nil {
		return nil, err
	}
	if res.Params == nil {
		if p := fam.Metadata["crlbatch.params"]; p != "" {
			if err := json.Unmarshal([]byte(p), &res.Params); err != nil {
				return nil, &storage.DataError{Err: fmt.Errorf("%s: crlbatch.params: %w", loc.ObjectURL(prefix+"families.parquet"), err)}
			}
		}
	}
	for i, r := range fam.Rows {
		row, err := familyRow(r)
		if err != nil {
			return nil, &storage.DataError{Err: fmt.Errorf("%s: row %d: %w", loc.ObjectURL(prefix+"families.parquet"), i, err)}
		}
		res.Rows = append(res.Rows, row)
		if len(res.Families) == 0 || !contains(res.Families, row.Family) {
			res.Families = append(res.Families, row.Family)
		}
	}
	for _, name := range runTables {
		if !outputs[name] {
			continue
		}
		t, err := readParquet(ctx, b, loc, prefix+name)
		if err != nil {
			return nil, err
		}
		seen := map[string]bool{}
		for i, r := range t.Rows {
			key, ok := r["run_key"].(string)
			if !ok {
				return nil, &storage.DataError{Err: fmt.Errorf("%s: row %d has no run_key", loc.ObjectURL(prefix+name), i)}
			}
			if seen[key] {
				continue
			}
			seen[key] = true
			f, _ := r["family"].(string)
			res.Runs = append(res.Runs, Run{Key: key, Family: f})
		}
		break
	}
	return res, nil
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// familyRow reads one row of families.parquet.
func familyRow(r map[string]any) (Row, error) {
	var row Row
	var ok bool
	if row.Family, ok = r["family"].(string); !ok {
		return row, errors.New("no family")
	}
	if row.Metric, ok = r["metric"].(string); !ok {
		return row, errors.New("no metric")
	}
	if h, ok := r["higher_is_better"].(bool); ok {
		row.HigherIsBetter = &h
	}
	row.N, _ = r["n"].(int64)
	reasons := map[string]string{}
	if kvs, ok := r["reasons"].([]writers.KV); ok {
		for _, kv := range kvs {
			reasons[kv.Key] = kv.Value
		}
	}
	val := func(col string) protocol.Value {
		if f, ok := r[col].(float64); ok {
			return protocol.Some(f)
		}
		return protocol.None(reasons[col])
	}
	row.Mean, row.IQM = val("mean"), val("iqm")
	row.CILow, row.CIHigh = val("ci_low"), val("ci_high")
	row.IQMCILow, row.IQMCIHigh = val("iqm_ci_low"), val("iqm_ci_high")
	return row, nil
}

var errNotFound = errors.New("not found")

// read reads one object, retrying transient failures.
func read(ctx context.Context, b *blob.Bucket, loc storage.Location, key string) ([]byte, error) {
	var data []byte
	err := storage.DefaultRetry().Retry(ctx, func(ctx context.Context, touch func()) error {
		var err error
		data, err = storage.ReadAll(ctx, b, key, touch)
		if gcerrors.Code(err) == gcerrors.NotFound {
			return storage.Permanent(errNotFound)
		}
		return err
	})
	if errors.Is(err, errNotFound) {
		return nil, errNotFound
	}
	if err != nil {
		return nil, &storage.StorageError{Op: "read", URL: loc.ObjectURL(key), Err: storage.RedactErr(err)}
	}
	return data, nil
}

func readParquet(ctx context.Context, b *blob.Bucket, loc storage.Location, key string) (*writers.ReadBack, error) {
	data, err := read(ctx, b, loc, key)
	if errors.Is(err, errNotFound) {
		// The store answered: the result is damaged (half deleted, or
		// copied in part), not the store failing.
		return nil, &storage.DataError{Err: fmt.Errorf("%s: listed in manifest.json but missing", loc.ObjectURL(key))}
	}
	if err != nil {
		return nil, err
	}
	rb, err := writers.ReadParquet(bytes.NewReader(data))
	if err != nil {
		return nil, &storage.DataError{Err: fmt.Errorf("%s: %w", loc.ObjectURL(key), err)}
	}
	return rb, nil
}

// ResultsDir and LatestFile are the history layout's names.
const (
	ResultsDir = "results/"
	LatestFile = "LATEST"
)

// Nights returns the key prefixes of the n newest complete results of the
// history under loc's prefix in b, oldest first: the newest is the one
// LATEST names (when it exists), the others the complete results whose
// attempt ids sort before it.
func Nights(ctx context.Context, b *blob.Bucket, loc storage.Location, n int) ([]string, error) {
	base := loc.Prefix
	var ids []string
	err := storage.DefaultRetry().Retry(ctx, func(ctx context.Context, touch func()) error {
		ids = ids[:0]
		return storage.ListEach(ctx, b, &blob.ListOptions{Prefix: base + ResultsDir}, func(o *blob.ListObject) error {
			touch()
			rest := strings.TrimPrefix(o.Key, base+ResultsDir)
			if id, file, ok := strings.Cut(rest, "/"); ok && file == "manifest.json" && id != "" {
				ids = append(ids, id)
			}
			return nil
		})
	})
	if err != nil {
		return nil, &storage.StorageError{Op: "list", URL: loc.ObjectURL(base + ResultsDir), Err: storage.RedactErr(err)}
	}
	sort.Strings(ids)
	latest, err := read(ctx, b, loc, base+LatestFile)
	switch {
	case errors.Is(err, errNotFound):
	case err != nil:
		return nil, err
	default:
		name := strings.TrimSpace(string(latest))
		id := path.Base(strings.TrimSuffix(name, "/"))
		if strings.TrimSuffix(name, "/") != strings.TrimSuffix(ResultsDir, "/")+"/"+id {
			return nil, &storage.DataError{Err: fmt.Errorf("%s: %q does not name results/<attempt-id>/", loc.ObjectURL(base+LatestFile), name)}
		}
		i := sort.SearchStrings(ids, id)
		if i == len(ids) || ids[i] != id {
			return nil, &storage.DataError{Err: fmt.Errorf("%s names %s, which is not a complete result", loc.ObjectURL(base+LatestFile), name)}
		}
		ids = ids[:i+1]
	}
	if len(ids) < n {
		return nil, storage.Usagef("%s: %d complete result(s) under %s, want %d", loc, len(ids), ResultsDir, n)
	}
	out := make([]string, 0, n)
	for _, id := range ids[len(ids)-n:] {
		out = append(out, base+ResultsDir+id+"/")
	}
	return out, nil
}

// FromFamilies builds the Result a job is about to publish from its
// reduction, without reading it back: what Load would return once the
// result is written (url names it, build is the running crlbatch's
// version and commit as its manifest will have them, params is
// crlbatch.params, runs are the run keys in order). The nightly report
// compares it with the previous result (diff.Section) before it
// publishes.
func FromFamilies(url string, build Build, params any, fams *family.Result, runs []Run) (*Result, error) {
	res := &Result{URL: url, Build: build, Runs: runs}
	if params != nil {
		p, err := json.Marshal(params)
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(p, &res.Params); err != nil {
			return nil, err
		}
	}
	for _, f := range fams.Families {
		if !contains(res.Families, f.Name) {
			res.Families = append(res.Families, f.Name)
		}
		for _, r := range f.Rows {
			res.Rows = append(res.Rows, Row{Family: r.Family, Metric: r.Metric, HigherIsBetter: r.HigherIsBetter, N: int64(r.N),
				Mean: r.Mean, IQM: r.IQM, CILow: r.CILow, CIHigh: r.CIHigh, IQMCILow: r.IQMCILow, IQMCIHigh: r.IQMCIHigh})
		}
	}
	return res, nil
}
