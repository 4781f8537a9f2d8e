package readers

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

// goodRows are valid skyfall rows with everything that a half-applied bad
// row could disturb: two interleaved runs, an anonymous row, metadata
// constant over each run, label origins, components, gamma.
var goodRows = []string{
	`{"run_id":"r1","seed":0,"algorithm_id":"ppo","task":"nav","step":0,"regime_id":"a","reward":0.5,"components":{"c":0.25},"gamma":0.95,"env":"grid"}`,
	`{"run_id":"r2","seed":1,"algorithm_id":"sac","step":0,"regime_id":"a","reward":1e-3,"env":"grid"}`,
	`{"run_id":"r1","seed":0,"algorithm_id":"ppo","task":"nav","step":1,"regime_id":"b","reward":-0.125,"invalid_action":true,"effective_rank":3,"gamma":0.95,"env":"grid"}`,
	`{"regime_id":"z","reward":7}`,
	`{"run_id":"r1","seed":0,"algorithm_id":"ppo","task":"nav","step":2,"regime_id":"a_again","regime_origin":"a","reward":0.75,"components":{"c":1},"gamma":0.95,"env":"grid"}`,
	`{"run_id":"r2","seed":1,"algorithm_id":"sac","step":1,"regime_id":"b","alias_of":"a","reward":2,"env":"grid"}`,
}

// sneakyBadRows are bad rows that, were any of their valid parts applied,
// would change the result: a new identity, a new label, a value that breaks
// a run's metadata, an origin, a component, gamma, an anonymous row.
var sneakyBadRows = []struct{ row, field string }{
	{`{"run_id":"r9","seed":9,"regime_id":"new","reward":"1"}`, "reward"},
	{`{"run_id":"r1","seed":0,"algorithm_id":"ppo","task":"nav","regime_id":"zz","regime_origin":"q","reward":1,"components":{"c":5},"gamma":0.5,"env":"other","step":1.5}`, "step"},
	{`{"run_id":"r1","seed":0,"algorithm_id":"ppo","task":"nav","regime_id":"a","reward":1,"env":"grid","extra":1,"gamma":"x"}`, "gamma"},
	{`{"regime_id":"anon2","reward":1,"components":{"c":"1"}}`, "components.c"},
	{`{"run_id":"r2","seed":1,"algorithm_id":"sac","regime_id":"a","reward":1,"env":"grid","seed":1}`, "seed"},
	{`{"run_id":"r2","seed":1,"algorithm_id":"sac","regime_id":"b","alias_of":"zz","reward":1,"env":"grid","effective_rank":"1"}`, "effective_rank"},
	{`{"run_id":"r3","regime_id":"a"}`, "reward"},
}

// badRow is one bad row placed in a test object, and where.
type badRow struct {
	line         int
	field, msg   string
	row, caseTag string
}

// mixRows interleaves good and bad rows (a bad one first, before and
// after every good one, and two in a row at the end) and returns the mixed
// object, the object of the good rows alone, and the bad rows with their
// lines in the mixed object.
func mixRows(good []string, bad []badRow) (mixed, clean string, placed []badRow) {
	var m, c strings.Builder
	line := 0
	bi := 0
	putBad := func() {
		if bi < len(bad) {
			b := bad[bi]
			bi++
			line++
			b.line = line
			placed = append(placed, b)
			m.WriteString(b.row + "\n")
		}
	}
	for i, g := range good {
		putBad()
		if i%2 == 1 {
			line++
			m.WriteString("  \n") // a blank line still counts
		}
		line++
		m.WriteString(g + "\n")
		c.WriteString(g + "\n")
	}
	for bi < len(bad) {
		putBad()
	}
	return m.String(), c.String(), placed
}

// collect returns an OnBadRow that keeps every row it is given.
func collect(got *[]*DataError) BadRowFunc {
	return func(de *DataError) error {
		*got = append(*got, de)
		return nil
	}
}

// TestSkipBadRows: with OnBadRow skipping, an object holding bad rows
// gives exactly the traces of the object without them, in every format
// and at every buffer boundary, and each bad row is reported once with its
// object URL, its line in the object and its reason.
func TestSkipBadRows(t *testing.T) {
	var bad []badRow
	for _, c := range rowErrorCases {
		bad = append(bad, badRow{field: c.field, msg: c.msg, row: c.row, caseTag: c.name})
	}
	for i, s := range sneakyBadRows {
		bad = append(bad, badRow{field: s.field, row: s.row, caseTag: fmt.Sprintf("sneaky %d", i)})
	}
	// Spread the bad rows over several objects of the good rows, so that
	// each holds a few; every one starts with a bad row.
	opts := Options{Components: []string{"c"}}
	for start := 0; start < len(bad); start += 9 {
		chunk := bad[start:min(start+9, len(bad))]
		mixed, clean, placed := mixRows(goodRows, chunk)
		want := mustDecode(t, opts, object{"x", clean})
		for _, enc := range []struct {
			name string
			data []byte
		}{{"plain", []byte(mixed)}, {"gzip", gz(t, []byte(mixed))}, {"zstd", zst(t, []byte(mixed))}} {
			for _, one := range []bool{false, true} {
				name := fmt.Sprintf("%d-%s-onebyte=%v", start, enc.name, one)
				t.Run(name, func(t *testing.T) {
					var r io.Reader = bytes.NewReader(enc.data)
					if one {
						r = iotest.OneByteReader(r)
					}
					var got []*DataError
					o := opts
					o.OnBadRow = collect(&got)
					obj, err := DecodeObject(testURL, "x", r, o)
					if err != nil {
						t.Fatal(err)
					}
					if obj.Skipped != len(placed) || obj.Rows != len(goodRows) || obj.Lines != strings.Count(mixed, "\n") {
						t.Errorf("skipped %d rows %d lines %d, want %d %d %d", obj.Skipped, obj.Rows, obj.Lines, len(placed), len(goodRows), strings.Count(mixed, "\n"))
					}
					traces, err := Assemble([]*ObjectRuns{obj}, opts)
					if err != nil {
						t.Fatal(err)
					}
					if !reflect.DeepEqual(traces, want) {
						t.Errorf("traces differ from those of the clean object:\n%s\nwant\n%s", dump(traces), dump(want))
					}
					if len(got) != len(placed) {
						t.Fatalf("%d bad rows reported, want %d", len(got), len(placed))
					}
					for i, b := range placed {
						de := got[i]
						if de.URL != testURL || de.Line != b.line || de.Field != b.field || !strings.Contains(de.Msg, b.msg) {
							t.Errorf("%s: got %q line %d field %q msg %q, want line %d field %q msg containing %q",
								b.caseTag, de.URL, de.Line, de.Field, de.Msg, b.line, b.field, b.msg)
						}
					}
				})
			}
		}
	}
}

// TestSkipFirstLineBOM: a bad first line after a byte-order mark is
// skipped, and the BOM still only counts at the very start.
func TestSkipFirstLineBOM(t *testing.T) {
	data := "\ufeff" + `{"reward":"x","regime_id":"a"}` + "\r\n" + okRow + "\r\n"
	var got []*DataError
	obj, err := DecodeObject(testURL, "x", strings.NewReader(data), Options{OnBadRow: collect(&got)})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Line != 1 || got[0].Field != "reward" || obj.Rows != 1 {
		t.Errorf("got %v, rows %d", got, obj.Rows)
	}
}

// TestSkipKeepsObjectErrors: skipping never hides an error of the object
// as a whole; OnBadRow sees only the bad rows before it.
func TestSkipKeepsObjectErrors(t *testing.T) {
	var sb strings.Builder
	for i := range 2000 {
		if i == 3 {
			sb.WriteString(`{"run_id":"r","reward":"bad","regime_id":"a"}` + "\n")
			continue
		}
		fmt.Fprintf(&sb, `{"run_id":"r","reward":%d.%d,"regime_id":"a","obs":"%08x"}`+"\n", i, i*7919%1000, int64(i)*2654435761)
	}
	rows := []byte(sb.String())
	g, z := gz(t, rows), zst(t, rows)
	zc := bytes.Clone(z)
	for i := len(zc) / 2; i < len(zc)/2+64; i++ {
		zc[i] ^= 0x5a
	}
	// Invalid UTF-8 in place of the gzip stream's bytes breaks its framing
	// (the garbage it decompresses to before the checksum fails may be bad
	// rows, but the object fails).
	gu := bytes.Clone(g)
	copy(gu[len(gu)/2:], "\xff\xfe\xc3\x28\xff\xff\xff\xff")
	long := okRow + "\n" + `{"reward":"x","regime_id":"a"}` + "\n" + `{"reward":1,"regime_id":"` + strings.Repeat("a", 200) + `"}` + "\n"
	var labels, runs strings.Builder
	labels.WriteString(`{"reward":"x","regime_id":"a"}` + "\n")
	for i := range 5 {
		fmt.Fprintf(&labels, `{"run_id":"r","reward":1,"regime_id":"l%d"}`+"\n", i)
		fmt.Fprintf(&runs, `{"run_id":"r%d","reward":1,"regime_id":"l"}`+"\n", i)
	}
	cases := []struct {
		name string
		data []byte
		opts Options
		msg  string
	}{
		{"truncated gzip", g[:len(g)/2], Options{}, "corrupt gzip stream"},
		{"gzip with trailing garbage", append(bytes.Clone(g), "garbage"...), Options{}, "corrupt gzip stream"},
		{"invalid UTF-8 in a gzip stream", gu, Options{}, "corrupt gzip stream"},
		{"truncated zstd", z[:len(z)/2], Options{}, "corrupt zstd stream"},
		{"corrupt zstd", zc, Options{}, "corrupt zstd stream"},
		{"line too long", []byte(long), Options{MaxLineBytes: 100}, "--max-line-bytes"},
		{"object too big", rows, Options{MaxObjectBytes: 10000}, "--max-object-bytes"},
		{"too many labels", []byte(labels.String()), Options{MaxLabels: 2}, "--max-labels"},
		{"too many runs", []byte(runs.String()), Options{MaxRuns: 2}, "--max-runs"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []*DataError
			o := c.opts
			o.OnBadRow = collect(&got)
			_, err := DecodeObject(testURL, "x", bytes.NewReader(c.data), o)
			if err == nil {
				t.Fatal("no error")
			}
			if de := asDataError(t, err); !strings.Contains(de.Msg, c.msg) {
				t.Errorf("got %v, want %q", err, c.msg)
			}
			for _, de := range got {
				if c.name != "invalid UTF-8 in a gzip stream" && de.Field != "reward" {
					t.Errorf("OnBadRow was given %v", de)
				}
			}
		})
	}

	// A storage error stays one.
	boom := errors.New("connection reset")
	r := io.MultiReader(bytes.NewReader(g[:len(g)/2]), iotest.ErrReader(boom))
	_, err := DecodeObject(testURL, "x", r, Options{OnBadRow: func(*DataError) error { return nil }})
	var de *DataError
	if !errors.Is(err, boom) || errors.As(err, &de) {
		t.Errorf("got %v", err)
	}
}

// TestSkipLimitAcrossObjects: OnBadRow's error stops the decode and comes
// back as it is; a limit shared by several objects (the pipeline's
// --max-bad-rows) fails on the object and line of the row past it.
func TestSkipLimitAcrossObjects(t *testing.T) {
	errTooMany := errors.New("too many bad rows")
	objs := []object{
		{"a", okRow + "\n" + `{"reward":"1","regime_id":"a"}` + "\n" + `[1]` + "\n" + okRow + "\n"},
		{"b", `{"regime_id":"a"}` + "\n" + okRow + "\n" + `{"reward":1e999,"regime_id":"a"}` + "\n"},
	}
	for _, c := range []struct {
		limit   int
		failObj string
		failAt  int
	}{{0, "a", 2}, {1, "a", 3}, {2, "b", 1}, {3, "b", 3}, {4, "", 0}} {
		t.Run(fmt.Sprint(c.limit), func(t *testing.T) {
			var seen []*DataError
			opts := Options{OnBadRow: func(de *DataError) error {
				seen = append(seen, de)
				if len(seen) > c.limit {
					return fmt.Errorf("%w: %v", errTooMany, de)
				}
				return nil
			}}
			_, err := decodeAll(t, opts, objs...)
			if c.failObj == "" {
				if err != nil || len(seen) != 4 {
					t.Fatalf("got %v after %d bad rows", err, len(seen))
				}
				return
			}
			if !errors.Is(err, errTooMany) || !strings.Contains(err.Error(), fmt.Sprintf("mem://b/%s: line %d: ", c.failObj, c.failAt)) {
				t.Errorf("got %v, want the limit error at %s line %d", err, c.failObj, c.failAt)
			}
			if len(seen) != c.limit+1 {
				t.Errorf("OnBadRow called %d times", len(seen))
			}
		})
	}
}

// TestRecordSkipBadRows: DecodeRecords skips as DecodeObject does, bad JSON
// and rows that Check rejects alike, leaving the runs of the object
// without those rows, and reporting each once.
func TestRecordSkipBadRows(t *testing.T) {
	var bad []badRow
	for _, c := range rowErrorCases {
		bad = append(bad, badRow{row: c.row, caseTag: c.name})
	}
	for i, s := range sneakyBadRows {
		bad = append(bad, badRow{field: s.field, row: s.row, caseTag: fmt.Sprintf("sneaky %d", i)})
	}
	mixed, clean, placed := mixRows(goodRows, bad)
	opts := skyfallRecordOpts
	opts.Check = skyfallRecordSchema
	want := summarizeLines(t, mustDecodeRecords(t, opts, object{"x", clean}))
	for _, enc := range []struct {
		name string
		data []byte
	}{{"plain", []byte(mixed)}, {"gzip", gz(t, []byte(mixed))}, {"zstd", zst(t, []byte(mixed))}} {
		t.Run(enc.name, func(t *testing.T) {
			var got []*DataError
			o := opts
			o.OnBadRow = collect(&got)
			obj, err := DecodeRecords(testURL, "x", iotest.HalfReader(bytes.NewReader(enc.data)), o)
			if err != nil {
				t.Fatal(err)
			}
			if obj.Skipped != len(placed) || obj.Rows != len(goodRows) {
				t.Errorf("skipped %d rows %d", obj.Skipped, obj.Rows)
			}
			runs, err := AssembleRecords([]*ObjectRecords{obj}, opts)
			if err != nil {
				t.Fatal(err)
			}
			if got := summarizeLines(t, runs); !reflect.DeepEqual(got, want) {
				t.Errorf("runs differ from those of the clean object:\n%s\nwant\n%s", dump(got), dump(want))
			}
			if len(got) != len(placed) {
				t.Fatalf("%d bad rows reported, want %d", len(got), len(placed))
			}
			for i, b := range placed {
				if got[i].URL != testURL || got[i].Line != b.line || (b.field != "" && got[i].Field != b.field) {
					t.Errorf("%s: got %v, want line %d field %q", b.caseTag, got[i], b.line, b.field)
				}
			}
		})
	}

	// Without OnBadRow, a row that Check rejects fails the object while it
	// is read; an error of Check that is not a DataError comes back as is.
	_, err := DecodeRecords(testURL, "x", strings.NewReader(mixed), opts)
	if de := asDataError(t, err); de.Line != 1 {
		t.Errorf("got %v", err)
	}
	boom := errors.New("boom")
	o := opts
	o.OnBadRow = func(*DataError) error { return nil }
	o.Check = func(r *Record) error {
		if r.Line() == 3 {
			return boom
		}
		return nil
	}
	if _, err := DecodeRecords(testURL, "x", strings.NewReader(clean), o); err != boom {
		t.Errorf("got %v", err)
	}
}

// summarizeLines is summarize without the line numbers, which differ
// between an object and the same object less its bad rows.
func summarizeLines(t *testing.T, runs []*RecordRun) []recordSummary {
	t.Helper()
	s := summarize(runs)
	for i := range s {
		for j, r := range s[i].Rows {
			_, rest, _ := strings.Cut(r, ": ")
			s[i].Rows[j] = rest
		}
	}
	return s
}

// TestRecordSkipKeepsObjectErrors and the limit, as for DecodeObject.
func TestRecordSkipKeepsObjectErrors(t *testing.T) {
	rows := []byte(strings.Repeat(`{"reward":"x","regime_id":"a"}`+"\n"+okRow+"\n", 1000))
	g := gz(t, rows)
	calls := 0
	opts := skyfallRecordOpts
	opts.Check = skyfallRecordSchema
	opts.OnBadRow = func(*DataError) error { calls++; return nil }
	for _, c := range []struct {
		name string
		data []byte
		o    func(*RecordOptions)
		msg  string
	}{
		{"truncated gzip", g[:len(g)/2], func(*RecordOptions) {}, "corrupt gzip stream"},
		{"line too long", append([]byte(okRow+"\n"), `{"reward":1,"regime_id":"`+strings.Repeat("a", 200)+`"}`...), func(o *RecordOptions) { o.MaxLineBytes = 100 }, "--max-line-bytes"},
		{"object too big", rows, func(o *RecordOptions) { o.MaxObjectBytes = 1000 }, "--max-object-bytes"},
		{"too many runs", []byte(`{"reward":"x","regime_id":"a"}` + "\n" + `{"run_id":1,"reward":1,"regime_id":"a"}` + "\n" + `{"run_id":2,"reward":1,"regime_id":"a"}`), func(o *RecordOptions) { o.MaxRuns = 1 }, "--max-runs"},
	} {
		o := opts
		c.o(&o)
		_, err := DecodeRecords(testURL, "x", bytes.NewReader(c.data), o)
		if err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: got %v", c.name, err)
		}
	}
	if calls == 0 {
		t.Error("OnBadRow never called")
	}

	errTooMany := errors.New("too many")
	n := 0
	opts.OnBadRow = func(*DataError) error {
		if n++; n > 2 {
			return errTooMany
		}
		return nil
	}
	_, err := DecodeRecords(testURL, "x", bytes.NewReader(rows), opts)
	if err != errTooMany || n != 3 {
		t.Errorf("got %v after %d", err, n)
	}
}
