package writers

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/arrow-go/v18/parquet/schema"

	"github.com/crlbatch/crlbatch/protocol"
)

const testVersion = "0.1.0-test"

func testMetadata(t testing.TB) Metadata {
	t.Helper()
	params := map[string]any{"anchor": "segment", "alpha": 0.9, "bound": map[string]any{"derivation": "per_step", "value": 1.0 / 3}}
	md, err := NewMetadata(testVersion, "skyfall", "1", params)
	if err != nil {
		t.Fatal(err)
	}
	return md
}

// sampleTable has every column kind, with nulls in each nullable one.
func sampleTable(t testing.TB) *Table {
	t.Helper()
	tb := NewTable()
	runKey := tb.String("run_key")
	policy := tb.NullableString("policy_id")
	seed := tb.Int64("seed")
	excluded := tb.Bool("excluded")
	mean := tb.Metric("mean")
	std := tb.Metric("std")
	variance := tb.MetricList("variance_per_interval")
	meta := tb.Map("run_meta")
	tb.Reasons()

	// row 0: everything present
	runKey.Append("r0")
	policy.Append("p0")
	seed.Append(7)
	excluded.Append(false)
	mean.Append(protocol.Some(0.5))
	std.Append(protocol.Some(0.1))
	variance.Append([]protocol.Value{protocol.Some(1), protocol.None("one-row interval"), protocol.Some(2.5)})
	meta.Append([]KV{{"task", "maze"}, {"gamma", "0.99"}})
	mustEndRow(t, tb)

	// row 1: every nullable column null, a present zero, empty list and map
	runKey.Append("r1")
	policy.AppendNull()
	seed.AppendNull()
	excluded.AppendNull()
	mean.Append(protocol.None("no shift precedes the first interval"))
	std.Append(protocol.Some(0))
	variance.Append(nil)
	meta.Append(nil)
	mustEndRow(t, tb)

	// row 2: awkward strings, extreme numbers, a map from a Go map
	runKey.Append("r|2 ünïcödé")
	policy.Append("")
	seed.Append(math.MinInt64)
	excluded.Append(true)
	mean.Append(protocol.Some(-1e300))
	std.Append(protocol.None("n < 2"))
	variance.Append([]protocol.Value{protocol.None("one-row interval")})
	meta.AppendMap(map[string]string{"z": "last", "a": "first", "m": ""})
	mustEndRow(t, tb)
	return tb
}

func mustEndRow(t testing.TB, tb *Table) {
	t.Helper()
	if err := tb.EndRow(); err != nil {
		t.Fatal(err)
	}
}

func writeBytes(t testing.TB, tb *Table, md Metadata) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteParquet(&buf, tb, md); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func readTable(t *testing.T, b []byte) arrow.Table {
	t.Helper()
	tbl, err := pqarrow.ReadTable(context.Background(), bytes.NewReader(b), nil, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tbl.Release)
	return tbl
}

// col returns column i of a table read back as one array.
func col(t *testing.T, tbl arrow.Table, i int) arrow.Array {
	t.Helper()
	chunks := tbl.Column(i).Data().Chunks()
	if len(chunks) != 1 {
		t.Fatalf("column %d: %d chunks, want 1", i, len(chunks))
	}
	return chunks[0]
}

func TestParquetRoundTrip(t *testing.T) {
	b := writeBytes(t, sampleTable(t), testMetadata(t))
	tbl := readTable(t, b)

	wantFields := []struct {
		name     string
		id       arrow.Type
		nullable bool
	}{
		{"run_key", arrow.STRING, false},
		{"policy_id", arrow.STRING, true},
		{"seed", arrow.INT64, true},
		{"excluded", arrow.BOOL, true},
		{"mean", arrow.FLOAT64, true},
		{"std", arrow.FLOAT64, true},
		{"variance_per_interval", arrow.LIST, false},
		{"run_meta", arrow.MAP, false},
		{"reasons", arrow.MAP, false},
	}
	fields := tbl.Schema().Fields()
	if len(fields) != len(wantFields) {
		t.Fatalf("read %d columns, want %d: %v", len(fields), len(wantFields), tbl.Schema())
	}
	for i, w := range wantFields {
		f := fields[i]
		if f.Name != w.name || f.Type.ID() != w.id || f.Nullable != w.nullable {
			t.Errorf("column %d = %s %s nullable=%v, want %s %s nullable=%v", i, f.Name, f.Type, f.Nullable, w.name, w.id, w.nullable)
		}
	}
	if lt := fields[6].Type.(*arrow.ListType); lt.Elem().ID() != arrow.FLOAT64 || !lt.ElemField().Nullable {
		t.Errorf("list element type %s nullable=%v, want nullable double", lt.Elem(), lt.ElemField().Nullable)
	}
	for _, i := range []int{7, 8} {
		mt := fields[i].Type.(*arrow.MapType)
		if mt.KeyType().ID() != arrow.STRING || mt.ItemType().ID() != arrow.STRING {
			t.Errorf("%s: map<%s,%s>, want map<string,string>", fields[i].Name, mt.KeyType(), mt.ItemType())
		}
	}
	if tbl.NumRows() != 3 {
		t.Fatalf("read %d rows, want 3", tbl.NumRows())
	}

	runKey := col(t, tbl, 0).(*array.String)
	for i, want := range []string{"r0", "r1", "r|2 ünïcödé"} {
		if got := runKey.Value(i); got != want {
			t.Errorf("run_key[%d] = %q, want %q", i, got, want)
		}
	}
	policy := col(t, tbl, 1).(*array.String)
	if policy.Value(0) != "p0" || !policy.IsNull(1) || policy.IsNull(2) || policy.Value(2) != "" {
		t.Errorf("policy_id = %v, want [p0 null \"\"]", policy)
	}
	seed := col(t, tbl, 2).(*array.Int64)
	if seed.Value(0) != 7 || !seed.IsNull(1) || seed.Value(2) != math.MinInt64 {
		t.Errorf("seed = %v, want [7 null MinInt64]", seed)
	}
	excluded := col(t, tbl, 3).(*array.Boolean)
	if excluded.Value(0) || !excluded.IsNull(1) || !excluded.Value(2) {
		t.Errorf("excluded = %v, want [false null true]", excluded)
	}

	// A null metric is null, not 0 or NaN; a present 0 is 0, not null.
	mean := col(t, tbl, 4).(*array.Float64)
	if mean.Value(0) != 0.5 || !mean.IsNull(1) || mean.Value(2) != -1e300 {
		t.Errorf("mean = %v, want [0.5 null -1e300]", mean)
	}
	std := col(t, tbl, 5).(*array.Float64)
	if std.Value(0) != 0.1 || std.IsNull(1) || std.Value(1) != 0 || !std.IsNull(2) {
		t.Errorf("std = %v, want [0.1 0 null]", std)
	}
	for _, a := range []*array.Float64{mean, std} {
		for i := range a.Len() {
			if a.IsValid(i) && math.IsNaN(a.Value(i)) {
				t.Errorf("NaN at row %d", i)
			}
		}
	}

	list := col(t, tbl, 6).(*array.List)
	elems := list.ListValues().(*array.Float64)
	type elem struct {
		v  float64
		ok bool
	}
	wantLists := [][]elem{{{1, true}, {0, false}, {2.5, true}}, {}, {{0, false}}}
	for r, want := range wantLists {
		if list.IsNull(r) {
			t.Errorf("variance_per_interval[%d] is null, want a list", r)
			continue
		}
		s, e := list.ValueOffsets(r)
		var got []elem
		for i := s; i < e; i++ {
			got = append(got, elem{elems.Value(int(i)), elems.IsValid(int(i))})
			if !elems.IsValid(int(i)) {
				got[len(got)-1].v = 0
			}
		}
		if len(got) != len(want) {
			t.Errorf("variance_per_interval[%d] = %v, want %v", r, got, want)
			continue
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("variance_per_interval[%d][%d] = %v, want %v", r, i, got[i], want[i])
			}
		}
	}

	wantMeta := [][]KV{{{"task", "maze"}, {"gamma", "0.99"}}, {}, {{"a", "first"}, {"m", ""}, {"z", "last"}}}
	checkMap(t, "run_meta", col(t, tbl, 7).(*array.Map), wantMeta)
	wantReasons := [][]KV{{}, {{"mean", "no shift precedes the first interval"}}, {{"std", "n < 2"}}}
	checkMap(t, "reasons", col(t, tbl, 8).(*array.Map), wantReasons)
}

func checkMap(t *testing.T, name string, m *array.Map, want [][]KV) {
	t.Helper()
	keys := m.Keys().(*array.String)
	items := m.Items().(*array.String)
	for r, w := range want {
		if m.IsNull(r) {
			t.Errorf("%s[%d] is null, want a map", name, r)
			continue
		}
		s, e := m.ValueOffsets(r)
		var got []KV
		for i := int(s); i < int(e); i++ {
			if items.IsNull(i) {
				t.Errorf("%s[%d]: value of %q is null", name, r, keys.Value(i))
			}
			got = append(got, KV{keys.Value(i), items.Value(i)})
		}
		if len(got) != len(w) {
			t.Errorf("%s[%d] = %v, want %v", name, r, got, w)
			continue
		}
		for i := range w {
			if got[i] != w[i] {
				t.Errorf("%s[%d] = %v, want %v", name, r, got, w)
				break
			}
		}
	}
}

func TestParquetFileMetadata(t *testing.T) {
	md := append(testMetadata(t), KV{"crlbatch.extra", "x"})
	b := writeBytes(t, sampleTable(t), md)
	rdr, err := file.NewParquetReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Close()
	fmd := rdr.MetaData()

	// The key/value pairs are in the file footer, in order, and nothing else is.
	kv := fmd.KeyValueMetadata()
	if kv.Len() != len(md) {
		t.Errorf("footer key/value metadata keys %v, want %v", kv.Keys(), md)
	}
	for i, p := range md {
		if i >= kv.Len() {
			break
		}
		if kv.Keys()[i] != p.Key || kv.Values()[i] != p.Value {
			t.Errorf("footer key/value %d = %q: %q, want %q: %q", i, kv.Keys()[i], kv.Values()[i], p.Key, p.Value)
		}
	}
	if v := kv.FindValue(KeyParams); v == nil || *v != `{"alpha":0.9,"anchor":"segment","bound":{"derivation":"per_step","value":0.3333333333333333}}` {
		t.Errorf("params = %v", v)
	}
	if got := fmd.GetCreatedBy(); got != CreatedBy(testVersion) {
		t.Errorf("created_by = %q, want %q", got, CreatedBy(testVersion))
	}

	// Every column chunk is zstd and of a plain type.
	if fmd.NumRowGroups() != 1 {
		t.Errorf("%d row groups, want 1", fmd.NumRowGroups())
	}
	rg := fmd.RowGroup(0)
	for i := range rg.NumColumns() {
		cc, err := rg.ColumnChunk(i)
		if err != nil {
			t.Fatal(err)
		}
		if cc.Compression() != compress.Codecs.Zstd {
			t.Errorf("column chunk %s: compression %s, want zstd", cc.PathInSchema(), cc.Compression())
		}
	}
	wantLeaves := map[string]string{
		"run_key":                            "BYTE_ARRAY String",
		"policy_id":                          "BYTE_ARRAY String",
		"seed":                               "INT64 Int(bitWidth=64, isSigned=true)",
		"excluded":                           "BOOLEAN None",
		"mean":                               "DOUBLE None",
		"std":                                "DOUBLE None",
		"variance_per_interval.list.element": "DOUBLE None",
		"run_meta.key_value.key":             "BYTE_ARRAY String",
		"run_meta.key_value.value":           "BYTE_ARRAY String",
		"reasons.key_value.key":              "BYTE_ARRAY String",
		"reasons.key_value.value":            "BYTE_ARRAY String",
	}
	sc := fmd.Schema
	for i := range sc.NumColumns() {
		c := sc.Column(i)
		got := c.PhysicalType().String() + " " + logicalName(c.LogicalType())
		if want := wantLeaves[c.Path()]; got != want {
			t.Errorf("leaf %s: %s, want %s", c.Path(), got, want)
		}
	}
	for _, name := range []string{"variance_per_interval", "run_meta", "reasons"} {
		n := sc.Root().Field(sc.Root().FieldIndexByName(name))
		if lt := logicalName(n.LogicalType()); lt != map[string]string{"variance_per_interval": "List", "run_meta": "Map", "reasons": "Map"}[name] {
			t.Errorf("group %s: logical type %s", name, lt)
		}
	}
}

func logicalName(lt schema.LogicalType) string {
	if lt == nil {
		return "None"
	}
	return lt.String()
}

func TestParquetDeterministic(t *testing.T) {
	md := testMetadata(t)
	tb := sampleTable(t)
	a := writeBytes(t, tb, md)
	b := writeBytes(t, tb, md)
	c := writeBytes(t, sampleTable(t), testMetadata(t))
	if !bytes.Equal(a, b) || !bytes.Equal(a, c) {
		t.Fatalf("three writes of the same table differ: %d, %d, %d bytes", len(a), len(b), len(c))
	}
	if bytes.Contains(a, []byte("parquet-go")) {
		t.Error("file mentions parquet-go: created_by is not ours")
	}
}

// closeRecorder is a sink that records whether Close was called.
type closeRecorder struct {
	bytes.Buffer
	closed bool
}

func (c *closeRecorder) Close() error { c.closed = true; return nil }

func TestParquetDoesNotCloseWriter(t *testing.T) {
	var sink closeRecorder
	if err := WriteParquet(&sink, sampleTable(t), testMetadata(t)); err != nil {
		t.Fatal(err)
	}
	if sink.closed {
		t.Error("WriteParquet closed its writer")
	}
	if sink.Len() == 0 {
		t.Error("nothing written")
	}
}

func TestParquetEmptyTable(t *testing.T) {
	tb := NewTable()
	tb.String("run_key")
	tb.Metric("mean")
	tb.Reasons()
	tbl := readTable(t, writeBytes(t, tb, testMetadata(t)))
	if tbl.NumRows() != 0 || tbl.NumCols() != 3 {
		t.Errorf("read %d rows × %d columns, want 0 × 3", tbl.NumRows(), tbl.NumCols())
	}
}

func TestParquetRowGroups(t *testing.T) {
	tb := NewTable()
	idx := tb.Int64("i")
	list := tb.MetricList("l")
	m := tb.Map("m")
	n := RowGroupRows + 5
	for i := range n {
		idx.Append(int64(i))
		list.Append([]protocol.Value{protocol.Some(float64(i))})
		m.Append([]KV{{"i", "x"}})
		mustEndRow(t, tb)
	}
	b := writeBytes(t, tb, testMetadata(t))
	rdr, err := file.NewParquetReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Close()
	if got := rdr.NumRowGroups(); got != 2 {
		t.Errorf("%d row groups, want 2", got)
	}
	tbl := readTable(t, b)
	if tbl.NumRows() != int64(n) {
		t.Fatalf("read %d rows, want %d", tbl.NumRows(), n)
	}
	var i int64
	for _, chunk := range tbl.Column(1).Data().Chunks() {
		l := chunk.(*array.List)
		vals := l.ListValues().(*array.Float64)
		for r := range l.Len() {
			s, _ := l.ValueOffsets(r)
			if vals.Value(int(s)) != float64(i) {
				t.Fatalf("row %d: list holds %v", i, vals.Value(int(s)))
			}
			i++
		}
	}
}

func TestMetadataErrors(t *testing.T) {
	good := testMetadata(t)
	drop := func(key string) Metadata {
		var m Metadata
		for _, kv := range good {
			if kv.Key != key {
				m = append(m, kv)
			}
		}
		return m
	}
	set := func(key, value string) Metadata {
		m := append(Metadata(nil), good...)
		for i := range m {
			if m[i].Key == key {
				m[i].Value = value
			}
		}
		return m
	}
	cases := []struct {
		name string
		md   Metadata
		want string
	}{
		{"no version", drop(KeyVersion), `"crlbatch.version" missing`},
		{"no protocol", drop(KeyProtocol), `"crlbatch.protocol" missing`},
		{"no params", drop(KeyParams), `"crlbatch.params" missing`},
		{"no schema version", drop(KeySchemaVersion), `"crlbatch.schema_version" missing`},
		{"empty version", set(KeyVersion, ""), `"crlbatch.version" is empty`},
		{"bad params", set(KeyParams, "{"), "not valid JSON"},
		{"repeated", append(append(Metadata(nil), good...), good[1]), "repeated"},
		{"arrow key", append(append(Metadata(nil), good...), KV{"ARROW:schema", "x"}), "reserved"},
		{"empty key", append(append(Metadata(nil), good...), KV{"", "x"}), "empty"},
		{"bad utf8", append(append(Metadata(nil), good...), KV{"k", "\xff"}), "UTF-8"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := WriteParquet(io.Discard, sampleTable(t), c.md)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("WriteParquet error = %v, want one containing %q", err, c.want)
			}
		})
	}
	if _, err := NewMetadata(testVersion, "skyfall", "1", math.NaN()); err == nil {
		t.Error("NewMetadata accepted params that JSON cannot encode")
	}
}

func TestWriteParquetRefusesIncompleteTables(t *testing.T) {
	md := testMetadata(t)
	noReasons := NewTable()
	noReasons.Metric("mean")
	pending := NewTable()
	pending.String("a").Append("x")
	badDecl := NewTable()
	badDecl.String("Bad")
	cases := []struct {
		name string
		tb   *Table
		want string
	}{
		{"no columns", NewTable(), "no columns"},
		{"metrics without reasons", noReasons, `metric column "mean" but no reasons column`},
		{"pending row", pending, "row 0 is incomplete"},
		{"bad declaration", badDecl, "not snake_case"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := WriteParquet(io.Discard, c.tb, md)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("WriteParquet error = %v, want one containing %q", err, c.want)
			}
		})
	}
}

func BenchmarkWriteParquet(b *testing.B) {
	tb := NewTable()
	key := tb.String("run_key")
	seed := tb.Int64("seed")
	mean := tb.Metric("mean")
	list := tb.MetricList("variance_per_interval")
	meta := tb.Map("run_meta")
	tb.Reasons()
	for i := range 10000 {
		key.Append("run")
		seed.Append(int64(i))
		if i%7 == 0 {
			mean.Append(protocol.None("no shift"))
		} else {
			mean.Append(protocol.Some(float64(i) / 3))
		}
		list.Append([]protocol.Value{protocol.Some(1), protocol.Some(2)})
		meta.Append([]KV{{"task", "maze"}})
		if err := tb.EndRow(); err != nil {
			b.Fatal(err)
		}
	}
	md := testMetadata(b)
	b.ReportAllocs()
	for b.Loop() {
		if err := WriteParquet(io.Discard, tb, md); err != nil {
			b.Fatal(err)
		}
	}
}

// scaleTable has n rows of every column kind whose builders grow with the
// rows: strings, a metric list, a string list, a map and the reasons map.
func scaleTable(t testing.TB, n int) *Table {
	t.Helper()
	tb := NewTable()
	key := tb.String("run_key")
	mean := tb.Metric("mean")
	list := tb.MetricList("variance_per_interval")
	labels := tb.StringList("labels")
	meta := tb.Map("run_meta")
	tb.Reasons()
	for i := range n {
		key.Append("run-" + strconv.Itoa(i))
		if i%3 == 0 {
			mean.Append(protocol.None("no shift precedes the first interval"))
		} else {
			mean.Append(protocol.Some(float64(i) / 3))
		}
		list.Append([]protocol.Value{protocol.Some(1), protocol.None("one-row interval")})
		labels.Append([]string{"calm", "gusty-" + strconv.Itoa(i)})
		meta.Append([]KV{{"algorithm_id", "ppo"}, {"run_id", "ppo-s" + strconv.Itoa(i)}, {"task", "navigate"}})
		mustEndRow(t, tb)
	}
	return tb
}

// TestWriteParquetLinearAllocation: WriteParquet allocates about the same
// number of bytes per row at 2,000 and at 20,000 rows (issue 16: the map
// columns were appended a row at a time and arrow's string builders then grew
// their value buffers to the exact new length per row, copying them whole, so
// the bytes allocated grew with the square of the rows). Bytes, not time: no
// test here measures a clock.
func TestWriteParquetLinearAllocation(t *testing.T) {
	md := testMetadata(t)
	// The least of five writes: what a write allocates beside its rows
	// (zstd encoders, which a pool may or may not hold after a
	// collection) varies by megabytes from one write to the next.
	perRow := func(n int) float64 {
		tb := scaleTable(t, n)
		least := math.Inf(1)
		for range 5 {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			if err := WriteParquet(io.Discard, tb, md); err != nil {
				t.Fatal(err)
			}
			runtime.ReadMemStats(&after)
			least = min(least, float64(after.TotalAlloc-before.TotalAlloc)/float64(n))
		}
		return least
	}
	small, large := perRow(2000), perRow(20000)
	t.Logf("bytes allocated per row: %.0f at 2,000 rows, %.0f at 20,000", small, large)
	if large > 2*small {
		t.Errorf("WriteParquet allocates %.0f bytes per row at 20,000 rows against %.0f at 2,000: not linear", large, small)
	}
}

// countdownCtx is done after its Err has been asked n times.
type countdownCtx struct {
	context.Context
	n int
}

func (c *countdownCtx) Err() error {
	if c.n--; c.n < 0 {
		return context.Canceled
	}
	return nil
}

// TestWriteParquetContextStops: a done context stops WriteParquetContext
// between columns, also in the middle of a table (issue 16: SIGTERM while
// runs.parquet was written took 251 s to end the job).
func TestWriteParquetContextStops(t *testing.T) {
	tb, md := scaleTable(t, 3*RowGroupRows/2), testMetadata(t)
	for _, n := range []int{0, 1, 3, len(tb.cols) + 2} {
		ctx := &countdownCtx{Context: context.Background(), n: n}
		err := WriteParquetContext(ctx, io.Discard, tb, md)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled after %d checks: WriteParquetContext = %v, want context.Canceled", n, err)
		}
	}
	if err := WriteParquetContext(context.Background(), io.Discard, tb, md); err != nil {
		t.Fatal(err)
	}
}

// TestWriteParquetColumnAtATimeSameBytes: WriteParquet writes each row
// group a column at a time (each column's Arrow array built and released
// before the next: issue 16); the file is byte for byte the one pqarrow
// writes from a record of the whole row group, as WriteParquet wrote it
// before, for a table of every kind of column over two row groups.
func TestWriteParquetColumnAtATimeSameBytes(t *testing.T) {
	tb, md := NewTable(), testMetadata(t)
	key := tb.String("run_key")
	opt := tb.NullableString("note")
	n := tb.Int64("n")
	flag := tb.Bool("flag")
	mean := tb.Metric("mean")
	list := tb.MetricList("variance_per_interval")
	labels := tb.StringList("labels")
	meta := tb.Map("run_meta")
	tb.Reasons()
	for i := range RowGroupRows + 7 {
		key.Append("run-" + strconv.Itoa(i))
		switch i % 4 {
		case 0:
			opt.AppendNull()
			n.AppendNull()
			flag.AppendNull()
			mean.Append(protocol.None("no shift precedes the first interval"))
		default:
			opt.Append("n" + strconv.Itoa(i%11))
			n.Append(int64(i * i))
			flag.Append(i%3 == 0)
			mean.Append(protocol.Some(float64(i) / 3))
		}
		list.Append([]protocol.Value{protocol.Some(float64(i % 7)), protocol.None("one-row interval")})
		labels.Append([]string{"calm", "gusty-" + strconv.Itoa(i%100)})
		meta.Append([]KV{{"algorithm_id", "ppo"}, {"run_id", "ppo-s" + strconv.Itoa(i)}})
		mustEndRow(t, tb)
	}
	got := writeBytes(t, tb, md)

	// The reference: a record per row group, pqarrow's Write.
	schema, version, err := tb.schema(md)
	if err != nil {
		t.Fatal(err)
	}
	mem := memory.NewGoAllocator()
	props := tb.writerProperties(mem, version)
	var want bytes.Buffer
	fw, err := pqarrow.NewFileWriter(schema, struct{ io.Writer }{&want}, props, pqarrow.NewArrowWriterProperties(pqarrow.WithAllocator(mem)))
	if err != nil {
		t.Fatal(err)
	}
	for lo := 0; lo < tb.rows; lo += RowGroupRows {
		hi := min(lo+RowGroupRows, tb.rows)
		cols := make([]arrow.Array, len(tb.cols))
		for i, c := range tb.cols {
			if cols[i], err = c.array(mem, lo, hi); err != nil {
				t.Fatal(err)
			}
		}
		rec := array.NewRecordBatch(schema, cols, int64(hi-lo))
		if err := fw.Write(rec); err != nil {
			t.Fatal(err)
		}
		rec.Release()
		for _, a := range cols {
			a.Release()
		}
	}
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Errorf("column at a time: %d bytes, a record per row group: %d bytes, not the same", len(got), want.Len())
	}
}

// TestParquetDeterministicPastDictionaryLimit: columns whose dictionary
// would reach the page size limit (unique run keys, distinct floats in a
// full row group, map values) are written the same bytes every time. With
// arrow-go's defaults the same table falls back from dictionary to plain
// pages mid-chunk, whose page counts arrow-go writes in a map's order:
// checked below, so that the test keeps meeting the hazard it guards.
func TestParquetDeterministicPastDictionaryLimit(t *testing.T) {
	tb, md := NewTable(), testMetadata(t)
	key := tb.String("run_key")
	fam := tb.String("family")
	mean := tb.Metric("mean")
	list := tb.MetricList("variance_per_interval")
	meta := tb.Map("run_meta")
	tb.Reasons()
	rows := RowGroupRows + 9
	for i := range rows {
		key.Append("run-" + strconv.Itoa(i) + "-" + strings.Repeat("k", 24))
		fam.Append([]string{"ppo", "sac", "ewc"}[i%3])
		mean.Append(protocol.Some(float64(i) / 7))
		list.Append([]protocol.Value{protocol.Some(float64(i) / 3), protocol.Some(-float64(i) / 3)})
		meta.Append([]KV{{"algorithm_id", "ppo"}, {"run_id", "r" + strconv.Itoa(i)}})
		mustEndRow(t, tb)
	}
	first := writeBytes(t, tb, md)
	for range 7 {
		if got := writeBytes(t, tb, md); !bytes.Equal(got, first) {
			t.Fatalf("the same table gave different bytes (%d and %d)", len(first), len(got))
		}
	}

	// Which chunks have a dictionary: none of the columns that would
	// fall back, the repeated ones yes; every value reads back.
	// (A full row group of distinct floats is exactly at the limit:
	// arrow-go keeps its dictionary, this writer errs towards none.)
	wantDict := map[string]bool{"run_key": false, "family": true, "mean": false, "variance_per_interval.list.element": false, "run_meta.key_value.key": true, "run_meta.key_value.value": false}
	fallsBack := func(b []byte, checkDict bool) map[string]bool {
		back := map[string]bool{}
		eachChunk(t, b, func(g int, cc *metadata.ColumnChunkMetaData) {
			path := cc.PathInSchema().String()
			if want, ok := wantDict[path]; checkDict && ok && cc.HasDictionaryPage() != want {
				t.Errorf("row group %d, %s: dictionary page %v, want %v", g, path, cc.HasDictionaryPage(), want)
			}
			kinds := map[parquet.Encoding]bool{}
			for _, s := range cc.EncodingStats() {
				if s.PageType == 0 { // a data page
					kinds[s.Encoding] = true
				}
			}
			if len(kinds) > 1 {
				back[path] = true
			}
		})
		return back
	}
	if back := fallsBack(first, true); len(back) != 0 {
		t.Errorf("chunks falling back from dictionary to plain pages: %v", back)
	}
	tbl := readTable(t, first)
	defer tbl.Release()
	if tbl.NumRows() != int64(rows) {
		t.Fatalf("%d rows read back, want %d", tbl.NumRows(), rows)
	}
	keys := tbl.Column(0).Data().Chunks()
	seen := 0
	for _, ch := range keys {
		s := ch.(*array.String)
		for i := range s.Len() {
			if want := "run-" + strconv.Itoa(seen) + "-" + strings.Repeat("k", 24); s.Value(i) != want {
				t.Fatalf("run_key row %d = %q, want %q", seen, s.Value(i), want)
			}
			seen++
		}
	}

	// arrow-go's defaults on the same table: the chunks fall back.
	schema, version, err := tb.schema(md)
	if err != nil {
		t.Fatal(err)
	}
	mem := memory.NewGoAllocator()
	props := parquet.NewWriterProperties(parquet.WithAllocator(mem), parquet.WithCompression(compress.Codecs.Zstd),
		parquet.WithCreatedBy(CreatedBy(version)), parquet.WithMaxRowGroupLength(RowGroupRows))
	var def bytes.Buffer
	fw, err := pqarrow.NewFileWriter(schema, struct{ io.Writer }{&def}, props, pqarrow.NewArrowWriterProperties(pqarrow.WithAllocator(mem)))
	if err != nil {
		t.Fatal(err)
	}
	for lo := 0; lo < tb.rows; lo += RowGroupRows {
		hi := min(lo+RowGroupRows, tb.rows)
		if err := fw.NewRowGroupChecked(); err != nil {
			t.Fatal(err)
		}
		for _, c := range tb.cols {
			a, err := c.array(mem, lo, hi)
			if err != nil {
				t.Fatal(err)
			}
			if err := fw.WriteColumnData(a); err != nil {
				t.Fatal(err)
			}
			a.Release()
		}
	}
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
	back := fallsBack(def.Bytes(), false)
	for _, p := range []string{"run_key", "variance_per_interval.list.element", "run_meta.key_value.value"} {
		if !back[p] {
			t.Errorf("with arrow-go's defaults %s does not fall back: the test no longer meets the hazard (%v)", p, back)
		}
	}
}

// eachChunk calls fn with every column chunk of the Parquet file data and
// the number of its row group.
func eachChunk(t *testing.T, data []byte, fn func(g int, cc *metadata.ColumnChunkMetaData)) {
	t.Helper()
	r, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for g := range r.NumRowGroups() {
		rg := r.MetaData().RowGroup(g)
		for k := range rg.NumColumns() {
			cc, err := rg.ColumnChunk(k)
			if err != nil {
				t.Fatal(err)
			}
			fn(g, cc)
		}
	}
}

// TestParquetDictionaryForNumbers: a column of numbers keeps its
// dictionary while at most half of its valid values in every row group are
// distinct, or it holds fewer than minDistinctRows of them; past that it
// is written in plain pages, its values the same.
func TestParquetDictionaryForNumbers(t *testing.T) {
	for _, c := range []struct {
		name     string
		rows     int
		distinct func(i int) int // the value of row i is a function of distinct(i)
		nulls    bool            // every other row null
		dict     bool
	}{
		{"few values", 1000, func(i int) int { return i % 7 }, false, true},
		{"exactly half distinct", 1000, func(i int) int { return i / 2 }, false, true},
		{"one more than half", 1000, func(i int) int { return min(i, 500) }, false, false},
		{"all distinct", 1000, func(i int) int { return i }, false, false},
		{"all distinct, below the least rows", minDistinctRows - 1, func(i int) int { return i }, false, true},
		{"all distinct, at the least rows", minDistinctRows, func(i int) int { return i }, false, false},
		{"every other row null, every value distinct", 1000, func(i int) int { return i }, true, false},
		{"distinct in the second row group only", RowGroupRows + 1000, func(i int) int { return max(i-RowGroupRows, 0) % 1000 }, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			tb, md := NewTable(), testMetadata(t)
			mean, n := tb.Metric("mean"), tb.Int64("n")
			list := tb.MetricList("points")
			tb.Reasons()
			for i := range c.rows {
				if c.nulls && i%2 == 1 {
					mean.Append(protocol.None("no value"))
					n.AppendNull()
				} else {
					mean.Append(protocol.Some(float64(c.distinct(i)) / 3))
					n.Append(int64(c.distinct(i)))
				}
				if c.nulls && i%2 == 1 {
					list.Append([]protocol.Value{protocol.None("no value")})
				} else {
					list.Append([]protocol.Value{protocol.Some(float64(c.distinct(i)) / 7)})
				}
				mustEndRow(t, tb)
			}
			data := writeBytes(t, tb, md)
			eachChunk(t, data, func(g int, cc *metadata.ColumnChunkMetaData) {
				switch cc.PathInSchema().String() {
				case "mean", "n", "points.list.element":
					if cc.HasDictionaryPage() != c.dict {
						t.Errorf("row group %d, %s: dictionary page %v, want %v", g, cc.PathInSchema(), cc.HasDictionaryPage(), c.dict)
					}
				}
			})
			tbl := readTable(t, data)
			defer tbl.Release()
			if tbl.NumRows() != int64(c.rows) {
				t.Fatalf("%d rows read back", tbl.NumRows())
			}
			i := 0
			for _, ch := range tbl.Column(1).Data().Chunks() {
				ints := ch.(*array.Int64)
				for j := range ints.Len() {
					if null := c.nulls && i%2 == 1; ints.IsNull(j) != null || !null && ints.Value(j) != int64(c.distinct(i)) {
						t.Fatalf("row %d of n reads back wrong", i)
					}
					i++
				}
			}
		})
	}
}
