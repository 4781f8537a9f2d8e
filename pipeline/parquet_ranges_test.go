package pipeline

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"gocloud.dev/blob/memblob"

	"github.com/crlbatch/crlbatch/readers"
)

// TestParquetRanges: a Parquet object read by ranges from its bucket
// decodes to what the same bytes in memory decode to; ReadAt follows
// io.ReaderAt at the end; a range from an object of another size than
// listed (it changed under the job) is a storage error, kept in err, not
// a Parquet reader's opinion.
func TestParquetRanges(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var jsonl strings.Builder
	for i := range 3000 {
		jsonl.WriteString(`{"run_id":"a","reward":` + string(rune('0'+i%10)) + `,"regime_id":"x","obs":"` + strings.Repeat("z", i%7) + `"}` + "\n")
	}
	var pq bytes.Buffer
	if err := readers.ConvertToParquet("mem://b/x.jsonl", strings.NewReader(jsonl.String()), &pq, 0, 0); err != nil {
		t.Fatal(err)
	}
	b := memblob.OpenBucket(nil)
	defer b.Close()
	if err := b.WriteAll(ctx, "x.parquet", pq.Bytes(), nil); err != nil {
		t.Fatal(err)
	}
	fields := []readers.ParquetField{{Name: "reward", Type: "number", Required: true}, {Name: "regime_id", Type: "string", Required: true}}
	size := int64(pq.Len())
	want, err := readers.DecodeParquet("mem://b/x.parquet", "x.parquet", bytes.NewReader(pq.Bytes()), fields, readers.Options{})
	if err != nil {
		t.Fatal(err)
	}
	we, _ := want.AppendEncoding(nil)
	// Read ahead by default (the column chunks from one range), by 1 KiB
	// (several), and not at all (one range per read).
	reads := map[int64]int{}
	for _, ahead := range []int64{0, 1 << 10, 1} {
		rr := &parquetRanges{ctx: ctx, b: b, key: "x.parquet", size: size, ahead: ahead}
		got, err := readers.DecodeParquet("mem://b/x.parquet", "x.parquet", rr, fields, readers.Options{})
		if err != nil || rr.err != nil {
			t.Fatal(ahead, err, rr.err)
		}
		ge, _ := got.AppendEncoding(nil)
		if !bytes.Equal(we, ge) || got.Rows != 3000 {
			t.Errorf("read by ranges, ahead %d: %d rows, encoding equal %v", ahead, got.Rows, bytes.Equal(we, ge))
		}
		reads[ahead] = rr.reads
		rr.release()
	}
	// By default: the footer's length, the footer, then every column chunk
	// in one range.
	if reads[0] > 3 || reads[0] >= reads[1] || reads[1<<10] > reads[1] {
		t.Errorf("range reads: %d reading ahead by default, %d by 1 KiB, %d not at all", reads[0], reads[1<<10], reads[1])
	}
	ranges := &parquetRanges{ctx: ctx, b: b, key: "x.parquet", size: size}
	defer ranges.release()
	buf := make([]byte, 10)
	if n, err := ranges.ReadAt(buf, size-4); n != 4 || err != io.EOF || string(buf[:4]) != "PAR1" {
		t.Errorf("ReadAt at the end: %d, %v, %q", n, err, buf[:n])
	}
	if n, err := ranges.ReadAt(buf, size); n != 0 || err != io.EOF {
		t.Errorf("ReadAt past the end: %d, %v", n, err)
	}
	changed := &parquetRanges{ctx: ctx, b: b, key: "x.parquet", size: size + 1}
	_, err = readers.DecodeParquet("mem://b/x.parquet", "x.parquet", changed, fields, readers.Options{})
	if err == nil || changed.err == nil || !strings.Contains(changed.err.Error(), "the object changed while the job read it") {
		t.Errorf("changed object: %v, kept %v", err, changed.err)
	}
	var de *readers.DataError
	if errors.As(changed.err, &de) {
		t.Errorf("a changed object is a DataError: %v", changed.err)
	}
}

// TestParquetReadWhole: a small Parquet object is read whole from the
// stream the caller sizes and hashes (its first bytes already read, the
// stream left at its end); a stream shorter than the listed size (the
// object changed under the job) is a storage error, not a DataError.
func TestParquetReadWhole(t *testing.T) {
	t.Parallel()
	obj := []byte("PAR1" + strings.Repeat("x", 5000) + "PAR1")
	for _, tc := range []struct {
		name   string
		stream []byte // what the store gives after the first 4 bytes
		size   int64
		err    string
	}{
		{"whole", obj[4:], int64(len(obj)), ""},
		{"shorter than listed", obj[4:3000], int64(len(obj)), "the object changed while the job read it: 3000 bytes read, listed with 5008"},
		{"only the magic", nil, int64(len(obj)), "the object changed while the job read it: 4 bytes read, listed with 5008"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := bytes.NewReader(tc.stream)
			data, err := readParquetWhole(obj[:4], r, tc.size)
			if data == nil {
				t.Fatal("no buffer to give back")
			}
			defer readers.ReleaseParquetObjectBuffer(data)
			if tc.err == "" {
				if err != nil || !bytes.Equal(data, obj) || r.Len() != 0 {
					t.Errorf("err %v, equal %v, %d bytes left", err, bytes.Equal(data, obj), r.Len())
				}
				return
			}
			var de *readers.DataError
			if err == nil || err.Error() != tc.err || errors.As(err, &de) {
				t.Errorf("err %v, want the storage error %q", err, tc.err)
			}
		})
	}
}
