package readers

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/crlbatch/crlbatch/protocol/skyfall"
)

// decodeObjects decodes objs (in key order), failing the test on a decode
// error.
func decodeObjects(t testing.TB, opts Options, objs ...object) []*ObjectRuns {
	t.Helper()
	out := make([]*ObjectRuns, len(objs))
	for i, o := range objs {
		d, err := DecodeObject("mem://b/"+o.key, o.key, strings.NewReader(o.data), opts)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = d
	}
	return out
}

// collectEach runs AssembleEach and collects the traces, checking that fn
// sees the runs in order.
func collectEach(t testing.TB, objects []*ObjectRuns, opts Options) ([]*skyfall.Trace, error) {
	t.Helper()
	got := []*skyfall.Trace{} // as Assemble gives no runs
	err := AssembleEach(objects, opts, func(i int, tr *skyfall.Trace) error {
		if i != len(got) {
			t.Fatalf("run %d handed over after %d runs", i, len(got))
		}
		got = append(got, tr)
		return nil
	})
	return got, err
}

// dirFiles lists the files in dir.
func dirFiles(t testing.TB, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// sameResult fails unless two assemblies agree exactly: traces deeply
// equal, or errors with the same text and the same kind.
func sameResult(t testing.TB, got []*skyfall.Trace, gerr error, want []*skyfall.Trace, werr error) {
	t.Helper()
	if (gerr == nil) != (werr == nil) || gerr != nil && gerr.Error() != werr.Error() {
		t.Fatalf("error %v, want %v", gerr, werr)
	}
	if werr != nil {
		var gd, wd *DataError
		if errors.As(gerr, &gd) != errors.As(werr, &wd) || errors.Is(gerr, ErrLimit) != errors.Is(werr, ErrLimit) {
			t.Fatalf("error %v (%T), want one like %v (%T)", gerr, gerr, werr, werr)
		}
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got\n%s\nwant\n%s", dump(got), dump(want))
	}
}

var spillOpts = Options{Components: []string{"progress", "success"}}

// spillCases are sweeps whose runs span objects in every way that matters
// to the merge: origins and aliases met in different objects, optional
// columns that start in a later object, metadata that holds within each
// object but not across them, anonymous runs, an empty object, and the
// errors found while assembling.
var spillCases = []struct {
	name string
	opts Options
	objs []object
}{
	{"multi-object runs", spillOpts, []object{
		{"runs/a.jsonl", lines(
			`{"run_id":"r","step":5,"reward":1,"regime_id":"x","components":{"progress":1}}`,
			`{"run_id":"q","step":0,"reward":9,"regime_id":"y","gamma":0.5}`,
			`{"run_id":"r","step":4,"reward":2,"regime_id":"a_again","alias_of":"a"}`,
			`{"reward":-1,"regime_id":"anon"}`,
		)},
		{"runs/b.jsonl", lines(
			`{"run_id":"q","step":1,"reward":8,"regime_id":"y","invalid_action":true}`,
			`{"run_id":"r","step":3,"reward":3,"regime_id":"a_again","regime_origin":"x","gamma":0.9}`,
			`{"run_id":"r","step":2,"reward":4,"regime_id":"x","effective_rank":2,"gamma":0.8,"components":{"success":4}}`,
			`{"run_id":"s","reward":0.25,"regime_id":"z","regime_origin":"y"}`,
		)},
		{"runs/c.jsonl", lines(`{"run_id":"r","reward":5,"regime_id":"z"}`, `{"run_id":"s","reward":-0.0,"regime_id":"w","alias_of":"z"}`)},
		{"runs/d.jsonl", ""},
		{"runs/e.jsonl", lines(`{"run_id":"q","reward":7,"regime_id":"y2","regime_origin":"y","effective_rank":1e-300,"invalid_action":false}`)},
	}},
	{"metadata across objects", Options{}, []object{
		{"a", lines(
			`{"run_id":"r","seed":1,"k":1,"v":1,"only_a":1,"lr":3e-4,"gamma":0.99,"reward":1,"regime_id":"x"}`,
			`{"run_id":"r","seed":1.0,"k":1,"v":1,"only_a":1,"lr":0.0003,"gamma":0.99,"reward":1,"regime_id":"x"}`,
		)},
		{"b", lines(
			`{"run_id":"r","seed":10e-1,"k":1.0,"v":2,"lr":0.00030,"gamma":0.99,"cfg":{"b":1,"a":2},"reward":1,"regime_id":"x"}`,
			`{"run_id":"t","cfg":{"a":2,"b":1},"reward":1,"regime_id":"x"}`,
		)},
		{"c", lines(`{"run_id":"r","seed":1,"k":1,"v":2,"lr":3e-4,"gamma":0.9,"reward":1,"regime_id":"x"}`, `{"run_id":"t","cfg":{"b":1,"a":2},"reward":1,"regime_id":"x"}`)},
	}},
	{"anonymous runs", spillOpts, []object{
		{"a", lines(`{"reward":1,"regime_id":"x","algo":"ppo"}`, `{"run_id":"r","reward":2,"regime_id":"x"}`, `{"reward":3,"regime_id":"y","algo":"ppo"}`)},
		{"b", lines(`{"reward":4,"regime_id":"x","algo":"ppo","step":1}`)},
		{"c", lines(`{"run_id":null,"reward":5,"regime_id":"x"}`, `{"run_id":"r","reward":6,"regime_id":"x"}`)},
	}},
	{"run-key collision across objects", Options{}, []object{
		{"a", lines(`{"run_id":"r","seed":"1","reward":1,"regime_id":"x"}`)},
		{"b", lines(`{"run_id":"q","reward":1,"regime_id":"x"}`, `{"run_id":"r","seed":1,"reward":1,"regime_id":"x"}`)},
	}},
	{"max-labels across objects", Options{MaxLabels: 2}, []object{
		{"a", lines(`{"run_id":"q","reward":1,"regime_id":"x"}`, `{"run_id":"r","reward":1,"regime_id":"x"}`, `{"run_id":"r","reward":1,"regime_id":"y"}`)},
		{"b", lines(`{"run_id":"r","reward":1,"regime_id":"z"}`, `{"run_id":"s","reward":1,"regime_id":"z"}`)},
	}},
	{"max-runs across objects", Options{MaxRuns: 2}, []object{
		{"a", lines(`{"run_id":"q","reward":1,"regime_id":"x"}`, `{"run_id":"r","reward":1,"regime_id":"x"}`)},
		{"b", lines(`{"run_id":"s","reward":1,"regime_id":"z"}`)},
	}},
	{"no objects", Options{}, nil},
	// Spill lends one run's dense columns to the next (a TracePool): a
	// longer run's columns reused for shorter ones must carry none of its
	// steps, invalid actions, effective ranks or components over.
	{"one object of many runs, longest first", spillOpts, []object{
		{"runs/one.jsonl", lines(
			`{"run_id":"long","step":10,"reward":1,"regime_id":"x","invalid_action":true,"effective_rank":3,"components":{"progress":1,"success":2}}`,
			`{"run_id":"long","step":11,"reward":2,"regime_id":"x","invalid_action":false,"effective_rank":4,"components":{"progress":2,"success":3}}`,
			`{"run_id":"long","step":12,"reward":3,"regime_id":"y","invalid_action":true,"effective_rank":5,"components":{"progress":3}}`,
			`{"run_id":"long","step":13,"reward":4,"regime_id":"y","invalid_action":true,"effective_rank":6,"components":{"progress":4}}`,
			`{"run_id":"short","reward":5,"regime_id":"x"}`,
			`{"run_id":"short","step":1,"reward":6,"regime_id":"x","components":{"success":1}}`,
			`{"run_id":"mid","step":7,"reward":7,"regime_id":"z","effective_rank":1}`,
			`{"run_id":"mid","reward":8,"regime_id":"z"}`,
			`{"run_id":"mid","step":9,"reward":9,"regime_id":"z","invalid_action":false}`,
		)},
	}},
}

// TestSpillAssembleEach: AssembleEach over spilled objects (all of them,
// or every other one) gives what Assemble gives over the same objects in
// memory, errors included, and leaves no file behind.
func TestSpillAssembleEach(t *testing.T) {
	for _, c := range spillCases {
		for _, which := range []string{"all", "even", "odd", "none"} {
			t.Run(c.name+"/"+which, func(t *testing.T) {
				want, werr := Assemble(decodeObjects(t, c.opts, c.objs...), c.opts)
				dir := t.TempDir()
				objs := decodeObjects(t, c.opts, c.objs...)
				for i, o := range objs {
					if which == "all" || which == "even" && i%2 == 0 || which == "odd" && i%2 == 1 {
						if err := o.Spill(dir); err != nil {
							t.Fatal(err)
						}
						if !o.Spilled() {
							t.Fatal("not spilled")
						}
					}
				}
				got, gerr := collectEach(t, objs, c.opts)
				sameResult(t, got, gerr, want, werr)
				if files := dirFiles(t, dir); len(files) > 0 {
					t.Errorf("left behind: %q", files)
				}
				if which == "none" && werr == nil {
					// In-memory objects are untouched: again, and by Assemble.
					again, err := Assemble(objs, c.opts)
					sameResult(t, again, err, want, werr)
				}
			})
		}
	}
}

// TestSpillAssemble: Assemble reads spilled objects back too (all runs at
// once) and consumes them.
func TestSpillAssemble(t *testing.T) {
	c := spillCases[0]
	want := mustDecode(t, c.opts, c.objs...)
	dir := t.TempDir()
	objs := decodeObjects(t, c.opts, c.objs...)
	for _, o := range objs[1:] {
		if err := o.Spill(dir); err != nil {
			t.Fatal(err)
		}
	}
	got, err := Assemble(objs, c.opts)
	sameResult(t, got, err, want, nil)
	if files := dirFiles(t, dir); len(files) > 0 {
		t.Errorf("left behind: %q", files)
	}
	// Consumed: assembling again is an error, naming the object.
	_, err = Assemble(objs, c.opts)
	if err == nil || !strings.Contains(err.Error(), "runs/b.jsonl") || !strings.Contains(err.Error(), "released") {
		t.Errorf("reassembling consumed objects: %v", err)
	}
	var de *DataError
	if errors.As(err, &de) {
		t.Errorf("%v is a DataError", err)
	}
	// What stays of a consumed object.
	if o := objs[1]; o.Spilled() || o.Rows != 4 || o.NumRuns() != 3 || !reflect.DeepEqual(o.RunKeys(), []string{"run_id=q", "run_id=r", "run_id=s"}) {
		t.Errorf("consumed object: spilled %v, %d rows, runs %q", o.Spilled(), o.Rows, o.RunKeys())
	}
}

// TestSpillLifecycle: the file appears with Spill, only once however many
// times Spill is called, and goes as soon as the object's last run has
// been read back; Release removes it without assembling.
func TestSpillLifecycle(t *testing.T) {
	c := spillCases[0] // runs r, q, anonymous:runs/a.jsonl, s
	dir := t.TempDir()
	objs := decodeObjects(t, c.opts, c.objs...)
	for _, o := range objs {
		for range 2 {
			if err := o.Spill(dir); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The empty object d has nothing to write.
	if files := dirFiles(t, dir); len(files) != 4 {
		t.Fatalf("files %q, want 4", files)
	}
	fileOf := map[*ObjectRuns]string{}
	for _, o := range objs {
		fileOf[o] = o.spillPath
	}
	// Run 0 (r) spans a, b, c; run 1 (q) spans a, b, e, the only run of e;
	// run 2 is a's anonymous run, the last of a; run 3 (s) spans b and c.
	gone := [][]string{0: nil, 1: {"runs/e.jsonl"}, 2: {"runs/a.jsonl", "runs/e.jsonl"}, 3: {"runs/a.jsonl", "runs/b.jsonl", "runs/c.jsonl", "runs/e.jsonl"}}
	err := AssembleEach(objs, c.opts, func(i int, tr *skyfall.Trace) error {
		for _, o := range objs {
			if o.Key == "runs/d.jsonl" {
				continue
			}
			_, err := os.Stat(fileOf[o])
			wantGone := false
			for _, k := range gone[i] {
				wantGone = wantGone || k == o.Key
			}
			if gotGone := errors.Is(err, os.ErrNotExist); gotGone != wantGone {
				t.Errorf("run %d (%s): spill file of %s gone %v, want %v", i, tr.Key, o.Key, gotGone, wantGone)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files := dirFiles(t, dir); len(files) > 0 {
		t.Errorf("left behind: %q", files)
	}

	// Release without assembling; then Spill does nothing.
	objs = decodeObjects(t, c.opts, c.objs...)
	if err := objs[0].Spill(dir); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := objs[0].Release(); err != nil {
			t.Fatal(err)
		}
		if err := objs[1].Release(); err != nil {
			t.Fatal(err)
		}
	}
	if err := objs[1].Spill(dir); err != nil {
		t.Fatal(err)
	}
	if files := dirFiles(t, dir); len(files) > 0 {
		t.Errorf("left behind: %q", files)
	}
	if _, err := collectEach(t, objs, c.opts); err == nil || !strings.Contains(err.Error(), "released") {
		t.Errorf("assembling released objects: %v", err)
	}
}

// TestSpillFnError: an error of fn stops AssembleEach, comes back as it
// is, and no spill file stays behind.
func TestSpillFnError(t *testing.T) {
	c := spillCases[0]
	dir := t.TempDir()
	objs := decodeObjects(t, c.opts, c.objs...)
	for _, o := range objs[:3] {
		if err := o.Spill(dir); err != nil {
			t.Fatal(err)
		}
	}
	stop := errors.New("scorer failed")
	calls := 0
	err := AssembleEach(objs, c.opts, func(i int, tr *skyfall.Trace) error {
		calls++
		if i == 1 {
			return stop
		}
		return nil
	})
	if err != stop || calls != 2 {
		t.Errorf("got %v after %d calls", err, calls)
	}
	if files := dirFiles(t, dir); len(files) > 0 {
		t.Errorf("left behind: %q", files)
	}
	for _, o := range objs[:3] {
		if o.Spilled() || o.MemBytes() > 8<<10 {
			t.Errorf("%s: spilled %v, %d bytes", o.Key, o.Spilled(), o.MemBytes())
		}
	}
	// The in-memory objects are still whole.
	if got, err := Assemble(objs[3:], c.opts); err != nil || len(got) != 1 || got[0].Len() != 1 {
		t.Errorf("in-memory objects: %v", err)
	}

	// Errors found before any run is built (out of order; a collision)
	// remove the files too.
	for _, cc := range []struct {
		name string
		objs []object
	}{
		{"order", []object{{"b", okRow}, {"a", okRow}}},
		{"collision", spillCases[3].objs},
	} {
		objs := decodeObjects(t, Options{}, cc.objs...)
		for _, o := range objs {
			if err := o.Spill(dir); err != nil {
				t.Fatal(err)
			}
		}
		if err := AssembleEach(objs, Options{}, func(int, *skyfall.Trace) error { return nil }); err == nil {
			t.Errorf("%s: no error", cc.name)
		}
		if files := dirFiles(t, dir); len(files) > 0 {
			t.Errorf("%s: left behind: %q", cc.name, files)
		}
	}
}

// failingFile is a spill file whose writes fail after n bytes.
type failingFile struct {
	*os.File
	n int
}

func (f *failingFile) Write(p []byte) (int, error) {
	if len(p) > f.n {
		m, _ := f.File.Write(p[:f.n])
		f.n = 0
		return m, errors.New("no space left on device")
	}
	f.n -= len(p)
	return f.File.Write(p)
}

// TestSpillWriteError: when writing fails, Spill leaves no file and the
// object stays in memory, whole.
func TestSpillWriteError(t *testing.T) {
	c := spillCases[0]
	want := mustDecode(t, c.opts, c.objs...)
	dir := t.TempDir()
	defer func(f func(string) (spillFile, error)) { createSpillFile = f }(createSpillFile)
	for _, limit := range []int{0, 20, 300} {
		createSpillFile = func(dir string) (spillFile, error) {
			f, err := os.CreateTemp(dir, "crlbatch-spill-*")
			if err != nil {
				return nil, err
			}
			return &failingFile{f, limit}, nil
		}
		objs := decodeObjects(t, c.opts, c.objs...)
		before := objs[1].MemBytes()
		err := objs[1].Spill(dir)
		if err == nil || !strings.Contains(err.Error(), "no space left") || !strings.Contains(err.Error(), "runs/b.jsonl") {
			t.Errorf("limit %d: %v", limit, err)
		}
		if objs[1].Spilled() || objs[1].MemBytes() != before {
			t.Errorf("limit %d: object changed", limit)
		}
		if files := dirFiles(t, dir); len(files) > 0 {
			t.Errorf("limit %d: left behind: %q", limit, files)
		}
		got, err := collectEach(t, objs, c.opts)
		sameResult(t, got, err, want, nil)
	}
	createSpillFile = func(dir string) (spillFile, error) { return os.CreateTemp(dir, "crlbatch-spill-*") }
	objs := decodeObjects(t, c.opts, c.objs...)
	if err := objs[0].Spill(filepath.Join(dir, "missing")); err == nil || objs[0].Spilled() {
		t.Errorf("spilling to a missing directory: %v", err)
	}
}

// TestSpillReadError: a spill file that is gone, cut short or changed
// gives a plain error (not a DataError) naming the object, and every
// spill file is removed all the same.
func TestSpillReadError(t *testing.T) {
	c := spillCases[0]
	for _, damage := range []string{"removed", "truncated", "flipped", "emptied"} {
		t.Run(damage, func(t *testing.T) {
			dir := t.TempDir()
			objs := decodeObjects(t, c.opts, c.objs...)
			for _, o := range objs {
				if err := o.Spill(dir); err != nil {
					t.Fatal(err)
				}
			}
			path := objs[1].spillPath // runs/b.jsonl, first read for run 0
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			switch damage {
			case "removed":
				err = os.Remove(path)
			case "truncated":
				err = os.WriteFile(path, data[:len(data)-3], 0o600)
			case "flipped":
				data[len(data)/2] ^= 0x10
				err = os.WriteFile(path, data, 0o600)
			case "emptied":
				err = os.WriteFile(path, nil, 0o600)
			}
			if err != nil {
				t.Fatal(err)
			}
			_, err = collectEach(t, objs, c.opts)
			if err == nil || !strings.Contains(err.Error(), "mem://b/runs/b.jsonl") {
				t.Fatalf("got %v", err)
			}
			t.Log(err)
			var de *DataError
			if errors.As(err, &de) || errors.Is(err, ErrLimit) {
				t.Errorf("%v is a data error", err)
			}
			if files := dirFiles(t, dir); len(files) > 0 {
				t.Errorf("left behind: %q", files)
			}
		})
	}
}

// TestSpillMemBytes: after Spill an object holds a small fraction of what
// it held, by MemBytes and by the Go heap.
func TestSpillMemBytes(t *testing.T) {
	data := benchRows(20000)
	dir := t.TempDir()
	opts := Options{Components: benchComps}
	var objs []*ObjectRuns
	for i := range 4 {
		o, err := DecodeObject("x", fmt.Sprintf("x%d", i), bytes.NewReader(data), opts)
		if err != nil {
			t.Fatal(err)
		}
		objs = append(objs, o)
	}
	heap0 := liveHeap()
	before := objs[0].MemBytes()
	for _, o := range objs {
		if err := o.Spill(dir); err != nil {
			t.Fatal(err)
		}
	}
	after := objs[0].MemBytes()
	heap1 := liveHeap()
	st, err := os.Stat(objs[0].spillPath)
	if err != nil {
		t.Fatal(err)
	}
	rows := float64(objs[0].Rows)
	t.Logf("MemBytes %d before Spill (%.1f a row), %d after (%.2f%%); spill file %d bytes (%.1f a row); heap fell by %.1f MB for %.1f MB of MemBytes",
		before, float64(before)/rows, after, 100*float64(after)/float64(before), st.Size(), float64(st.Size())/rows,
		float64(heap0-heap1)/1e6, 4*float64(before)/1e6)
	if after*100 > before {
		t.Errorf("MemBytes %d after Spill, %d before", after, before)
	}
	if heap0-heap1 < 3*before {
		t.Errorf("the heap fell by %d bytes, want most of %d", heap0-heap1, 4*before)
	}
	// The file keeps labels, steps and invalid_action at a byte a row where
	// memory keeps runs and bitmaps: about the size of the compact columns.
	if per := float64(st.Size()) / rows; per > 1.1*float64(before)/rows {
		t.Errorf("%.1f bytes a row on disk", per)
	}
	// Many small runs: the header still is a small part.
	var sb strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&sb, `{"run_id":"run-%d","seed":%d,"algo":"ppo","step":%d,"reward":%d.5,"regime_id":"t%d","gamma":0.99}`+"\n", i%100, i%100, i, i, i%3)
	}
	o, err := DecodeObject("y", "y", strings.NewReader(sb.String()), Options{})
	if err != nil {
		t.Fatal(err)
	}
	before = o.MemBytes()
	if err := o.Spill(dir); err != nil {
		t.Fatal(err)
	}
	after = o.MemBytes()
	t.Logf("100 runs of 20 rows: MemBytes %d before Spill, %d after (%.0f bytes a run)", before, after, float64(after)/100)
	if after > before/2 {
		t.Errorf("MemBytes %d after Spill, %d before", after, before)
	}
	for _, o := range append(objs, o) {
		if err := o.Release(); err != nil {
			t.Fatal(err)
		}
	}
	if files := dirFiles(t, dir); len(files) > 0 {
		t.Errorf("left behind: %q", files)
	}
}

// liveHeap is the heap in use after a full collection.
func liveHeap() int64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// TestSpillAssembleEachMemory: over a spilled sweep of 12 runs, each split
// across 3 objects, the heap while fn runs holds about one run, not the
// sweep.
func TestSpillAssembleEachMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	const nRuns, nObj, rowsPer = 12, 3, 10000
	opts := Options{Components: benchComps}
	dir := t.TempDir()
	var objs []*ObjectRuns
	var total int64
	for k := range nObj {
		var sb strings.Builder
		for i := range nRuns * rowsPer {
			r := i % nRuns
			fmt.Fprintf(&sb, `{"run_id":"r%d","step":%d,"reward":%d.25,"regime_id":"l%d","components":{"success":1,"progress":0.5,"bonus":%d,"episode_end":0},"invalid_action":true,"effective_rank":3.5,"gamma":0.99}`+"\n",
				r, k*rowsPer+i/nRuns, i, i/700, i)
		}
		o, err := DecodeObject("z", fmt.Sprintf("z%d", k), strings.NewReader(sb.String()), opts)
		if err != nil {
			t.Fatal(err)
		}
		total += o.MemBytes()
		if err := o.Spill(dir); err != nil {
			t.Fatal(err)
		}
		objs = append(objs, o)
	}
	perRun := total / nRuns
	base := liveHeap()
	var peak int64
	err := AssembleEach(objs, opts, func(i int, tr *skyfall.Trace) error {
		if tr.Len() != nObj*rowsPer {
			t.Fatalf("run %d has %d rows", i, tr.Len())
		}
		peak = max(peak, liveHeap()-base)
		runtime.KeepAlive(tr)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("sweep of %.1f MB in columns (%.1f MB a run); live heap in fn at most %.1f MB above the spilled sweep's",
		float64(total)/1e6, float64(perRun)/1e6, float64(peak)/1e6)
	if peak > 2*perRun || peak > total/4 {
		t.Errorf("live heap grew by %d bytes, a run is %d, the sweep %d", peak, perRun, total)
	}
}

// decodable keeps the objects that decode without error.
func decodable(objs []object, opts Options) []object {
	var ok []object
	for _, o := range objs {
		if _, err := DecodeObject("mem://b/"+o.key, o.key, strings.NewReader(o.data), opts); err == nil {
			ok = append(ok, o)
		}
	}
	return ok
}

// FuzzSpill: over random sweeps, spilling any subset of the objects
// changes nothing in what AssembleEach (or Assemble) hands over, and
// leaves no file behind.
func FuzzSpill(f *testing.F) {
	for s := range uint64(24) {
		f.Add(s, uint8(s*37))
	}
	f.Fuzz(func(t *testing.T, seed uint64, mask uint8) {
		objs := genObjects(seed)
		opts := Options{Components: []string{"progress"}}
		ok := decodable(objs, opts)
		want, werr := Assemble(decodeObjects(t, opts, ok...), opts)
		dir := t.TempDir()
		spill := func(decoded []*ObjectRuns) {
			for i, o := range decoded {
				if mask&(1<<(i%8)) != 0 {
					if err := o.Spill(dir); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
		decoded := decodeObjects(t, opts, ok...)
		spill(decoded)
		got, gerr := collectEach(t, decoded, opts)
		sameResult(t, got, gerr, want, werr)
		decoded = decodeObjects(t, opts, ok...)
		spill(decoded)
		got, gerr = Assemble(decoded, opts)
		sameResult(t, got, gerr, want, werr)
		if files := dirFiles(t, dir); len(files) > 0 {
			t.Fatalf("left behind: %q", files)
		}
	})
}

// BenchmarkSpill measures Spill and then AssembleEach reading the object
// back, on the decode benchmark's rows; MB/s are of the JSON they came
// from, to compare with the decoder's.
func BenchmarkSpill(b *testing.B) {
	data := benchRows(20000)
	opts := Options{Components: benchComps}
	dir := b.TempDir()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		b.StopTimer()
		o, err := DecodeObject("bench", "bench", bytes.NewReader(data), opts)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if err := o.Spill(dir); err != nil {
			b.Fatal(err)
		}
		if err := AssembleEach([]*ObjectRuns{o}, opts, func(int, *skyfall.Trace) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
}

// TestAssembleEachKeep: passing over spilled objects without consuming them
// gives the same runs every time, until the objects are released.
func TestAssembleEachKeep(t *testing.T) {
	objs := keepTestObjects(t)
	want, err := Assemble(keepTestObjects(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, o := range objs {
		if err := o.Spill(dir); err != nil {
			t.Fatal(err)
		}
	}
	for pass := 0; pass < 2; pass++ {
		var got []*skyfall.Trace
		if err := AssembleEachKeep(objs, Options{}, func(_ int, tr *skyfall.Trace) error {
			got = append(got, tr)
			return nil
		}); err != nil {
			t.Fatalf("pass %d: %v", pass, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("pass %d differs from Assemble", pass)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != len(objs) {
		t.Errorf("%d spill files after two kept passes, want %d", len(ents), len(objs))
	}
	if err := AssembleEach(objs, Options{}, func(int, *skyfall.Trace) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("%d spill files left after the consuming pass", len(ents))
	}
}

func keepTestObjects(t *testing.T) []*ObjectRuns {
	t.Helper()
	var objs []*ObjectRuns
	for i, body := range []string{
		`{"run_id":"a","reward":1,"regime_id":"x"}` + "\n" + `{"run_id":"b","reward":2,"regime_id":"y"}` + "\n",
		`{"run_id":"a","reward":3,"regime_id":"y"}` + "\n" + `{"reward":4,"regime_id":"z"}` + "\n",
	} {
		key := fmt.Sprintf("o%d.jsonl", i)
		o, err := DecodeObject("mem://b/"+key, key, strings.NewReader(body), Options{})
		if err != nil {
			t.Fatal(err)
		}
		objs = append(objs, o)
	}
	return objs
}

// TestAssembleTracePool: with Options.Traces set, and every trace put back
// (dirty) once checked, the runs handed over are still exactly Assemble's,
// over random sweeps with any subset of the objects spilled, pass after
// pass.
func TestAssembleTracePool(t *testing.T) {
	for seed := range uint64(40) {
		objs := genObjects(seed)
		opts := Options{Components: []string{"progress"}}
		ok := decodable(objs, opts)
		want, werr := Assemble(decodeObjects(t, opts, ok...), opts)
		decoded := decodeObjects(t, opts, ok...)
		dir := t.TempDir()
		for i, o := range decoded {
			if (seed>>(i%6))&1 != 0 {
				if err := o.Spill(dir); err != nil {
					t.Fatal(err)
				}
			}
		}
		popts := opts
		popts.Traces = new(skyfall.TracePool)
		for pass := range 2 {
			n := 0
			gerr := AssembleEachKeep(decoded, popts, func(i int, tr *skyfall.Trace) error {
				if i >= len(want) || !reflect.DeepEqual(tr, want[i]) {
					t.Fatalf("seed %d pass %d: run %d differs from Assemble's", seed, pass, i)
				}
				for j := range tr.Rewards {
					tr.Rewards[j] = -7
				}
				for _, c := range tr.Components {
					for j := range c {
						c[j] = -7
					}
				}
				n++
				popts.Traces.Put(tr)
				return nil
			})
			if werr != nil {
				sameResult(t, nil, gerr, nil, werr)
			} else if gerr != nil || n != len(want) {
				t.Fatalf("seed %d pass %d: %d runs, error %v; want %d runs", seed, pass, n, gerr, len(want))
			}
		}
		for _, o := range decoded {
			if err := o.Release(); err != nil {
				t.Fatal(err)
			}
		}
	}
}
