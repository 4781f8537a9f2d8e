package writers

import (
	"math"

	"github.com/apache/arrow-go/v18/parquet"
)

// Dictionary pages and determinism.
//
// arrow-go dictionary-encodes every column by default and, when a column
// chunk's dictionary grows to the dictionary page size limit, falls back to
// plain pages for the rest of the chunk. Such a chunk has data pages of two
// encodings, and arrow-go writes their counts (the footer's encoding_stats)
// in the order of a Go map: the same table gave different bytes from one
// write to the next. So no chunk may fall back: a column whose dictionary
// would reach the limit in some row group is written without one (plain
// pages in every row group), and every other column keeps its dictionary,
// which then never reaches the limit.
//
// Dictionary pages and size. A dictionary stores each distinct value once
// and an index for every row; for a column of numbers whose values are
// mostly distinct (a metric of every run or label, a curve's points) that
// is the values and the indices both, and the dictionary is only checked
// against the page size limit. So a column of numbers (metrics, integers,
// list elements) is also written without a dictionary when, in some row
// group, more than half of its (at least minDistinctRows) valid values are
// distinct: the result's files were 8-20 % smaller on the benchmark sweeps
// (docs/decisions.md, "Parquet results: no dictionary for numbers that
// are mostly distinct"), the values the same.

// noDictionary returns a writer property turning the dictionary off for
// every leaf column of t whose dictionary would reach limit bytes in some
// row group of RowGroupRows rows, and for every column of numbers whose
// values are mostly distinct in some row group (numberDict).
func (t *Table) noDictionary(limit int64) []parquet.WriterProperty {
	// leaf is one leaf column of c: its path, and whether its dictionary
	// reaches limit over the rows lo:hi.
	type leaf struct {
		path  parquet.ColumnPath
		reach func(lo, hi int) bool
	}
	var props []parquet.WriterProperty
	for _, c := range t.cols {
		var leaves []leaf
		switch c.kind {
		case kindString:
			leaves = []leaf{{parquet.ColumnPath{c.name}, func(lo, hi int) bool {
				return stringDict(c.strs[lo:hi], c.validSlice(lo, hi), limit)
			}}}
		case kindInt64:
			leaves = []leaf{{parquet.ColumnPath{c.name}, func(lo, hi int) bool {
				return numberDict(hi-lo, func(i int) uint64 { return uint64(c.ints[lo+i]) }, c.validSlice(lo, hi), limit)
			}}}
		case kindMetric:
			leaves = []leaf{{parquet.ColumnPath{c.name}, func(lo, hi int) bool {
				return numberDict(hi-lo, func(i int) uint64 { return math.Float64bits(c.f64s[lo+i]) }, c.validSlice(lo, hi), limit)
			}}}
		case kindList:
			leaves = []leaf{{parquet.ColumnPath{c.name, "list", "element"}, func(lo, hi int) bool {
				s, e := c.offsets[lo], c.offsets[hi]
				return numberDict(e-s, func(i int) uint64 { return math.Float64bits(c.elems[s+i]) }, c.elemValid[s:e], limit)
			}}}
		case kindStringList:
			leaves = []leaf{{parquet.ColumnPath{c.name, "list", "element"}, func(lo, hi int) bool {
				return stringDict(c.keys[c.offsets[lo]:c.offsets[hi]], nil, limit)
			}}}
		case kindMap, kindReasons:
			leaves = []leaf{
				{parquet.ColumnPath{c.name, "key_value", "key"}, func(lo, hi int) bool {
					return stringDict(c.keys[c.offsets[lo]:c.offsets[hi]], nil, limit)
				}},
				{parquet.ColumnPath{c.name, "key_value", "value"}, func(lo, hi int) bool {
					return stringDict(c.vals[c.offsets[lo]:c.offsets[hi]], nil, limit)
				}},
			}
		}
		for _, l := range leaves {
			for lo := 0; lo < t.rows; lo += RowGroupRows {
				if l.reach(lo, min(lo+RowGroupRows, t.rows)) {
					props = append(props, parquet.WithDictionaryPath(l.path, false))
					break
				}
			}
		}
	}
	return props
}

// stringDict reports whether the dictionary of the valid values of vals
// (valid nil: all) reaches limit bytes: arrow-go counts each distinct value
// as its length and a 4-byte length prefix.
func stringDict(vals []string, valid []bool, limit int64) bool {
	var all int64
	for i, v := range vals {
		if valid == nil || valid[i] {
			all += int64(len(v)) + 4
		}
	}
	if all < limit {
		return false // not even with every value distinct
	}
	seen := make(map[string]struct{}, len(vals))
	var size int64
	for i, v := range vals {
		if valid != nil && !valid[i] {
			continue
		}
		if _, ok := seen[v]; !ok {
			seen[v] = struct{}{}
			if size += int64(len(v)) + 4; size >= limit {
				return true
			}
		}
	}
	return false
}

// minDistinctRows is the fewest valid values of a column of numbers in a
// row group for which numberDict weighs how many are distinct: a handful
// of values costs the same bytes either way.
const minDistinctRows = 64

// numberDict is stringDict for n 8-byte values, bits(i) the i-th, and also
// reports a dictionary that does not pay: more than half the valid values
// distinct, of at least minDistinctRows. Values are told apart by their
// bits, so that no two values arrow-go keeps apart count once (it may keep
// fewer: the estimate errs towards no dictionary).
func numberDict(n int, bits func(int) uint64, valid []bool, limit int64) bool {
	vals := 0
	for i := 0; i < n; i++ {
		if valid == nil || valid[i] {
			vals++
		}
	}
	if vals < minDistinctRows && int64(vals)*8 < limit {
		return false
	}
	seen := make(map[uint64]struct{}, vals)
	var size int64
	for i := 0; i < n; i++ {
		if valid != nil && !valid[i] {
			continue
		}
		if _, ok := seen[bits(i)]; !ok {
			seen[bits(i)] = struct{}{}
			if size += 8; size >= limit || 2*len(seen) > vals {
				return true
			}
		}
	}
	return false
}
