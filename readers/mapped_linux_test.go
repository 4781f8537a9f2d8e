package readers

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/crlbatch/crlbatch/storage"
)

// faultyMapped is a mappedBytes over a file's real mapping, whose Guard
// turns a fault on its pages into storage.ErrFaulted, as the local
// driver's does.
type faultyMapped struct{ mappedBytes }

func (m *faultyMapped) Guard(fn func()) error { return storage.Guard(m.data, fn) }

// A page of a mapped object that cannot be read any more when a chunk cut
// from it is decoded (the file was cut shorter after Next handed the chunks
// out) ends the object at the line that spans the page's start, numbered
// in the object, as decoding the object whole ends it: chunks number their
// lines from their own first, and Merge moves them on.
func TestMappedChunkFault(t *testing.T) {
	data := benchRows(1)
	for len(data) < 64*os.Getpagesize() {
		data = append(data, data...)
	}
	opts := Options{Components: []string{"progress"}}
	// Cut within a line, at a page's start, past the first chunks.
	cutAt := 48 * os.Getpagesize()
	if data[cutAt-1] == '\n' || data[cutAt] == '\n' {
		t.Fatal("the cut must fall within a line")
	}
	line := bytes.Count(data[:cutAt], []byte("\n")) + 1
	want := fmt.Sprintf("%s: line %d: read: %s", testURL, line, storage.ErrFaulted)

	decode := func(split bool) error {
		path := filepath.Join(t.TempDir(), "x.jsonl")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		mapped, err := syscall.Mmap(int(f.Fd()), 0, len(data), syscall.PROT_READ, syscall.MAP_SHARED)
		if err != nil {
			t.Fatal(err)
		}
		defer syscall.Munmap(mapped)
		mb := &faultyMapped{mappedBytes{data: mapped}}
		if !split {
			if err := os.Truncate(path, int64(cutAt)); err != nil {
				t.Fatal(err)
			}
			_, err := DecodeObject(testURL, "x.jsonl", mb, opts)
			return err
		}
		c, err := SplitObject(testURL, "x.jsonl", mb, opts)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		var chunks []*Chunk
		for {
			ch, err := c.Next(8 * os.Getpagesize())
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			chunks = append(chunks, ch)
		}
		if len(chunks) < 6 || !chunks[len(chunks)-1].mapped {
			t.Fatalf("%d chunks: want several cut from the mapped bytes", len(chunks))
		}
		if err := os.Truncate(path, int64(cutAt)); err != nil {
			t.Fatal(err)
		}
		for _, ch := range chunks {
			if err := c.Merge(DecodeChunk(ch)); err != nil {
				return err
			}
		}
		_, err = c.Object()
		return err
	}
	for _, split := range []bool{false, true} {
		err := decode(split)
		if !errors.Is(err, storage.ErrFaulted) || err.Error() != want {
			t.Errorf("split %v: error %v, want %s", split, err, want)
		}
		if strings.Contains(fmt.Sprint(err), "of a chunk") {
			t.Errorf("split %v: error %v: not located in the object", split, err)
		}
	}
}
