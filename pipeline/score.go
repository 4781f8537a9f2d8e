package pipeline

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sort"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/crlbatch/crlbatch/internal/hugemem"
	"github.com/crlbatch/crlbatch/internal/testhook"
	"github.com/crlbatch/crlbatch/protocol"
	"github.com/crlbatch/crlbatch/protocol/family"
	"github.com/crlbatch/crlbatch/readers"
	"github.com/crlbatch/crlbatch/scoring"
	"github.com/crlbatch/crlbatch/writers"
)

// each hands the runs of the decoded objects that --where keeps to fn, one
// at a time in canonical order, and gives each back to the decoder once fn
// returns. total, when not nil, counts every run assembled.
func (j *job) each(rd *read, total *int, fn func(*scoring.Run) error) error {
	dec := j.proto.dec
	var fnErr error
	err := dec.Assemble(rd.objects, func(r *scoring.Run) error {
		if total != nil {
			*total++
		}
		if !j.cfg.keep(r.Meta) {
			dec.Done(r)
			return nil
		}
		fnErr = fn(r)
		return fnErr
	})
	return j.assemblyErr(rd, err, fnErr)
}

// assemblyErr is the error of a pass over the runs of rd: fn's (fnErr) as
// it is, else the assembly's, a data error or, when an object was spilled
// and the error is no data error, the local disk's.
func (j *job) assemblyErr(rd *read, err, fnErr error) error {
	var de *readers.DataError
	switch {
	case err == nil || err == fnErr:
		return err
	case errors.As(err, &de) || rd.spilled == 0:
		return dataErr(err)
	default: // reading a spill file back failed: local disk
		return &StorageError{Op: "spill", URL: j.cfg.spillDir(), Err: err}
	}
}

// lightPrepare lets the preparing pass use the decoder's light assembly
// (tests turn it off to compare with each).
var lightPrepare = true

// eachPrepared is each for the preparing pass: through the decoder's light
// assembly when it has one for these objects and this pass (the runs hold
// only what Prepare reads), else each.
// The runs, their order and the errors are each's.
func (j *job) eachPrepared(rd *read, fn func(*scoring.Run) error) error {
	la, ok := j.proto.dec.(scoring.LightAssembler)
	if !ok || !lightPrepare {
		return j.each(rd, nil, fn)
	}
	dec := j.proto.dec
	var fnErr error
	done, err := la.AssembleLight(rd.objects, func(r *scoring.Run) error {
		if !j.cfg.keep(r.Meta) {
			dec.Done(r)
			return nil
		}
		fnErr = fn(r)
		return fnErr
	})
	if !done {
		return j.each(rd, nil, fn)
	}
	j.log.Debug("preparing pass over the runs' light assembly")
	return j.assemblyErr(rd, err, fnErr)
}

// score runs the protocol's steps over the decoded objects: a pass to
// prepare (when the protocol asks for one), a pass to score every run kept
// (at most --concurrency at once, each into its own slot), the reduction to
// families, and the rendering of the files; prev, for a nightly job, is
// the result its report says what changed since.
func (j *job) score(ctx context.Context, rd *read, prev *previous) (*result, error) {
	cfg, sj, dec := j.cfg, j.proto.job, j.proto.dec
	if p, ok := sj.(scoring.Preparer); ok {
		err := p.Prepare(func(fn func(*scoring.Run) error) error {
			return j.eachPrepared(rd, func(r *scoring.Run) error {
				defer dec.Done(r)
				return fn(r)
			})
		})
		if err != nil {
			dec.Close()
			return nil, err
		}
	}
	j.log.Info("scoring one run at a time", "rows", rd.rows)
	var slots []*scoreSlot
	total := 0
	fold := j.newFolder() // nil unless the job folds figures (pipeline/figures.go)
	g, gctx := errgroup.WithContext(ctx)
	// free holds a token for each run that may be scored at once. The
	// next run is assembled only once a token is taken, after its
	// predecessor was handed over: no run waits assembled (a dense trace,
	// megabytes on a large run) while --concurrency others are scored.
	free := make(chan struct{}, cfg.Concurrency)
	for range cfg.Concurrency {
		free <- struct{}{}
	}
	<-free // the first run's
	err := j.each(rd, &total, func(r *scoring.Run) error {
		if err := gctx.Err(); err != nil {
			dec.Done(r)
			return err
		}
		phase("score")
		s, i := &scoreSlot{}, len(slots)
		slots = append(slots, s)
		fold.add(i, r.Meta)
		g.Go(guarded(func() error {
			defer func() { free <- struct{}{} }()
			// A run once started is scored to its end, so that the first
			// failing run in canonical order is the one reported.
			testhook.At("score")
			s.res, s.err = sj.Score(r)
			dec.Done(r)
			fold.done(i, s.res)
			return s.err
		}))
		// The next run's token. Every run started ends and gives its token
		// back, so this wait ends too.
		<-free
		return nil
	})
	err = j.endScoring(ctx, rd, g, err, slots)
	if err != nil {
		return nil, err
	}
	scored := make([]*scoring.Scored, len(slots))
	for i, s := range slots {
		scored[i] = s.res
	}
	return j.reduceScored(ctx, rd, scored, total, prev)
}

// scoreSlot is where one run's scoring puts its result.
type scoreSlot struct {
	res *scoring.Scored
	err error
}

// endScoring ends a scoring pass: it waits for the runs being scored and
// returns a panic's InternalError (a bug, reported before anything the
// data did), else the first error of a run in canonical order (slots), else err
// (the assembly's), else the group's, else ctx's. Nothing reads the runs
// after this pass. Their decoded rows and the columns the decoder lends are
// most of the heap: it drops them and collects now, so that the reduction
// and the writers reuse that memory rather than grow the heap past it,
// and then gives back what of it they will not reach before the next
// collection (trimHeap), so that it stops counting in the job's peak while
// the writers and figures fault in the binary's pages they run (docs/decisions.md).
func (j *job) endScoring(ctx context.Context, rd *read, g *errgroup.Group, err error, slots []*scoreSlot) error {
	werr := g.Wait()
	for _, s := range slots {
		if s.err != nil {
			err = s.err
			break
		}
	}
	var bug *InternalError
	if err == nil || errors.As(werr, &bug) {
		err = werr // a bug before any run's error
	}
	j.proto.dec.Close()
	j.releaseObjects(rd)
	runtime.GC()
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if n := trimHeap(); n > 0 {
		j.log.Debug("free heap given back before the outputs", "bytes", n)
	}
	return nil
}

// trimHeap gives the heap's free memory back to the system, but for the
// room to its next goal (hugemem.TrimHeap); a variable so that a test can
// see the call.
var trimHeap = hugemem.TrimHeap

// reduceScored takes the scored runs kept (in canonical order; total runs
// were assembled) from there: the notes, --where's, the checks of the
// families, the reduction and the files (render). Another engine
// (engine.go) joins here.
func (j *job) reduceScored(ctx context.Context, rd *read, scored []*scoring.Scored, total int, prev *previous) (*result, error) {
	cfg := j.cfg
	notes := append([]string(nil), rd.notes...)
	for _, s := range scored {
		notes = append(notes, s.DataNotes...)
	}
	if len(cfg.Where) > 0 {
		notes = append(notes, fmt.Sprintf("--where kept %d of %d runs", len(scored), total))
		if len(scored) == 0 {
			return nil, &DataError{Err: fmt.Errorf("--where: no run matches %s", scoring.DescribeWhere(cfg.Where))}
		}
	}
	folderNotes, err := j.checkFamilies(rd, scored)
	if err != nil {
		return nil, err
	}
	notes = append(notes, folderNotes...)
	for _, s := range scored {
		notes = append(notes, s.Notes...)
	}
	return j.render(ctx, scored, notes, prev)
}

// checkFamilies refuses, before anything is reduced or published, a
// --group-by field that no run has (every run would fall into the family
// (none)) and a --baseline that names no family (unless
// --allow-missing-baseline): both are almost always typos. A field that
// some runs have is fine: the others form (none); so is a protocol's
// default group-by field that no run has (a sweep of one family), unless
// objects sit in Hive-style folders naming it (folderHint): then it
// returns a note saying so (and warns), the error's case.
func (j *job) checkFamilies(rd *read, scored []*scoring.Scored) ([]string, error) {
	kept := "no run has"
	if len(j.cfg.Where) > 0 {
		kept = "no run kept by --where has"
	}
	fields := map[string]bool{}
	for _, s := range scored {
		for k := range s.Meta {
			fields[k] = true
		}
	}
	for _, g := range j.cfg.GroupBy { // the protocol's default may be absent: no families then
		if fields[g] {
			continue
		}
		names := make([]string, 0, len(fields))
		for k := range fields {
			names = append(names, k)
		}
		sort.Strings(names)
		return nil, Usagef("--group-by %s: %s the field %q; the runs have %s%s (see docs/trace-format.md)",
			strings.Join(j.proto.groupBy, ","), kept, g, strings.Join(Closest(g, names), ", "), folderHint(rd, g))
	}
	var notes []string
	if len(j.cfg.GroupBy) == 0 {
		for _, g := range j.proto.groupBy {
			if h := folderHint(rd, g); !fields[g] && h != "" {
				n := fmt.Sprintf("every run is in the family (none): %s the field %q%s", kept, g, h)
				j.log.Warn(n)
				notes = append(notes, n)
			}
		}
	}
	if j.cfg.Baseline == "" || j.cfg.AllowMissingBaseline {
		return notes, nil
	}
	var fams []string
	seen := map[string]bool{}
	for _, s := range scored {
		f, _ := j.cfg.familyOf(j.proto.groupBy, s.Meta)
		if f == j.cfg.Baseline {
			return notes, nil
		}
		if !seen[f] {
			seen[f] = true
			if f != "" { // (none) cannot be named: --baseline "" is the default rule
				fams = append(fams, f)
			}
		}
	}
	have := "the families are " + strings.Join(Closest(j.cfg.Baseline, fams), ", ")
	if len(fams) == 0 {
		have = "the only family is (none), of runs without the field, which --baseline cannot name"
	}
	return nil, Usagef("--baseline %s: no family of that name (grouped by %s); %s; --allow-missing-baseline publishes without comparisons",
		j.cfg.Baseline, strings.Join(j.proto.groupBy, ","), have)
}

// folderHint says, for a field no run has, that objects read sit in
// Hive-style folders giving it a value (readers.HiveFolders of their keys
// below INPUT; those of Parquet objects would have given their rows the
// field, so these are JSON Lines objects): "; yet objects sit in folders
// naming it (algorithm_id=ppo/...), which give a field to the rows of
// Parquet objects only", or "".
func folderHint(rd *read, field string) string {
	if rd == nil {
		return ""
	}
	for _, o := range rd.manObj {
		fs, err := readers.HiveFolders(o.Key)
		if err != nil {
			continue
		}
		for _, f := range fs {
			if f.Name == field && f.Value != nil {
				return fmt.Sprintf("; yet objects sit in folders naming it (%s/...), which give a field to the rows of Parquet objects only: JSON Lines rows must hold it themselves (DuckDB writes them so with WRITE_PARTITION_COLUMNS true), or crlbatch convert them", f.Folder)
			}
		}
	}
	return ""
}

// reduce groups the scored runs into families (PROTOCOLS 1.6).
func (j *job) reduce(ctx context.Context, scored []*scoring.Scored, metrics []family.Metric) (*family.Result, []family.Run, error) {
	cfg := j.cfg
	fruns := make([]family.Run, len(scored))
	excluded, longest := 0, 0
	for i, s := range scored {
		fam, _ := cfg.familyOf(j.proto.groupBy, s.Meta)
		seed, hasSeed := s.Meta["seed"]
		fr := family.Run{Key: s.Key, Family: fam, Seed: seed, HasSeed: hasSeed, NSteps: s.Rows, Remarks: s.Remarks}
		if cfg.MinSteps > 0 && s.Rows < cfg.MinSteps {
			fr.Excluded, fr.ExcludedWhy = true, fmt.Sprintf("%d rows, fewer than --min-steps %d", s.Rows, cfg.MinSteps)
			excluded++
		}
		longest = max(longest, s.Rows)
		fr.Values = make([]protocol.Value, len(metrics))
		for m, met := range metrics {
			fr.Values[m] = s.Value(met.Name)
		}
		fruns[i] = fr
	}
	if excluded > 0 && excluded == len(scored) {
		// The result is published (the runs' own metrics stand, and the
		// notes name each exclusion), but no family has a statistic: a
		// nightly job's --min-steps set above every run says so here too.
		j.log.Warn("every run is excluded by --min-steps: no family has statistics",
			"min_steps", cfg.MinSteps, "runs", excluded, "longest_run_rows", longest)
	}
	fopt := family.DefaultOptions()
	fopt.Baseline = cfg.Baseline
	fopt.Resamples = cfg.Resamples
	fopt.Seed = cfg.BootstrapSeed
	fopt.GroupBy = strings.Join(j.proto.groupBy, ",")
	fopt.Each = func(n int, work func(int)) { // a done ctx skips what is left
		j.parallel(n, func(i int) {
			if ctx.Err() == nil {
				phase("reduce")
				work(i)
			}
		})
		if ctx.Err() != nil {
			// Aggregate must not go on with cells skipped (their rows
			// are empty): stop it, on this goroutine, for reduce.
			panic(reduceStopped{})
		}
	}
	fopt.Stop = func() bool { return ctx.Err() != nil } // one large bootstrap stops too
	fopt.AdvantageMetric = j.proto.job.AdvantageMetric()
	fres, err := func() (fres *family.Result, err error) {
		defer func() {
			if p := recover(); p != nil {
				if _, ok := p.(reduceStopped); !ok {
					panic(p)
				}
				fres, err = nil, ctx.Err()
			}
		}()
		return j.reduceCached(ctx, metrics, fruns, fopt)
	}()
	if errors.Is(err, family.ErrStopped) {
		err = ctx.Err()
	}
	if err != nil {
		return nil, nil, err
	}
	return fres, fruns, nil
}

// reduceStopped stops family.Aggregate once the job's context is done.
type reduceStopped struct{}

// render reduces the scored runs and builds every result file: the
// figures, the protocol's tables as Parquet, its report, in that order.
// The figures are drawn and rendered before the protocol's Render builds
// its tables and report, so that what they were drawn from (the folded
// curves, the drawing commands: ~150 MB for a run of 100,000 labels) is
// dropped before (issue 16). Once ctx is done it returns within a second
// or so (issue 16): the reduction, the protocol's Figures and its Render
// run on goroutines of their own, which render stops waiting for (they
// are pure: no I/O, nothing shared; the reduction skips its remaining
// cells and what follows is not started, so the goroutine ends soon
// after), the figures stop between drawing commands and the Parquet
// writers between columns.
func (j *job) render(ctx context.Context, scored []*scoring.Scored, notes []string, prev *previous) (*result, error) {
	cfg, sj := j.cfg, j.proto.job
	var (
		fres  *family.Result
		res   *scoring.Results
		drawn *scoring.Drawn // nil unless the job is a scoring.Figurer
	)
	err := async(ctx, func() error {
		var metrics []family.Metric
		for _, m := range sj.Metrics(scored) {
			metrics = append(metrics, family.Metric{Name: m.Name, HigherIsBetter: m.HigherIsBetter})
		}
		var fruns []family.Run
		var err error
		if fres, fruns, err = j.reduce(ctx, scored, metrics); err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		res = &scoring.Results{
			Input:    j.in.String(),
			Version:  cfg.Version,
			Families: fres,
			Common:   j.common(fres),
			Notes:    notes,
		}
		for _, f := range fres.Families {
			for _, i := range f.Runs {
				res.Runs = append(res.Runs, scoring.RunResult{Scored: scored[i], Family: f.Name, Excluded: fruns[i].Excluded})
			}
		}
		if f, ok := sj.(scoring.Figurer); ok {
			if drawn, err = f.Figures(res); err != nil {
				return err
			}
			if drawn != nil && cfg.NoFigures {
				// The tables behind the figures stay; nothing is drawn.
				drawn = &scoring.Drawn{Tables: drawn.Tables}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	figs, refs, inline, err := j.drawFigures(ctx, drawn)
	if err != nil {
		return nil, err
	}
	if drawn != nil {
		drawn.Figures = nil // rendered: their drawing commands go
	}
	var rd *scoring.Rendered
	err = async(ctx, func() (err error) {
		phase("render")
		rd, err = sj.Render(res)
		return err
	})
	if err != nil {
		return nil, err
	}
	for _, w := range rd.Warnings {
		j.log.Warn(w)
	}
	pj, err := json.Marshal(rd.Params)
	if err != nil {
		return nil, err
	}
	md, err := writers.NewMetadata(cfg.Version, j.proto.name, SchemaVersion, json.RawMessage(pj))
	if err != nil {
		return nil, err
	}
	md = append(md, j.provenanceKV()...)
	out := &result{params: pj, notes: append(notes, rd.Notes...), runs: len(scored), families: len(fres.Families)}
	tables := rd.Tables
	if drawn != nil {
		tables = append(tables[:len(tables):len(tables)], drawn.Tables...)
	}
	parts := []string{rd.Report}
	sec, err := prev.section(rd.Params, fres, scored)
	if err != nil {
		return nil, err
	}
	if sec != "" {
		parts = []string{strings.TrimRight(rd.Report, "\n"), "\n\n", sec}
	}
	// Each table is dropped once written (Render's and the figures'
	// references to it with it): the tables of a run of 100,000 labels
	// are ~100 MB of columns, their Parquet files a third of that.
	rd.Tables = nil
	if drawn != nil {
		drawn.Tables = nil
	}
	// Small tables are written on --concurrency goroutines, each into its
	// own buffer, and kept in their order: written one at a time they left
	// the other cores idle (on the nightly warm rerun, issue 15, ~17 ms of
	// its ~0.2 s of wall time went to them on one core). Large ones are
	// written one at a time, each dropped once written: two at once held
	// two tables' Arrow columns and cost a run of 100,000 labels 13-85 MB
	// more and 0.1-0.6 s.
	written := make([]outFile, len(tables))
	errs := make([]error, len(tables))
	write := func(i int) {
		tb := tables[i]
		tables[i] = scoring.Table{}
		if ctx.Err() != nil {
			return
		}
		phase("parquet")
		var buf bytes.Buffer
		if err := writers.WriteParquetContext(ctx, &buf, tb.Table, md); err != nil {
			errs[i] = fmt.Errorf("writing %s: %w", tb.Name, err)
			return
		}
		rows := int64(tb.Table.NumRows())
		written[i] = outFile{name: tb.Name, data: buf.Bytes(), rows: &rows}
	}
	total := 0
	for _, tb := range tables {
		total += tb.Table.NumRows()
	}
	if total > parallelTableRows {
		for i := range tables {
			if write(i); errs[i] != nil {
				break
			}
		}
	} else {
		// The costliest first, so that the last table started is not the
		// longest to write while the other cores wait (on the nightly warm
		// rerun curves.parquet, its last, took as long as two others).
		order := tableOrder(tables)
		j.parallel(len(order), func(k int) { write(order[k]) })
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// The first table's error in their order, whichever goroutine met it.
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	out.files = append(out.files, written...)
	out.files = append(out.files, figs...)
	reports, err := reportFiles(append(parts, writers.FiguresSection(refs)), inline)
	if err != nil {
		return nil, err
	}
	out.files = append(out.files, reports...)
	return out, nil
}

// tableOrder returns the indices of tables, the costliest to write first
// (the order they are written in, not the order of the files): by
// writers' cost of a table, about a tenth of a millisecond a column and a
// tenth of a microsecond a cell (tableCost), ties in their order.
func tableOrder(tables []scoring.Table) []int {
	order := make([]int, len(tables))
	cost := make([]int, len(tables))
	for i, tb := range tables {
		order[i], cost[i] = i, tableCost(tb.Table.NumRows(), tb.Table.NumColumns())
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(cost[b], cost[a]) })
	return order
}

// tableCost is the cost of writing a table of rows × cols cells, in cells:
// a column costs as much as about 900 cells (arrow-go's column writer,
// page and compressor), by the tables of the 1 GB sweep's warm rerun.
func tableCost(rows, cols int) int { return cols * (rows + 900) }

// parallelTableRows bounds the rows of a result's tables, all together,
// that render writes on several goroutines at once (a variable for the
// tests).
var parallelTableRows = 100_000

// async runs fn on a goroutine of its own and returns its error, or ctx's
// as soon as ctx is done (fn, pure, ends soon after on its own).
func async(ctx context.Context, fn func() error) error {
	done := make(chan error, 1)
	go func() { done <- guarded(fn)() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// common are the engine's parameters in crlbatch.params.
func (j *job) common(fres *family.Result) scoring.Common {
	cfg := j.cfg
	c := scoring.Common{
		GroupBy:            j.proto.groupBy,
		MinSteps:           cfg.MinSteps,
		Where:              cfg.Where,
		IdentityFields:     j.proto.identity,
		Patterns:           cfg.Patterns,
		BootstrapResamples: cfg.Resamples,
		BootstrapSeed:      cfg.BootstrapSeed,
		ConfidenceLevel:    family.DefaultOptions().Level,
	}
	if c.Where == nil {
		c.Where = []Filter{}
	}
	if fres.BaselineFound || fres.Baseline != "" {
		b := fres.Baseline
		c.Baseline = &b
	}
	return c
}
