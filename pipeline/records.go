package pipeline

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/crlbatch/crlbatch/protocol"
	"github.com/crlbatch/crlbatch/protocol/contilab"
	"github.com/crlbatch/crlbatch/protocol/family"
	"github.com/crlbatch/crlbatch/protocol/safecrl"
	"github.com/crlbatch/crlbatch/protocol/skillshift"
	"github.com/crlbatch/crlbatch/readers"
	"github.com/crlbatch/crlbatch/writers"
)

// Record protocols: their rows are small (per episode, per accuracy, per
// task), so their runs are held in memory and scored one after another.

// recordParams is crlbatch.params for the record protocols.
type recordParams struct {
	Protocol           string   `json:"protocol"`
	WindowEpisodes     *int     `json:"window_episodes,omitempty"`
	WindowFraction     *float64 `json:"window_fraction,omitempty"`
	RankMetric         string   `json:"rank_metric,omitempty"`
	GroupBy            []string `json:"group_by"`
	Baseline           *string  `json:"baseline"`
	MinSteps           int      `json:"min_steps"`
	Where              []Filter `json:"where"`
	IdentityFields     []string `json:"identity_fields"`
	Patterns           []string `json:"patterns"`
	BootstrapResamples int      `json:"bootstrap_resamples"`
	BootstrapSeed      uint64   `json:"bootstrap_seed"`
	ConfidenceLevel    float64  `json:"confidence_level"`
}

// scoredRun is what the reduction needs of any protocol's run.
type scoredRun struct {
	key     string
	meta    map[string]string
	nRows   int
	values  func(metric string) protocol.Value
	remarks []string
}

// reduce groups scored runs into families and fills the params.
func (j *job) reduce(runs []scoredRun, metrics []family.Metric, advantage string) (*family.Result, []family.Run, error) {
	cfg := j.cfg
	fruns := make([]family.Run, len(runs))
	for i, r := range runs {
		fam, _ := cfg.familyOf(r.meta)
		seed, hasSeed := r.meta["seed"]
		fr := family.Run{Key: r.key, Family: fam, Seed: seed, HasSeed: hasSeed, NSteps: r.nRows, Remarks: r.remarks}
		if cfg.MinSteps > 0 && r.nRows < cfg.MinSteps {
			fr.Excluded, fr.ExcludedWhy = true, fmt.Sprintf("%d rows, fewer than --min-steps %d", r.nRows, cfg.MinSteps)
		}
		for _, m := range metrics {
			fr.Values = append(fr.Values, r.values(m.Name))
		}
		fruns[i] = fr
	}
	fopt := family.DefaultOptions()
	fopt.Baseline = cfg.Baseline
	fopt.Resamples = cfg.Resamples
	fopt.Seed = cfg.BootstrapSeed
	fopt.GroupBy = strings.Join(cfg.GroupBy, ",")
	fopt.Each = j.each
	fopt.AdvantageMetric = advantage
	fres, err := family.Aggregate(metrics, fruns, fopt)
	if err != nil {
		return nil, nil, err
	}
	j.families = len(fres.Families)
	j.runs = len(runs)
	return fres, fruns, nil
}

func metricsOf(names []string, hib func(string) (bool, bool)) []family.Metric {
	out := make([]family.Metric, 0, len(names))
	for _, n := range names {
		m := family.Metric{Name: n}
		if b, ok := hib(n); ok {
			m.HigherIsBetter = &b
		}
		out = append(out, m)
	}
	return out
}

// canonical lists run indices family by family, in the order of fres.
func canonical(fres *family.Result) [][2]int {
	var out [][2]int
	for fi, f := range fres.Families {
		for _, i := range f.Runs {
			out = append(out, [2]int{fi, i})
		}
	}
	return out
}

func (j *job) recordParams(fres *family.Result, identity []string) recordParams {
	cfg := j.cfg
	p := recordParams{
		Protocol:           cfg.Protocol,
		GroupBy:            cfg.GroupBy,
		MinSteps:           cfg.MinSteps,
		Where:              cfg.Where,
		IdentityFields:     identity,
		Patterns:           cfg.Patterns,
		BootstrapResamples: cfg.Resamples,
		BootstrapSeed:      cfg.BootstrapSeed,
		ConfidenceLevel:    family.DefaultOptions().Level,
	}
	if p.Where == nil {
		p.Where = []Filter{}
	}
	if fres.BaselineFound || fres.Baseline != "" {
		b := fres.Baseline
		p.Baseline = &b
	}
	return p
}

// encodeTables writes the Parquet files of a record protocol.
func (j *job) encodeTables(params any, tables []namedTable) ([]outFile, error) {
	pj, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	j.params = pj
	md, err := writers.NewMetadata(j.cfg.Version, j.cfg.Protocol, SchemaVersion, json.RawMessage(pj))
	if err != nil {
		return nil, err
	}
	var files []outFile
	for _, tb := range tables {
		t, err := tb.build()
		if err != nil {
			return nil, fmt.Errorf("building %s: %w", tb.name, err)
		}
		var buf bytes.Buffer
		if err := writers.WriteParquet(&buf, t, md); err != nil {
			return nil, fmt.Errorf("writing %s: %w", tb.name, err)
		}
		rows := int64(t.NumRows())
		files = append(files, outFile{name: tb.name, data: buf.Bytes(), rows: &rows})
	}
	return files, nil
}

type namedTable struct {
	name  string
	build func() (*writers.Table, error)
}

func (j *job) header(params any) writers.ReportHeader {
	var kv []writers.KV
	pj, _ := json.Marshal(params)
	var m map[string]any
	_ = json.Unmarshal(pj, &m)
	var order []string
	dec := json.NewDecoder(bytes.NewReader(pj))
	dec.Token()
	for dec.More() {
		k, _ := dec.Token()
		var v json.RawMessage
		dec.Decode(&v)
		order = append(order, k.(string))
	}
	for _, k := range order {
		if k == "protocol" {
			continue
		}
		v, _ := json.Marshal(m[k])
		kv = append(kv, writers.KV{Key: k, Value: string(v)})
	}
	return writers.ReportHeader{
		Title: "crlbatch report: " + j.cfg.Protocol, Input: j.in.String(), Protocol: j.cfg.Protocol,
		Version: j.cfg.Version, Params: kv,
	}
}

// ---- safecrl

// rowCheck is RecordOptions.Check for a record protocol: the row is read
// as its run will be scored, so that a field of the wrong type or a missing
// one is a bad row, found (and skippable under --max-bad-rows) while the
// object is read.
func rowCheck(protocol string) func(*readers.Record) error {
	switch protocol {
	case "safecrl":
		return func(r *readers.Record) error { _, err := safecrlEpisode(r); return err }
	case "contilab":
		return func(r *readers.Record) error { var run contilab.Run; return contilabRow(r, &run) }
	case "skillshift":
		return func(r *readers.Record) error { _, err := skillshiftTask(r); return err }
	}
	return nil
}

func safecrlRun(rr *readers.RecordRun) (*safecrl.Run, error) {
	run := &safecrl.Run{Key: rr.Key, Meta: rr.Meta, Episodes: make([]safecrl.Episode, 0, len(rr.Rows))}
	for _, r := range rr.Rows {
		e, err := safecrlEpisode(r)
		if err != nil {
			return nil, err
		}
		run.Episodes = append(run.Episodes, e)
	}
	return run, nil
}

func safecrlEpisode(r *readers.Record) (safecrl.Episode, error) {
	var e safecrl.Episode
	var ok bool
	var err error
	if e.Task, ok, err = r.String("task"); err != nil {
		return e, err
	} else if !ok {
		return e, r.MissingError("task", "string")
	}
	if e.Episode, e.HasEpisode, err = r.Int("episode"); err != nil {
		return e, err
	}
	if e.Return, ok, err = r.Number("return"); err != nil {
		return e, err
	} else if !ok {
		return e, r.MissingError("return", "number")
	}
	if e.Cost, e.HasCost, err = r.Number("cost"); err != nil {
		return e, err
	}
	if e.Success, e.HasSuccess, err = r.BoolOrNumber01("success"); err != nil {
		return e, err
	}
	return e, nil
}

func (j *job) safecrl(runs []*readers.RecordRun, identity []string) ([]outFile, error) {
	p := safecrl.DefaultParams()
	if j.cfg.WindowEpisodes > 0 {
		p.WindowEpisodes = j.cfg.WindowEpisodes
	}
	if err := p.Check(); err != nil {
		return nil, &UsageError{Err: fmt.Errorf("--window-episodes: %w", err)}
	}
	var results []*safecrl.RunResult
	var scored []scoredRun
	for _, rr := range runs {
		run, err := safecrlRun(rr)
		if err != nil {
			return nil, err
		}
		res, err := safecrl.Score(run, &p)
		if err != nil {
			return nil, &DataError{Err: fmt.Errorf("run %s: %w", rr.Key, err)}
		}
		results = append(results, res)
		scored = append(scored, scoredRun{key: rr.Key, meta: rr.Meta, nRows: len(rr.Rows), values: func(m string) protocol.Value {
			if v, ok := res.RunMetric(m); ok {
				return v
			}
			return res.SeedValue(m)
		}})
	}
	metrics := metricsOf(append(append([]string{}, safecrl.TaskMetrics...), safecrl.RunCounts...), safecrl.HigherIsBetter)
	fres, fruns, err := j.reduce(scored, metrics, "")
	if err != nil {
		return nil, err
	}
	out := &writers.SafecrlOutput{Families: fres}
	for _, c := range canonical(fres) {
		i := c[1]
		out.Runs = append(out.Runs, writers.SafecrlRun{Key: runs[i].Key, Source: runs[i].Meta[readers.SourceField],
			Family: fres.Families[c[0]].Name, Meta: runs[i].Meta, Excluded: fruns[i].Excluded, Result: results[i]})
	}
	params := j.recordParams(fres, identity)
	params.WindowEpisodes = &p.WindowEpisodes
	files, err := j.encodeTables(params, []namedTable{
		{"runs.parquet", func() (*writers.Table, error) { return writers.SafecrlRunsTable(out) }},
		{"run_summary.parquet", func() (*writers.Table, error) { return writers.SafecrlRunSummaryTable(out) }},
		{"families.parquet", func() (*writers.Table, error) { return writers.FamiliesTable(fres) }},
	})
	if err != nil {
		return nil, err
	}
	report := writers.SafecrlReport(j.header(params), out, j.notes)
	return append(files, outFile{name: "report.md", data: []byte(report)}), nil
}

// ---- contilab

func contilabRun(rr *readers.RecordRun) (*contilab.Run, error) {
	run := &contilab.Run{Key: rr.Key, Meta: rr.Meta}
	// A record repeated within a run is an error naming both rows (the
	// protocol package refuses it too, without knowing where rows came from).
	type seenAt struct {
		url  string
		line int
	}
	seen := map[string]seenAt{}
	for _, r := range rr.Rows {
		before := len(run.Matrix) + len(run.Initial) + len(run.Joint) + len(run.Stream) + len(run.Curve) + len(run.Diags)
		if err := contilabRow(r, run); err != nil {
			return nil, err
		}
		if len(run.Matrix)+len(run.Initial)+len(run.Joint)+len(run.Stream)+len(run.Curve)+len(run.Diags) == before {
			continue
		}
		var key string
		switch kind, _, _ := r.String("kind"); kind {
		case "matrix":
			e := run.Matrix[len(run.Matrix)-1]
			key = fmt.Sprintf("matrix cell (after_task %d, eval_task %d)", e.AfterTask, e.EvalTask)
		case "initial":
			key = fmt.Sprintf("initial accuracy of eval_task %d", run.Initial[len(run.Initial)-1].EvalTask)
		case "joint":
			key = fmt.Sprintf("joint accuracy of eval_task %d", run.Joint[len(run.Joint)-1].EvalTask)
		case "stream":
			e := run.Stream[len(run.Stream)-1]
			key = fmt.Sprintf("stream point (step %d, eval_task %d)", e.Step, e.EvalTask)
		case "curve":
			e := run.Curve[len(run.Curve)-1]
			key = fmt.Sprintf("curve point (task %d, batch %d)", e.Task, e.Batch)
		case "diag":
			e := run.Diags[len(run.Diags)-1]
			key = fmt.Sprintf("diagnostic %q of task %d", e.Name, e.Task)
		}
		if prev, dup := seen[key]; dup {
			return nil, r.Errorf("kind", "run %s: the %s is recorded twice (first at %s line %d)", rr.Key, key, prev.url, prev.line)
		}
		seen[key] = seenAt{r.URL(), r.Line()}
	}
	return run, nil
}

// contilabRow adds one row to run.
func contilabRow(r *readers.Record, run *contilab.Run) error {
	kind, ok, err := r.String("kind")
	if err != nil {
		return err
	} else if !ok {
		return r.MissingError("kind", "string")
	}
	num := func(f string) (float64, error) {
		v, ok, err := r.Number(f)
		switch {
		case err != nil:
		case !ok:
			err = r.MissingError(f, "number")
		case f == "acc" && v < 0:
			err = r.Errorf(f, "negative accuracy %v", v)
		}
		return v, err
	}
	integer := func(f string) (int64, error) {
		v, ok, err := r.Int(f)
		if err == nil && !ok {
			err = r.MissingError(f, "integer")
		}
		return v, err
	}
	ints := func(fs ...string) ([]int, error) {
		out := make([]int, len(fs))
		for i, f := range fs {
			v, err := integer(f)
			if err != nil {
				return nil, err
			}
			if v < 0 || v > contilab.MaxIndex {
				return nil, r.Errorf(f, "task and batch indices run from 0 to %d, got %d", contilab.MaxIndex, v)
			}
			out[i] = int(v)
		}
		return out, nil
	}
	switch kind {
	case "matrix":
		ix, err := ints("after_task", "eval_task")
		if err != nil {
			return err
		}
		acc, err := num("acc")
		if err != nil {
			return err
		}
		run.Matrix = append(run.Matrix, contilab.MatrixEntry{AfterTask: ix[0], EvalTask: ix[1], Acc: acc})
	case "initial", "joint":
		ix, err := ints("eval_task")
		if err != nil {
			return err
		}
		acc, err := num("acc")
		if err != nil {
			return err
		}
		if kind == "initial" {
			run.Initial = append(run.Initial, contilab.InitialEntry{EvalTask: ix[0], Acc: acc})
		} else {
			run.Joint = append(run.Joint, contilab.JointEntry{EvalTask: ix[0], Acc: acc})
		}
	case "stream":
		step, err := integer("step")
		if err != nil {
			return err
		}
		ix, err := ints("train_task", "eval_task")
		if err != nil {
			return err
		}
		acc, err := num("acc")
		if err != nil {
			return err
		}
		run.Stream = append(run.Stream, contilab.StreamPoint{Step: step, TrainTask: ix[0], EvalTask: ix[1], Acc: acc})
	case "curve":
		ix, err := ints("task", "batch")
		if err != nil {
			return err
		}
		acc, err := num("acc")
		if err != nil {
			return err
		}
		run.Curve = append(run.Curve, contilab.CurvePoint{Task: ix[0], Batch: ix[1], Acc: acc})
	case "diag":
		name, ok, err := r.String("name")
		if err != nil {
			return err
		} else if !ok {
			return r.MissingError("name", "string")
		}
		ix, err := ints("task")
		if err != nil {
			return err
		}
		v, err := num("value")
		if err != nil {
			return err
		}
		run.Diags = append(run.Diags, contilab.Diag{Name: name, Task: ix[0], Value: v})
	default:
		return r.Errorf("kind", "unknown kind %q (want matrix, initial, joint, stream, curve or diag)", kind)
	}
	return nil
}

func (j *job) contilab(runs []*readers.RecordRun, identity []string) ([]outFile, error) {
	cfg := j.cfg
	p := contilab.DefaultParams()
	if cfg.WindowFraction > 0 {
		p.WindowFraction = cfg.WindowFraction
	}
	if err := p.Check(); err != nil {
		return nil, &UsageError{Err: fmt.Errorf("--window-fraction: %w", err)}
	}
	rank := cfg.RankMetric
	if rank == "" {
		rank = contilab.DefaultRankMetric
	}
	hib, ok := contilab.HigherIsBetter(rank)
	if !ok {
		return nil, Usagef("--rank-metric %q: want a metric with a better direction (acc, aia, bwt, fwt, …)", rank)
	}
	var results []*contilab.RunResult
	var scored []scoredRun
	for _, rr := range runs {
		run, err := contilabRun(rr)
		if err != nil {
			return nil, err
		}
		res, err := contilab.Score(run, &p)
		if err != nil {
			return nil, &DataError{Err: fmt.Errorf("run %s (from %s): %w", rr.Key, rr.Meta[readers.SourceField], err)}
		}
		results = append(results, res)
		for _, n := range res.Notes {
			j.notes = append(j.notes, "run "+rr.Key+": "+n)
		}
		scored = append(scored, scoredRun{key: rr.Key, meta: rr.Meta, nRows: len(rr.Rows), values: func(m string) protocol.Value {
			v, ok := res.Metric(m)
			if !ok {
				return protocol.None("no such metric")
			}
			return v
		}})
	}
	names := append(append([]string{}, contilab.Metrics...), contilab.DiagColumns(results)...)
	names = append(names, contilab.CountMetrics...)
	metrics := metricsOf(names, contilab.HigherIsBetter)
	fres, fruns, err := j.reduce(scored, metrics, "")
	if err != nil {
		return nil, err
	}
	out := &writers.ContilabOutput{Families: fres, RankMetric: rank}
	for _, c := range canonical(fres) {
		i := c[1]
		out.Runs = append(out.Runs, writers.ContilabRun{Key: runs[i].Key, Source: runs[i].Meta[readers.SourceField],
			Family: fres.Families[c[0]].Name, Meta: runs[i].Meta, Excluded: fruns[i].Excluded, Result: results[i]})
	}
	// Across benchmarks, when the runs carry several values of `benchmark`.
	var values []contilab.BenchmarkValue
	benchmarks := map[string]bool{}
	for _, r := range out.Runs {
		b, ok := r.Meta["benchmark"]
		if !ok || r.Excluded {
			continue
		}
		benchmarks[b] = true
		v, _ := r.Result.Metric(rank)
		values = append(values, contilab.BenchmarkValue{Family: r.Family, Benchmark: b, Value: v})
	}
	if len(benchmarks) > 1 {
		mt := contilab.NewMeanTable(values)
		bres, err := contilab.Benchmarks(mt.Families, mt.Benchmarks, hib, mt.Score)
		if err != nil {
			return nil, &DataError{Err: err}
		}
		out.Benchmarks = bres
		for _, n := range bres.Notes {
			j.notes = append(j.notes, n)
		}
	}
	params := j.recordParams(fres, identity)
	params.WindowFraction = &p.WindowFraction
	params.RankMetric = rank
	tables := []namedTable{
		{"runs.parquet", func() (*writers.Table, error) { return writers.ContilabRunsTable(out) }},
		{"matrix.parquet", func() (*writers.Table, error) { return writers.ContilabMatrixTable(out) }},
		{"families.parquet", func() (*writers.Table, error) { return writers.FamiliesTable(fres) }},
	}
	if out.Benchmarks != nil {
		tables = append(tables, namedTable{"benchmarks.parquet", func() (*writers.Table, error) { return writers.ContilabBenchmarksTable(out) }})
	}
	files, err := j.encodeTables(params, tables)
	if err != nil {
		return nil, err
	}
	report := writers.ContilabReport(j.header(params), out, j.notes)
	return append(files, outFile{name: "report.md", data: []byte(report)}), nil
}

// ---- skillshift

func skillshiftRun(rr *readers.RecordRun) (*skillshift.Run, error) {
	run := &skillshift.Run{Key: rr.Key, Meta: rr.Meta, Tasks: make([]skillshift.Task, 0, len(rr.Rows))}
	for _, r := range rr.Rows {
		t, err := skillshiftTask(r)
		if err != nil {
			return nil, err
		}
		run.Tasks = append(run.Tasks, t)
	}
	return run, nil
}

func skillshiftTask(r *readers.Record) (skillshift.Task, error) {
	var t skillshift.Task
	str := func(f string, required bool) (string, error) {
		s, ok, err := r.String(f)
		if err == nil && !ok && required {
			err = r.MissingError(f, "string")
		}
		return s, err
	}
	var err error
	if t.UID, err = str("uid", false); err != nil {
		return t, err
	}
	if t.Site, err = str("site", true); err != nil {
		return t, err
	}
	if t.Condition, err = str("condition", true); err != nil {
		return t, err
	}
	s, ok, err := r.BoolOrNumber01("success")
	if err != nil {
		return t, err
	} else if !ok {
		return t, r.MissingError("success", "boolean")
	}
	t.Success = s == 1
	if t.Steps, ok, err = r.Number("steps"); err != nil {
		return t, err
	} else if !ok {
		return t, r.MissingError("steps", "number")
	}
	if t.SkillCalls, t.HasSkillCalls, err = r.Number("skill_calls"); err != nil {
		return t, err
	}
	if t.SkillFailures, t.HasSkillFailures, err = r.Number("skill_failures"); err != nil {
		return t, err
	}
	// The checks skillshift.Score makes on one task, made here too so that
	// the error names the object and line.
	switch {
	case t.Site == "":
		return t, r.Errorf("site", "empty site")
	case t.Condition == "":
		return t, r.Errorf("condition", "empty condition")
	case t.Steps < 0:
		return t, r.Errorf("steps", "negative step count %v", t.Steps)
	case t.HasSkillCalls && t.SkillCalls < 0:
		return t, r.Errorf("skill_calls", "negative count %v", t.SkillCalls)
	case t.HasSkillFailures && t.SkillFailures < 0:
		return t, r.Errorf("skill_failures", "negative count %v", t.SkillFailures)
	case t.HasSkillFailures && !t.HasSkillCalls:
		return t, r.Errorf("skill_failures", "recorded without skill_calls")
	case t.HasSkillFailures && t.SkillFailures > t.SkillCalls:
		return t, r.Errorf("skill_failures", "%v failures exceed %v skill calls", t.SkillFailures, t.SkillCalls)
	}
	return t, nil
}

func (j *job) skillshift(runs []*readers.RecordRun, identity []string) ([]outFile, error) {
	var results []*skillshift.RunResult
	var scored []scoredRun
	for _, rr := range runs {
		run, err := skillshiftRun(rr)
		if err != nil {
			return nil, err
		}
		res, err := skillshift.Score(run)
		if err != nil {
			return nil, &DataError{Err: fmt.Errorf("run %s (from %s): %w", rr.Key, rr.Meta[readers.SourceField], err)}
		}
		results = append(results, res)
		for _, n := range res.Notes {
			j.notes = append(j.notes, "run "+rr.Key+": "+n)
		}
		scored = append(scored, scoredRun{key: rr.Key, meta: rr.Meta, nRows: len(rr.Rows), values: func(m string) protocol.Value {
			if m == "n_tasks" {
				return protocol.Some(float64(res.NTasks))
			}
			return res.SeedValue(m)
		}})
	}
	names := append(append([]string{}, skillshift.Metrics...), "n_tasks")
	metrics := metricsOf(names, skillshift.HigherIsBetter)
	fres, fruns, err := j.reduce(scored, metrics, "")
	if err != nil {
		return nil, err
	}
	out := &writers.SkillshiftOutput{Families: fres}
	for _, c := range canonical(fres) {
		i := c[1]
		out.Runs = append(out.Runs, writers.SkillshiftRun{Key: runs[i].Key, Source: runs[i].Meta[readers.SourceField],
			Family: fres.Families[c[0]].Name, Meta: runs[i].Meta, Excluded: fruns[i].Excluded, Result: results[i]})
	}
	params := j.recordParams(fres, identity)
	files, err := j.encodeTables(params, []namedTable{
		{"cells.parquet", func() (*writers.Table, error) { return writers.SkillshiftCellsTable(out) }},
		{"table.parquet", func() (*writers.Table, error) { return writers.SkillshiftTable(out) }},
		{"families.parquet", func() (*writers.Table, error) { return writers.FamiliesTable(fres) }},
	})
	if err != nil {
		return nil, err
	}
	report := writers.SkillshiftReport(j.header(params), out, j.notes)
	return append(files, outFile{name: "report.md", data: []byte(report)}), nil
}
