package readers

import (
	"bytes"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// temporalText is the text appendTemporal gives cell 0 of the array of
// type t holding v, unquoted.
func temporalText(t *testing.T, typ arrow.DataType, v int64) string {
	t.Helper()
	b := array.NewBuilder(memory.DefaultAllocator, typ)
	defer b.Release()
	switch b := b.(type) {
	case *array.Date32Builder:
		b.Append(arrow.Date32(v))
	case *array.Date64Builder:
		b.Append(arrow.Date64(v))
	case *array.Time32Builder:
		b.Append(arrow.Time32(v))
	case *array.Time64Builder:
		b.Append(arrow.Time64(v))
	case *array.TimestampBuilder:
		b.Append(arrow.Timestamp(v))
	default:
		t.Fatalf("no builder for %s", typ)
	}
	a := b.NewArray()
	defer a.Release()
	got := string(appendTemporal(nil, a, 0))
	if len(got) < 2 || got[0] != '"' || got[len(got)-1] != '"' {
		t.Fatalf("%s %d: %s is not a JSON string", typ, v, got)
	}
	return got[1 : len(got)-1]
}

// TestAppendTemporal: dates, times of day and timestamps of every unit
// read as the text Go's time package formats for the same instant
// (time.Unix, in UTC, with Format's trimmed fraction ".999999999"), over
// random values of years 1 to 9999, and the cases Format does not write
// as ISO 8601 (years before 1 and after 9999, times of day outside a day).
func TestAppendTemporal(t *testing.T) {
	const layout = "2006-01-02T15:04:05.999999999"
	lo, hi := time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC).Unix(), time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC).Unix()
	rng := rand.New(rand.NewPCG(1, 2))
	units := []struct {
		u   arrow.TimeUnit
		per int64
	}{{arrow.Second, 1}, {arrow.Millisecond, 1e3}, {arrow.Microsecond, 1e6}, {arrow.Nanosecond, 1e9}}
	for range 20000 {
		sec := lo + rng.Int64N(hi-lo+1)
		for _, u := range units {
			frac := int64(0)
			switch rng.IntN(3) {
			case 1: // a round fraction: its trailing zeros left out
				frac = rng.Int64N(10) * u.per / 10
			case 2:
				frac = rng.Int64N(u.per)
			}
			if u.per == 1e9 && (sec <= math.MinInt64/int64(1e9) || sec >= math.MaxInt64/int64(1e9)) {
				continue // beyond an int64 of nanoseconds
			}
			v := sec*u.per + frac
			at := time.Unix(sec, frac*(1e9/u.per)).UTC()
			want := at.Format(layout)
			if got := temporalText(t, &arrow.TimestampType{Unit: u.u}, v); got != want {
				t.Fatalf("timestamp[%s] %d: %s, want %s", u.u, v, got, want)
			}
			if got := temporalText(t, &arrow.TimestampType{Unit: u.u, TimeZone: "America/New_York"}, v); got != want+"Z" {
				t.Fatalf("timestamp[%s, tz] %d: %s, want %sZ", u.u, v, got, want)
			}
			clock := (sec%86400+86400)%86400*u.per + frac
			wantClock := time.Unix(0, clock*(1e9/u.per)).UTC().Format("15:04:05.999999999")
			var tt arrow.DataType
			switch u.u {
			case arrow.Second, arrow.Millisecond:
				tt = &arrow.Time32Type{Unit: u.u}
			default:
				tt = &arrow.Time64Type{Unit: u.u}
			}
			if got := temporalText(t, tt, clock); got != wantClock {
				t.Fatalf("%s %d: %s, want %s", tt, clock, got, wantClock)
			}
		}
		days := floorDiv(sec, 86400)
		wantDate := time.Unix(days*86400, 0).UTC().Format("2006-01-02")
		if got := temporalText(t, arrow.FixedWidthTypes.Date32, days); got != wantDate {
			t.Fatalf("date32 %d: %s, want %s", days, got, wantDate)
		}
		if got := temporalText(t, arrow.FixedWidthTypes.Date64, sec*1000+rng.Int64N(1000)); got != time.Unix(sec, 0).UTC().Format("2006-01-02") {
			t.Fatalf("date64 %d: %s", sec*1000, got)
		}
	}
	for _, c := range []struct {
		typ  arrow.DataType
		v    int64
		want string
	}{
		{arrow.FixedWidthTypes.Date32, 0, "1970-01-01"},
		{arrow.FixedWidthTypes.Date32, -1, "1969-12-31"},
		{arrow.FixedWidthTypes.Date32, -719162, "0001-01-01"},
		{arrow.FixedWidthTypes.Date32, -719163, "0000-12-31"},
		{arrow.FixedWidthTypes.Date32, -719528, "0000-01-01"},
		{arrow.FixedWidthTypes.Date32, -719529, "-0001-12-31"},
		{arrow.FixedWidthTypes.Date32, 2932897, "10000-01-01"},
		{arrow.FixedWidthTypes.Date32, math.MaxInt32, "5881580-07-11"},
		{arrow.FixedWidthTypes.Date32, math.MinInt32, "-5877641-06-23"},
		{arrow.FixedWidthTypes.Date64, -1, "1969-12-31"},
		{arrow.FixedWidthTypes.Date64, 86400000, "1970-01-02"},
		{&arrow.TimestampType{Unit: arrow.Millisecond}, -1, "1969-12-31T23:59:59.999"},
		{&arrow.TimestampType{Unit: arrow.Nanosecond}, math.MinInt64, "1677-09-21T00:12:43.145224192"},
		{&arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}, math.MaxInt64, "2262-04-11T23:47:16.854775807Z"},
		{&arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, 1704448800123000, "2024-01-05T10:00:00.123Z"},
		{&arrow.TimestampType{Unit: arrow.Second}, math.MaxInt64, "292277026596-12-04T15:30:07"},
		{&arrow.TimestampType{Unit: arrow.Second}, math.MinInt64, "-292277022657-01-27T08:29:52"},
		{&arrow.Time32Type{Unit: arrow.Second}, 0, "00:00:00"},
		{&arrow.Time32Type{Unit: arrow.Millisecond}, 86399999, "23:59:59.999"},
		{&arrow.Time32Type{Unit: arrow.Second}, 90000, "25:00:00"},
		{&arrow.Time32Type{Unit: arrow.Second}, -1, "-00:00:01"},
		{&arrow.Time64Type{Unit: arrow.Microsecond}, 36000500000, "10:00:00.5"},
		{&arrow.Time64Type{Unit: arrow.Nanosecond}, 1, "00:00:00.000000001"},
		{&arrow.Time64Type{Unit: arrow.Nanosecond}, math.MinInt64, "-2562047:47:16.854775808"},
	} {
		if got := temporalText(t, c.typ, c.v); got != c.want {
			t.Errorf("%s %d: %s, want %s", c.typ, c.v, got, c.want)
		}
	}
}

// TestParquetTemporalColumns: date, time and timestamp columns (what
// pandas writes for datetime64 columns and DuckDB for strings it takes
// for dates) are read, not refused: each cell as the JSON string of its
// ISO 8601 text, at the top level and inside lists, structs and maps,
// with the file's Arrow schema stored (a unit of seconds, a zone, date64)
// or not; the rows decode to the object those JSON lines decode to, a
// timestamp the same on every row of a run is run metadata in that text,
// and a temporal column is still no number or string of the protocol's.
func TestParquetTemporalColumns(t *testing.T) {
	tsUTC := &arrow.TimestampType{Unit: arrow.Second, TimeZone: "Europe/Paris"}
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "run_id", Type: arrow.BinaryTypes.String},
		{Name: "reward", Type: arrow.PrimitiveTypes.Float64},
		{Name: "regime_id", Type: arrow.BinaryTypes.String},
		{Name: "started_at", Type: tsUTC, Nullable: true},
		{Name: "logged_at", Type: &arrow.TimestampType{Unit: arrow.Nanosecond}, Nullable: true},
		{Name: "day", Type: arrow.FixedWidthTypes.Date64, Nullable: true},
		{Name: "tod", Type: &arrow.Time64Type{Unit: arrow.Microsecond}, Nullable: true},
		{Name: "marks", Type: arrow.ListOf(arrow.FixedWidthTypes.Date32), Nullable: true},
		{Name: "env", Type: arrow.StructOf(arrow.Field{Name: "built", Type: &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}, Nullable: true}), Nullable: true},
		{Name: "alarms", Type: arrow.MapOf(arrow.BinaryTypes.String, &arrow.Time32Type{Unit: arrow.Millisecond}), Nullable: true},
	}, nil)
	start := time.Date(2024, 1, 5, 10, 0, 0, 0, time.UTC)
	fill := func(b *array.RecordBuilder) {
		b.Field(0).(*array.StringBuilder).AppendValues([]string{"a", "a", "b"}, nil)
		b.Field(1).(*array.Float64Builder).AppendValues([]float64{0.5, 0.75, 1}, nil)
		b.Field(2).(*array.StringBuilder).AppendValues([]string{"calm", "storm", "calm"}, nil)
		b.Field(3).(*array.TimestampBuilder).AppendValues([]arrow.Timestamp{arrow.Timestamp(start.Unix()), arrow.Timestamp(start.Unix()), arrow.Timestamp(start.Unix() + 3600)}, nil)
		lg := b.Field(4).(*array.TimestampBuilder)
		lg.Append(arrow.Timestamp(start.UnixNano() + 123456789))
		lg.AppendNull()
		lg.Append(arrow.Timestamp(start.UnixNano() - 1))
		b.Field(5).(*array.Date64Builder).AppendValues([]arrow.Date64{arrow.Date64(start.UnixMilli()), 0, 0}, []bool{true, true, false})
		b.Field(6).(*array.Time64Builder).AppendValues([]arrow.Time64{36000500000, 0, 0}, []bool{true, true, false})
		lb := b.Field(7).(*array.ListBuilder)
		lb.Append(true)
		lb.ValueBuilder().(*array.Date32Builder).AppendValues([]arrow.Date32{19727, -1}, nil)
		lb.AppendNull()
		lb.Append(true)
		sb := b.Field(8).(*array.StructBuilder)
		sb.Append(true)
		sb.FieldBuilder(0).(*array.TimestampBuilder).Append(arrow.Timestamp(start.UnixMilli() + 7))
		sb.Append(true)
		sb.FieldBuilder(0).(*array.TimestampBuilder).AppendNull()
		sb.AppendNull()
		sb.FieldBuilder(0).(*array.TimestampBuilder).AppendNull()
		mb := b.Field(9).(*array.MapBuilder)
		mb.Append(true)
		mb.KeyBuilder().(*array.StringBuilder).Append("wake")
		mb.ItemBuilder().(*array.Time32Builder).Append(25200000)
		mb.AppendNull()
		mb.AppendNull()
	}
	want := `{"run_id":"a","reward":0.5,"regime_id":"calm","started_at":"2024-01-05T10:00:00Z","logged_at":"2024-01-05T10:00:00.123456789","day":"2024-01-05","tod":"10:00:00.5","marks":["2024-01-05","1969-12-31"],"env":{"built":"2024-01-05T10:00:00.007Z"},"alarms":{"wake":"07:00:00"}}
{"run_id":"a","reward":0.75,"regime_id":"storm","started_at":"2024-01-05T10:00:00Z","day":"1970-01-01","tod":"00:00:00","env":{}}
{"run_id":"b","reward":1,"regime_id":"calm","started_at":"2024-01-05T11:00:00Z","logged_at":"2024-01-05T09:59:59.999999999","marks":[]}
`
	for name, props := range map[string]pqarrow.ArrowWriterProperties{
		"logical types": pqarrow.DefaultWriterProps(),
		"arrow schema":  pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()),
	} {
		t.Run(name, func(t *testing.T) {
			url := "mem://b/time-" + strings.ReplaceAll(name, " ", "-") + ".parquet"
			data := writeParquetArrowProps(t, schema, props, fill)
			readsAsLines(t, url, data, want)
			opts := Options{IdentityFields: []string{"run_id"}}
			obj, err := DecodeParquet(url, "x.parquet", bytes.NewReader(data), skyfallParquetFields, opts)
			if err != nil {
				t.Fatal(err)
			}
			runs, err := Assemble([]*ObjectRuns{obj}, opts)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, r := range runs {
				got[r.Key] = r.Meta["started_at"]
			}
			if want := map[string]string{"run_id=a": "2024-01-05T10:00:00Z", "run_id=b": "2024-01-05T11:00:00Z"}; len(got) != 2 || got["run_id=a"] != want["run_id=a"] || got["run_id=b"] != want["run_id=b"] {
				t.Errorf("started_at by run: %v, want %v", got, want)
			}
		})
	}
	// The protocol's own fields still want their types.
	bad := arrow.NewSchema([]arrow.Field{{Name: "reward", Type: arrow.PrimitiveTypes.Float64}, {Name: "regime_id", Type: arrow.FixedWidthTypes.Date32}}, nil)
	data := writeTestParquet(t, bad, func(b *array.RecordBuilder) {
		b.Field(0).(*array.Float64Builder).Append(1)
		b.Field(1).(*array.Date32Builder).Append(19727)
	})
	if _, err := parquetText(t, data, skyfallParquetFields); err == nil || !strings.Contains(err.Error(), "column regime_id: of type date32, want a string column") {
		t.Errorf("a date regime_id: %v, want it refused naming the column", err)
	}
}

// TestParquetTemporalDirect: a skyfall object whose extras include date,
// time and timestamp columns (a run's start, the same on its rows; a
// per-step wall clock with nulls; a date) is read the direct way, each
// batch's cells rendered once, and decodes to what the general way
// decodes (parts, metadata candidates, rows bit for bit), with a timestamp
// as an identity field too, over batches of several pages.
func TestParquetTemporalDirect(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "run_id", Type: arrow.BinaryTypes.String},
		{Name: "step", Type: arrow.PrimitiveTypes.Int64},
		{Name: "reward", Type: arrow.PrimitiveTypes.Float64},
		{Name: "regime_id", Type: arrow.BinaryTypes.String},
		{Name: "started_at", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, Nullable: true},
		{Name: "logged_at", Type: &arrow.TimestampType{Unit: arrow.Nanosecond}, Nullable: true},
		{Name: "day", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
		{Name: "tod", Type: &arrow.Time32Type{Unit: arrow.Millisecond}, Nullable: true},
	}, nil)
	const rows = 10000
	start := time.Date(2024, 1, 5, 10, 0, 0, 0, time.UTC)
	fill := func(b *array.RecordBuilder) {
		for i := range rows {
			run := i / 4000 // runs of 4,000, 4,000 and 2,000 rows
			b.Field(0).(*array.StringBuilder).Append(string(rune('a' + run)))
			b.Field(1).(*array.Int64Builder).Append(int64(i % 4000))
			b.Field(2).(*array.Float64Builder).Append(float64(i%13) / 8)
			b.Field(3).(*array.StringBuilder).Append([]string{"calm", "storm"}[i/1000%2])
			b.Field(4).(*array.TimestampBuilder).Append(arrow.Timestamp(start.UnixMicro() + int64(run)*3600e6))
			if i%7 == 3 {
				b.Field(5).(*array.TimestampBuilder).AppendNull()
				b.Field(6).(*array.Date32Builder).AppendNull()
				b.Field(7).(*array.Time32Builder).AppendNull()
			} else {
				b.Field(5).(*array.TimestampBuilder).Append(arrow.Timestamp(start.UnixNano() + int64(i)*1234567))
				b.Field(6).(*array.Date32Builder).Append(arrow.Date32(19727 + i/3000))
				b.Field(7).(*array.Time32Builder).Append(arrow.Time32(i * 1000))
			}
		}
	}
	data := writeTestParquet(t, schema, fill)
	for _, ids := range [][]string{{"run_id"}, {"run_id", "started_at"}, {"started_at"}} {
		url := "mem://b/time-direct-" + strings.Join(ids, "-") + ".parquet"
		if !sameDecoded(t, url, data, Options{IdentityFields: ids}) {
			t.Fatalf("%s: not read the direct way", url)
		}
		obj, err := DecodeParquet(url, "x.parquet", bytes.NewReader(data), skyfallParquetFields, Options{IdentityFields: ids})
		if err != nil {
			t.Fatal(err)
		}
		runs, err := Assemble([]*ObjectRuns{obj}, Options{IdentityFields: ids})
		if err != nil {
			t.Fatal(err)
		}
		if len(runs) != 3 || runs[2].Meta["started_at"] != "2024-01-05T12:00:00Z" || runs[0].Meta["day"] != "" {
			t.Fatalf("%v: %d runs, the last's started_at %q, the first's day %q (not metadata)", ids, len(runs), runs[len(runs)-1].Meta["started_at"], runs[0].Meta["day"])
		}
	}
}

// TestParquetInt96Timestamps: a timestamp in Parquet's legacy INT96 form
// (Spark's and Impala's default for years) is an instant, read as its
// UTC text with a Z, the general and the direct way alike.
func TestParquetInt96Timestamps(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "run_id", Type: arrow.BinaryTypes.String},
		{Name: "reward", Type: arrow.PrimitiveTypes.Float64},
		{Name: "regime_id", Type: arrow.BinaryTypes.String},
		{Name: "at", Type: &arrow.TimestampType{Unit: arrow.Nanosecond}, Nullable: true},
	}, nil)
	data := writeParquetArrowProps(t, schema, pqarrow.NewArrowWriterProperties(pqarrow.WithDeprecatedInt96Timestamps(true)), func(b *array.RecordBuilder) {
		b.Field(0).(*array.StringBuilder).AppendValues([]string{"a", "a", "a"}, nil)
		b.Field(1).(*array.Float64Builder).AppendValues([]float64{1, 2, 3}, nil)
		b.Field(2).(*array.StringBuilder).AppendValues([]string{"c", "c", "c"}, nil)
		b.Field(3).(*array.TimestampBuilder).AppendValues([]arrow.Timestamp{1704448800123456789, -1, 0}, []bool{true, true, false})
	})
	pf, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if pt := pf.MetaData().Schema.Column(3).PhysicalType(); pt != parquet.Types.Int96 {
		t.Fatalf("column at written as %s, not INT96", pt)
	}
	pf.Close()
	readsAsLines(t, "mem://b/int96.parquet", data, `{"run_id":"a","reward":1,"regime_id":"c","at":"2024-01-05T10:00:00.123456789Z"}
{"run_id":"a","reward":2,"regime_id":"c","at":"1969-12-31T23:59:59.999999999Z"}
{"run_id":"a","reward":3,"regime_id":"c"}
`)
	if !tookDirect(t, "mem://b/int96.parquet") {
		t.Error("not read the direct way")
	}
}
