package skyfallscore

import (
	"fmt"
	"io"

	"github.com/crlbatch/crlbatch/readers"
	"github.com/crlbatch/crlbatch/scoring"
)

// CodecKey is the protocol, the readers' codec version and every option
// the decoder reads with (Options as Go syntax, its function and pool
// aside: a field added to readers.Options enters the key by itself).
func (d *decoder) CodecKey() string {
	o := d.opts
	o.OnBadRow, o.Traces = nil, nil
	return fmt.Sprintf("%s codec=%d %#v", Name, readers.CodecVersion, o)
}

func (d *decoder) AppendEncoding(buf []byte, o scoring.Object) ([]byte, error) {
	obj, ok := o.(object)
	if !ok {
		return buf, fmt.Errorf("skyfall: cannot encode a %T", o)
	}
	return obj.ObjectRuns.AppendEncoding(buf)
}

// Encoding is AppendEncoding's bytes as a stream of a length known first
// (readers.Encoding): the length and a function writing them.
func (d *decoder) Encoding(o scoring.Object) (int64, func(io.Writer) error, error) {
	obj, ok := o.(object)
	if !ok {
		return 0, nil, fmt.Errorf("skyfall: cannot encode a %T", o)
	}
	en, err := obj.ObjectRuns.Encoding()
	if err != nil {
		return 0, nil, err
	}
	return en.Len(), func(w io.Writer) error { _, err := en.WriteTo(w); return err }, nil
}

func (d *decoder) DecodeEncoding(url, key string, data []byte) (scoring.Object, error) {
	o, err := readers.DecodeEncodedObject(url, key, data, d.opts)
	if err != nil {
		return nil, err
	}
	return object{o}, nil
}

var _ scoring.Codec = (*decoder)(nil)
