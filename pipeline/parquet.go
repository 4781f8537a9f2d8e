package pipeline

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/crlbatch/crlbatch/readers"
	"github.com/crlbatch/crlbatch/scoring"
)

// How an object's runs were obtained, in manifest.json (ManifestObject.Read)
// and the job's summary.
const (
	ReadDecoded = "decoded" // a JSON Lines object, decoded
	ReadParquet = "parquet" // a Parquet object, read through its rows
	ReadCache   = "cache"   // served from --cache
)

// decodeAny decodes one object whatever its form: a Parquet object (its
// first bytes PAR1) is read as the JSON Lines object of the same rows
// (readers.ParquetLines, over the row fields the protocol describes), with
// bad rows and errors naming rows; anything else goes to decode. It says
// which of ReadDecoded and ReadParquet it did.
func (j *job) decodeAny(split bool, o object, url, rel string, r io.Reader, onBad readers.BadRowFunc) (scoring.Object, string, error) {
	head := make([]byte, len(readers.ParquetMagic))
	n, err := io.ReadFull(r, head)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return nil, "", err
	}
	head = head[:n]
	r = io.MultiReader(bytes.NewReader(head), r)
	if !readers.IsParquet(head) {
		obj, err := j.decode(split, o, url, rel, r, onBad)
		return obj, ReadDecoded, err
	}
	// Parquet keeps its footer at the end: the object is read whole (it is
	// compressed), then its row groups are turned into rows one at a time.
	limit := j.cfg.Reader.MaxObjectBytes
	if limit <= 0 {
		limit = readers.DefaultMaxObjectBytes
	}
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, "", err
	}
	if int64(len(data)) > limit {
		return nil, "", &readers.DataError{URL: url, Msg: fmt.Sprintf("object larger than --max-object-bytes (%d bytes)", limit), Err: readers.ErrLimit}
	}
	fields := make([]readers.ParquetField, len(j.proto.desc.Rows))
	for i, f := range j.proto.desc.Rows {
		fields[i] = readers.ParquetField{Name: f.Name, Type: f.Type, Required: f.Required}
	}
	lines, err := readers.ParquetLines(url, bytes.NewReader(data), fields)
	if err != nil {
		return nil, "", err
	}
	defer lines.Close()
	var bad readers.BadRowFunc
	if onBad != nil {
		bad = func(row *readers.DataError) error {
			row.Row = true
			return onBad(row)
		}
	}
	obj, err := j.proto.dec.Decode(url, rel, lines, bad)
	var de *readers.DataError
	if errors.As(err, &de) && de.Line > 0 {
		de.Row = true
	}
	return obj, ReadParquet, err
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
