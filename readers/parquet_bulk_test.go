package readers

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
)

var bulkSeen sync.Map // url -> whether addColumns read it

// sameBulk decodes data the direct way twice, its rows added a column at a
// time (addColumns) and a row at a time (add): the same error, or the same
// object, its encoding (every part's rows bit for bit, its metadata
// candidates, label origins) and its MemBytes (the --memory-limit
// accounting: the builders' chunks alike). It returns whether addColumns
// read it.
func sameBulk(t *testing.T, url string, data []byte, opts Options) bool {
	t.Helper()
	defer func() { pqNoBulk = false }()
	pqNoBulk = true
	want, werr := DecodeParquet(url, "x.parquet", bytes.NewReader(data), skyfallParquetFields, opts)
	pqNoBulk = false
	bulkSeen.Delete(url)
	got, gerr := DecodeParquet(url, "x.parquet", bytes.NewReader(data), skyfallParquetFields, opts)
	if (werr == nil) != (gerr == nil) || werr != nil && werr.Error() != gerr.Error() {
		t.Fatalf("%s: by columns: error %v, want %v", url, gerr, werr)
	}
	bulk, _ := bulkSeen.Load(url)
	if werr != nil {
		return bulk == true
	}
	if got.ObjectInfo != want.ObjectInfo || got.Skipped != want.Skipped {
		t.Fatalf("%s: by columns: info %+v, want %+v", url, got.ObjectInfo, want.ObjectInfo)
	}
	sameEncoding(t, url+": by columns: the", got, want)
	if g, w := got.MemBytes(), want.MemBytes(); g != w {
		t.Fatalf("%s: by columns: MemBytes %d, want %d", url, g, w)
	}
	return bulk == true
}

// TestDecodeParquetBulk: objects read the direct way give the same decoded
// object, error and MemBytes whether their rows go to the run builders a
// column at a time or a row at a time: the sweeps of `crlbatch convert`
// under every writer variant (interleaved runs across row groups and
// batches, regime origins on some rows, absent steps), FuzzParquetDirect's
// rows (integer and float rewards, null and absent fields, repeated and
// null components, booleans; a third of them by columns), TestDecodeParquetDirectTypes' file
// (components as a struct, float32 rewards, int32 steps, null invalid
// actions), float steps, integer effective ranks, gamma appearing late,
// explicit nulls (JSON-text columns of steps, invalid actions, effective
// ranks and gamma),
// and the limits on labels. And the direct way adds by columns where it
// can. Under -short fewer files, under -race fewer still.
func TestDecodeParquetBulk(t *testing.T) {
	parquetBulkHook = func(url string, bulk bool) { bulkSeen.Store(url, bulk) }
	defer func() { parquetBulkHook = nil }()
	opts := Options{Components: []string{"success", "progress", "absent"}}
	var floats strings.Builder
	for i := range 700 {
		fmt.Fprintf(&floats, `{"run_id":"r%d","reward":%d,"regime_id":"l%d","effective_rank":%d`, i%3, i%5, i/90, i%4)
		if i%13 != 0 {
			fmt.Fprintf(&floats, `,"step":%d.0`, i)
		}
		switch i % 7 {
		case 3:
			floats.WriteString(`,"regime_origin":"o"`)
		case 5: // a label's second origin: its first is kept
			floats.WriteString(`,"regime_origin":"p"`)
		}
		if i%11 == 5 {
			floats.WriteString(`,"alias_of":"l0"`)
		}
		if i > 400 {
			fmt.Fprintf(&floats, `,"gamma":0.%d`, i%9+1)
		}
		if i%13 == 0 {
			floats.WriteString(`,"invalid_action":true`) // no step, no components
		} else {
			fmt.Fprintf(&floats, `,"invalid_action":%v,"components":{"progress":%d,"other":1,"success":-0.0}`, i%3 == 0, i%3)
		}
		floats.WriteString("}\n")
	}
	// Explicit nulls: JSON-text columns of steps, invalid actions,
	// effective ranks and gamma.
	var nulls strings.Builder
	for i := range 900 {
		fmt.Fprintf(&nulls, `{"run_id":"r%d","reward":%g,"regime_id":"l%d"`, i%2, float64(i)/7, i/200)
		for _, f := range []string{"step", "invalid_action", "effective_rank", "gamma"} {
			switch {
			case (i+len(f))%9 == 0:
				fmt.Fprintf(&nulls, `,%q:null`, f)
			case (i+len(f))%9 == 1: // absent
			case f == "step":
				fmt.Fprintf(&nulls, `,"step":%d`, i*3)
			case f == "invalid_action":
				fmt.Fprintf(&nulls, `,"invalid_action":%v`, i%4 == 0)
			case f == "effective_rank" && i%2 == 0:
				fmt.Fprintf(&nulls, `,"effective_rank":%d`, i%5)
			default:
				fmt.Fprintf(&nulls, `,%q:%g`, f, float64(i%10)/8)
			}
		}
		fmt.Fprintf(&nulls, `,"components":{"progress":%d}}`+"\n", i%3)
	}
	cases := map[string]string{
		"nulls":       nulls.String(),
		"bench":       string(benchRows(3000)),
		"interleaved": interleavedRows(ConvertRowGroupRows + parquetDirectBatchRows + 1234),
		"floats":      floats.String(),
	}
	small := raceEnabled || testing.Short()
	bulk := 0
	for _, v := range writerVariants {
		for name, jsonl := range cases {
			if small && v.name != "convert" && v.name != "small pages" {
				continue // -race, -short: two writer variants
			}
			if raceEnabled && (v.name != "convert" || name == "interleaved") {
				continue // -race: one, small files (TestDecodeParquetPoolsConcurrent is this file's concurrent test)
			}
			url := "mem://b/bulk-" + v.name + "-" + name + ".parquet"
			data := convertForm(t, jsonl, v.props, v.maps)
			if !sameBulk(t, url, data, opts) {
				t.Errorf("%s: not added by columns", url)
			}
			bulk++
			if (name == "floats" || name == "nulls") && !sameDecoded(t, url, data, opts) { // the others: TestDecodeParquetDirectPages
				t.Errorf("%s: read the general way", url)
			}
		}
	}
	for name, data := range pagesCases(t) {
		if small && !strings.HasPrefix(name, "convert") || raceEnabled {
			continue
		}
		if sameBulk(t, "mem://b/bulk-pages-"+name+".parquet", data, opts) {
			bulk++
		}
	}
	if !sameBulk(t, "mem://b/bulk-types.parquet", typesParquet(t), Options{Components: []string{"goal", "progress"}}) {
		t.Errorf("types: not added by columns")
	}
	for _, lim := range []int{1, 2, 3, 100} {
		data := convertJSONL(t, cases["floats"])
		sameBulk(t, fmt.Sprintf("mem://b/bulk-labels-%d.parquet", lim), data, Options{MaxLabels: lim, Components: []string{"progress"}})
	}
	fuzz := 0
	seeds := uint64(150)
	if small {
		seeds = 10
	}
	if raceEnabled {
		seeds = 3
	}
	for seed := range seeds {
		for _, rows := range []uint8{3, 40, 150} {
			var pq bytes.Buffer
			v := writerVariants[seed%uint64(len(writerVariants))]
			if err := convertToParquet("mem://b/x.jsonl", strings.NewReader(fuzzParquetJSONL(seed, rows)), &pq, 0, 0, v.props, v.maps); err != nil {
				continue
			}
			o := Options{Components: []string{"progress"}, IdentityFields: []string{"run_id", "seed"}}
			if sameBulk(t, fmt.Sprintf("mem://b/bulk-fuzz-%d-%d.parquet", seed, rows), pq.Bytes(), o) {
				fuzz++
			}
		}
	}
	if fuzz < int(seeds) {
		t.Errorf("only %d fuzz files added by columns", fuzz)
	}
	t.Logf("%d files of convert's added by columns, %d of the fuzz's", bulk, fuzz)
}

// TestDecodeParquetPoolsConcurrent: objects decoded at once on several
// goroutines, their columns' and decoders' scratch shared through the
// pools, give each what decoding it alone gives (run it under -race).
func TestDecodeParquetPoolsConcurrent(t *testing.T) {
	opts := Options{Components: []string{"success", "progress", "absent"}}
	files := [][]byte{convertJSONL(t, string(benchRows(1500))), typesParquet(t), convertJSONL(t, interleavedRows(2000))}
	want := make([][]byte, len(files))
	for i, data := range files {
		o, err := DecodeParquet("mem://b/p.parquet", "p.parquet", bytes.NewReader(data), skyfallParquetFields, opts)
		if err != nil {
			t.Fatal(err)
		}
		if want[i], err = o.AppendEncoding(nil); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4*len(files))
	for g := range 4 {
		wg.Go(func() {
			for k := range 3 * len(files) {
				i := (g + k) % len(files)
				o, err := DecodeParquet("mem://b/p.parquet", "p.parquet", bytes.NewReader(files[i]), skyfallParquetFields, opts)
				if err == nil {
					var enc []byte
					if enc, err = o.AppendEncoding(nil); err == nil && !bytes.Equal(enc, want[i]) {
						err = fmt.Errorf("file %d: another encoding on goroutine %d", i, g)
					}
				}
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
