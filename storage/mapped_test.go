package storage

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/cespare/xxhash/v2"
)

var mappedSink byte

// A local object read whole from its start, of MapMinBytes or more,
// is mapped (on Linux): its bytes are the file's, with pages brought in
// ahead and still readable after their pages are given back; reads past them find bytes appended since
// it was opened; a file cut shorter while mapped faults in Guard, which
// says so instead of crashing, and lets any other panic go on; a file cut
// shorter before it is mapped is not mapped. A range, or a smaller object,
// is not mapped.
func TestMappedLocalObject(t *testing.T) {
	if !mapsFiles {
		t.Skip("local objects are mapped on Linux only")
	}
	old := MapMinBytes
	t.Cleanup(func() { MapMinBytes = old })
	page := os.Getpagesize()
	MapMinBytes = int64(2 * page)

	dir := t.TempDir()
	data := bytes.Repeat([]byte("0123456789abcdef\n"), 5*page/17)
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	p := write("a.jsonl", data)
	write("small.jsonl", data[:page])
	b := openLocalInput(dir)
	defer b.Close()
	ctx := context.Background()
	open := func(key string, off, n int64) (*Mapped, func()) {
		t.Helper()
		r, err := b.NewRangeReader(ctx, key, off, n, nil)
		if err != nil {
			t.Fatal(err)
		}
		var m *Mapped
		if !r.As(&m) {
			m = nil
		}
		return m, func() { r.Close() }
	}

	if m, done := open("small.jsonl", 0, -1); m != nil {
		t.Error("an object under MapMinBytes is mapped")
		done()
	} else {
		done()
	}
	if m, done := open("a.jsonl", 1, -1); m != nil {
		t.Error("a range is mapped")
		done()
	} else {
		done()
	}

	m, done := open("a.jsonl", 0, -1)
	if m == nil {
		t.Fatal("an object read whole is not mapped")
	}
	got := m.Bytes()
	m.Ahead(page+7, 2*page) // from the page holding page+7
	m.Ahead(len(data)-1, 10*page)
	m.Ahead(len(data)+5, 10) // past the end, or before the start: nothing
	m.Ahead(-1, 10)
	if !bytes.Equal(got, data) {
		t.Fatal("the mapped bytes are not the file's")
	}
	m.Release(3*page + 5)
	if !bytes.Equal(got, data) {
		t.Fatal("the bytes whose pages were given back are not the file's")
	}
	if m.given != 3*page {
		t.Errorf("pages given back up to %d, want %d", m.given, 3*page)
	}
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("appended\n")
	f.Close()
	buf := make([]byte, 4)
	if n, err := m.ReadAt(buf, int64(len(data)-2)); n != 2 || err != nil || string(buf[:n]) != "f\n" {
		t.Errorf("ReadAt the mapped end: %q, %v", buf[:n], err)
	}
	if rest, err := io.ReadAll(io.NewSectionReader(m, int64(len(data)), 100)); err != nil || string(rest) != "appended\n" {
		t.Errorf("read past the mapped bytes: %q, %v; want what was appended", rest, err)
	}

	// Cut shorter while mapped: its last page faults.
	if err := os.Truncate(p, 10); err != nil {
		t.Fatal(err)
	}
	if err := Guard(got, func() { mappedSink = got[len(got)-1] }); !errors.Is(err, ErrFaulted) {
		t.Fatalf("a page past the cut file's end: %v, want ErrFaulted", err)
	}
	// In assembly too: a search, a copy, a hash.
	if err := Guard(got, func() { mappedSink = byte(bytes.IndexByte(got[page:], 'x')) }); !errors.Is(err, ErrFaulted) {
		t.Fatalf("a search past the cut file's end: %v, want ErrFaulted", err)
	}
	if err := Guard(got, func() { mappedSink = byte(xxhash.Sum64(got[page:])) }); !errors.Is(err, ErrFaulted) {
		t.Fatalf("a hash past the cut file's end: %v, want ErrFaulted", err)
	}
	if n, err := m.ReadAt(buf, int64(len(data)-2)); !errors.Is(err, ErrFaulted) {
		t.Errorf("ReadAt past the cut file's end: %d, %v; want ErrFaulted", n, err)
	}
	if err := Guard(got, func() { mappedSink = got[0] }); err != nil {
		t.Errorf("the page before the cut: %v", err)
	}
	func() {
		defer func() {
			if p := recover(); p != "another panic" {
				t.Errorf("recovered %v, want another panic", p)
			}
		}()
		Guard(got, func() { panic("another panic") })
	}()
	done()

	// Cut shorter after it was opened, before it is mapped: not mapped.
	p = write("b.jsonl", data)
	m, done = open("b.jsonl", 0, -1)
	defer done()
	if err := os.Truncate(p, int64(len(data)/2)); err != nil {
		t.Fatal(err)
	}
	if m.Bytes() != nil {
		t.Error("an object cut shorter before it was mapped is mapped")
	}
}
