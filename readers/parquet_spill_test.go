package readers

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"testing"
	"time"
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

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// TestConvertSpilled: a converted file past ConvertHoldBytes goes to a
// spill file, and is written (checksums and all) byte for byte as the same
// file held in memory, as often as asked; Release removes the spill file.
// A file within the bound, or without a spill, stays in memory and makes
// no file. Not parallel: it sets ConvertHoldBytes.
func TestConvertSpilled(t *testing.T) {
	defer func(n int64) { ConvertHoldBytes = n }(ConvertHoldBytes)
	rows := convertRows(3*ConvertRowGroupRows + 77)
	open := func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(rows)), nil }
	var want bytes.Buffer
	if err := ConvertToParquet("mem://b/x.jsonl", strings.NewReader(rows), &want, 0, 0); err != nil {
		t.Fatal(err)
	}
	for _, hold := range []int64{0, 1000, int64(want.Len()) / 2, int64(want.Len()) * 2} {
		ConvertHoldBytes = hold
		dir := t.TempDir()
		spill, made := spillIn(dir)
		conv, err := ConvertObjectSpilled("mem://b/x.jsonl", open, 0, 0, "", spill, 0)
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
		if names := dirNames(t, dir); len(names) != 0 {
			t.Fatalf("hold %d: %v left after Release", hold, names)
		}
	}
	// A bound given beats ConvertHoldBytes.
	ConvertHoldBytes = 1
	dir := t.TempDir()
	spill, made := spillIn(dir)
	conv, err := ConvertObjectSpilled("mem://b/x.jsonl", open, 0, 0, "", spill, int64(want.Len()))
	if err != nil {
		t.Fatal(err)
	}
	if conv.Spilled() || made.Load() != 0 {
		t.Fatalf("a bound of the file's size: spilled %v, %d files", conv.Spilled(), made.Load())
	}
	// Without a spill, memory whatever the size.
	ConvertHoldBytes = 0
	conv, err = ConvertObject("mem://b/x.jsonl", open, 0, 0, "")
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
	rows := convertRows(ConvertRowGroupRows + 10)
	open := func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(rows)), nil }

	refused := errors.New("no room")
	_, err := ConvertObjectSpilled("mem://b/x.jsonl", open, 0, 0, "", func() (*os.File, error) { return nil, refused }, 0)
	var de *DataError
	if !errors.Is(err, refused) || errors.As(err, &de) || !strings.Contains(err.Error(), "spill") {
		t.Fatalf("a spill that cannot be made: %v", err)
	}

	dir := t.TempDir()
	_, err = ConvertObjectSpilled("mem://b/x.jsonl", open, 0, 0, "", func() (*os.File, error) {
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
	if names := dirNames(t, dir); len(names) != 0 {
		t.Fatalf("%v left after a failed conversion", names)
	}

	spill, _ := spillIn(dir)
	conv, err := ConvertObjectSpilled("mem://b/x.jsonl", open, 0, 0, "", spill, 0)
	if err != nil {
		t.Fatal(err)
	}
	names := dirNames(t, dir)
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
	if _, err := ConvertObjectSpilled("mem://b/x.jsonl", changed, 0, 0, "", spill, 0); !errors.Is(err, ErrChangedWhileConverting) {
		t.Fatalf("an object changed between its reads: %v", err)
	}
	if names := dirNames(t, dir); len(names) != 0 {
		t.Fatalf("%v left after an object changed between its reads", names)
	}
}

// TestConvertSpilledMemory: spilled, the heap's peak converting an object
// leaves out its Parquet file: against the same object held in memory
// (which TestConvertObjectMemory bounds), lower by at least half the
// file. A conversion first, so that neither measures what the first one
// sets up. GOGC 10, not parallel, not under the race detector, as
// TestConvertObjectMemory.
func TestConvertSpilledMemory(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's own memory; make test-norace runs this test")
	}
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	defer func(n int64) { ConvertHoldBytes = n }(ConvertHoldBytes)
	ConvertHoldBytes = 1 << 20
	dir := t.TempDir()
	const n = 8*ConvertRowGroupRows + 1000
	peak := func(n int, spill ConvertSpill) (int64, int64) {
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
		conv, err := ConvertObjectSpilled("mem://b/big.jsonl", open, 0, 0, "", spill, 0)
		close(stop)
		<-done
		if err != nil {
			t.Fatal(err)
		}
		defer conv.Release()
		if conv.Spilled() != (spill != nil) {
			t.Fatalf("spilled %v with a spill %v", conv.Spilled(), spill != nil)
		}
		var out countWriter
		if _, err := conv.WriteTo(&out); err != nil {
			t.Fatal(err)
		}
		return int64(top.Load()) - int64(base), out.n
	}
	spill, _ := spillIn(dir)
	peak(ConvertRowGroupRows, nil)
	held, size := peak(n, nil)
	spilled, _ := peak(n, spill)
	t.Logf("%d rows, %.1f MB of Parquet: peak %.1f MB held, %.1f MB spilled", n, float64(size)/1e6, float64(held)/1e6, float64(spilled)/1e6)
	if spilled > held-size/2 {
		t.Errorf("peak %d bytes spilled, %d held: want at least half the %d-byte file less", spilled, held, size)
	}
}
