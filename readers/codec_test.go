package readers

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// checkStreamed checks that o's Encoding says the length of enc, AppendEncoding's bytes, and writes those bytes,
// twice over, to a writer that takes them a few at a time; and that a
// writer's error ends WriteTo with that error.
func checkStreamed(t *testing.T, o *ObjectRuns, enc []byte) {
	t.Helper()
	en, err := o.Encoding()
	if err != nil {
		t.Fatal(err)
	}
	if en.Len() != int64(len(enc)) {
		t.Fatalf("%s: Encoding says %d bytes, AppendEncoding wrote %d", o.URL, en.Len(), len(enc))
	}
	for range 2 {
		var got bytes.Buffer
		n, err := en.WriteTo(smallWriter{&got})
		if err != nil || n != int64(len(enc)) || !bytes.Equal(got.Bytes(), enc) {
			t.Fatalf("%s: Encoding wrote %d bytes (%v), not AppendEncoding's %d", o.URL, n, err, len(enc))
		}
	}
	boom := errors.New("boom")
	if _, err := en.WriteTo(failingWriter{boom}); !errors.Is(err, boom) {
		t.Fatalf("%s: a failing writer gave %v", o.URL, err)
	}
}

// smallWriter hands its buffer what is written 7 bytes at a time.
type smallWriter struct{ b *bytes.Buffer }

func (w smallWriter) Write(p []byte) (int, error) {
	for i := 0; i < len(p); i += 7 {
		w.b.Write(p[i:min(i+7, len(p))])
	}
	return len(p), nil
}

type failingWriter struct{ err error }

func (w failingWriter) Write([]byte) (int, error) { return 0, w.err }

// exampleObjects reads the trace objects under dir (a bundled example) in
// key order.
func exampleObjects(t *testing.T, dir string) []object {
	t.Helper()
	var objs []object
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.Contains(p, ".jsonl") {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		objs = append(objs, object{key: filepath.ToSlash(rel), data: string(data)})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) == 0 {
		t.Fatalf("no objects under %s", dir)
	}
	return objs
}

// roundTripRuns decodes objs, encodes and decodes each again, and checks
// that both give the same runs (every field, float64 bits included through
// DeepEqual of the traces' columns), the same object counts and, encoded
// again, the same bytes. Objects that fail to decode are skipped.
func roundTripRuns(t *testing.T, objs []object, opts Options) int {
	t.Helper()
	var direct, back []*ObjectRuns
	for _, o := range objs {
		url := "mem://b/" + o.key
		d, err := DecodeObject(url, o.key, strings.NewReader(o.data), opts)
		if err != nil {
			continue
		}
		enc, err := d.AppendEncoding(nil)
		if err != nil {
			t.Fatal(err)
		}
		checkStreamed(t, d, enc)
		r, err := DecodeEncodedObject(url, o.key, enc, opts)
		if err != nil {
			t.Fatalf("%s: %v", o.key, err)
		}
		checkStreamed(t, r, enc)
		if r.ObjectInfo != d.ObjectInfo || r.NumRuns() != d.NumRuns() || !reflect.DeepEqual(r.RunKeys(), d.RunKeys()) {
			t.Fatalf("%s: read back %+v %v, decoded %+v %v", o.key, r.ObjectInfo, r.RunKeys(), d.ObjectInfo, d.RunKeys())
		}
		again, err := r.AppendEncoding(nil)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(again, enc) {
			t.Fatalf("%s: encoding it again gives other bytes", o.key)
		}
		direct, back = append(direct, d), append(back, r)
	}
	want, werr := Assemble(direct, opts)
	got, gerr := Assemble(back, opts)
	if (werr == nil) != (gerr == nil) || (werr != nil && werr.Error() != gerr.Error()) {
		t.Fatalf("assembling: %v, read back: %v", werr, gerr)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("runs differ after the round trip")
	}
	return len(got)
}

func TestCodecRoundTripExamples(t *testing.T) {
	objs := exampleObjects(t, "../configs/example-sweep")
	for _, opts := range []Options{{}, {Components: []string{"progress", "goal"}}, {IdentityFields: []string{}}} {
		if n := roundTripRuns(t, objs, opts); n == 0 {
			t.Fatal("no runs")
		}
	}
	for _, dir := range []string{"safecrl", "contilab", "skillshift"} {
		roundTripRecords(t, exampleObjects(t, filepath.Join("../configs/examples", dir)))
	}
}

// TestCodecRoundTripRandom: random sweeps (runs across objects, anonymous
// rows, extras of every JSON type, gamma, origins and aliases, steps,
// components, invalid actions) give the same runs read back.
func TestCodecRoundTripRandom(t *testing.T) {
	for seed := range uint64(300) {
		objs := genObjects(seed)
		roundTripRuns(t, objs, Options{Components: []string{"progress"}})
		roundTripRecords(t, objs)
	}
}

func roundTripRecords(t *testing.T, objs []object) {
	t.Helper()
	opts := RecordOptions{IdentityFields: []string{"run_id", "seed", "task"}, SchemaFields: []string{"reward", "regime_id"}}
	var direct, back []*ObjectRecords
	for _, o := range objs {
		url := "mem://b/" + o.key
		d, err := DecodeRecords(url, o.key, strings.NewReader(o.data), opts)
		if err != nil {
			continue
		}
		enc, err := d.AppendEncoding(nil)
		if err != nil {
			t.Fatal(err)
		}
		r, err := DecodeEncodedRecords(url, o.key, enc)
		if err != nil {
			t.Fatalf("%s: %v", o.key, err)
		}
		if again, _ := r.AppendEncoding(nil); !bytes.Equal(again, enc) {
			t.Fatalf("%s: encoding it again gives other bytes", o.key)
		}
		if r.ObjectInfo != d.ObjectInfo || r.MemBytes() != d.MemBytes() {
			t.Fatalf("%s: %+v, decoded %+v", o.key, r.ObjectInfo, d.ObjectInfo)
		}
		direct, back = append(direct, d), append(back, r)
	}
	want, werr := AssembleRecords(direct, opts)
	got, gerr := AssembleRecords(back, opts)
	if (werr == nil) != (gerr == nil) || (werr != nil && werr.Error() != gerr.Error()) {
		t.Fatalf("assembling: %v, read back: %v", werr, gerr)
	}
	if len(got) != len(want) {
		t.Fatalf("%d runs, read back %d", len(want), len(got))
	}
	for i := range want {
		w, g := want[i], got[i]
		if w.Key != g.Key || !reflect.DeepEqual(w.Meta, g.Meta) || len(w.Rows) != len(g.Rows) {
			t.Fatalf("run %d: %s %v, read back %s %v", i, w.Key, w.Meta, g.Key, g.Meta)
		}
		for j := range w.Rows {
			wr, gr := w.Rows[j], g.Rows[j]
			if wr.Line() != gr.Line() || wr.URL() != gr.URL() || !reflect.DeepEqual(wr.Keys(), gr.Keys()) || !bytes.Equal(wr.data, gr.data) || !reflect.DeepEqual(wr.fields, gr.fields) {
				t.Fatalf("run %s row %d differs", w.Key, j)
			}
			for _, k := range wr.Keys() {
				a, _ := wr.Raw(k)
				b, _ := gr.Raw(k)
				if !bytes.Equal(a, b) {
					t.Fatalf("run %s row %d field %s: %s, read back %s", w.Key, j, k, a, b)
				}
			}
		}
	}
}

// TestCodecRejectsDamage: a truncated encoding, one with a flipped byte in
// its header, another version's or the other decoder's fails, never
// panics.
func TestCodecRejectsDamage(t *testing.T) {
	objs := exampleObjects(t, "../configs/example-sweep")
	d, err := DecodeObject("mem://b/x", "x", strings.NewReader(objs[0].data), Options{})
	if err != nil {
		t.Fatal(err)
	}
	enc, _ := d.AppendEncoding(nil)
	for n := 0; n < len(enc); n += 1 + n/3 {
		if _, err := DecodeEncodedObject("mem://b/x", "x", enc[:n], Options{}); err == nil {
			t.Fatalf("truncated to %d bytes: no error", n)
		}
	}
	// Another version, later or earlier (2: traces without the
	// components no row carries, which would read as all carried).
	for _, v := range []byte{CodecVersion + 1, CodecVersion - 1} {
		other := bytes.Clone(enc)
		other[4] = v
		if _, err := DecodeEncodedObject("mem://b/x", "x", other, Options{}); err == nil || !strings.Contains(err.Error(), "codec version") {
			t.Errorf("version %d: %v", v, err)
		}
	}
	if _, err := DecodeEncodedRecords("mem://b/x", "x", enc); !errors.Is(err, errCodec) {
		t.Errorf("the other decoder's: %v", err)
	}
	if _, err := DecodeEncodedObject("mem://b/x", "x", enc, Options{Components: []string{"goal"}}); err == nil {
		t.Errorf("other components: no error")
	}
}
