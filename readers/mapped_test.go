package readers

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
)

// mappedBytes is a MappedReader over data, as a mapped local object is to
// the readers: Mapped gives data until anything is read or consumed, and
// reads go on where the consumed bytes end. It records what Consumed was
// told, and fails it once told of failAt bytes or more (failAt > 0).
type mappedBytes struct {
	data   []byte
	off    int   // bytes read or consumed
	told   []int // Consumed's arguments
	failAt int
	bad    string // what was wrong with the calls
}

var errConsumed = errors.New("consumed: the job was cancelled")

func (m *mappedBytes) Mapped() []byte {
	if m.off != 0 {
		return nil
	}
	return m.data
}

func (m *mappedBytes) Consumed(n int) error {
	if n < m.off || n > len(m.data) {
		m.bad = "Consumed out of order"
	}
	m.told = append(m.told, n)
	m.off = n
	if m.failAt > 0 && n >= m.failAt {
		return errConsumed
	}
	return nil
}

func (m *mappedBytes) Read(p []byte) (int, error) {
	if m.off >= len(m.data) {
		return 0, io.EOF
	}
	k := copy(p, m.data[m.off:])
	m.off += k
	return k, nil
}

func (m *mappedBytes) Guard(fn func()) error { fn(); return nil }

func (m *mappedBytes) Ahead(off, n int) {
	if off < m.off || n <= 0 {
		m.bad = "Ahead of bytes consumed already"
	}
}

// check requires the calls to have been in order, and, when the object
// decoded whole, every byte consumed or read.
func (m *mappedBytes) check(t *testing.T, whole bool) {
	t.Helper()
	if m.bad != "" {
		t.Fatal(m.bad)
	}
	if whole && m.off != len(m.data) {
		t.Fatalf("%d of %d bytes consumed or read", m.off, len(m.data))
	}
}

// A plain object decoded from its mapped bytes is told consumed a step at a
// time, in order, to its end, and in chunks chunk by chunk, the chunks cut
// from the mapped bytes uncopied; an error of Consumed stops it (wrapped, at
// the line it stopped before, not a DataError); an object over
// MaxObjectBytes, or compressed, is read instead, with the reader's error;
// records decode the same from mapped bytes as read.
func TestMapped(t *testing.T) {
	data := benchRows(1)
	for len(data) < 3*mappedStep+mappedStep/2 {
		data = append(data, data...)
	}
	opts := Options{Components: []string{"progress"}}
	want, err := DecodeObject(testURL, "x.jsonl", bytes.NewReader(data), opts)
	if err != nil {
		t.Fatal(err)
	}
	mb := &mappedBytes{data: data}
	got, err := DecodeObject(testURL, "x.jsonl", mb, opts)
	if err != nil {
		t.Fatal(err)
	}
	sameObject(t, got, want)
	mb.check(t, true)
	if len(mb.told) != 4 || mb.told[3] != len(data) {
		t.Fatalf("told %v: want 3 steps of %d bytes or more and the end (%d)", mb.told, mappedStep, len(data))
	}
	for i, n := range mb.told[:3] {
		if n < (i+1)*mappedStep || n > (i+1)*mappedStep+len(data)/1000 || data[n-1] != '\n' {
			t.Fatalf("told %v: step %d not just past %d bytes at a line end", mb.told, i, (i+1)*mappedStep)
		}
	}

	// In chunks: all but the first (its byte-order mark is checked line
	// by line) cut from the mapped bytes, uncopied; told consumed chunk
	// by chunk as they are merged, in order.
	mb = &mappedBytes{data: data}
	c, err := SplitObject(testURL, "x.jsonl", mb, opts)
	if err != nil {
		t.Fatal(err)
	}
	chunks, cut := 0, 0
	for {
		ch, err := c.Next(DefaultChunkBytes / 4)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		chunks++
		if ch.mapped {
			cut++
			if p := &ch.data[0]; p != &data[ch.end-len(ch.data)] || cap(ch.data) != len(ch.data) {
				t.Fatalf("chunk %d: not the mapped bytes before %d, capped", chunks, ch.end)
			}
		}
		if err := c.Merge(DecodeChunk(ch)); err != nil {
			t.Fatal(err)
		}
		if mb.told[len(mb.told)-1] != ch.end {
			t.Fatalf("chunk %d merged: told %v, want its end %d last", chunks, mb.told, ch.end)
		}
	}
	got, err = c.Object()
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	sameObject(t, got, want)
	mb.check(t, true)
	if chunks < len(data)/(DefaultChunkBytes/4) || cut != chunks-1 || len(mb.told) != chunks {
		t.Fatalf("%d chunks, %d cut from the mapped bytes, told %d times: want %d or more, all but the first cut, each told", chunks, cut, len(mb.told), len(data)/(DefaultChunkBytes/4))
	}

	// Consumed fails: the object stops there, at the next line.
	mb = &mappedBytes{data: data, failAt: 2 * mappedStep}
	_, err = DecodeObject(testURL, "x.jsonl", mb, opts)
	var de *DataError
	if !errors.Is(err, errConsumed) || errors.As(err, &de) || !strings.Contains(err.Error(), testURL+": line ") {
		t.Fatalf("error %v: want the consumer's error, located, not a DataError", err)
	}
	if mb.off > 2*mappedStep+len(data)/1000 {
		t.Fatalf("decoded on to %d after Consumed failed at %d", mb.off, mb.told[len(mb.told)-1])
	}

	// Over MaxObjectBytes, or compressed: read as any object.
	small := Options{Components: []string{"progress"}, MaxObjectBytes: int64(len(data) - 1)}
	_, werr := DecodeObject(testURL, "x.jsonl", bytes.NewReader(data), small)
	_, err = DecodeObject(testURL, "x.jsonl", &mappedBytes{data: data}, small)
	if werr == nil || err == nil || err.Error() != werr.Error() || !errors.Is(err, ErrLimit) {
		t.Fatalf("over the object limit: error %v, want %v", err, werr)
	}
	z := zst(t, data)
	if want, err = DecodeObject(testURL, "x.jsonl", bytes.NewReader(z), opts); err != nil {
		t.Fatal(err)
	}
	mb = &mappedBytes{data: z}
	got, err = DecodeObject(testURL, "x.jsonl", mb, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(mb.told) != 0 || got.Format != Zstd {
		t.Fatalf("zstd object: told %v, format %v: want it read", mb.told, got.Format)
	}
	sameObject(t, got, want)

	// Records, on this object and the corpus.
	inputs := [][]byte{data}
	for _, o := range corpusObjects(t) {
		inputs = append(inputs, o.data)
	}
	ropts := RecordOptions{SchemaFields: []string{"reward", "regime_id"}}
	for _, in := range inputs {
		want, werr := DecodeRecords(testURL, "x.jsonl", bytes.NewReader(in), ropts)
		mb := &mappedBytes{data: in}
		got, err := DecodeRecords(testURL, "x.jsonl", mb, ropts)
		if (err == nil) != (werr == nil) || err != nil && err.Error() != werr.Error() {
			t.Fatalf("records: error %v, want %v", err, werr)
		}
		mb.check(t, err == nil)
		if err == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("records: %d runs, %d lines (%v), want %d, %d (%v)", got.NumRuns(), got.Lines, got.Format, want.NumRuns(), want.Lines, want.Format)
		}
	}
}
