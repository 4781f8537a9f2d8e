package readers

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/crlbatch/crlbatch/protocol/skyfall"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

const testURL = "s3://b/runs/x.jsonl"

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
