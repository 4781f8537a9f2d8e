package storage

import (
	"context"
	"errors"
	"os"
	"testing"

	"gocloud.dev/blob"
	"gocloud.dev/blob/fileblob"
	"gocloud.dev/blob/memblob"
)

// TestWriteObject: what write writes is committed whole at Close; a write
// that fails after some bytes commits nothing and returns its error, on
// memblob and on fileblob (which writes a temporary file and renames it).
func TestWriteObject(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	fb, err := fileblob.OpenBucket(dir, &fileblob.Options{NoTempDir: true, Metadata: fileblob.MetadataDontWrite})
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string]*blob.Bucket{"mem": memblob.OpenBucket(nil), "file": fb} {
		t.Run(name, func(t *testing.T) {
			defer b.Close()
			err := WriteObject(ctx, b, "ok", nil, func(w *blob.Writer) error {
				for _, p := range []string{"one ", "two"} {
					if _, err := w.Write([]byte(p)); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if got, err := b.ReadAll(ctx, "ok"); err != nil || string(got) != "one two" {
				t.Fatalf("ok = %q, %v; want \"one two\"", got, err)
			}

			boom := errors.New("boom")
			err = WriteObject(ctx, b, "failed", nil, func(w *blob.Writer) error {
				if _, err := w.Write(make([]byte, 1<<20)); err != nil {
					return err
				}
				return boom
			})
			if !errors.Is(err, boom) {
				t.Fatalf("failed write: err = %v, want %v", err, boom)
			}
			if ok, err := b.Exists(ctx, "failed"); err != nil || ok {
				t.Fatalf("a failed write committed its object (exists %v, %v)", ok, err)
			}
			// Nothing else is left under the bucket: no temporary file.
			it := b.List(nil)
			var keys []string
			for {
				o, err := it.Next(ctx)
				if err != nil {
					break
				}
				keys = append(keys, o.Key)
			}
			if len(keys) != 1 || keys[0] != "ok" {
				t.Fatalf("bucket holds %q, want only \"ok\"", keys)
			}
			if name == "file" {
				ents, err := os.ReadDir(dir)
				if err != nil || len(ents) != 1 || ents[0].Name() != "ok" {
					t.Fatalf("folder holds %v (%v), want only ok", ents, err)
				}
			}

			// A writer that cannot be made: its error, nothing committed.
			err = WriteObject(ctx, b, "bad", &blob.WriterOptions{ContentMD5: []byte{1}}, func(w *blob.Writer) error {
				_, err := w.Write([]byte("x"))
				return err
			})
			if err == nil {
				t.Fatal("a write whose ContentMD5 does not match succeeded")
			}
			if ok, _ := b.Exists(ctx, "bad"); ok {
				t.Fatal("a write refused at Close committed its object")
			}
		})
	}
}
