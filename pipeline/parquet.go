package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/parquet"
	"gocloud.dev/blob"

	"github.com/crlbatch/crlbatch/readers"
	"github.com/crlbatch/crlbatch/scoring"
	"github.com/crlbatch/crlbatch/storage"
)

// How an object's runs were obtained, in manifest.json (ManifestObject.Read)
// and the job's summary.
const (
	ReadDecoded = "decoded" // a JSON Lines object, decoded
	ReadParquet = "parquet" // a Parquet object, read through its rows
	ReadCache   = "cache"   // served from --cache
	// ReadAppended: the object's earlier lines served from --cache, the
	// lines appended since decoded (appended.go).
	ReadAppended = "appended"
)

// decodeAny decodes one object whatever its form: a Parquet object (its
// first bytes PAR1) is read through the protocol's decoder's DecodeParquet
// (scoring.ParquetDecoder: its columns straight into the runs), else as the
// JSON Lines object of the same rows (readers.ParquetLines, over the row
// fields the protocol describes), with bad rows and errors naming rows;
// anything else goes to decode. It says which of ReadDecoded and
// ReadParquet it did.
//
// A Parquet object keeps its footer at its end. One of listed size at
// most parquetWholeBytes (Config.ParquetWholeBytes) is read whole from r, in order (one stream: the
// caller's size check and hash see the same bytes as they pass, and its
// read on finds the end), and decoded from memory. A larger one is read by
// ranges from b (parquetRanges, a ReaderAt over NewRangeReader: the
// footer, then each column chunk of a row group as it is needed), not held
// whole; r is then left to the caller, which reads it on for the size
// check and the object's hash.
func (j *job) decodeAny(ctx context.Context, b *blob.Bucket, split bool, o object, url, rel string, r io.Reader, onBad readers.BadRowFunc) (scoring.Object, string, error) {
	if mr, ok := r.(readers.MappedReader); ok {
		// A mapped object is told from its first bytes without reading
		// them, so that a JSONL one is decoded from its mapped bytes.
		if data := mr.Mapped(); len(data) > 0 {
			var pq bool
			if err := mr.Guard(func() { pq = readers.IsParquet(data[:min(len(data), len(readers.ParquetMagic))]) }); err != nil {
				return nil, "", err
			}
			if !pq {
				obj, err := j.decode(split, o, url, rel, r, onBad)
				return obj, ReadDecoded, err
			}
		}
	}
	head := make([]byte, len(readers.ParquetMagic))
	n, err := io.ReadFull(r, head)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return nil, "", err
	}
	head = head[:n]
	if !readers.IsParquet(head) {
		obj, err := j.decode(split, o, url, rel, io.MultiReader(bytes.NewReader(head), r), onBad)
		return obj, ReadDecoded, err
	}
	limit := j.cfg.Reader.MaxObjectBytes
	if limit <= 0 {
		limit = readers.DefaultMaxObjectBytes
	}
	var src parquet.ReaderAtSeeker
	var ranges *parquetRanges
	if o.Size > 0 && b != nil {
		if o.Size > limit {
			return nil, "", &readers.DataError{URL: url, Msg: fmt.Sprintf("object larger than --max-object-bytes (%d bytes)", limit), Err: readers.ErrLimit}
		}
		whole := j.cfg.ParquetWholeBytes
		if whole <= 0 {
			whole = parquetWholeBytes
		}
		if o.Size <= whole {
			// Small enough to hold: read whole from r, in order, so that
			// the same bytes serve the decode, the size check and the hash
			// (the caller's read on finds the end).
			data, err := readParquetWhole(head, r, o.Size)
			if data != nil {
				// Nothing decoded points into data (the readers copy
				// what they keep): the next object reuses it.
				defer readers.ReleaseParquetObjectBuffer(data)
			}
			if err != nil {
				return nil, "", err
			}
			src = bytes.NewReader(data)
		} else {
			// Within the object's read attempt (r's), as r itself is.
			ranges = &parquetRanges{ctx: ctx, b: b, key: o.Key, size: o.Size}
			if a, ok := r.(attemptReader); ok {
				if actx, touch := a.attempt(); actx != nil {
					ranges.ctx, ranges.touch = actx, touch
				}
			}
			defer ranges.release()
			src = ranges
		}
	} else {
		// No size to read ranges by: the object is read whole.
		data, err := io.ReadAll(io.LimitReader(io.MultiReader(bytes.NewReader(head), r), limit+1))
		if err != nil {
			return nil, "", err
		}
		if int64(len(data)) > limit {
			return nil, "", &readers.DataError{URL: url, Msg: fmt.Sprintf("object larger than --max-object-bytes (%d bytes)", limit), Err: readers.ErrLimit}
		}
		src = bytes.NewReader(data)
	}
	fields := make([]readers.ParquetField, len(j.proto.desc.Rows))
	for i, f := range j.proto.desc.Rows {
		fields[i] = readers.ParquetField{Name: f.Name, Type: f.Type, Required: f.Required}
	}
	folders, err := readers.HiveFolders(j.objectPath(o))
	if err != nil {
		return nil, "", &readers.DataError{URL: url, Msg: err.Error()}
	}
	fields = append(fields, folders...)
	var bad readers.BadRowFunc
	if onBad != nil {
		bad = func(row *readers.DataError) error {
			row.Row = true
			return onBad(row)
		}
	}
	// asLines reads the object the general way, its rows as JSON lines,
	// checking the columns of fields.
	asLines := func(fields []readers.ParquetField) (scoring.Object, error) {
		lines, err := readers.ParquetLines(url, src, fields)
		if err != nil {
			return nil, err
		}
		defer lines.Close()
		return j.proto.dec.Decode(url, rel, lines, bad)
	}
	var obj scoring.Object
	if pd, ok := j.proto.dec.(scoring.ParquetDecoder); ok {
		obj, err = pd.DecodeParquet(url, rel, src, fields, bad)
	} else {
		obj, err = asLines(fields)
	}
	if err != nil && j.cfg.MaxBadRows != 0 && errors.Is(err, readers.ErrParquetMisfit) {
		// A column of another type than its field's, or no column for a
		// required field: every row is a bad row of its JSON Lines twin,
		// which --max-bad-rows may skip. Read the general way with no
		// column checked (the folders' fields still given), so that each
		// row is judged, skipped and named as that twin's is.
		obj, err = asLines(folders)
	}
	if ranges != nil && ranges.err != nil {
		// The store failed (or the object changed) under a range read:
		// not the data's fault, whatever the reader made of it.
		if obj != nil {
			obj.Release()
		}
		return nil, "", ranges.err
	}
	var de *readers.DataError
	if errors.As(err, &de) && de.Line > 0 {
		de.Row = true
	}
	return obj, ReadParquet, err
}

// objectPath is the slash-separated path of object o whose folders
// readers.HiveFolders reads: its key in a blob store's bucket, its
// absolute path for a local file (as DuckDB's hive_partitioning reads the
// whole path, so that an INPUT inside a partition, algorithm_id=ppo/,
// keeps the field its folder gives).
func (j *job) objectPath(o object) string {
	if dir, ok := j.in.LocalDir(); ok {
		return path.Join(filepath.ToSlash(dir), o.Key)
	}
	return o.Key
}

// parquetWholeBytes is the largest Parquet object decodeAny reads whole
// (one read of the object's bytes in order, which the size check and the
// hash reuse) rather than by ranges, unless Config.ParquetWholeBytes says
// otherwise.
const parquetWholeBytes = 16 << 20

// readParquetWhole reads a Parquet object of size bytes, head its first
// bytes already read and r the rest, into a buffer of
// readers.ParquetObjectBuffer (returned even with an error, for the
// caller to give back). An object shorter than size changed under the job:
// a storage error, as a range read's.
func readParquetWhole(head []byte, r io.Reader, size int64) ([]byte, error) {
	data := readers.ParquetObjectBuffer(int(size))
	n := copy(data, head)
	m, err := io.ReadFull(r, data[n:])
	if err == io.ErrUnexpectedEOF || err == io.EOF {
		return data, storage.Permanent(fmt.Errorf("the object changed while the job read it: %d bytes read, listed with %d", n+m, size))
	}
	return data, err
}

// parquetRanges reads a Parquet object by ranges (io.ReaderAt, io.Seeker
// for its size, as parquet.ReaderAtSeeker asks). Each range is checked to
// come from the object as listed (its size, and its modification time
// against the first range's); the first failure is kept in err, which
// decodeAny returns instead of what the Parquet reader made of it.
//
// A read shorter than ahead (parquetRangeAhead when 0) reads ahead: the
// range from its offset to ahead bytes further (or the end) is read once
// and later reads within it are served from it, so that the column chunks
// of a row group, which lie one after the other, cost one range read, not
// one each (one open of the object, one request to a cloud store).
type parquetRanges struct {
	ctx   context.Context
	touch func() // reports the ranges' progress to the read attempt, when set
	b     *blob.Bucket
	key   string
	size  int64
	pos   int64
	mod   time.Time
	err   error
	ahead int64
	win   []byte // the bytes at winAt, read ahead
	winAt int64
	reads int // range reads made (for tests)
}

// parquetRangeAhead is how far parquetRanges reads ahead.
const parquetRangeAhead = 4 << 20

func (p *parquetRanges) ReadAt(buf []byte, off int64) (int, error) {
	if p.err != nil {
		return 0, p.err
	}
	if off >= p.size {
		return 0, io.EOF
	}
	want := int64(len(buf))
	if off+want > p.size {
		want = p.size - off
	}
	ahead := p.ahead
	if ahead <= 0 {
		ahead = parquetRangeAhead
	}
	var n int
	switch {
	case off >= p.winAt && off+want <= p.winAt+int64(len(p.win)):
		n = copy(buf[:want], p.win[off-p.winAt:])
	case want < ahead:
		end := min(p.size, off+ahead)
		if p.win == nil {
			p.win = readers.ParquetObjectBuffer(int(ahead))
		}
		p.win = p.win[:end-off]
		m, err := p.read(p.win, off)
		if err != nil {
			p.win = p.win[:0]
			p.err = err
			return 0, err
		}
		p.win, p.winAt = p.win[:m], off
		n = copy(buf[:want], p.win)
	default:
		var err error
		n, err = p.read(buf[:want], off)
		if err != nil {
			p.err = err
			return n, err
		}
	}
	if n < len(buf) {
		return n, io.EOF
	}
	return n, nil
}

// release gives back the read-ahead buffer; p reads no more.
func (p *parquetRanges) release() {
	if p.win != nil {
		readers.ReleaseParquetObjectBuffer(p.win)
		p.win = nil
	}
	p.winAt = 0
}

func (p *parquetRanges) read(buf []byte, off int64) (int, error) {
	p.reads++
	r, err := p.b.NewRangeReader(p.ctx, p.key, off, int64(len(buf)), nil)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	if s := r.Size(); s >= 0 && s != p.size {
		return 0, storage.Permanent(fmt.Errorf("the object changed while the job read it: listed with %d bytes, %d at a later read", p.size, s))
	}
	if m := r.ModTime(); !m.IsZero() {
		if p.mod.IsZero() {
			p.mod = m
		} else if !m.Equal(p.mod) {
			return 0, storage.Permanent(fmt.Errorf("the object changed while the job read it: modified at %s, then at %s", p.mod.UTC().Format(time.RFC3339Nano), m.UTC().Format(time.RFC3339Nano)))
		}
	}
	var src io.Reader = r
	if p.touch != nil {
		p.touch()
		src = storage.Touching(r, p.touch)
	}
	n, err := io.ReadFull(src, buf)
	if err == io.ErrUnexpectedEOF || err == io.EOF {
		err = storage.Permanent(fmt.Errorf("the object changed while the job read it: %d bytes at offset %d, %d read", len(buf), off, n))
	}
	return n, err
}

func (p *parquetRanges) Seek(off int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		off += p.pos
	case io.SeekEnd:
		off += p.size
	default:
		return 0, fmt.Errorf("seek: whence %d", whence)
	}
	if off < 0 {
		return 0, fmt.Errorf("seek: negative position %d", off)
	}
	p.pos = off
	return off, nil
}

// besideItsConversion refuses a listing that holds a JSON Lines object and,
// under the key `crlbatch convert` gives its Parquet form (ConvertedKey),
// a Parquet object: the two would be read as one run split over two
// objects, every row counted twice. It names the first such pair in key
// order.
func besideItsConversion(in Location, objs []object) error {
	listed := make(map[string]bool, len(objs))
	for _, o := range objs {
		listed[o.Rel] = true
	}
	for _, o := range objs {
		if strings.HasSuffix(o.Rel, ".parquet") {
			continue
		}
		if pq := ConvertedKey(o.Rel); pq != o.Rel && listed[pq] {
			return &DataError{Err: fmt.Errorf("%s and %s are both listed: the Parquet object has the name `crlbatch convert` gives the JSON Lines one's rows, and reading both would count each of their rows twice; score one form (--pattern '*.parquet', or the JSON Lines patterns) or move one away",
				Redact(in.ObjectURL(o.Key)), Redact(in.ObjectURL(o.Key[:len(o.Key)-len(o.Rel)]+pq)))}
		}
	}
	return nil
}
