package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"
	"golang.org/x/sync/errgroup"

	"github.com/crlbatch/crlbatch/storage"
)

// checkWritten makes sure every file of the result is still there, with
// the size written, just before the manifest names them: publishAtOnce
// files at once (on an object store each is a round trip), each into its
// own slot; the first file in the result's order that is not as written
// is the one reported.
func (j *job) checkWritten(ctx context.Context, b *blob.Bucket, target string, files []outFile) error {
	errs := make([]error, len(files))
	var g errgroup.Group
	g.SetLimit(publishAtOnce)
	for i, f := range files {
		g.Go(guarded(func() error {
			key := target + f.name
			a, err := j.attributes(ctx, b, key)
			if err == nil && a.Size != f.size {
				err = fmt.Errorf("%d bytes, %d written", a.Size, f.size)
			}
			if err != nil && ctx.Err() == nil {
				errs[i] = &StorageError{Op: "write", URL: j.out.ObjectURL(key), Err: fmt.Errorf(
					"the file changed or went before the manifest was written (another job publishing into %s at once?): %w", j.out, redactErr(err))}
			}
			return nil
		}))
	}
	if err := g.Wait(); err != nil {
		return err // a panic's (the checks return nil)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// testHookBeforeManifest, when set, is called with the result's prefix
// just before its files are checked and its manifest written (tests).
var testHookBeforeManifest func(target string)

// testHookAfterScan, when set, is called by a nightly job's tidy between
// its listing of OUTPUT and its reading of the attempt claims listed.
var testHookAfterScan func()

// put writes one object with retries; a failed attempt is aborted by
// cancelling its writer's context, so no half-written object remains. A
// local file (fileblob) is written under a temporary name in its
// destination folder (no_tmp_dir: storage.OpenBucket), fsynced before the
// driver renames it, and its folder fsynced after.
func (j *job) put(ctx context.Context, b *blob.Bucket, key string, data []byte) error {
	f := outFile{data: data}
	return j.putWith(ctx, b, key, f.writeTo)
}

// putWith is put of the bytes write writes, called once per attempt (it
// must write the same bytes each time).
func (j *job) putWith(ctx context.Context, b *blob.Bucket, key string, write func(io.Writer) error) error {
	return j.putSynced(ctx, b, key, write, true)
}

// putSynced is putWith; with syncFolder false a local file's folder is
// not fsynced after the rename: the caller does it once for several
// files (syncTree) before anything names them.
func (j *job) putSynced(ctx context.Context, b *blob.Bucket, key string, write func(io.Writer) error, syncFolder bool) error {
	wctx := ctx
	if g := j.uploadGrace(); g > 0 {
		var stop context.CancelFunc
		wctx, stop = outlive(ctx, g)
		defer stop()
	}
	jobCtx := ctx
	err := j.cfg.Retry.retry(wctx, func(ctx context.Context, touch func()) error {
		// The grace is for an upload under way: none starts, and none is
		// retried, once the job is cancelled.
		if err := jobCtx.Err(); err != nil {
			return storage.Permanent(err)
		}
		var file *os.File
		opts := &blob.WriterOptions{ContentType: contentType(key),
			BeforeWrite: func(as func(any) bool) error {
				var f *os.File
				if as(&f) {
					file = f
				}
				return nil
			}}
		err := storage.WriteObject(ctx, b, key, opts, func(w *blob.Writer) error {
			if testHookPut != nil {
				if err := testHookPut(ctx, key, false); err != nil {
					return err
				}
			}
			if err := write(&progressWriter{ctx: ctx, w: w, touch: touch}); err != nil {
				return err
			}
			if file != nil {
				// Write flushes nothing fileblob buffers: the bytes are
				// in the file, and go to disk now, before the rename.
				return syncFile(file)
			}
			return nil
		})
		if err != nil {
			return err
		}
		if dir, ok := j.localPath(key); ok && syncFolder {
			if err := syncDir(filepath.Dir(dir)); err != nil {
				return err
			}
		}
		if testHookPut != nil {
			return testHookPut(ctx, key, true)
		}
		return nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return &StorageError{Op: "write", URL: j.out.ObjectURL(key), Err: redactErr(err)}
	}
	return nil
}

// uploadGraceTime is how long an upload to an object store that is under
// way when the job is cancelled (a signal, or another file's failure) may
// go on. Cut short, the job cannot know whether the store will commit it:
// a server that has the whole body may commit it after the client gave
// up, and after the job's clean-up looked for it and found nothing
// (TestS3Interrupt once found a result file left so). Allowed to finish,
// its answer says whether it was written, and clean-up deletes what was.
// A store that does not answer within it is cut (Exists is then all
// clean-up can go by), so a signal still ends the job within seconds.
var uploadGraceTime = 2 * time.Second

// uploadGrace is uploadGraceTime for an object store, and 0 for a local
// folder or an in-memory bucket, where a cancelled write is never
// committed afterwards (fileblob removes its temporary file).
func (j *job) uploadGrace() time.Duration {
	if j.out.Local || strings.HasPrefix(j.out.BucketURL, "mem://") {
		return 0
	}
	return uploadGraceTime
}

// outlive returns a context with ctx's values that is cancelled grace
// after ctx is (with ctx's cause), or when stop is called.
func outlive(ctx context.Context, grace time.Duration) (_ context.Context, stop context.CancelFunc) {
	octx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	go func() {
		select {
		case <-ctx.Done():
		case <-octx.Done():
			return
		}
		t := time.NewTimer(grace)
		defer t.Stop()
		select {
		case <-t.C:
			cancel(context.Cause(ctx))
		case <-octx.Done():
		}
	}()
	return octx, func() { cancel(context.Canceled) }
}

// testHookPut, when set, is called by each attempt of a put with its
// key: before anything is written (committed false; an error aborts the
// writer) and once the store committed the object (committed true; an
// error is a failure after the commit). Tests.
var testHookPut func(ctx context.Context, key string, committed bool) error

// syncFile and syncDir make a file's bytes and a folder's entries durable;
// tests replace them to watch the order.
var (
	syncFile = func(f *os.File) error { return f.Sync() }
	syncDir  = func(dir string) error {
		d, err := os.Open(dir)
		if err != nil {
			return err
		}
		err = d.Sync()
		if cerr := d.Close(); err == nil {
			err = cerr
		}
		// Some file systems cannot sync a folder; they are no worse off.
		if errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOTSUP) {
			return nil
		}
		return err
	}
)

// localPath is the file of key under a local OUTPUT.
func (j *job) localPath(key string) (string, bool) {
	dir, ok := j.out.LocalDir()
	if !ok {
		return "", false
	}
	return filepath.Join(dir, filepath.FromSlash(key)), true
}

// syncTree fsyncs, under a local OUTPUT, the folder of prefix and every
// folder above it up to OUTPUT's parent: the driver may have created any
// of them (results/<id>/, OUTPUT itself), and a new folder's entry is
// durable only once its parent is synced.
func (j *job) syncTree(prefix string) error {
	dir, ok := j.localPath(prefix)
	if !ok {
		return nil
	}
	root, _ := j.localPath("")
	stop := filepath.Dir(filepath.Clean(root))
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if err := syncDir(d); err != nil {
			return &StorageError{Op: "write", URL: d, Err: err}
		}
		if d == stop || d == filepath.Dir(d) {
			return nil
		}
	}
}

// delete removes one object with retries; one already gone is no error.
func (j *job) delete(ctx context.Context, b *blob.Bucket, key string) error {
	err := j.cfg.Retry.retry(ctx, func(ctx context.Context, _ func()) error {
		err := b.Delete(ctx, key)
		if gcerrors.Code(err) == gcerrors.NotFound {
			return nil
		}
		return err
	})
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return &StorageError{Op: "delete", URL: j.out.ObjectURL(key), Err: redactErr(err)}
	}
	return nil
}

func contentType(key string) string {
	switch {
	case strings.HasSuffix(key, ".parquet"):
		return "application/vnd.apache.parquet"
	case strings.HasSuffix(key, ".md"):
		return "text/markdown; charset=utf-8"
	case strings.HasSuffix(key, ".json"):
		return "application/json"
	}
	return "text/plain; charset=utf-8"
}

// removeEmptyUp removes, under a local OUTPUT, the folder of key and the
// folders above it that this leaves empty, up to OUTPUT (fileblob deletes
// files, never folders).
func (j *job) removeEmptyUp(key string) {
	p, ok := j.localPath(key)
	if !ok {
		return
	}
	root, _ := j.localPath("")
	root = filepath.Clean(root)
	for d := filepath.Dir(p); len(d) > len(root) && d != filepath.Dir(d); d = filepath.Dir(d) {
		if os.Remove(d) != nil { // fails, as it should, when not empty
			return
		}
	}
}

// attributes reads the attributes of key in b, with retries.
func (j *job) attributes(ctx context.Context, b *blob.Bucket, key string) (*blob.Attributes, error) {
	var a *blob.Attributes
	err := j.cfg.Retry.retry(ctx, func(ctx context.Context, _ func()) error {
		var err error
		a, err = b.Attributes(ctx, key)
		return err
	})
	return a, err
}

// exists reports whether key exists under OUTPUT, with retries.
func (j *job) exists(ctx context.Context, b *blob.Bucket, key string) (bool, error) {
	var exists bool
	err := j.cfg.Retry.retry(ctx, func(ctx context.Context, _ func()) error {
		var err error
		exists, err = b.Exists(ctx, key)
		return err
	})
	if err != nil {
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		return false, &StorageError{Op: "read", URL: j.out.ObjectURL(key), Err: redactErr(err)}
	}
	return exists, nil
}

// progressWriter is an attempt's writer: each write that goes through
// counts as progress (touch), and none starts once ctx is done, so that a
// file written as it is built (report.html) stops at a signal.
type progressWriter struct {
	ctx   context.Context
	w     io.Writer
	touch func()
}

func (p *progressWriter) Write(b []byte) (int, error) {
	if err := p.ctx.Err(); err != nil {
		return 0, err
	}
	n, err := p.w.Write(b)
	p.touch()
	return n, err
}
