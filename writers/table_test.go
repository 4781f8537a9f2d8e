package writers

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/crlbatch/crlbatch/protocol"
)

// rowTable is a small table whose columns the cases below fill or not.
type rowTable struct {
	tb   *Table
	name StringColumn
	seed Int64Column
	ok   BoolColumn
	m    MetricColumn
	l    ListColumn
	kv   MapColumn
}

func newRowTable() rowTable {
	tb := NewTable()
	r := rowTable{tb: tb, name: tb.String("name"), seed: tb.Int64("seed"), ok: tb.Bool("ok"),
		m: tb.Metric("m"), l: tb.MetricList("l"), kv: tb.Map("kv")}
	tb.Reasons()
	return r
}

// full appends one value to every column but those named in skip.
func (r rowTable) full(skip ...string) {
	if !slices.Contains(skip, "name") {
		r.name.Append("x")
	}
	if !slices.Contains(skip, "seed") {
		r.seed.Append(1)
	}
	if !slices.Contains(skip, "ok") {
		r.ok.Append(true)
	}
	if !slices.Contains(skip, "m") {
		r.m.Append(protocol.Some(1))
	}
	if !slices.Contains(skip, "l") {
		r.l.Append(nil)
	}
	if !slices.Contains(skip, "kv") {
		r.kv.Append(nil)
	}
}

func TestEndRowRefusesBadRows(t *testing.T) {
	cases := []struct {
		name string
		fill func(r rowTable)
		want string
	}{
		{"missing column", func(r rowTable) { r.full("seed") }, `no value for column "seed"`},
		{"two missing", func(r rowTable) { r.full("m", "name") }, `no value for column "name", "m"`},
		{"nothing", func(r rowTable) {}, `no value for column "name", "seed", "ok", "m", "l", "kv"`},
		{"repeated", func(r rowTable) { r.full(); r.m.Append(protocol.Some(2)) }, `more than one value for column "m"`},
		{"repeated list", func(r rowTable) { r.full(); r.l.Append(nil) }, `more than one value for column "l"`},
		{"NaN metric", func(r rowTable) { r.full("m"); r.m.Append(protocol.Value{V: math.NaN(), OK: true}) }, `column "m": present value NaN is not finite`},
		{"Inf metric", func(r rowTable) { r.full("m"); r.m.Append(protocol.Value{V: math.Inf(-1), OK: true}) }, `column "m": present value -Inf is not finite`},
		{"absent without reason", func(r rowTable) { r.full("m"); r.m.Append(protocol.Value{}) }, `column "m": absent value without a reason`},
		{"NaN element", func(r rowTable) {
			r.full("l")
			r.l.Append([]protocol.Value{protocol.Some(1), {V: math.NaN(), OK: true}})
		}, `column "l": element 1: present value NaN is not finite`},
		{"null in non-null string", func(r rowTable) { r.full("name"); r.name.AppendNull() }, `column "name": null in a non-nullable column`},
		{"bad UTF-8 string", func(r rowTable) { r.full("name"); r.name.Append("a\xffb") }, `column "name": string "a\xffb" is not valid UTF-8`},
		{"repeated map key", func(r rowTable) { r.full("kv"); r.kv.Append([]KV{{"a", "1"}, {"b", "2"}, {"a", "3"}}) }, `column "kv": map key "a" repeated`},
		{"bad UTF-8 map value", func(r rowTable) { r.full("kv"); r.kv.Append([]KV{{"a", "\xff"}}) }, `column "kv": map value "\xff" of key "a" is not valid UTF-8`},
		{"two problems", func(r rowTable) {
			r.full("m")
			r.m.Append(protocol.Value{})
			r.seed.Append(2)
		}, `row 1: column "m": absent value without a reason; more than one value for column "seed"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRowTable()
			r.full()
			mustEndRow(t, r.tb)
			c.fill(r)
			err := r.tb.EndRow()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("EndRow error = %v, want one containing %q", err, c.want)
			}
			// The bad row is gone: the table is as before and takes a good row.
			if r.tb.NumRows() != 1 || r.tb.pending() {
				t.Fatalf("after a refused row: %d rows, pending=%v", r.tb.NumRows(), r.tb.pending())
			}
			r.m.Append(protocol.None("why"))
			r.full("m")
			mustEndRow(t, r.tb)
			for _, col := range r.tb.cols {
				if col.n != 2 || (col.nullable && len(col.valid) != 2) || len(col.offsets) != 3 && (col.kind == kindList || col.kind == kindMap || col.kind == kindReasons) {
					t.Errorf("column %q: n=%d valid=%d offsets=%d after rollback and a good row", col.name, col.n, len(col.valid), len(col.offsets))
				}
			}
			if got := r.tb.reasons.keys; !slices.Equal(got, []string{"m"}) {
				t.Errorf("reasons keys %v, want [m]", got)
			}
		})
	}
}

func TestDeclarationErrors(t *testing.T) {
	cases := []struct {
		name    string
		declare func(tb *Table)
		want    string
	}{
		{"upper case", func(tb *Table) { tb.String("runKey") }, `column name "runKey" is not snake_case`},
		{"dash", func(tb *Table) { tb.Metric("diag-x") }, `column name "diag-x" is not snake_case`},
		{"empty", func(tb *Table) { tb.Bool("") }, `column name "" is not snake_case`},
		{"leading digit", func(tb *Table) { tb.Int64("1x") }, "not snake_case"},
		{"duplicate", func(tb *Table) { tb.String("a"); tb.Metric("a") }, `column "a" declared twice`},
		{"reserved", func(tb *Table) { tb.Map("reasons") }, `column name "reasons" is reserved`},
		{"reasons twice", func(tb *Table) { tb.Reasons(); tb.Reasons() }, `column "reasons" declared twice`},
		{"after a value", func(tb *Table) { tb.String("a").Append("x"); tb.String("b") }, `column "b" declared after values were appended`},
		{"after a row", func(tb *Table) {
			tb.String("a").Append("x")
			_ = tb.EndRow()
			tb.String("b")
		}, `column "b" declared after values were appended`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tb := NewTable()
			c.declare(tb)
			if err := tb.Err(); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Err() = %v, want one containing %q", err, c.want)
			}
			// The error sticks: later declarations and rows do not clear it.
			tb.String("later").Append("x")
			if err := tb.EndRow(); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("EndRow error = %v, want the declaration error", err)
			}
		})
	}
}

func TestReasonsFollowMetricOrder(t *testing.T) {
	tb := NewTable()
	b := tb.Metric("b_metric")
	tb.Reasons()
	a := tb.Metric("a_metric")
	b.Append(protocol.None("second reason"))
	a.Append(protocol.None("first reason"))
	mustEndRow(t, tb)
	r := tb.reasons
	if !slices.Equal(r.keys, []string{"b_metric", "a_metric"}) || !slices.Equal(r.vals, []string{"second reason", "first reason"}) {
		t.Errorf("reasons = %v → %v, want declaration order", r.keys, r.vals)
	}
	if got := tb.ColumnNames(); !slices.Equal(got, []string{"b_metric", "reasons", "a_metric"}) {
		t.Errorf("ColumnNames() = %v", got)
	}
}
