package readers

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// convertRows is a small object of rows with every kind of column the
// converter writes: integers, floats, strings, booleans, the components
// (a struct), and JSON text.
func convertRows(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `{"step":%d,"reward":%g,"run":"r%d","done":%t,"components":{"progress":%g},"extra":[%d]}`+"\n",
			i, float64(i)/7, i%3, i%5 == 0, float64(i)/3, i)
	}
	return b.String()
}

// TestConvertObjectChangedBetweenReads: ConvertObject reads its object
// twice (once to learn the columns, once to write them); an object whose
// second read differs from its first in any way (a digit, a field, a
// type, a row fewer, a line that is no longer JSON) is
// ErrChangedWhileConverting, never a DataError (the object's rows were
// valid when first read) and never a file; the same bytes twice convert
// to ConvertToParquet's file, with exactly two opens, and so does an
// object appended to between the reads (a log still written: the second
// read stops where the first ended).
func TestConvertObjectChangedBetweenReads(t *testing.T) {
	t.Parallel()
	first := convertRows(ConvertRowGroupRows + 100)
	lines := strings.SplitAfter(first, "\n")
	lines = lines[:len(lines)-1]
	at := ConvertRowGroupRows + 5 // a row in the second row group
	with := func(i int, line string) string {
		l := append([]string(nil), lines...)
		l[i] = line
		return strings.Join(l, "")
	}
	var want bytes.Buffer
	if err := ConvertToParquet("mem://b/x.jsonl", strings.NewReader(first), &want, 0, 0); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, second string
	}{
		{"same", first},
		{"a row more", first + lines[0]},
		{"a blank line more", first + "\n"},
		{"a digit", with(at, strings.Replace(lines[at], `"reward":`, `"reward":1`, 1))},
		{"a new field", with(at, strings.Replace(lines[at], `{"step"`, `{"new":1,"step"`, 1))},
		{"an integer column's float", with(at, strings.Replace(lines[at], `"step":`, `"step":0.5e1,"x":`, 1))},
		{"a string column's number", with(at, fmt.Sprintf(`{"step":%d,"run":7}`+"\n", at))},
		{"the components' member not a number", with(at, fmt.Sprintf(`{"step":%d,"components":{"progress":"p"}}`+"\n", at))},
		{"a member the first read did not see", with(at, fmt.Sprintf(`{"step":%d,"components":{"progress":1,"goal":2}}`+"\n", at))},
		{"a row fewer", strings.Join(lines[:len(lines)-1], "")},
		{"a line no longer JSON", with(at, "{\"step\":\n")},
		{"the last line cut short", first[:len(first)-3] + "\n\n\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var opens atomic.Int32
			open := func() (io.ReadCloser, error) {
				if opens.Add(1) == 1 {
					return io.NopCloser(strings.NewReader(first)), nil
				}
				return io.NopCloser(strings.NewReader(tc.second)), nil
			}
			conv, err := ConvertObject("mem://b/x.jsonl", open, 0, 0, "")
			if n := opens.Load(); n != 2 {
				t.Errorf("%d opens, want 2", n)
			}
			if strings.HasPrefix(tc.second, first) {
				if err != nil {
					t.Fatal(err)
				}
				var got bytes.Buffer
				if _, err := conv.WriteTo(&got); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got.Bytes(), want.Bytes()) {
					t.Errorf("%d bytes, ConvertToParquet's %d differ", got.Len(), want.Len())
				}
				// WriteTo writes the same bytes again.
				var again bytes.Buffer
				if n, err := conv.WriteTo(&again); err != nil || n != int64(again.Len()) || !bytes.Equal(again.Bytes(), got.Bytes()) {
					t.Errorf("second WriteTo: %d, %v, or other bytes", n, err)
				}
				return
			}
			var de *DataError
			if !errors.Is(err, ErrChangedWhileConverting) || errors.As(err, &de) || conv != nil {
				t.Fatalf("%v (%T), %v; want ErrChangedWhileConverting, no DataError, no file", err, err, conv)
			}
			if !strings.Contains(err.Error(), "mem://b/x.jsonl") {
				t.Errorf("%v: does not name the object", err)
			}
		})
	}
}

// TestConvertObjectOpenFails: an error of either open, or of either
// read, is ConvertObject's error, not a DataError, nor a change.
func TestConvertObjectOpenFails(t *testing.T) {
	t.Parallel()
	rows := convertRows(100)
	boom := errors.New("boom")
	for _, failAt := range []int32{1, 2} {
		for _, how := range []string{"open", "read"} {
			var opens atomic.Int32
			open := func() (io.ReadCloser, error) {
				if opens.Add(1) != failAt {
					return io.NopCloser(strings.NewReader(rows)), nil
				}
				if how == "open" {
					return nil, boom
				}
				return io.NopCloser(io.MultiReader(strings.NewReader(rows[:len(rows)/2]), errReader{boom})), nil
			}
			_, err := ConvertObject("mem://b/x.jsonl", open, 0, 0, "")
			var de *DataError
			if !errors.Is(err, boom) || errors.As(err, &de) || errors.Is(err, ErrChangedWhileConverting) {
				t.Errorf("%s %d fails: %v, want boom alone", how, failAt, err)
			}
		}
	}
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// genRows is an object of n rows made as it is read, never held.
type genRows struct {
	i, n int
	buf  []byte
}

func (g *genRows) Read(p []byte) (int, error) {
	for len(g.buf) < len(p) && g.i < g.n {
		g.buf = fmt.Appendf(g.buf, `{"run_id":"run-%d","step":%d,"reward":%.6f,"regime_id":"r%d","obs_hash":"%016x","components":{"progress":%.4f,"collision":0}}`+"\n",
			g.i/100000, g.i, float64(g.i%977)/977, g.i/50000, uint64(g.i)*0x9e3779b97f4a7c15, float64(g.i%101)/101)
		g.i++
	}
	if len(g.buf) == 0 {
		return 0, io.EOF
	}
	n := copy(p, g.buf)
	g.buf = g.buf[:copy(g.buf, g.buf[n:])]
	return n, nil
}

// convertPeak converts an object of n generated rows and returns the
// peak of the heap's objects above where it started (sampled every
// millisecond), and the sizes of the JSON and of the Parquet file.
func convertPeak(t *testing.T, n int) (peak, jsonBytes, parquetBytes int64) {
	t.Helper()
	for g := (&genRows{n: n}); ; {
		k, err := g.Read(make([]byte, 1<<16))
		jsonBytes += int64(k)
		if err == io.EOF {
			break
		}
	}
	open := func() (io.ReadCloser, error) { return io.NopCloser(&genRows{n: n}), nil }
	runtime.GC()
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	base := s[0].Value.Uint64()
	var top atomic.Uint64
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
			metrics.Read(s)
			if v := s[0].Value.Uint64(); v > top.Load() {
				top.Store(v)
			}
		}
	}()
	conv, err := ConvertObject("mem://b/big.jsonl", open, 0, 0, "")
	close(stop)
	<-done
	if err != nil {
		t.Fatal(err)
	}
	var out countWriter
	if _, err := conv.WriteTo(&out); err != nil {
		t.Fatal(err)
	}
	return int64(top.Load()) - int64(base), jsonBytes, out.n
}

// TestConvertObjectMemory: converting an object holds a row group's
// columns and the Parquet file, not the object: four times the rows (two
// row groups, then eight) raise the heap's peak by less than the larger
// Parquet file and a row group's JSON, while the converter before this one
// (every line and every cell kept) grew with the object, several times
// its size. The collector runs at GOGC 10 meanwhile, so that the peak is
// what is held rather than the collector's slack. Not parallel (it reads
// the process's heap: parallel tests wait while it runs); not under the
// race detector (which holds memory of its own; make test-norace runs it).
func TestConvertObjectMemory(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's own memory; make test-norace runs this test")
	}
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	const n = 2*ConvertRowGroupRows + 1000
	small, smallJSON, smallPQ := convertPeak(t, n)
	large, largeJSON, largePQ := convertPeak(t, 4*n)
	t.Logf("%d rows: %.1f MB of JSON, %.1f MB of Parquet, peak %.1f MB; %d rows: %.1f MB, %.1f MB, peak %.1f MB",
		n, float64(smallJSON)/1e6, float64(smallPQ)/1e6, float64(small)/1e6, 4*n, float64(largeJSON)/1e6, float64(largePQ)/1e6, float64(large)/1e6)
	// The file's buffer may hold twice its bytes while it grows.
	if allowed := small + 2*(largePQ-smallPQ) + smallJSON/2; large > allowed {
		t.Errorf("four times the rows: peak %d bytes, want at most %d (the smaller object's %d, the larger file, half a row group's JSON)", large, allowed, small)
	}
	if large > largeJSON/2 {
		t.Errorf("peak %d bytes converting %d bytes of JSON: want at most half", large, largeJSON)
	}
}

// TestConvertedInPieces: a converted file held in pieces (chunkWriter, as
// ConvertObject holds it) is written with its checksums exactly as the
// same file held whole, whatever the pieces' size: page headers, page
// bodies, the footer and its length crossing from one piece to the next
// (pieces of 13, 1000 and 4096 bytes, and the default), and a header
// longer than the first window it is decoded from (a page's statistics
// of a column of long strings).
func TestConvertedInPieces(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString(convertRows(20000))
	long := strings.Repeat("x", 3*pqHeaderWindow/4) // min and max: longer than the window together (arrow-go drops statistics over 4096 bytes)
	for i := range 50 {
		fmt.Fprintf(&b, `{"step":%d,"note":"%s%d"}`+"\n", i, long, i)
	}
	rows := b.String()
	var whole bytes.Buffer
	if err := convertToParquet("mem://b/x.jsonl", strings.NewReader(rows), &whole, 0, 0, nil, false); err != nil {
		t.Fatal(err)
	}
	open := func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(rows)), nil }
	opts, _ := RecordOptions{IdentityFields: []string{}, MaxRuns: -1}.normalize()
	c := &converter{index: map[string]int{}}
	if _, err := eachRecord("mem://b/x.jsonl", open, opts, c.row); err != nil {
		t.Fatal(err)
	}
	var raw bytes.Buffer
	if _, err := c.write("mem://b/x.jsonl", open, opts, &raw); err != nil {
		t.Fatal(err)
	}
	longHeader := false
	pqEachPage(t, whole.Bytes(), func(_, _, _ int, h []tcField, _ []byte) {
		longHeader = longHeader || len(tcAppendStruct(nil, h)) > pqHeaderWindow
	})
	if !longHeader {
		t.Fatalf("no page header longer than %d bytes: the test does not test the growing window", pqHeaderWindow)
	}
	for _, piece := range []int{13, 1000, 4096, 0} {
		cw := &chunkWriter{piece: piece}
		cw.Write(raw.Bytes())
		if got := cw.chunks.size(); got != int64(raw.Len()) {
			t.Fatalf("pieces of %d: %d bytes held, %d written", piece, got, raw.Len())
		}
		var got bytes.Buffer
		n, err := (&Converted{url: "mem://b/x.jsonl", data: cw.chunks}).WriteTo(&got)
		if err != nil || n != int64(got.Len()) || !bytes.Equal(got.Bytes(), whole.Bytes()) {
			t.Errorf("pieces of %d: %d, %v, or %d bytes unlike the whole file's %d", piece, n, err, got.Len(), whole.Len())
		}
	}
}

// TestConvertMembersTableBounded: the table that names the members of
// object cells holds at most a dictionary's worth of names, however many
// distinct member names the object has: objects of numbers whose keys
// never repeat (a map column), and objects of strings (a JSON-text column,
// whose members are not even listed once the column cannot be a map).
// It held every name of the object: a 300 MB object of episode ids peaked
// at 1.15 GB.
func TestConvertMembersTableBounded(t *testing.T) {
	t.Parallel()
	const n = 3 * convDictMax
	for name, row := range map[string]string{
		"map":  `{"m":{"key_%d":1.5},"x":%[1]d}`,
		"json": `{"info":{"ep_%016d":"ok"},"x":%[1]d}`,
	} {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, row+"\n", i)
		}
		rows := b.String()
		open := func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(rows)), nil }
		opts, _ := RecordOptions{IdentityFields: []string{}, MaxRuns: -1}.normalize()
		c := &converter{index: map[string]int{}}
		if _, err := eachRecord("mem://b/x.jsonl", open, opts, c.row); err != nil {
			t.Fatal(err)
		}
		if c.subKeys != nil && len(c.subKeys.names) > convDictMax+1 {
			t.Errorf("%s: the first read left %d member names in the table", name, len(c.subKeys.names))
		}
		var out bytes.Buffer
		if _, err := c.write("mem://b/x.jsonl", open, opts, &out); err != nil {
			t.Fatal(err)
		}
		if c.subKeys != nil && len(c.subKeys.names) > convDictMax+1 {
			t.Errorf("%s: the second read left %d member names in the table", name, len(c.subKeys.names))
		}
		// The rows come back as they were.
		var pq bytes.Buffer
		if err := ConvertToParquet("mem://b/x.jsonl", strings.NewReader(rows), &pq, 0, 0); err != nil {
			t.Fatal(err)
		}
		rc, err := ParquetLines("mem://b/x.parquet", bytes.NewReader(pq.Bytes()), nil)
		if err != nil {
			t.Fatal(err)
		}
		back, err := io.ReadAll(rc)
		rc.Close()
		if err != nil || string(back) != rows {
			t.Errorf("%s: %d bytes read back (%v), not the %d bytes converted", name, len(back), err, len(rows))
		}
	}
}

// TestConvertJSONColumnsTyped: the columns convert writes as JSON text (a
// field of several types, one sometimes null) are of Parquet's JSON
// logical type, besides being listed in crlbatch.json_columns, so that a
// copy without the file's key/value metadata (DuckDB's) still holds them
// as JSON text; the other columns are plain strings and numbers.
func TestConvertJSONColumnsTyped(t *testing.T) {
	var b strings.Builder
	for i := range 50 {
		mixed := fmt.Sprint(i)
		if i%3 == 0 {
			mixed = fmt.Sprintf("%q", fmt.Sprint("m", i))
		}
		rank := fmt.Sprint(1 + float64(i)/8)
		if i == 7 {
			rank = "null"
		}
		fmt.Fprintf(&b, `{"run_id":"r","step":%d,"reward":0.5,"regime_id":"a","mixed":%s,"effective_rank":%s}`+"\n", i, mixed, rank)
	}
	data := convertJSONL(t, b.String())
	pf, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	got := map[string]string{}
	for i := 0; i < pf.MetaData().Schema.NumColumns(); i++ {
		c := pf.MetaData().Schema.Column(i)
		got[c.Name()] = c.LogicalType().String()
	}
	want := map[string]string{"run_id": "String", "step": "Int(bitWidth=64, isSigned=true)", "reward": "None", "regime_id": "String", "mixed": "JSON", "effective_rank": "JSON"}
	for name, lt := range want {
		if got[name] != lt {
			t.Errorf("column %s: logical type %s, want %s", name, got[name], lt)
		}
	}
	if kv := pf.MetaData().KeyValueMetadata().FindValue(ParquetJSONColumns); kv == nil || *kv != `["mixed","effective_rank"]` {
		t.Errorf("%s: %v", ParquetJSONColumns, kv)
	}
	readsAsLines(t, "mem://b/json-typed.parquet", data, b.String())
}

// TestConvertComponentsForm: convert writes a column of objects of numbers
// as a struct (a float64 child per member name, in order of first
// appearance; a name a row lacks null) when every object lists its members
// in that order, and as a map of string to float64 otherwise (an order
// that varies, more than convStructMax names, names another tool could
// confuse, no names at all), names that JSON escapes among them. Either way
// the rows read back as they were written, and decode (the direct way and
// the general one) as the JSON Lines do.
func TestConvertComponentsForm(t *testing.T) {
	many := make([]string, convStructMax+1)
	for i := range many {
		many[i] = fmt.Sprintf(`"c%02d":%d`, i, i)
	}
	for _, c := range []struct {
		name  string
		comps []string // each row's components ("" for a row without them)
		want  string   // the column's Arrow type
	}{
		{"in one order", []string{`{"progress":0.5,"success":1}`, `{"progress":0.25}`, `{}`, "", `{"success":0,"energy":2.5}`, `{"progress":-3,"energy":1}`},
			"struct<progress: float64 nullable, success: float64 nullable, energy: float64 nullable>"},
		{"a new name first", []string{`{"b":1}`, `{"c":2,"a":3}`, `{"b":1,"c":2,"a":3}`},
			"struct<b: float64 nullable, c: float64 nullable, a: float64 nullable>"},
		{"names to escape", []string{`{"a\"b":1,"é":2,"a\\b":3}`, `{"é":0.5}`},
			"struct<a\"b: float64 nullable, é: float64 nullable, a\\b: float64 nullable>"},
		{"an order that varies", []string{`{"a":1,"b":2}`, `{"b":2,"a":1}`}, "map<utf8, float64, items_nullable>"},
		{"a new name before a known one", []string{`{"a":1}`, `{"b":2,"a":1}`}, "map<utf8, float64, items_nullable>"},
		{"more names than a struct holds", []string{`{"progress":1}`, "{" + strings.Join(many, ",") + "}"}, "map<utf8, float64, items_nullable>"},
		{"names equal but for case", []string{`{"Progress":1,"progress":2}`}, "map<utf8, float64, items_nullable>"},
		{"a name with a dot", []string{`{"a.b":1}`}, "map<utf8, float64, items_nullable>"},
		{"an empty name", []string{`{"":1,"a":2}`}, "map<utf8, float64, items_nullable>"},
		{"no names", []string{`{}`, `{}`}, "map<utf8, float64, items_nullable>"},
	} {
		var b strings.Builder
		for i, comps := range c.comps {
			fmt.Fprintf(&b, `{"run_id":"r","reward":%d,"regime_id":"a"`, i)
			if comps != "" {
				fmt.Fprintf(&b, `,"components":%s`, comps)
			}
			b.WriteString("}\n")
		}
		data := convertJSONL(t, b.String())
		pf, err := file.NewParquetReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
		if err != nil {
			t.Fatal(err)
		}
		schema, err := fr.Schema()
		pf.Close()
		if err != nil {
			t.Fatal(err)
		}
		if f, ok := schema.FieldsByName("components"); !ok || f[0].Type.String() != c.want {
			t.Errorf("%s: components %v, want %s", c.name, f, c.want)
		}
		readsAsLines(t, "mem://b/"+strings.ReplaceAll(c.name, " ", "-")+".parquet", data, b.String())
	}
	// An object whose members the second read finds in another order than
	// the first changed between the reads.
	first := `{"run_id":"r","reward":1,"regime_id":"a","components":{"a":1,"b":2}}` + "\n"
	second := strings.Replace(first, `{"a":1,"b":2}`, `{"b":2,"a":1}`, 1)
	var opens atomic.Int32
	open := func() (io.ReadCloser, error) {
		if opens.Add(1) == 1 {
			return io.NopCloser(strings.NewReader(first)), nil
		}
		return io.NopCloser(strings.NewReader(second)), nil
	}
	if _, err := ConvertObject("mem://b/x.jsonl", open, 0, 0, ""); !errors.Is(err, ErrChangedWhileConverting) {
		t.Errorf("members reordered between the reads: %v, want ErrChangedWhileConverting", err)
	}
}
