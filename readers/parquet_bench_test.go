package readers

import (
	"bytes"
	"testing"
)

// BenchmarkParquetVersusJSONL decodes the same rows (benchRows: realistic
// skyfall rows with per-step extras) as JSON Lines and as the Parquet file
// ConvertToParquet makes of them, read the way score reads a skyfall
// Parquet object (DecodeParquet, the direct path) and the general way
// (ParquetLines into DecodeObject); parquet-direct reads the file without
// page checksums (as most writers write it), parquet-direct-crc as convert
// writes it, a checksum in every page header, each checked (pqChecked).
// MB/s and cpuMB/s are of the JSON Lines
// bytes in all, so they are comparable directly:
//
//	go test ./readers -run XXX -bench ParquetVersusJSONL -count 6 -cpu 1
func BenchmarkParquetVersusJSONL(b *testing.B) {
	const rows = 20000
	data, pq := benchParquet(b, rows)
	opts := Options{Components: benchComps}
	check := func(b *testing.B, o *ObjectRuns, err error) {
		if err != nil {
			b.Fatal(err)
		}
		if o.Rows != rows {
			b.Fatalf("%d rows, want %d", o.Rows, rows)
		}
	}
	b.Run("jsonl", func(b *testing.B) {
		done := cpuMeter(b, len(data))
		defer done()
		for b.Loop() {
			o, err := DecodeObject("bench", "bench", bytes.NewReader(data), opts)
			check(b, o, err)
		}
	})
	plain := pqWithoutCRCs(b, pq.Bytes())
	b.Run("parquet-direct", func(b *testing.B) {
		done := cpuMeter(b, len(data))
		defer done()
		for b.Loop() {
			o, err := DecodeParquet("bench", "bench", bytes.NewReader(plain), skyfallParquetFields, opts)
			check(b, o, err)
		}
	})
	// The file as convert writes it: a checksum in every page header (as
	// parquet-mr and Spark write by default), read the direct way.
	b.Run("parquet-direct-crc", func(b *testing.B) {
		done := cpuMeter(b, len(data))
		defer done()
		for b.Loop() {
			o, err := DecodeParquet("bench", "bench", bytes.NewReader(pq.Bytes()), skyfallParquetFields, opts)
			check(b, o, err)
		}
	})
	b.Run("parquet-lines", func(b *testing.B) {
		done := cpuMeter(b, len(data))
		defer done()
		b.ReportMetric(float64(pq.Len()), "parquet-bytes")
		for b.Loop() {
			lines, err := ParquetLines("bench", bytes.NewReader(pq.Bytes()), skyfallParquetFields)
			if err != nil {
				b.Fatal(err)
			}
			o, err := DecodeObject("bench", "bench", lines, opts)
			lines.Close()
			check(b, o, err)
		}
	})
}

// BenchmarkParquetPaged decodes benchRows' Parquet form the direct way with
// the string and number columns read page by page (parquet_pages.go)
// or by arrow-go's column chunk readers, each kind alone and all together,
// so that each paged reader is measured against the one it replaces in the
// same run. cpuMB/s is of the JSON Lines bytes:
//
//	go test ./readers -run XXX -bench ParquetPaged -count 6 -cpu 1
func BenchmarkParquetPaged(b *testing.B) {
	const rows = 20000
	data, pq := benchParquet(b, rows)
	opts := Options{Components: benchComps}
	defer func() { pqPagedStrings, pqPagedNumbers = true, true }()
	for _, v := range []struct {
		name             string
		strings, numbers bool
	}{
		{"chunk-readers", false, false},
		{"paged-strings", true, false},
		{"paged-numbers", false, true},
		{"paged", true, true},
	} {
		b.Run(v.name, func(b *testing.B) {
			pqPagedStrings, pqPagedNumbers = v.strings, v.numbers
			decodeParquetLoop(b, data, pq, rows, opts)
		})
	}
}

// decodeParquetLoop decodes pq (the Parquet form of data, rows rows) the
// direct way once per benchmark iteration; cpuMB/s is of data's bytes.
func decodeParquetLoop(b *testing.B, data []byte, pq *bytes.Buffer, rows int, opts Options) {
	done := cpuMeter(b, len(data))
	defer done()
	for b.Loop() {
		o, err := DecodeParquet("bench", "bench", bytes.NewReader(pq.Bytes()), skyfallParquetFields, opts)
		if err != nil || o.Rows != rows {
			b.Fatal(err)
		}
	}
}

// benchParquet returns rows of benchRows as JSON Lines and as the Parquet
// file ConvertToParquet makes of them.
func benchParquet(b *testing.B, rows int) ([]byte, *bytes.Buffer) {
	data := benchRows(rows)
	var pq bytes.Buffer
	if err := ConvertToParquet("bench", bytes.NewReader(data), &pq, 1<<20, 1<<30); err != nil {
		b.Fatal(err)
	}
	return data, &pq
}

// BenchmarkParquetBulk decodes benchRows' Parquet form the direct way with
// the rows added to the run builders a column at a time (addColumns, the
// default) and a row at a time (add), in the same run. cpuMB/s is of the
// JSON Lines bytes:
//
//	go test ./readers -run XXX -bench ParquetBulk -count 10 -cpu 1
func BenchmarkParquetBulk(b *testing.B) {
	const rows = 20000
	data, pq := benchParquet(b, rows)
	opts := Options{Components: benchComps}
	defer func() { pqNoBulk = false }()
	for _, v := range []struct {
		name   string
		noBulk bool
	}{{"rows", true}, {"columns", false}} {
		b.Run(v.name, func(b *testing.B) {
			pqNoBulk = v.noBulk
			decodeParquetLoop(b, data, pq, rows, opts)
		})
	}
}
