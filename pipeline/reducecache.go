package pipeline

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/crlbatch/crlbatch/cache"
	"github.com/crlbatch/crlbatch/protocol/family"
	"github.com/crlbatch/crlbatch/scoring"
)

// Family entries (--cache, kind "families"). A family's rows (its
// statistics, bootstrap intervals and comparison with the baseline) depend
// on its own runs and, when a baseline is found, on the baseline's runs
// alone: every cell bootstraps on a seed of its family and metric
// (PROTOCOLS 1.6). Each family's rows (scoring.AppendExact) are kept under
// a key made of the exact bits of those runs (scoring.AppendExact of every
// family.Run, in run order), the
// baseline's name and whether it was found, the metrics, every option of
// the reduction (family.Options but its callbacks: the resamples, the
// bootstrap seed, the level, the advantage metric, the group-by field,
// the truncation share) and the build (buildKey). A family whose entry is
// there is not bootstrapped again. A changed run changes its family's key
// and, when that family is the baseline, every compared family's key.
//
// Cell entries (kind "cells"): a family whose entry is not there may
// still have most of its rows unchanged (a moved ceiling moves one metric
// of every run, performance_gap, and no other). Each row but its adjusted
// p value (Benjamini–Hochberg across the family's metrics) depends on one
// metric alone: of the family's runs and the baseline's, in run order,
// whether each is excluded, its seed and its value of that metric. Each
// row is kept under a key made of those, the family's and the baseline's
// names, whether the baseline was found, the metric, the same options and
// the build; a row whose entry is there is not bootstrapped again, and
// the family's adjusted p values are computed again over its rows
// (family.Adjust).

const (
	familiesKind   = "families"
	cellsKind      = "cells"
	familyCacheTag = "crlbatch-families-1" // raise with the entries' layout
	cellCacheTag   = "crlbatch-cells-1"
)

// reduceCached is family.Aggregate with the job's family and cell
// entries: one call of Aggregate over every run (the families, their
// runs, the notes and the baseline), whose Each leaves out the cells
// (family × metric) that an entry holds; their rows are set from the
// entries, and the adjusted p values of a family with any row set so
// computed again over all its rows. Should Aggregate's result not be laid
// out as this assumes (families in order of first appearance, a row per
// metric), the families are reduced again without entries;
// TestReduceCached checks the result against one call of Aggregate over
// every run.
func (j *job) reduceCached(ctx context.Context, metrics []family.Metric, runs []family.Run, opt family.Options) (*family.Result, error) {
	jc := j.cache
	if jc == nil || len(metrics) == 0 {
		return family.Aggregate(metrics, runs, opt)
	}
	// The families in order of first appearance, as Aggregate orders them.
	var names []string
	members := map[string][]int{}
	for i := range runs {
		f := runs[i].Family
		if _, ok := members[f]; !ok {
			names = append(names, f)
		}
		members[f] = append(members[f], i)
	}
	baseline, found := family.ResolveBaseline(opt.Baseline, names)
	common, err := scoring.AppendExact(nil, metrics)
	var optBits []byte
	if err == nil {
		optBits, err = scoring.AppendExact(nil, opt)
		common = append(common, optBits...)
	}
	if err != nil {
		j.log.Debug("family entries not used", "reason", err)
		return family.Aggregate(metrics, runs, opt)
	}
	runsBits := func(f string) ([]byte, error) {
		var out []byte
		for _, i := range members[f] {
			var err error
			if out, err = scoring.AppendExact(out, runs[i]); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	var baseBits []byte
	if found {
		if baseBits, err = runsBits(baseline); err != nil {
			j.log.Debug("family entries not used", "reason", err)
			return family.Aggregate(metrics, runs, opt)
		}
	}
	build := buildKey(j.cfg.Version, j.cfg.Commit)
	keys := make([]string, len(names))
	for k, f := range names {
		bits, err := runsBits(f)
		if err != nil {
			j.log.Debug("family entries not used", "reason", err)
			return family.Aggregate(metrics, runs, opt)
		}
		keys[k] = cache.Key(familyCacheTag, build, string(common), f, string(bits),
			baseline, fmt.Sprint(found), string(baseBits))
	}
	fc, cc := jc.c.Kind(familiesKind), jc.c.Kind(cellsKind)
	warn := func(err error, what, name, url string) {
		switch {
		case err == nil || ctx.Err() != nil:
		case errors.Is(err, cache.ErrCorrupt):
			j.log.Warn("cache entry not trusted: it is rebuilt", "of", what, "family", name, "entry", url, "reason", err)
		default:
			j.entryUnreadable(ctx, err, "cache entry cannot be read", "of", what, "family", name, "entry", url)
		}
	}
	served := make([][]family.Row, len(names))
	err = j.eachEntry(ctx, len(names), func(ctx context.Context, k int) error {
		e, ok, err := fc.Get(ctx, keys[k])
		if err == nil && ok {
			var rows []family.Row
			rows, err = decodeRows(e.Payload, names[k], metrics)
			if err == nil {
				served[k] = rows
				return nil
			}
			err = fmt.Errorf("%w: %v", cache.ErrCorrupt, err)
		}
		warn(err, "family", names[k], fc.URL(keys[k]))
		return nil
	})
	if err != nil {
		return nil, err
	}
	// The cells of the families without an entry.
	nm := len(metrics)
	cellKeys := make([]string, len(names)*nm)
	cells := make([]*family.Row, len(names)*nm)
	var metBits, baseCells [][]byte // by metric, when some family needs them
	for k, f := range names {
		if served[k] != nil {
			continue
		}
		if metBits == nil {
			metBits, baseCells = make([][]byte, nm), make([][]byte, nm)
			for m := range metrics {
				if metBits[m], err = scoring.AppendExact(nil, &metrics[m]); err != nil {
					j.log.Debug("family entries not used", "reason", err)
					return family.Aggregate(metrics, runs, opt)
				}
				if found {
					baseCells[m] = cellBits(runs, members[baseline], m)
				}
			}
		}
		for m := range metrics {
			cellKeys[k*nm+m] = cache.Key(cellCacheTag, build, string(optBits), string(metBits[m]), f,
				string(cellBits(runs, members[f], m)), baseline, fmt.Sprint(found), string(baseCells[m]))
		}
	}
	err = j.eachEntry(ctx, len(cells), func(ctx context.Context, i int) error {
		if cellKeys[i] == "" {
			return nil
		}
		e, ok, err := cc.Get(ctx, cellKeys[i])
		if err == nil && ok {
			var row family.Row
			err = scoring.DecodeExact(e.Payload, &row)
			if err == nil && (row.Family != names[i/nm] || row.Metric != metrics[i%nm].Name) {
				err = fmt.Errorf("the row of %q, %q", row.Family, row.Metric)
			}
			if err == nil {
				cells[i] = &row
				return nil
			}
			err = fmt.Errorf("%w: %v", cache.ErrCorrupt, err)
		}
		warn(err, "cell", names[i/nm], cc.URL(cellKeys[i]))
		return nil
	})
	if err != nil {
		return nil, err
	}
	known := func(i int) bool { return served[i/nm] != nil || cells[i] != nil }
	each := opt.Each
	if each == nil {
		each = func(n int, work func(int)) {
			for i := range n {
				work(i)
			}
		}
	}
	left := opt
	left.Each = func(n int, work func(int)) {
		if n != len(cells) {
			each(n, work) // not laid out as assumed: found out below
			return
		}
		var todo []int
		for i := range n {
			if !known(i) {
				todo = append(todo, i)
			}
		}
		each(len(todo), func(x int) { work(todo[x]) })
	}
	res, err := family.Aggregate(metrics, runs, left)
	if err != nil {
		return nil, err
	}
	same := len(res.Families) == len(names) && res.Baseline == baseline && res.BaselineFound == found
	for k := 0; same && k < len(names); k++ {
		f := &res.Families[k]
		same = f.Name == names[k] && len(f.Rows) == nm
		for m := 0; same && m < nm; m++ {
			same = known(k*nm+m) || f.Rows[m].Family == names[k] && f.Rows[m].Metric == metrics[m].Name
		}
	}
	if !same {
		j.log.Debug("family entries not used: the reduction is not laid out as they assume")
		return family.Aggregate(metrics, runs, opt)
	}
	stats := [4]int{} // families served, reduced; cells served, bootstrapped
	for k := range names {
		f := &res.Families[k]
		if served[k] != nil {
			f.Rows = served[k]
			stats[0]++
			continue
		}
		stats[1]++
		some := false
		for m := range metrics {
			i := k*nm + m
			if cells[i] != nil {
				f.Rows[m], some = *cells[i], true
				stats[2]++
				continue
			}
			stats[3]++
			if data, err := scoring.AppendExact(nil, &f.Rows[m]); err == nil {
				j.putLater(ctx, cc, cellKeys[i], data)
			} else {
				j.cacheWriteFailed(ctx, err)
			}
		}
		if some {
			family.Adjust(f.Rows)
		}
		if data, err := encodeRows(f.Rows); err == nil {
			j.putLater(ctx, fc, keys[k], data)
		} else {
			j.cacheWriteFailed(ctx, err)
		}
	}
	j.log.Info("families from the cache", "served", stats[0], "reduced", stats[1], "cells_served", stats[2], "cells_bootstrapped", stats[3])
	return res, nil
}

// cellBits are what a row of metric m depends on of the runs at idx, in
// order: whether each is excluded, its seed, its value of m.
func cellBits(runs []family.Run, idx []int, m int) []byte {
	var out []byte
	for _, i := range idx {
		r := &runs[i]
		var flags byte
		if r.Excluded {
			flags |= 1
		}
		if r.HasSeed {
			flags |= 2
		}
		v := r.Values[m]
		if v.OK {
			flags |= 4
		}
		out = append(out, flags)
		out = binary.AppendUvarint(out, uint64(len(r.Seed)))
		out = append(out, r.Seed...)
		out = binary.LittleEndian.AppendUint64(out, math.Float64bits(v.V))
		out = binary.AppendUvarint(out, uint64(len(v.Reason)))
		out = append(out, v.Reason...)
	}
	return out
}

// encodeRows is a family's rows as a family entry holds them.
func encodeRows(rows []family.Row) ([]byte, error) {
	return scoring.AppendExact(nil, rows)
}

// decodeRows reads a family entry back: the rows of family f, one per
// metric.
func decodeRows(data []byte, f string, metrics []family.Metric) ([]family.Row, error) {
	var rows []family.Row
	if err := scoring.DecodeExact(data, &rows); err != nil {
		return nil, err
	}
	if len(rows) != len(metrics) {
		return nil, fmt.Errorf("%d rows for %d metrics", len(rows), len(metrics))
	}
	for m := range rows {
		if rows[m].Family != f || rows[m].Metric != metrics[m].Name {
			return nil, fmt.Errorf("row %d is of %q, %q", m, rows[m].Family, rows[m].Metric)
		}
	}
	return rows, nil
}
