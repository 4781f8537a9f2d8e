package readers

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"reflect"
	"testing"
)

// resumed decodes data[size:] through ResumeObject after prev, in chunks
// of chunk bytes (merged as they come, or decoded on goroutines and then
// merged, with parallel).
func resumed(prev *ObjectRuns, data []byte, size int, opts Options, chunk int, parallel bool) (*ObjectRuns, error) {
	c, err := ResumeObject(prev, int64(size), bytes.NewReader(data[size:]), opts)
	if err != nil {
		return nil, err
	}
	return mergeChunks(c, chunk, parallel)
}

// checkResumed decodes data whole, and its first size bytes (ending with a
// line end) then the rest through ResumeObject, the earlier object as
// decoded or read back from its encoding (as the cache gives it), under
// the same options and bad-row policy: the same object, encoded byte for
// byte, or the same error after the same bad rows. A cut whose earlier
// bytes fail, or skip bad rows, is not one an engine resumes from: it
// reports false.
func checkResumed(t *testing.T, data []byte, size int, opts Options, badMode, stopAt, chunk int, parallel, readBack bool) bool {
	t.Helper()
	o := opts
	if badMode > 0 {
		o.OnBadRow = (&badLog{}).hook()
	}
	prev, err := DecodeObject(testURL, "x.jsonl", bytes.NewReader(data[:size]), o)
	if err != nil || !prev.Resumable() {
		return false
	}
	if readBack {
		enc, err := prev.AppendEncoding(nil)
		if err != nil {
			t.Fatal(err)
		}
		if prev, err = DecodeEncodedObject(testURL, "x.jsonl", enc, opts); err != nil {
			t.Fatal(err)
		}
	}
	wlog, glog := &badLog{stopAt: stopAt}, &badLog{stopAt: stopAt}
	wo, gopts := opts, opts
	if badMode > 0 {
		wo.OnBadRow, gopts.OnBadRow = wlog.hook(), glog.hook()
	}
	want, werr := DecodeObject(testURL, "x.jsonl", bytes.NewReader(data), wo)
	got, gerr := resumed(prev, data, size, gopts, chunk, parallel)
	if (gerr == nil) != (werr == nil) || (gerr != nil && gerr.Error() != werr.Error()) {
		t.Fatalf("resumed at byte %d of %d (chunks of %d): error %v, want %v", size, len(data), chunk, gerr, werr)
	}
	if gerr != nil && errors.Is(gerr, ErrLimit) != errors.Is(werr, ErrLimit) {
		t.Fatalf("error %v: ErrLimit differs", gerr)
	}
	if !reflect.DeepEqual(glog.rows, wlog.rows) {
		t.Fatalf("resumed at byte %d: bad rows\n%q\nwant\n%q", size, glog.rows, wlog.rows)
	}
	if werr != nil {
		return true
	}
	if got.URL != want.URL || got.Key != want.Key {
		t.Fatalf("object %q %q, want %q %q", got.URL, got.Key, want.URL, want.Key)
	}
	genc, err := got.AppendEncoding(nil)
	if err != nil {
		t.Fatal(err)
	}
	wenc, err := want.AppendEncoding(nil)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(genc, wenc) {
		t.Fatalf("resumed at byte %d of %d (chunks of %d, read back %v): the object differs: runs %q lines %d rows %d, want %q %d %d",
			size, len(data), chunk, readBack, got.RunKeys(), got.Lines, got.Rows, want.RunKeys(), want.Lines, want.Rows)
	}
	return true
}

// lineEnds returns the offsets just past each '\n' of data.
func lineEnds(data []byte) []int {
	var ends []int
	for i, c := range data {
		if c == '\n' {
			ends = append(ends, i+1)
		}
	}
	return ends
}

// An object resumed after any of its lines, under any limits and bad-row
// policy, in chunks of any size, is the object decoded whole: runs that
// go on, new runs and labels, metadata that a later row breaks, limits
// reached past the earlier bytes, and the errors and bad rows there, at
// the same lines.
func TestResumeObjectMatchesDecodeObject(t *testing.T) {
	resumedCuts := 0
	for seed := range uint64(24) {
		data := chunkInput(seed)
		ends := lineEnds(data)
		rng := rand.New(rand.NewPCG(seed, 7))
		cuts := []int{ends[0], ends[len(ends)/2], len(data)}
		for range 4 {
			cuts = append(cuts, ends[rng.IntN(len(ends))])
		}
		for _, size := range cuts {
			if data[size-1] != '\n' {
				continue
			}
			for _, lim := range []Options{{}, {MaxRuns: 2}, {MaxLabels: 1}, {MaxRuns: 3, MaxLabels: 2},
				{MaxObjectBytes: int64(len(data) - 40)}, {MaxLineBytes: 200}} {
				for badMode := range 3 {
					stopAt := 0
					if badMode == 2 {
						stopAt = 2
					}
					opts := lim
					opts.Components = []string{"progress"}
					for k, chunk := range []int{1, 300, 1 << 20} {
						if checkResumed(t, data, size, opts, badMode, stopAt, chunk, k == 1, (seed+uint64(k))%2 == 0) {
							resumedCuts++
						}
					}
				}
			}
		}
	}
	if resumedCuts < 1000 {
		t.Fatalf("%d cuts resumed: the inputs hardly test resuming", resumedCuts)
	}
}

// The corpus of bad and odd inputs, resumed after each of its first lines
// and half-way: the same object, or the same error at the same line.
func TestResumeObjectOnCorpus(t *testing.T) {
	for _, o := range corpusObjects(t) {
		data := o.data
		ends := lineEnds(data)
		if len(ends) == 0 {
			continue
		}
		cuts := []int{ends[0], ends[len(ends)/2], ends[len(ends)-1]}
		for _, size := range cuts {
			for badMode := range 2 {
				checkResumed(t, data, size, Options{Components: []string{"progress"}}, badMode, 0, 64, true, true)
			}
		}
	}
}

// What ResumeObject refuses: a compressed object, one with bad rows
// skipped, one spilled or released, other components, a size past
// --max-object-bytes.
func TestResumeObjectRefuses(t *testing.T) {
	var b bytes.Buffer
	for i := range 10 {
		b.WriteString(`{"run_id":"r","reward":` + string(rune('0'+i)) + `,"regime_id":"a","components":{"progress":1}}` + "\n")
	}
	data := b.Bytes()
	opts := Options{Components: []string{"progress"}}
	size := lineEnds(data)[3]
	decode := func(b []byte, o Options) *ObjectRuns {
		t.Helper()
		obj, err := DecodeObject(testURL, "x.jsonl", bytes.NewReader(b), o)
		if err != nil {
			t.Fatal(err)
		}
		return obj
	}
	ok := decode(data[:size], opts)
	if !ok.Resumable() {
		t.Fatal("a plain object without bad rows is not resumable")
	}
	gz := decode(gz(t, data[:size]), opts)
	withBad := opts
	withBad.OnBadRow = func(*DataError) error { return nil }
	bad := decode([]byte("{\"reward\":1,\"regime_id\":\"a\"}\nnot json\n"), withBad)
	released := decode(data[:size], opts)
	released.Release()
	cases := []struct {
		name string
		prev *ObjectRuns
		size int64
		opts Options
	}{
		{"gzip", gz, int64(size), opts},
		{"bad rows skipped", bad, 40, withBad},
		{"released", released, int64(size), opts},
		{"other components", decode(data[:size], opts), int64(size), Options{Components: []string{"other"}}},
		{"past --max-object-bytes", decode(data[:size], opts), int64(size), Options{Components: []string{"progress"}, MaxObjectBytes: int64(size - 1)}},
	}
	for _, c := range cases {
		if _, err := ResumeObject(c.prev, c.size, bytes.NewReader(data[size:]), c.opts); !errors.Is(err, errNotResumable) {
			t.Errorf("%s: %v, want errNotResumable", c.name, err)
		}
	}
}

// A run that goes on past the earlier bytes keeps what its earlier rows
// said of its labels (origins, aliases, gamma, components carried) when
// its later rows say nothing of them, read back from its encoding or not.
func TestResumeObjectKeepsEarlierRows(t *testing.T) {
	prefix := `{"run_id":"r","reward":1,"regime_id":"b","regime_origin":"a","gamma":0.9,"components":{"progress":2},"lr":1}` + "\n" +
		`{"run_id":"s","reward":1,"regime_id":"c","alias_of":"x"}` + "\n" +
		`{"run_id":"r","reward":2,"regime_id":"d","regime_origin":null,"alias_of":"b","lr":1}` + "\n"
	tail := `{"run_id":"r","reward":3,"regime_id":"b","lr":1}` + "\n" +
		`{"run_id":"s","reward":4,"regime_id":"c","regime_origin":"y"}` + "\n" +
		`{"run_id":"r","reward":5,"regime_id":"d","step":7,"lr":2}` + "\n"
	data := []byte(prefix + tail)
	for _, readBack := range []bool{false, true} {
		for _, chunk := range []int{1, 1 << 20} {
			if !checkResumed(t, data, len(prefix), Options{Components: []string{"progress"}}, 0, 0, chunk, false, readBack) {
				t.Fatal("not resumed")
			}
		}
	}
}

// FuzzResumeObject: an object resumed after any of its lines, in chunks of
// any size, under any limits and bad-row policy, is the object decoded
// whole.
func FuzzResumeObject(f *testing.F) {
	for s := range uint64(8) {
		f.Add(chunkInput(s), uint16(s*31), uint16(s*13), uint8(s), uint8(s>>1))
	}
	f.Fuzz(func(t *testing.T, data []byte, cut, size uint16, limits, bad uint8) {
		ends := lineEnds(data)
		if len(ends) == 0 {
			return
		}
		opts := Options{Components: []string{"progress"}, MaxRuns: int(limits & 3), MaxLabels: int(limits >> 2 & 3)}
		checkResumed(t, data, ends[int(cut)%len(ends)], opts, int(bad%3), int(bad>>2&3), 1+int(size%512), bad&16 != 0, bad&32 != 0)
	})
}
