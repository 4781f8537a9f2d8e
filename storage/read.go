package storage

import (
	"bytes"
	"context"
	"io"

	"gocloud.dev/blob"
)

// ReadAll reads the object key of b whole, calling touch whenever bytes
// arrive: inside a RetryPolicy's attempt (touch being the attempt's), a
// large object read slowly but steadily is not abandoned for want of
// progress, as it is when the attempt is only told once the read is over.
// The buffer starts at the size the reader reports.
func ReadAll(ctx context.Context, b *blob.Bucket, key string, touch func()) ([]byte, error) {
	r, err := b.NewReader(ctx, key, nil)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	touch()
	buf := bytes.NewBuffer(make([]byte, 0, max(r.Size(), 0)+bytes.MinRead))
	if _, err := buf.ReadFrom(Touching(r, touch)); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Touching returns a reader of r that calls touch after every read that
// returns bytes.
func Touching(r io.Reader, touch func()) io.Reader { return touching{r, touch} }

type touching struct {
	r     io.Reader
	touch func()
}

func (t touching) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if n > 0 {
		t.touch()
	}
	return n, err
}
