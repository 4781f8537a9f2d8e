package writers

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/crlbatch/crlbatch/protocol"
)

// ReasonsColumn is the name of the column that Table.Reasons declares.
const ReasonsColumn = "reasons"

// KV is one key/value pair of a map cell or of Parquet key/value metadata.
type KV struct {
	Key, Value string
}

type kind int

const (
	kindString kind = iota
	kindInt64
	kindMetric
	kindBool
	kindList
	kindMap
	kindReasons
	kindStringList
)

var snakeCase = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// Table is a columnar table built row by row: declare every column first, then
// for each row append exactly one value to every column and call EndRow.
//
// Mistakes do not turn into silent nulls. A bad declaration (a name that is
// not snake_case, a duplicate, a declaration after the first value) makes
// every later EndRow and WriteParquet fail. A row that misses a column, sets
// one twice or carries a bad value (a non-finite metric, an absent metric
// without a reason, a string that is not UTF-8, a repeated map key) is refused
// by EndRow, which then removes the whole row, so the table stays consistent.
//
// A Table is not safe for concurrent use.
type Table struct {
	cols    []*column
	metrics []*column // metric columns, in declaration order
	reasons *column   // nil unless Reasons was called
	rows    int       // complete rows
	declErr error     // sticky: a bad declaration
	rowErr  []string  // problems with the pending row
}

// NewTable returns an empty table with no columns.
func NewTable() *Table { return &Table{} }

// NumRows returns the number of complete rows.
func (t *Table) NumRows() int { return t.rows }

// NumColumns returns the number of columns declared.
func (t *Table) NumColumns() int { return len(t.cols) }

// ColumnNames returns the column names in declaration order, which is the
// order of the columns in the written file.
func (t *Table) ColumnNames() []string {
	names := make([]string, len(t.cols))
	for i, c := range t.cols {
		names[i] = c.name
	}
	return names
}

// Err returns the declaration error, if any.
func (t *Table) Err() error { return t.declErr }

// String declares a non-nullable string column.
func (t *Table) String(name string) StringColumn {
	return StringColumn{t.declare(name, kindString, false)}
}

// NullableString declares a nullable string column.
func (t *Table) NullableString(name string) StringColumn {
	return StringColumn{t.declare(name, kindString, true)}
}

// Int64 declares a nullable int64 column.
func (t *Table) Int64(name string) Int64Column {
	return Int64Column{t.declare(name, kindInt64, true)}
}

// Metric declares a nullable float64 metric column. Absent values are written
// as nulls and their reasons go to the reasons column (see Reasons).
func (t *Table) Metric(name string) MetricColumn {
	return MetricColumn{t.declare(name, kindMetric, true)}
}

// Bool declares a nullable boolean column.
func (t *Table) Bool(name string) BoolColumn {
	return BoolColumn{t.declare(name, kindBool, true)}
}

// MetricList declares a list<double> column whose elements are nullable (an
// absent Value is a null element). The list itself is never null; a row
// without elements holds an empty list.
func (t *Table) MetricList(name string) ListColumn {
	return ListColumn{t.declare(name, kindList, false)}
}

// StringList declares a list<string> column (non-null elements). The list
// itself is never null; a row without elements holds an empty list.
func (t *Table) StringList(name string) StringListColumn {
	return StringListColumn{t.declare(name, kindStringList, false)}
}

// Map declares a map<string,string> column. The map itself is never null; a
// row without entries holds an empty map.
func (t *Table) Map(name string) MapColumn {
	return MapColumn{t.declare(name, kindMap, false)}
}

// Reasons declares the "reasons" column, a map<string,string> from metric
// column name to the reason its value is null in that row. The table fills it
// itself at EndRow from the absent values of the Metric columns, in
// declaration order, so it always agrees with the nulls. WriteParquet refuses
// a table that has Metric columns but no reasons column.
func (t *Table) Reasons() {
	t.reasons = t.declare(ReasonsColumn, kindReasons, false)
}

func (t *Table) declare(name string, k kind, nullable bool) *column {
	c := &column{t: t, name: name, kind: k, nullable: nullable, offsets: []int{0}}
	if t.declErr != nil {
		return c
	}
	switch {
	case !snakeCase.MatchString(name):
		t.declErr = fmt.Errorf("writers: column name %q is not snake_case", name)
	case slices.ContainsFunc(t.cols, func(o *column) bool { return o.name == name }):
		t.declErr = fmt.Errorf("writers: column %q declared twice", name)
	case name == ReasonsColumn && k != kindReasons:
		t.declErr = fmt.Errorf("writers: column name %q is reserved: declare it with Reasons", name)
	case t.rows > 0 || t.pending():
		t.declErr = fmt.Errorf("writers: column %q declared after values were appended", name)
	}
	if t.declErr != nil {
		return c
	}
	t.cols = append(t.cols, c)
	if k == kindMetric {
		t.metrics = append(t.metrics, c)
	}
	return c
}

// pending reports whether some column holds a value for a row that EndRow has
// not yet accepted.
func (t *Table) pending() bool {
	for _, c := range t.cols {
		if c.n != t.rows {
			return true
		}
	}
	return false
}

// EndRow completes the row being appended. It fails if a column has no value
// or more than one, or if a value appended to this row was refused; the row is
// then removed from every column, and the table is as it was before the row.
func (t *Table) EndRow() error {
	if t.declErr != nil {
		return t.declErr
	}
	var missing, repeated []string
	for _, c := range t.cols {
		switch {
		case c.kind == kindReasons:
		case c.n == t.rows:
			missing = append(missing, fmt.Sprintf("%q", c.name))
		case c.n > t.rows+1:
			repeated = append(repeated, fmt.Sprintf("%q", c.name))
		}
	}
	problems := t.rowErr
	if len(missing) > 0 {
		problems = append(problems, "no value for column "+strings.Join(missing, ", "))
	}
	if len(repeated) > 0 {
		problems = append(problems, "more than one value for column "+strings.Join(repeated, ", "))
	}
	if len(problems) > 0 {
		row := t.rows
		t.rollback()
		return fmt.Errorf("writers: row %d: %s", row, strings.Join(problems, "; "))
	}
	if r := t.reasons; r != nil {
		for _, m := range t.metrics {
			if !m.valid[t.rows] {
				r.keys = append(r.keys, m.name)
				r.vals = append(r.vals, m.reason)
			}
		}
		r.offsets = append(r.offsets, len(r.keys))
		r.n++
	}
	t.rows++
	return nil
}

// rollback removes the pending row from every column.
func (t *Table) rollback() {
	for _, c := range t.cols {
		c.truncate(t.rows)
	}
	t.rowErr = nil
}

// checkComplete reports why the table cannot be written.
func (t *Table) checkComplete() error {
	if t.declErr != nil {
		return t.declErr
	}
	if len(t.cols) == 0 {
		return fmt.Errorf("writers: table has no columns")
	}
	if len(t.metrics) > 0 && t.reasons == nil {
		return fmt.Errorf("writers: table has metric column %q but no reasons column", t.metrics[0].name)
	}
	if t.pending() {
		return fmt.Errorf("writers: row %d is incomplete: EndRow was not called", t.rows)
	}
	return nil
}

// column holds the values of one column; only the slices of its kind are used.
type column struct {
	t        *Table
	name     string
	kind     kind
	nullable bool
	n        int // values appended, the pending row included

	valid []bool // nullable scalar kinds: one per row
	strs  []string
	ints  []int64
	f64s  []float64
	bools []bool

	offsets   []int // list and map kinds: row i holds elements offsets[i]:offsets[i+1]
	elems     []float64
	elemValid []bool
	keys      []string
	vals      []string

	reason string // metric: the reason of the last appended value when absent
}

func (c *column) fail(format string, args ...any) {
	if c.t.declErr != nil {
		return // EndRow reports the declaration error
	}
	c.t.rowErr = append(c.t.rowErr, fmt.Sprintf("column %q: ", c.name)+fmt.Sprintf(format, args...))
}

func (c *column) truncate(rows int) {
	if c.n <= rows {
		return
	}
	c.n = rows
	switch c.kind {
	case kindList, kindMap, kindReasons, kindStringList:
		end := c.offsets[rows]
		c.offsets = c.offsets[:rows+1]
		if c.kind == kindList {
			c.elems, c.elemValid = c.elems[:end], c.elemValid[:end]
		} else {
			c.keys, c.vals = c.keys[:end], c.vals[:end]
		}
		return
	case kindString:
		c.strs = c.strs[:rows]
	case kindInt64:
		c.ints = c.ints[:rows]
	case kindMetric:
		c.f64s = c.f64s[:rows]
	case kindBool:
		c.bools = c.bools[:rows]
	}
	if c.nullable {
		c.valid = c.valid[:rows]
	}
}

func (c *column) appendValid(ok bool) {
	c.n++
	if c.nullable {
		c.valid = append(c.valid, ok)
	} else if !ok {
		c.fail("null in a non-nullable column")
	}
}

// StringColumn appends to a string column declared by Table.String or
// Table.NullableString.
type StringColumn struct{ c *column }

// Append appends s, which must be valid UTF-8.
func (s StringColumn) Append(v string) {
	if !utf8.ValidString(v) {
		s.c.fail("string %q is not valid UTF-8", v)
	}
	s.c.strs = append(s.c.strs, v)
	s.c.appendValid(true)
}

// AppendNull appends a null; EndRow refuses it in a non-nullable column.
func (s StringColumn) AppendNull() {
	s.c.strs = append(s.c.strs, "")
	s.c.appendValid(false)
}

// Int64Column appends to a column declared by Table.Int64.
type Int64Column struct{ c *column }

// Append appends v.
func (i Int64Column) Append(v int64) {
	i.c.ints = append(i.c.ints, v)
	i.c.appendValid(true)
}

// AppendNull appends a null.
func (i Int64Column) AppendNull() {
	i.c.ints = append(i.c.ints, 0)
	i.c.appendValid(false)
}

// BoolColumn appends to a column declared by Table.Bool.
type BoolColumn struct{ c *column }

// Append appends v.
func (b BoolColumn) Append(v bool) {
	b.c.bools = append(b.c.bools, v)
	b.c.appendValid(true)
}

// AppendNull appends a null.
func (b BoolColumn) AppendNull() {
	b.c.bools = append(b.c.bools, false)
	b.c.appendValid(false)
}

// MetricColumn appends to a column declared by Table.Metric.
type MetricColumn struct{ c *column }

// Append appends v: a present value as a number, an absent one as a null
// whose reason goes to the reasons column. EndRow refuses a present value
// that is not finite and an absent one without a reason.
func (m MetricColumn) Append(v protocol.Value) {
	if err := v.Validate(); err != nil {
		m.c.fail("%v", err)
	}
	m.c.reason = v.Reason
	if v.OK {
		m.c.f64s = append(m.c.f64s, v.V)
	} else {
		m.c.f64s = append(m.c.f64s, 0)
	}
	m.c.appendValid(v.OK)
}

// ListColumn appends to a column declared by Table.MetricList.
type ListColumn struct{ c *column }

// Append appends one list; absent elements become null elements (their
// reasons are not written). EndRow refuses a present element that is not
// finite and an absent one without a reason.
func (l ListColumn) Append(vals []protocol.Value) {
	for i, v := range vals {
		if err := v.Validate(); err != nil {
			l.c.fail("element %d: %v", i, err)
		}
		if v.OK {
			l.c.elems = append(l.c.elems, v.V)
		} else {
			l.c.elems = append(l.c.elems, 0)
		}
		l.c.elemValid = append(l.c.elemValid, v.OK)
	}
	l.c.offsets = append(l.c.offsets, len(l.c.elems))
	l.c.n++
}

// StringListColumn appends to a column declared by Table.StringList.
type StringListColumn struct{ c *column }

// Append appends one list of strings, each valid UTF-8.
func (l StringListColumn) Append(vals []string) {
	for _, v := range vals {
		if !utf8.ValidString(v) {
			l.c.fail("list element %q is not valid UTF-8", v)
		}
		l.c.keys = append(l.c.keys, v)
	}
	l.c.offsets = append(l.c.offsets, len(l.c.keys))
	l.c.n++
}

// MapColumn appends to a column declared by Table.Map.
type MapColumn struct{ c *column }

// Append appends one map holding pairs in the order given. EndRow refuses a
// repeated key and a key or value that is not valid UTF-8.
func (m MapColumn) Append(pairs []KV) {
	seen := make(map[string]bool, len(pairs))
	for _, p := range pairs {
		switch {
		case seen[p.Key]:
			m.c.fail("map key %q repeated", p.Key)
		case !utf8.ValidString(p.Key):
			m.c.fail("map key %q is not valid UTF-8", p.Key)
		case !utf8.ValidString(p.Value):
			m.c.fail("map value %q of key %q is not valid UTF-8", p.Value, p.Key)
		}
		seen[p.Key] = true
		m.c.keys = append(m.c.keys, p.Key)
		m.c.vals = append(m.c.vals, p.Value)
	}
	m.c.offsets = append(m.c.offsets, len(m.c.keys))
	m.c.n++
}

// AppendMap appends one map holding the entries of kv with the keys sorted.
func (m MapColumn) AppendMap(kv map[string]string) {
	pairs := make([]KV, 0, len(kv))
	for k, v := range kv {
		pairs = append(pairs, KV{k, v})
	}
	slices.SortFunc(pairs, func(a, b KV) int { return strings.Compare(a.Key, b.Key) })
	m.Append(pairs)
}
