package records

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/crlbatch/crlbatch/scoring"
	"github.com/crlbatch/crlbatch/writers"
)

// Header is the report header of a record protocol: the title
// "crlbatch report: <name>", the input, the version, and every parameter
// of params (crlbatch.params) but "protocol", in the order of its JSON
// fields, each value as JSON.
func Header(name string, params any, res *scoring.Results) (writers.ReportHeader, error) {
	pj, err := json.Marshal(params)
	if err != nil {
		return writers.ReportHeader{}, err
	}
	dec := json.NewDecoder(bytes.NewReader(pj))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return writers.ReportHeader{}, fmt.Errorf("records: params of %s are not a JSON object", name)
	}
	var kv []writers.KV
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return writers.ReportHeader{}, err
		}
		k, _ := tok.(string)
		var v any
		if err := dec.Decode(&v); err != nil {
			return writers.ReportHeader{}, err
		}
		if k == "protocol" {
			continue
		}
		// Re-encoded as encoding/json renders a decoded value (objects
		// with sorted keys, numbers through float64), as the report always
		// has.
		vj, err := json.Marshal(v)
		if err != nil {
			return writers.ReportHeader{}, err
		}
		kv = append(kv, writers.KV{Key: k, Value: string(vj)})
	}
	return writers.ReportHeader{
		Title: "crlbatch report: " + name, Input: res.Input, Protocol: name,
		Version: res.Version, Params: kv,
	}, nil
}

// Metrics returns the metrics with a value per key (perKey), then those
// with one value per run (perRun), each with its direction from hib (none
// for counts).
func Metrics(hib func(string) (bool, bool), perKey, perRun []string) []scoring.Metric {
	out := make([]scoring.Metric, 0, len(perKey)+len(perRun))
	for i, n := range append(append([]string{}, perKey...), perRun...) {
		m := scoring.Metric{Name: n, PerKey: i < len(perKey)}
		if b, ok := hib(n); ok {
			m.HigherIsBetter = &b
		}
		out = append(out, m)
	}
	return out
}

// Results returns the protocol results (Scored.Result) of runs, in order.
// A run holding another type is an error.
func Results[T any](runs []*scoring.Scored) ([]T, error) {
	out := make([]T, len(runs))
	for i, r := range runs {
		res, ok := r.Result.(T)
		if !ok {
			return nil, fmt.Errorf("records: run %s holds a %T result, not a %T", r.Key, r.Result, out[i])
		}
		out[i] = res
	}
	return out, nil
}

// Scored returns the scored runs of res, in order.
func Scored(res *scoring.Results) []*scoring.Scored {
	out := make([]*scoring.Scored, len(res.Runs))
	for i := range res.Runs {
		out[i] = res.Runs[i].Scored
	}
	return out
}

// Metas returns the runs' metadata in order, for writers.DeclareRunColumns.
func Metas(runs []scoring.RunResult) []map[string]string {
	out := make([]map[string]string, len(runs))
	for i := range runs {
		out[i] = runs[i].Meta
	}
	return out
}

// Table names a table and how to build it.
type Table struct {
	Name  string
	Build func() (*writers.Table, error)
}

// Families is families.parquet, built from the reduction.
func Families(res *scoring.Results) Table {
	return Table{Name: "families.parquet", Build: func() (*writers.Table, error) { return writers.FamiliesTable(res.Families) }}
}

// Render builds a record protocol's outputs: its tables ts in order, and
// the report that report renders under the header of params (Header).
func Render(name string, params any, res *scoring.Results, report func(writers.ReportHeader) string, ts ...Table) (*scoring.Rendered, error) {
	tables, err := Tables(ts...)
	if err != nil {
		return nil, err
	}
	h, err := Header(name, params, res)
	if err != nil {
		return nil, err
	}
	return &scoring.Rendered{Params: params, Tables: tables, Report: report(h)}, nil
}

// Tables builds tables in order; an error names the table.
func Tables(ts ...Table) ([]scoring.Table, error) {
	out := make([]scoring.Table, 0, len(ts))
	for _, t := range ts {
		tb, err := t.Build()
		if err != nil {
			return nil, fmt.Errorf("building %s: %w", t.Name, err)
		}
		out = append(out, scoring.Table{Name: t.Name, Table: tb})
	}
	return out, nil
}
