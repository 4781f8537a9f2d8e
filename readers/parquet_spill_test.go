package readers

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/parquet"
)

// spillIn returns a ConvertSpill making its files in dir, and how many it
// made.
func spillIn(dir string) (ConvertSpill, *atomic.Int32) {
	var made atomic.Int32
	return func() (*os.File, error) {
		made.Add(1)
		return os.CreateTemp(dir, "spill-*.parquet")
	}, &made
}

// TestConvertSpilled: a converted file past ConvertHoldBytes goes to a
// spill file, and is written (checksums and all) byte for byte as the same
// file held in memory, as often as asked; Release removes the spill file.
// A file within the bound, or without a spill, stays in memory and makes
// no file. Not parallel: it sets ConvertHoldBytes.
func TestConvertSpilled(t *testing.T) {
	defer func(n int64) { ConvertHoldBytes = n }(ConvertHoldBytes)
	rows := convertRows(12000)
	// Row groups of 3000 rows: four of them, each written as it is built.
	groups := []parquet.WriterProperty{parquet.WithMaxRowGroupLength(3000)}
	open := func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(rows)), nil }
	var want bytes.Buffer
	if err := convertToParquet("mem://b/x.jsonl", strings.NewReader(rows), &want, 0, 0, groups, false); err != nil {
		t.Fatal(err)
	}
	for _, hold := range []int64{0, 1000, int64(want.Len()) / 2, int64(want.Len()) * 2} {
		ConvertHoldBytes = hold
		dir := t.TempDir()
		spill, made := spillIn(dir)
		conv, err := convertObject("mem://b/x.jsonl", open, 0, 0, groups, false, spill, 0)
		if err != nil {
			t.Fatal(err)
		}
		spilled := hold < int64(want.Len())
		if conv.Spilled() != spilled || int(made.Load()) != map[bool]int{false: 0, true: 1}[spilled] {
			t.Fatalf("hold %d of a %d-byte file: spilled %v, %d spill files made", hold, want.Len(), conv.Spilled(), made.Load())
		}
		for range 2 {
			var got bytes.Buffer
			if _, err := conv.WriteTo(&got); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want.Bytes()) {
				t.Fatalf("hold %d: the file written differs from the one held in memory (%d against %d bytes)", hold, got.Len(), want.Len())
			}
		}
		if err := conv.Release(); err != nil {
			t.Fatal(err)
		}
		if names := dirFiles(t, dir); len(names) != 0 {
			t.Fatalf("hold %d: %v left after Release", hold, names)
		}
	}
	// A bound given beats ConvertHoldBytes.
	ConvertHoldBytes = 1
	dir := t.TempDir()
	spill, made := spillIn(dir)
	conv, err := convertObject("mem://b/x.jsonl", open, 0, 0, groups, false, spill, int64(want.Len()))
	if err != nil {
		t.Fatal(err)
	}
	if conv.Spilled() || made.Load() != 0 {
		t.Fatalf("a bound of the file's size: spilled %v, %d files", conv.Spilled(), made.Load())
	}
	// Without a spill, memory whatever the size.
	ConvertHoldBytes = 0
	conv, err = convertObject("mem://b/x.jsonl", open, 0, 0, groups, false, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	if conv.Spilled() {
		t.Fatal("ConvertObject spilled without a spill")
	}
}

// TestConvertSpillFails: a spill file that cannot be made, or that is
// written short, fails the conversion with an error naming it (not a
// DataError), leaving no file; one changed after it was written (cut
// short) fails WriteTo with an error naming it, never a damaged file
// written in silence; an object whose two reads differ leaves no spill
// file. Not parallel: it sets ConvertHoldBytes.
func TestConvertSpillFails(t *testing.T) {
	defer func(n int64) { ConvertHoldBytes = n }(ConvertHoldBytes)
	ConvertHoldBytes = 1000
	rows := convertRows(5000)
	open := func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(rows)), nil }

	refused := errors.New("no room")
	_, err := ConvertObjectSpilled("mem://b/x.jsonl", open, 0, 0, "", false, func() (*os.File, error) { return nil, refused }, 0)
	var de *DataError
	if !errors.Is(err, refused) || errors.As(err, &de) || !strings.Contains(err.Error(), "spill") {
		t.Fatalf("a spill that cannot be made: %v", err)
	}

	dir := t.TempDir()
	_, err = ConvertObjectSpilled("mem://b/x.jsonl", open, 0, 0, "", false, func() (*os.File, error) {
		f, err := os.CreateTemp(dir, "spill-*.parquet")
		if err != nil {
			return nil, err
		}
		f.Close() // every write fails
		return f, nil
	}, 0)
	if err == nil || errors.As(err, &de) || !strings.Contains(err.Error(), "spill file") {
		t.Fatalf("a spill file that cannot be written: %v", err)
	}
	if names := dirFiles(t, dir); len(names) != 0 {
		t.Fatalf("%v left after a failed conversion", names)
	}

	spill, _ := spillIn(dir)
	conv, err := ConvertObjectSpilled("mem://b/x.jsonl", open, 0, 0, "", false, spill, 0)
	if err != nil {
		t.Fatal(err)
	}
	names := dirFiles(t, dir)
	if len(names) != 1 {
		t.Fatalf("spill files %v, want one", names)
	}
	path := filepath.Join(dir, names[0])
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, fi.Size()/2); err != nil {
		t.Fatal(err)
	}
	_, err = conv.WriteTo(io.Discard)
	if err == nil || !strings.Contains(err.Error(), "reading the spill file "+path) || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("WriteTo of a spill file cut short: %v", err)
	}
	if err := conv.Release(); err != nil {
		t.Fatal(err)
	}

	var opens atomic.Int32
	changed := func() (io.ReadCloser, error) {
		if opens.Add(1) == 1 {
			return io.NopCloser(strings.NewReader(rows)), nil
		}
		return io.NopCloser(strings.NewReader(strings.Replace(rows, `"reward":`, `"reward":1`, 1))), nil
	}
	if _, err := ConvertObjectSpilled("mem://b/x.jsonl", changed, 0, 0, "", false, spill, 0); !errors.Is(err, ErrChangedWhileConverting) {
		t.Fatalf("an object changed between its reads: %v", err)
	}
	if names := dirFiles(t, dir); len(names) != 0 {
		t.Fatalf("%v left after an object changed between its reads", names)
	}
}

// TestConvertSpilledMemory: spilled, a Converted keeps its Parquet file
// out of the heap: with the same object converted, held in memory and
// spilled, the live heap after a collection (each Converted still in use)
// differs by nine tenths of the file or more. Not parallel: it reads the
// process's live heap; not under the race detector (slow there; make
// test-norace runs it).
func TestConvertSpilledMemory(t *testing.T) {
	if raceEnabled {
		t.Skip("slow under the race detector; make test-norace runs this test")
	}
	defer func(n int64) { ConvertHoldBytes = n }(ConvertHoldBytes)
	ConvertHoldBytes = 64 << 10
	dir := t.TempDir()
	const n = 4*ConvertRowGroupRows + 1000
	live := func(spill ConvertSpill) (held, size int64) {
		open := func() (io.ReadCloser, error) { return io.NopCloser(&genRows{n: n}), nil }
		conv, err := ConvertObjectSpilled("mem://b/big.jsonl", open, 0, 0, "", false, spill, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer conv.Release()
		if conv.Spilled() != (spill != nil) {
			t.Fatalf("spilled %v with a spill %v", conv.Spilled(), spill != nil)
		}
		runtime.GC()
		s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		metrics.Read(s)
		var out countWriter
		if _, err := conv.WriteTo(&out); err != nil {
			t.Fatal(err)
		}
		runtime.KeepAlive(conv)
		return int64(s[0].Value.Uint64()), out.n
	}
	spill, _ := spillIn(dir)
	held, size := live(nil)
	spilled, _ := live(spill)
	t.Logf("%d rows, %.1f MB of Parquet: live heap %.1f MB held, %.1f MB spilled", n, float64(size)/1e6, float64(held)/1e6, float64(spilled)/1e6)
	if held-spilled < size*9/10 {
		t.Errorf("live heap %d bytes held, %d spilled: want nine tenths of the %d-byte file less", held, spilled, size)
	}
}
