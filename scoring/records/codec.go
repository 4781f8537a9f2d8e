package records

import (
	"fmt"

	"github.com/crlbatch/crlbatch/readers"
	"github.com/crlbatch/crlbatch/scoring"
)

// CodecKey is the protocol (RecordOptions.Protocol, whose row check is
// fixed), the readers' codec version and every option the decoder reads
// with (RecordOptions as Go syntax, its functions aside: a field added to
// readers.RecordOptions enters the key by itself).
func (d *Decoder) CodecKey() string {
	o := d.opts
	o.Check, o.OnBadRow = nil, nil
	return fmt.Sprintf("records codec=%d %#v", readers.CodecVersion, o)
}

// AppendEncoding appends the encoding of o (readers.ObjectRecords's).
func (d *Decoder) AppendEncoding(buf []byte, o scoring.Object) ([]byte, error) {
	ro, ok := o.(*Object)
	if !ok || ro.recs == nil {
		return buf, fmt.Errorf("records: cannot encode a %T (or a released object)", o)
	}
	return ro.recs.AppendEncoding(buf)
}

// DecodeEncoding reads back what AppendEncoding wrote.
func (d *Decoder) DecodeEncoding(url, key string, data []byte) (scoring.Object, error) {
	recs, err := readers.DecodeEncodedRecords(url, key, data)
	if err != nil {
		return nil, err
	}
	return &Object{recs: recs, rows: recs.Rows, runs: recs.NumRuns()}, nil
}

var _ scoring.Codec = (*Decoder)(nil)
