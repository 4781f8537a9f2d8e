package pipeline

import (
	"context"
	"errors"
	"fmt"
	"slices"

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

const (
	familiesKind   = "families"
	familyCacheTag = "crlbatch-families-1" // raise with the entries' layout
)

// reduceCached is family.Aggregate with the job's family entries. When
// some families have an entry and others not, it calls Aggregate twice:
// over every run with one bootstrap resample a cell (the families, their
// runs, the notes and the baseline, all independent of the resamples;
// its rows are dropped), and over the runs of the families without an
// entry and the baseline's, the baseline named (their rows). The rows of
// the families with an entry are the entry's. Should Aggregate's result
// not be laid out as this assumes (families, baseline), the families are
// reduced again without entries; TestReduceCached checks the result
// against one call of Aggregate over every run.
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
	if err == nil {
		common, err = scoring.AppendExact(common, opt)
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
	keys := make([]string, len(names))
	for k, f := range names {
		bits, err := runsBits(f)
		if err != nil {
			j.log.Debug("family entries not used", "reason", err)
			return family.Aggregate(metrics, runs, opt)
		}
		keys[k] = cache.Key(familyCacheTag, buildKey(j.cfg.Version, j.cfg.Commit), string(common), f, string(bits),
			baseline, fmt.Sprint(found), string(baseBits))
	}
	fc := jc.c.Kind(familiesKind)
	served := make([][]family.Row, len(names))
	err = j.eachLimited(ctx, len(names), func(ctx context.Context, k int) error {
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
		switch {
		case err == nil || ctx.Err() != nil:
		case errors.Is(err, cache.ErrCorrupt):
			j.log.Warn("cache entry not trusted: it is rebuilt", "of", "family", "family", names[k], "entry", fc.URL(keys[k]), "reason", err)
		default:
			j.log.Warn("cache entry cannot be read", "of", "family", "family", names[k], "entry", fc.URL(keys[k]), "error", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	nm := len(metrics)
	var missed []int // the runs of the families to reduce, and the baseline's
	nMissed := 0
	for k, f := range names {
		if served[k] == nil {
			nMissed++
		}
		if served[k] == nil || found && f == baseline {
			missed = append(missed, members[f]...)
		}
	}
	var res *family.Result
	if nMissed == len(names) {
		if res, err = family.Aggregate(metrics, runs, opt); err != nil {
			return nil, err
		}
	} else {
		// Everything but the rows, at the cost of one resample a cell:
		// the families, their runs, the notes and the baseline.
		shape := opt
		shape.Resamples = 1
		if res, err = family.Aggregate(metrics, runs, shape); err != nil {
			return nil, err
		}
		var part *family.Result
		if nMissed > 0 {
			slices.Sort(missed)
			sub := make([]family.Run, len(missed))
			for i, r := range missed {
				sub[i] = runs[r]
			}
			named := opt
			named.Baseline = baseline
			if part, err = family.Aggregate(metrics, sub, named); err != nil {
				return nil, err
			}
		}
		same := len(res.Families) == len(names) && res.Baseline == baseline && res.BaselineFound == found
		for k := 0; same && k < len(names); k++ {
			f := &res.Families[k]
			same = f.Name == names[k]
			if !same || served[k] != nil {
				continue
			}
			same = false
			for _, pf := range part.Families {
				if pf.Name == f.Name && len(pf.Rows) == nm && part.Baseline == baseline && part.BaselineFound == found {
					f.Rows, same = pf.Rows, true
				}
			}
		}
		if !same {
			j.log.Debug("family entries not used: the reduction is not laid out as they assume")
			return family.Aggregate(metrics, runs, opt)
		}
		for k := range names {
			if served[k] != nil {
				res.Families[k].Rows = served[k]
			}
		}
	}
	stats := [2]int{}
	for k := range names {
		if served[k] != nil {
			stats[0]++
			continue
		}
		stats[1]++
		data, err := encodeRows(res.Families[k].Rows)
		if err == nil {
			err = fc.Put(ctx, keys[k], cache.Entry{Payload: data})
		}
		if err != nil {
			j.cacheWriteFailed(ctx, err)
		}
	}
	j.log.Info("families from the cache", "served", stats[0], "reduced", stats[1])
	return res, nil
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
