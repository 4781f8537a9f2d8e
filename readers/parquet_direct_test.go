package readers

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// directSeen records, per URL, whether DecodeParquet took the direct path
// (absent: it did not try, the columns failing their checks).
var directSeen sync.Map

// arrowSeen records the URLs whose direct read used pqarrow.
var arrowSeen sync.Map

func init() {
	parquetDirectHook = func(url string, direct bool) { directSeen.Store(url, direct) }
	parquetArrowHook = func(url string) { arrowSeen.Store(url, true) }
}

func tookDirect(t *testing.T, url string) bool {
	t.Helper()
	v, ok := directSeen.Load(url)
	return ok && v.(bool) // not tried: the file's columns failed their checks
}

// viaLines decodes a Parquet file the general way: its rows as JSON lines
// into DecodeObject.
func viaLines(url string, data []byte, fields []ParquetField, opts Options) (*ObjectRuns, error) {
	lines, err := ParquetLines(url, bytes.NewReader(data), fields)
	if err != nil {
		return nil, err
	}
	defer lines.Close()
	return DecodeObject(url, "x.parquet", lines, opts)
}

// sameEncoding fails the test, naming what (the message's start: "<what>
// encoding differs"), when got and want do not encode to the same bytes.
func sameEncoding(t *testing.T, what string, got, want *ObjectRuns) {
	t.Helper()
	ge, err := got.AppendEncoding(nil)
	if err != nil {
		t.Fatal(err)
	}
	we, err := want.AppendEncoding(nil)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(ge, we) {
		t.Fatalf("%s encoding differs (%d bytes, want %d)", what, len(ge), len(we))
	}
}

// sameDecoded compares the direct decode of data with the general one:
// the same error, or the same object (its encoding, which holds every
// part's header, metadata candidates and rows bit for bit, and its info).
// It returns whether the direct path was taken.
func sameDecoded(t *testing.T, url string, data []byte, opts Options) bool {
	t.Helper()
	want, werr := viaLines(url, data, skyfallParquetFields, opts)
	got, gerr := DecodeParquet(url, "x.parquet", bytes.NewReader(data), skyfallParquetFields, opts)
	if (werr == nil) != (gerr == nil) || werr != nil && werr.Error() != gerr.Error() {
		t.Fatalf("%s: direct error %v, want %v", url, gerr, werr)
	}
	if werr != nil {
		return tookDirect(t, url)
	}
	if got.ObjectInfo != want.ObjectInfo {
		t.Fatalf("%s: info %+v, want %+v", url, got.ObjectInfo, want.ObjectInfo)
	}
	sameEncoding(t, url+": the direct decode's", got, want)
	// And the assembled runs, rendered metadata included.
	gt, gerr := Assemble([]*ObjectRuns{got}, opts)
	wt, werr := Assemble([]*ObjectRuns{want}, opts)
	if (gerr == nil) != (werr == nil) {
		t.Fatalf("%s: assembling: %v, want %v", url, gerr, werr)
	}
	if len(gt) != len(wt) {
		t.Fatalf("%s: %d runs, want %d", url, len(gt), len(wt))
	}
	for i := range gt {
		if fmt.Sprint(gt[i].Meta) != fmt.Sprint(wt[i].Meta) || gt[i].Key != wt[i].Key || len(gt[i].Rewards) != len(wt[i].Rewards) {
			t.Fatalf("%s: run %d: %s %v, want %s %v", url, i, gt[i].Key, gt[i].Meta, wt[i].Key, wt[i].Meta)
		}
	}
	return tookDirect(t, url)
}

func convertJSONL(t testing.TB, jsonl string) []byte {
	t.Helper()
	var pq bytes.Buffer
	if err := ConvertToParquet("mem://b/x.jsonl", strings.NewReader(jsonl), &pq, 0, 0); err != nil {
		t.Fatal(err)
	}
	return pq.Bytes()
}

// TestDecodeParquetDirect: sweeps as `crlbatch convert` writes them (runs
// interleaved and spanning row groups and batches, per-step extras,
// constant metadata, a metadata field that changes in a later batch,
// regime origins, steps absent on some rows, nulls in identity fields) are
// read the direct way into exactly what the general way gives.
func TestDecodeParquetDirect(t *testing.T) {
	opts := Options{Components: []string{"success", "progress", "absent"}}
	cases := map[string]string{
		"bench": string(benchRows(3000)),
	}
	cases["interleaved"] = interleavedRows(ConvertRowGroupRows + parquetDirectBatchRows + 1234) // two row groups, several batches
	cases["anonymous"] = `{"reward":1,"regime_id":"a","k":1}` + "\n" + `{"reward":2,"regime_id":"b","k":1,"run_id":null}` + "\n"
	cases["identity types"] = `{"run_id":1,"reward":1,"regime_id":"a"}` + "\n" + `{"run_id":1.0,"reward":1,"regime_id":"a"}` + "\n" + `{"run_id":2,"reward":1,"regime_id":"a"}` + "\n"
	cases["empty"] = ""
	cases["json numbers"] = jsonNumberRows(3 * parquetDirectBatchRows / 2)
	for name, jsonl := range cases {
		t.Run(name, func(t *testing.T) {
			if !sameDecoded(t, "mem://b/"+name+".parquet", convertJSONL(t, jsonl), opts) {
				t.Errorf("read the general way")
			}
		})
	}
}

// jsonNumberRows returns n rows whose step, effective_rank and gamma are
// JSON-text columns (an explicit null makes them so): runs of one value,
// values that come back (a dictionary page's entries), integer literals
// beside the same value written as a fraction or an exponent.
func jsonNumberRows(n int) string {
	var b strings.Builder
	ranks := []string{"null", "3", "3.0", "3e0", "-0.25", "12.5", "1e-3"}
	for i := range n {
		step := strconv.Itoa(i)
		switch i % 7 {
		case 1:
			step = "null"
		case 4:
			step += ".0"
		}
		fmt.Fprintf(&b, `{"run_id":"r%d","reward":1,"regime_id":"a","step":%s,"effective_rank":%s,"gamma":%s}`+"\n",
			i/1000, step, ranks[(i/5)%len(ranks)], ranks[1+i%3])
	}
	return b.String()
}

// interleavedRows returns n rows of runs interleaved, then in long
// stretches (one new), steps absent on some rows, regime origins, a
// metadata field that changes late, per-step extras.
func interleavedRows(n int) string {
	var b strings.Builder
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range n {
		run := rng.IntN(3)
		if i > n/2 {
			run = (i / 5000) % 4 // runs in long stretches, one new
		}
		fmt.Fprintf(&b, `{"run_id":"r%d","seed":%d,"reward":%s,"regime_id":"l%d"`, run, run*7, strconv.FormatFloat(rng.NormFloat64(), 'g', -1, 64), (i/700)%5)
		if i%3 != 0 {
			fmt.Fprintf(&b, `,"step":%d`, i)
		}
		if (i/700)%5 == 3 {
			b.WriteString(`,"regime_origin":"l1"`)
		}
		fmt.Fprintf(&b, `,"components":{"progress":%d,"success":%g,"other":1},"gamma":0.9,"lr":%g,"phase":%q,"ok":%t,"x":%g}`+"\n",
			rng.IntN(3), rng.Float64(), 0.001*float64(1+i/40000), "p"+strconv.Itoa(run), i < 40000, rng.Float64())
	}
	return b.String()
}

// writerVariants are writer properties, beside `crlbatch convert`'s own,
// of the files the direct path is held to the general way on: pages of a
// few rows (a string read from a page must not be kept once the next page
// replaces it), row groups of a few rows (batches spanning row groups), no
// dictionaries (plain pages), dictionaries that overflow within a column
// chunk (dictionary-encoded pages, then plain ones), version 2 pages.
var writerVariants = []struct {
	name  string
	props []parquet.WriterProperty
	maps  bool // components as a map column (convert writes a struct where it can)
	twin  bool // the variant before's writer settings, the components in the other form
}{
	{"convert", nil, false, false},
	{"convert, maps", nil, true, true},
	{"small pages", []parquet.WriterProperty{parquet.WithDataPageSize(64), parquet.WithBatchSize(3)}, true, false},
	{"small row groups", []parquet.WriterProperty{parquet.WithMaxRowGroupLength(7), parquet.WithDataPageSize(64), parquet.WithBatchSize(5)}, false, false},
	{"plain", []parquet.WriterProperty{parquet.WithDictionaryDefault(false), parquet.WithDataPageSize(128), parquet.WithBatchSize(4)}, true, false},
	{"dictionary overflow", []parquet.WriterProperty{parquet.WithDictionaryPageSizeLimit(40), parquet.WithDataPageSize(128), parquet.WithBatchSize(4)}, false, false},
	{"v2 pages", []parquet.WriterProperty{parquet.WithDataPageVersion(parquet.DataPageV2), parquet.WithDataPageSize(100), parquet.WithBatchSize(3)}, true, false},
	{"v2 pages, structs", []parquet.WriterProperty{parquet.WithDataPageVersion(parquet.DataPageV2), parquet.WithDataPageSize(100), parquet.WithBatchSize(3)}, false, true},
}

// convertWith converts jsonl with convert's settings and then props, its
// objects of numbers as structs where it can.
func convertWith(t testing.TB, jsonl string, props []parquet.WriterProperty) []byte {
	t.Helper()
	return convertForm(t, jsonl, props, false)
}

// convertForm is convertWith with maps set: objects of numbers as maps.
func convertForm(t testing.TB, jsonl string, props []parquet.WriterProperty, maps bool) []byte {
	t.Helper()
	var pq bytes.Buffer
	if err := convertToParquet("mem://b/x.jsonl", strings.NewReader(jsonl), &pq, 0, 0, props, maps); err != nil {
		t.Fatal(err)
	}
	return pq.Bytes()
}

// TestDecodeParquetDirectPages: files of many pages and row groups, with
// plain, dictionary and mixed string pages and nulls in every column but
// the required ones, are read the direct way (every column by its column
// chunk readers) into exactly what the general way gives.
func TestDecodeParquetDirectPages(t *testing.T) {
	opts := Options{Components: []string{"success", "progress", "absent"}}
	bench, interleaved := 1500, 3000
	if raceEnabled {
		// Half the rows under the race detector (this test was 185 s of
		// CI's readers run): every variant still makes many pages, row
		// groups and dictionary overflows ("small row groups" needs 700
		// rows for its 100 groups), and the statements covered are the
		// same as with the full inputs (docs/decisions.md, CI time).
		bench, interleaved = 750, 1500
	}
	cases := map[string]string{
		"bench":       string(benchRows(bench)),
		"interleaved": interleavedRows(interleaved),
	}
	for _, v := range writerVariants {
		for name, jsonl := range cases {
			data := convertForm(t, jsonl, v.props, v.maps)
			if v.name == "small row groups" {
				pf, err := file.NewParquetReader(bytes.NewReader(data))
				if err != nil {
					t.Fatal(err)
				}
				if pf.NumRowGroups() < 100 {
					t.Errorf("%s: %d row groups", v.name, pf.NumRowGroups())
				}
				pf.Close()
			}
			url := "mem://b/pages-" + v.name + "-" + name + ".parquet"
			if !sameDecoded(t, url, data, opts) {
				t.Errorf("%s, %s: read the general way", v.name, name)
			}
			if _, ok := arrowSeen.Load(url); ok {
				t.Errorf("%s, %s: some columns read through pqarrow", v.name, name)
			}
		}
	}
}

// typesParquet is TestDecodeParquetDirectTypes' file (read with the
// components goal and progress).
func typesParquet(t *testing.T) []byte {
	t.Helper()
	comps := arrow.StructOf(arrow.Field{Name: "progress", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		arrow.Field{Name: "goal", Type: arrow.PrimitiveTypes.Int32, Nullable: true})
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "run_id", Type: arrow.BinaryTypes.LargeString, Nullable: true},
		{Name: "reward", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
		{Name: "step", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "regime_id", Type: arrow.BinaryTypes.String},
		{Name: "components", Type: comps, Nullable: true},
		{Name: "invalid_action", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
		{Name: "n", Type: arrow.PrimitiveTypes.Uint8, Nullable: true},
		{Name: "m", Type: arrow.PrimitiveTypes.Int16, Nullable: true},
		{Name: "effective_rank", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	}, nil)
	data := writeTestParquet(t, schema, func(b *array.RecordBuilder) {
		b.Field(0).(*array.LargeStringBuilder).AppendValues([]string{"a\"é", "a\"é", "b", "a\"é"}, nil)
		b.Field(1).(*array.Float32Builder).AppendValues([]float32{0.5, 0.1, -3, 1e30}, nil)
		b.Field(2).(*array.Int32Builder).AppendValues([]int32{0, 1, 2, 3}, []bool{true, false, true, true})
		b.Field(3).(*array.StringBuilder).AppendValues([]string{"r", "é", "r", "\x00"}, nil)
		sb := b.Field(4).(*array.StructBuilder)
		sb.Append(true)
		sb.FieldBuilder(0).(*array.Float64Builder).Append(1.5)
		sb.FieldBuilder(1).(*array.Int32Builder).AppendNull()
		sb.AppendNull()
		sb.Append(true)
		sb.FieldBuilder(0).(*array.Float64Builder).AppendNull()
		sb.FieldBuilder(1).(*array.Int32Builder).Append(7)
		sb.Append(true)
		sb.FieldBuilder(0).(*array.Float64Builder).Append(-0.25)
		sb.FieldBuilder(1).(*array.Int32Builder).Append(1)
		b.Field(5).(*array.BooleanBuilder).AppendValues([]bool{true, false, false, true}, []bool{true, true, false, true})
		b.Field(6).(*array.Uint8Builder).AppendValues([]uint8{200, 200, 1, 200}, nil)
		b.Field(7).(*array.Int16Builder).AppendValues([]int16{-5, -6, 0, -5}, []bool{true, true, true, false})
		b.Field(8).(*array.Float64Builder).AppendValues([]float64{3, 0, 0, 2.5}, []bool{true, false, false, true})
	})
	return data
}

// TestDecodeParquetDirectTypes: a hand-made file of the other Arrow types
// the direct path reads (int32 steps, float32 rewards, uint8 and int16
// extras, large strings, components as a struct with a null member, a
// null struct, booleans) gives what the general way gives.
func TestDecodeParquetDirectTypes(t *testing.T) {
	data := typesParquet(t)
	opts := Options{Components: []string{"goal", "progress"}}
	if !sameDecoded(t, "mem://b/types.parquet", data, opts) {
		t.Errorf("read the general way")
	}
}

// TestDecodeParquetFallsBack: what the direct path does not hold to the
// JSON Lines outcome itself (bad rows, limits, columns it does not read)
// is read the general way: the same error, naming the row, or the same
// object.
func TestDecodeParquetFallsBack(t *testing.T) {
	ok := `{"run_id":"a","reward":1,"regime_id":"x","step":1,"components":{"progress":1}}` + "\n"
	cases := []struct {
		name, jsonl string
		opts        Options
	}{
		{"null reward", ok + `{"run_id":"a","reward":null,"regime_id":"x"}` + "\n", Options{}},
		{"no reward", ok + `{"run_id":"a","regime_id":"x"}` + "\n", Options{}},
		{"string reward", ok + `{"run_id":"a","reward":"1","regime_id":"x"}` + "\n", Options{}},
		{"fractional step", ok + `{"run_id":"a","reward":1,"regime_id":"x","step":1.5}` + "\n", Options{}},
		{"huge step", ok + `{"run_id":"a","reward":1,"regime_id":"x","step":1e300}` + "\n", Options{}},
		{"null component", ok + `{"run_id":"a","reward":1,"regime_id":"x","components":{"progress":null}}` + "\n", Options{}},
		{"nested extra", ok + `{"run_id":"a","reward":1,"regime_id":"x","cfg":{"a":[1]}}` + "\n", Options{}},
		{"object identity", ok + `{"run_id":{"a":1},"reward":1,"regime_id":"x"}` + "\n", Options{}},
		{"mixed gamma", ok + `{"run_id":"a","reward":1,"regime_id":"x","gamma":"0.9"}` + "\n", Options{}},
		{"too many labels", ok + `{"run_id":"a","reward":1,"regime_id":"y"}` + "\n", Options{MaxLabels: 1}},
		{"too many runs", ok + `{"run_id":"b","reward":1,"regime_id":"y"}` + "\n", Options{MaxRuns: 1}},
		{"long line", ok, Options{MaxLineBytes: 40}},
		{"large object", ok + ok, Options{MaxObjectBytes: 100}},
	}
	for i, c := range cases {
		url := fmt.Sprintf("mem://b/fallback-%d.parquet", i)
		if sameDecoded(t, url, convertJSONL(t, c.jsonl), c.opts) {
			t.Errorf("%s: read the direct way", c.name)
		}
	}
	// Bad rows skipped (--max-bad-rows): the general way hands them over.
	var bad []string
	opts := Options{OnBadRow: func(row *DataError) error { bad = append(bad, row.Error()); return nil }}
	obj, err := DecodeParquet("mem://b/skip.parquet", "skip.parquet", bytes.NewReader(convertJSONL(t, ok+`{"reward":"no","regime_id":"x"}`+"\n"+ok)), skyfallParquetFields, opts)
	if err != nil || obj.Rows != 2 || obj.Skipped != 1 || len(bad) != 1 || !strings.Contains(bad[0], "line 2: reward") {
		t.Errorf("skipping: %v, %+v, %q", err, obj, bad)
	}
}

// TestDecodeParquetDirectNaN: a NaN or an infinity in a float column (a
// reward, a component, an extra) is a bad row in JSON Lines: read the
// general way, with its error.
func TestDecodeParquetDirectNaN(t *testing.T) {
	for i, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		for _, col := range []string{"reward", "x"} {
			schema := arrow.NewSchema([]arrow.Field{
				{Name: "reward", Type: arrow.PrimitiveTypes.Float64}, {Name: "regime_id", Type: arrow.BinaryTypes.String},
				{Name: "x", Type: arrow.PrimitiveTypes.Float64}}, nil)
			data := writeTestParquet(t, schema, func(b *array.RecordBuilder) {
				vals := []float64{1, 2}
				b.Field(0).(*array.Float64Builder).AppendValues(vals, nil)
				b.Field(1).(*array.StringBuilder).AppendValues([]string{"a", "a"}, nil)
				b.Field(2).(*array.Float64Builder).AppendValues(vals, nil)
				if col == "reward" {
					b.Field(0).(*array.Float64Builder).Append(v)
					b.Field(2).(*array.Float64Builder).Append(1)
				} else {
					b.Field(0).(*array.Float64Builder).Append(1)
					b.Field(2).(*array.Float64Builder).Append(v)
				}
				b.Field(1).(*array.StringBuilder).Append("a")
			})
			url := fmt.Sprintf("mem://b/nan-%d-%s.parquet", i, col)
			if sameDecoded(t, url, data, Options{}) {
				t.Errorf("%s: read the direct way", url)
			}
			if _, err := DecodeParquet(url, "x", bytes.NewReader(data), skyfallParquetFields, Options{}); err == nil || !strings.Contains(err.Error(), "line 3") {
				t.Errorf("%s: %v, want an error at line 3", url, err)
			}
		}
	}
	// Invalid UTF-8 in a string column, and in a component's name.
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "reward", Type: arrow.PrimitiveTypes.Float64}, {Name: "regime_id", Type: arrow.BinaryTypes.String},
		{Name: "components", Type: arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Float64), Nullable: true}}, nil)
	for i, bad := range []struct{ label, comp string }{{"a\xff", "progress"}, {"a", "pro\xffgress"}, {"é", "progress"}} {
		data := writeTestParquet(t, schema, func(b *array.RecordBuilder) {
			b.Field(0).(*array.Float64Builder).AppendValues([]float64{1, 2}, nil)
			b.Field(1).(*array.StringBuilder).AppendValues([]string{"a", bad.label}, nil)
			mb := b.Field(2).(*array.MapBuilder)
			for range 2 {
				mb.Append(true)
				mb.KeyBuilder().(*array.StringBuilder).Append(bad.comp)
				mb.ItemBuilder().(*array.Float64Builder).Append(1)
			}
		})
		url := fmt.Sprintf("mem://b/utf8-%d.parquet", i)
		direct := sameDecoded(t, url, data, Options{Components: []string{"progress"}})
		if want := i == 2; direct != want {
			t.Errorf("%s: direct %v, want %v", url, direct, want)
		}
	}
}

// fuzzParquetJSONL returns FuzzParquetDirect's rows for seed: fields of
// shapes mostly valid for them, absent now and then, one file in four
// mixing shapes within a column.
func fuzzParquetJSONL(seed uint64, rows uint8) string {
	rng := rand.New(rand.NewPCG(seed, seed>>7))
	fields := []string{"run_id", "seed", "reward", "regime_id", "regime_origin", "step", "components", "invalid_action", "effective_rank", "gamma", "meta", "x"}
	shapes := make([]int, len(fields))
	for i := range shapes {
		shapes[i] = rng.IntN(8)
	}
	// Mostly a shape valid for the field, so that most files are read
	// the direct way; one file in four mixes shapes within a column.
	valid := [][]int{{0, 1, 3, 4, 5, 7}, {0, 1, 3, 4, 5, 7}, {1, 2, 7}, {3}, {0, 3, 5}, {0, 1, 5, 7}, {0, 5, 6}, {0, 4, 5},
		{0, 1, 2, 5, 7}, {0, 1, 2, 5, 7}, {0, 1, 2, 3, 4, 5, 7}, {0, 1, 2, 3, 4, 5, 7}}
	for i := range shapes {
		if rng.IntN(8) > 0 {
			shapes[i] = valid[i][rng.IntN(len(valid[i]))]
		}
	}
	mixed := rng.IntN(4) == 0
	var b strings.Builder
	for range int(rows) {
		b.WriteByte('{')
		first := true
		for i, name := range fields {
			shape := shapes[i]
			switch {
			case mixed && rng.IntN(10) == 0:
				shape = rng.IntN(8) // now and then another shape
			case i > 3 && rng.IntN(6) == 0:
				shape = 0 // absent now and then
			}
			var v string
			switch shape {
			case 0:
				continue // absent
			case 1:
				v = strconv.Itoa(rng.IntN(3) - 1)
			case 2:
				v = strconv.FormatFloat(float64(rng.IntN(5))/4, 'g', -1, 64)
			case 3:
				v = strconv.Quote([]string{"a", "b", "é"}[rng.IntN(3)])
			case 4:
				v = strconv.FormatBool(rng.IntN(2) == 0)
			case 5:
				v = "null"
			case 6:
				v = fmt.Sprintf(`{"progress":%d,"success":%d}`, rng.IntN(2), rng.IntN(2))
			case 7:
				v = strconv.Itoa(rng.IntN(2))
			}
			if !first {
				b.WriteByte(',')
			}
			first = false
			fmt.Fprintf(&b, "%q:%s", name, v)
		}
		b.WriteString("}\n")
	}
	return b.String()
}

// FuzzParquetDirect: rows drawn from a few shapes of values per field
// (numbers, integers, strings, booleans, nulls, absent, objects of
// numbers), converted to Parquet, decode the direct way (or fall back) into
// exactly what the general way gives.
func FuzzParquetDirect(f *testing.F) {
	for seed := range uint64(48) {
		f.Add(seed, uint8(40))
	}
	f.Fuzz(func(t *testing.T, seed uint64, rows uint8) {
		jsonl := fuzzParquetJSONL(seed, rows)
		// The writer's settings vary with the seed (writerVariants).
		var pq bytes.Buffer
		v := writerVariants[seed%uint64(len(writerVariants))]
		if err := convertToParquet("mem://b/x.jsonl", strings.NewReader(jsonl), &pq, 0, 0, v.props, v.maps); err != nil {
			t.Skip(err) // not valid JSON rows: nothing to convert
		}
		opts := Options{Components: []string{"progress"}, IdentityFields: []string{"run_id", "seed"}}
		sameDecoded(t, fmt.Sprintf("mem://b/fuzz-%d-%d.parquet", seed, rows), pq.Bytes(), opts)
	})
}

// TestDictColumns: `crlbatch convert` writes dictionary pages for the
// columns whose values repeat (identities, labels, constants, a components
// map's keys) and plain pages for the others (rewards, hashes, the
// components' values, as a struct's children or a map's); the string
// columns with dictionary pages only are those pqarrow reads as
// dictionaries; a file written without dictionaries has none.
func TestDictColumns(t *testing.T) {
	rows := string(benchRows(2000))
	for _, maps := range []bool{false, true} {
		data := convertForm(t, rows, nil, maps)
		f, err := openParquet("mem://b/x.parquet", bytes.NewReader(data), skyfallParquetFields, fixedBatch(100), dictColumns)
		if err != nil {
			t.Fatal(err)
		}
		dict := map[string]bool{}
		for i, fl := range f.schema.Fields() {
			if _, ok := fl.Type.(*arrow.DictionaryType); ok {
				dict[f.cols[i].name] = true
			}
		}
		for _, name := range []string{"run_id", "regime_id", "algorithm_id"} {
			if !dict[name] {
				t.Errorf("%s is not read as a dictionary (%v)", name, dict)
			}
		}
		if dict["reward"] || dict["components"] || dict["obs_hash"] {
			t.Errorf("a column of values that rarely repeat is read as a dictionary: %v", dict)
		}
		// Each leaf's pages, as the footer lists them.
		md := f.pf.MetaData()
		want := map[string]bool{"run_id": true, "seed": true, "regime_id": true, "gamma": true,
			"reward": false, "obs_hash": false, "logp": false, "step": false}
		if maps {
			want["components.key_value.key"], want["components.key_value.value"] = true, false
		} else {
			for _, c := range []string{"progress", "collision", "success", "energy"} {
				want["components."+c] = false
			}
		}
		for i := 0; i < md.Schema.NumColumns(); i++ {
			path := md.Schema.Column(i).ColumnPath().String()
			w, ok := want[path]
			if !ok {
				continue
			}
			delete(want, path)
			for g := 0; g < md.NumRowGroups(); g++ {
				cc, err := md.RowGroup(g).ColumnChunk(i)
				if err != nil {
					t.Fatal(err)
				}
				if got := cc.HasDictionaryPage(); got != w {
					t.Errorf("maps %t: %s, row group %d: a dictionary page %t, want %t", maps, path, g, got, w)
				}
			}
		}
		f.pf.Close()
		if len(want) > 0 {
			t.Errorf("maps %t: no leaf %v", maps, want)
		}
	}
	schema := arrow.NewSchema([]arrow.Field{{Name: "reward", Type: arrow.PrimitiveTypes.Float64}, {Name: "regime_id", Type: arrow.BinaryTypes.String}}, nil)
	var buf bytes.Buffer
	w, err := pqarrow.NewFileWriter(schema, &buf, parquet.NewWriterProperties(parquet.WithDictionaryDefault(false)), pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	b.Field(0).(*array.Float64Builder).AppendValues([]float64{1, 2}, nil)
	b.Field(1).(*array.StringBuilder).AppendValues([]string{"a", "a"}, nil)
	rec := b.NewRecordBatch()
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	w.Close()
	pf, err := file.NewParquetReader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	if dc := dictColumns(pf); len(dc) != 0 {
		t.Errorf("plain pages read as dictionaries: columns %v", dc)
	}
	if !sameDecoded(t, "mem://b/plain.parquet", buf.Bytes(), Options{}) {
		t.Errorf("plain pages: read the general way")
	}
}

// TestConvertLongRepeatedValuesDeterministic: a column whose values repeat
// (400 distinct, each on 8 rows) but are long (3 KB) would fill a
// dictionary past arrow-go's page size limit and fall back to plain pages
// mid-chunk, whose footer arrow-go writes in a Go map's order. convert
// writes it without a dictionary, and the same object converts to the same
// bytes every time.
func TestConvertLongRepeatedValuesDeterministic(t *testing.T) {
	var b strings.Builder
	for i := range 3200 {
		fmt.Fprintf(&b, `{"run_id":"r","step":%d,"regime_id":"calm","reward":%d,"note":"%04d%s"}`+"\n", i, i%5, i%400, strings.Repeat("x", 3000))
	}
	first := convertJSONL(t, b.String())
	for range 5 {
		if got := convertJSONL(t, b.String()); !bytes.Equal(got, first) {
			t.Fatalf("the same object converted to different bytes (%d and %d)", len(first), len(got))
		}
	}
	r, err := file.NewParquetReader(bytes.NewReader(first))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	md := r.MetaData()
	for i := 0; i < md.Schema.NumColumns(); i++ {
		path := md.Schema.Column(i).ColumnPath().String()
		for g := 0; g < md.NumRowGroups(); g++ {
			cc, err := md.RowGroup(g).ColumnChunk(i)
			if err != nil {
				t.Fatal(err)
			}
			want := path == "run_id" || path == "regime_id" || path == "reward"
			if cc.HasDictionaryPage() != want {
				t.Errorf("%s, row group %d: a dictionary page %t, want %t", path, g, cc.HasDictionaryPage(), want)
			}
		}
	}
}

// TestDecodeParquetEveryCodec: the same rows written with every page codec
// arrow-go writes (convert's own and the others a team's writer may use)
// decode, from memory (the engine's small objects, read through a small
// buffer) and through a plain io.ReaderAt (column chunks read whole), to
// the encoding of convert's default form.
func TestDecodeParquetEveryCodec(t *testing.T) {
	opts := Options{Components: []string{"success", "progress", "absent"}}
	jsonl := interleavedRows(3000)
	wantObj, err := DecodeParquet("mem://b/x.parquet", "x.parquet", bytes.NewReader(convertJSONL(t, jsonl)), skyfallParquetFields, opts)
	if err != nil {
		t.Fatal(err)
	}
	want, err := wantObj.AppendEncoding(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, codec := range []compress.Compression{compress.Codecs.Zstd, compress.Codecs.Snappy, compress.Codecs.Lz4Raw,
		compress.Codecs.Uncompressed, compress.Codecs.Gzip, compress.Codecs.Brotli} {
		data := convertWith(t, jsonl, []parquet.WriterProperty{parquet.WithCompression(codec)})
		pf, err := file.NewParquetReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		cc, err := pf.MetaData().RowGroup(0).ColumnChunk(0)
		if err != nil {
			t.Fatal(err)
		}
		if got := cc.Compression(); got != codec {
			t.Errorf("%s: written as %s", codec, got)
		}
		pf.Close()
		for _, src := range []struct {
			name string
			r    parquet.ReaderAtSeeker
		}{{"memory", bytes.NewReader(data)}, {"ReaderAt", io.NewSectionReader(bytes.NewReader(data), 0, int64(len(data)))}} {
			obj, err := DecodeParquet("mem://b/x.parquet", "x.parquet", src.r, skyfallParquetFields, opts)
			if err != nil {
				t.Fatalf("%s, %s: %v", codec, src.name, err)
			}
			got, err := obj.AppendEncoding(nil)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s, %s: encoding differs from zstd's (%d bytes, want %d)", codec, src.name, len(got), len(want))
			}
		}
	}
}

// TestConvertIncompressible: convert writes uncompressed the columns its
// codec would not shrink by an eighth (random float64s), with the codec
// the others (a step, random hex strings: 4 bits a byte, text, the
// components map, dictionaries, booleans); with --compression
// uncompressed every column; the rows read back the same every way.
func TestConvertIncompressible(t *testing.T) {
	var b strings.Builder
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 3000 {
		fmt.Fprintf(&b, `{"run_id":"r","step":%d,"reward":%v,"noise":"%016x","text":"step %d of the run","regime_id":"a","components":{"progress":%d},"invalid_action":%v}`+"\n",
			i, rng.NormFloat64(), rng.Uint64(), i, i%2, i%3 == 0)
	}
	var first []byte
	for _, tc := range []struct {
		codec string
		raw   map[string]bool
	}{
		{"", map[string]bool{"reward": true}},
		{"snappy", map[string]bool{"reward": true}},
		{"uncompressed", nil},
	} {
		var out bytes.Buffer
		if err := ConvertToParquetCompressed("mem://b/x.jsonl", strings.NewReader(b.String()), &out, 0, 0, tc.codec); err != nil {
			t.Fatal(err)
		}
		pf, err := file.NewParquetReader(bytes.NewReader(out.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		want := compress.Codecs.Zstd
		if tc.codec != "" {
			want = convertCodecs[tc.codec]
		}
		md := pf.MetaData()
		for i := 0; i < md.Schema.NumColumns(); i++ {
			path := md.Schema.Column(i).ColumnPath().String()
			cc, err := md.RowGroup(0).ColumnChunk(i)
			if err != nil {
				t.Fatal(err)
			}
			w := want
			if tc.raw[path] {
				w = compress.Codecs.Uncompressed
			}
			if got := cc.Compression(); got != w {
				t.Errorf("%q: %s: %s, want %s", tc.codec, path, got, w)
			}
		}
		pf.Close()
		lines, err := ParquetLines("mem://b/x.parquet", bytes.NewReader(out.Bytes()), nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(lines)
		lines.Close()
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = got
		} else if !bytes.Equal(got, first) {
			t.Errorf("%q: rows read back differ", tc.codec)
		}
	}
}

// TestAnyNonFinite: anyNonFinite finds a NaN (any payload, either sign) or
// an infinity wherever it lies among finite values (zeros, subnormals, the
// largest float64s), and nothing among finite values only.
func TestAnyNonFinite(t *testing.T) {
	finite := []float64{0, math.Copysign(0, -1), 1, -1, math.MaxFloat64, -math.MaxFloat64,
		math.SmallestNonzeroFloat64, -math.SmallestNonzeroFloat64, 0x1p-1022, 1e308, 2.5}
	if anyNonFinite(finite) || anyNonFinite(nil) {
		t.Fatal("a non-finite value among finite ones")
	}
	for _, bad := range []float64{math.NaN(), -math.NaN(), math.Float64frombits(0x7ff0000000000001),
		math.Float64frombits(0xfff8000000000123), math.Inf(1), math.Inf(-1)} {
		for at := range len(finite) + 1 {
			xs := slices.Insert(slices.Clone(finite), at, bad)
			if !anyNonFinite(xs) {
				t.Errorf("%x at %d: not found", math.Float64bits(bad), at)
			}
		}
	}
}
