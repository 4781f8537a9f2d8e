package readers

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crlbatch/crlbatch/protocol/skyfall"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

const testURL = "s3://b/runs/x.jsonl"

// corpusObject is one object of the repository's corpus of bad and odd
// inputs (testdata/corpus).
type corpusObject struct {
	name string // its case and file name
	data []byte
}

// corpusObjects reads the corpus's objects: truncated and corrupt streams,
// byte-order marks, CRLF line ends, invalid UTF-8, bad rows of every kind
// (the folders and links of the cases about listing left out). A corpus
// object's zstd frame of a long window leaves a decoder with a 2 GB
// history ring in the package's idle decoders (zstdDecoders): the test
// lets go of them at its end, as the engine does once a job's objects are
// read; kept, they stayed live through every later test of the package,
// the heap's goal at 4 GB and more.
func corpusObjects(t *testing.T) []corpusObject {
	t.Helper()
	files, err := filepath.Glob("../testdata/corpus/*/in/*")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 100 {
		t.Fatalf("%d corpus objects", len(files))
	}
	t.Cleanup(func() { ReleaseDecoders() })
	var objs []corpusObject
	for _, f := range files {
		if st, err := os.Stat(f); err != nil || !st.Mode().IsRegular() {
			continue // a folder or a link of a case about listing
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		objs = append(objs, corpusObject{filepath.Base(filepath.Dir(filepath.Dir(f))) + "/" + filepath.Base(f), data})
	}
	return objs
}

func gz(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func zst(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := zstd.NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// object is one test object: its key and contents.
type object struct {
	key  string
	data string
}

// decodeAll decodes objects (already in key order) and assembles them.
func decodeAll(t testing.TB, opts Options, objs ...object) ([]*skyfall.Trace, error) {
	t.Helper()
	var decoded []*ObjectRuns
	for _, o := range objs {
		d, err := DecodeObject("mem://b/"+o.key, o.key, strings.NewReader(o.data), opts)
		if err != nil {
			return nil, err
		}
		decoded = append(decoded, d)
	}
	return Assemble(decoded, opts)
}

func mustDecode(t testing.TB, opts Options, objs ...object) []*skyfall.Trace {
	t.Helper()
	traces, err := decodeAll(t, opts, objs...)
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range traces {
		if err := tr.Validate(); err != nil {
			t.Fatal(err)
		}
	}
	return traces
}

func asDataError(t testing.TB, err error) *DataError {
	t.Helper()
	var de *DataError
	if !errors.As(err, &de) {
		t.Fatalf("got %v (%T), want a *DataError", err, err)
	}
	return de
}
