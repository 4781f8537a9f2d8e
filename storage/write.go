package storage

import (
	"context"

	"gocloud.dev/blob"
)

// WriteObject writes one object under key with opts: write fills it through
// the writer, and Close commits it. When write fails, the writer's context
// is cancelled before Close, so that Close commits nothing (gocloud.dev's
// way to abort a write: no partial object is ever published), and write's
// error is returned; otherwise the error of NewWriter or of Close is.
// Errors are returned as the store gave them, not redacted: the caller
// names the object and redacts.
func WriteObject(ctx context.Context, b *blob.Bucket, key string, opts *blob.WriterOptions, write func(w *blob.Writer) error) error {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w, err := b.NewWriter(wctx, key, opts)
	if err != nil {
		return err
	}
	if err := write(w); err != nil {
		cancel()
		_ = w.Close() // aborted: nothing is committed
		return err
	}
	return w.Close()
}
