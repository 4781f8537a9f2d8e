package readers

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// wideRows are n rows of two runs, each with extra numeric columns x_0 …
// x_{cols-1} (x_0 constant: metadata) and a varying string.
func wideRows(n, cols int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `{"run_id":"r%d","step":%d,"reward":%g,"regime_id":%q,"note":"n%d"`, i%2, i, float64(i%13)/4, []string{"a", "b"}[i*2/n], i%7)
		for k := range cols {
			v := float64((i*31+k*7)%1000) / 8
			if k == 0 {
				v = 0.5
			}
			fmt.Fprintf(&b, `,"x_%d":%g`, k, v)
		}
		b.WriteString("}\n")
	}
	return b.String()
}

// TestParquetDirectWideRows: a file of many columns is read the direct way
// into what its JSON lines decode to, with a --max-line-bytes its rows
// keep within although a batch of them all together would not (the bound
// is a row's, not the batch's: before, such a file was read twice, the
// second time the general way), and in batches of fewer rows the more
// columns it has (pqDirectRows), across several of them.
func TestParquetDirectWideRows(t *testing.T) {
	if got := pqDirectRows(20); got != parquetDirectBatchRows {
		t.Errorf("20 columns: batches of %d rows, want %d", got, parquetDirectBatchRows)
	}
	if got := pqDirectRows(2000); got != 524 {
		t.Errorf("2,000 columns: batches of %d rows, want 524", got)
	}
	if got := pqDirectRows(100000); got != 256 {
		t.Errorf("100,000 columns: batches of %d rows, want 256", got)
	}
	for _, c := range []struct {
		name       string
		rows, cols int
		maxLine    int
	}{
		{"40-columns-short-lines", 5000, 40, 4 << 10},
		{"600-columns", 4000, 600, 0}, // batches of 1,741 rows
	} {
		t.Run(c.name, func(t *testing.T) {
			jsonl := wideRows(c.rows, c.cols)
			data := convertJSONL(t, jsonl)
			opts := Options{MaxLineBytes: c.maxLine}
			url := "mem://b/wide-" + c.name + ".parquet"
			got, err := DecodeParquet(url, "x.parquet", bytes.NewReader(data), skyfallParquetFields, opts)
			if err != nil {
				t.Fatal(err)
			}
			if !tookDirect(t, url) {
				t.Fatal("read the general way")
			}
			want, err := DecodeObject(url, "x.parquet", strings.NewReader(jsonl), opts)
			if err != nil {
				t.Fatal(err)
			}
			sameEncoding(t, "the direct way's", got, want)
		})
	}
}
