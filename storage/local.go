package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/blob/driver"
	"gocloud.dev/gcerrors"
)

// A local INPUT folder is read by this file's read-only blob driver, not
// by gocloud.dev's fileblob, whose lister skips what it cannot read without
// a word, does not enter a linked folder (nor an INPUT that is a link),
// reports a linked file with the link's own size, and maps names that look
// like its escapes (a__0x41__.jsonl) to keys it cannot read back. Here:
//
//   - a key is the file's path below the folder, "/"-separated, as it is;
//   - links are followed, to files and folders alike, wherever they point;
//     sizes are the targets'; a link to a folder that holds it (a loop) and
//     a link to nothing are errors naming the link;
//   - a folder that cannot be read is an error naming it, never skipped;
//   - a FIFO, socket or device is listed as such (List refuses it when its
//     name matches a pattern) and never opened for reading: opening is
//     non-blocking, and anything but a regular file is refused.
//
// Outputs go through fileblob as before.

// errNotRegular is the cause of reading something that is not a file.
var errNotRegular = errors.New("not a regular file: only regular files are read")

// localEntry is one file (or special file) found under a local folder.
type localEntry struct {
	key  string // "/"-separated path below the folder
	size int64
	mode fs.FileMode // of the target, links followed
	mod  time.Time
}

// walkLocal lists everything under root, following links. Errors name the
// path that failed.
func walkLocal(ctx context.Context, root string) ([]localEntry, error) {
	var out []localEntry
	fi, err := os.Stat(root)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, &fs.PathError{Op: "readdir", Path: root, Err: syscall.ENOTDIR}
	}
	var walk func(dir, key string, ancestors []os.FileInfo) error
	walk = func(dir, key string, ancestors []os.FileInfo) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		ents, err := os.ReadDir(dir)
		if err != nil {
			return err
		}
		for _, e := range ents {
			name := e.Name()
			p := filepath.Join(dir, name)
			k := name
			if key != "" {
				k = key + "/" + name
			}
			mode := e.Type()
			var info os.FileInfo
			if mode&fs.ModeSymlink != 0 {
				info, err = os.Stat(p)
				if err != nil {
					target, _ := os.Readlink(p)
					if errors.Is(err, fs.ErrNotExist) {
						return fmt.Errorf("%s: a symbolic link to %s, which does not exist (%w)", p, target, fs.ErrNotExist)
					}
					if errors.Is(err, syscall.ELOOP) {
						return fmt.Errorf("%s: a symbolic link loop (%w)", p, syscall.ELOOP)
					}
					return err
				}
			} else if mode.IsDir() {
				if info, err = os.Lstat(p); err != nil {
					return err
				}
			}
			if info != nil && info.IsDir() {
				for _, a := range ancestors {
					if os.SameFile(a, info) {
						return fmt.Errorf("%s: a symbolic link loop: it leads to a folder that holds it (%w)", p, syscall.ELOOP)
					}
				}
				if err := walk(p, k, append(ancestors[:len(ancestors):len(ancestors)], info)); err != nil {
					return err
				}
				continue
			}
			if info == nil {
				if info, err = e.Info(); err != nil {
					return err
				}
			}
			out = append(out, localEntry{key: k, size: info.Size(), mode: info.Mode(), mod: info.ModTime()})
		}
		return nil
	}
	if err := walk(root, "", []os.FileInfo{fi}); err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key < out[j].key })
	return out, nil
}

// kindOf names a file mode for messages.
func kindOf(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m.IsDir():
		return "a folder"
	}
	return "not a regular file"
}

// notRegularError is the error for a special file.
type notRegularError struct{ mode fs.FileMode }

func (e *notRegularError) Error() string        { return kindOf(e.mode) + ", " + errNotRegular.Error() }
func (e *notRegularError) Is(target error) bool { return target == errNotRegular }

func notRegular(m fs.FileMode) error { return &notRegularError{m} }

// openLocalInput opens a local folder read-only with this file's driver.
func openLocalInput(dir string) *blob.Bucket {
	return blob.NewBucket(&localBucket{dir: dir})
}

type localBucket struct{ dir string }

// path maps a key to its file, refusing keys that leave the folder.
func (b *localBucket) path(key string) (string, error) {
	if key == "" || path.IsAbs(key) || path.Clean(key) != key || key == ".." || strings.HasPrefix(key, "../") {
		return "", &fs.PathError{Op: "open", Path: key, Err: fs.ErrInvalid}
	}
	return filepath.Join(b.dir, filepath.FromSlash(key)), nil
}

func (b *localBucket) ErrorCode(err error) gcerrors.ErrorCode {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return gcerrors.NotFound
	case errors.Is(err, fs.ErrPermission):
		return gcerrors.PermissionDenied
	case errors.Is(err, errNotRegular), errors.Is(err, syscall.ELOOP), errors.Is(err, syscall.ENOTDIR):
		return gcerrors.FailedPrecondition
	case errors.Is(err, fs.ErrInvalid):
		return gcerrors.InvalidArgument
	case errors.Is(err, errReadOnly):
		return gcerrors.Unimplemented
	}
	return gcerrors.Unknown
}

func (b *localBucket) As(any) bool             { return false }
func (b *localBucket) ErrorAs(error, any) bool { return false }

func (b *localBucket) Attributes(_ context.Context, key string) (*driver.Attributes, error) {
	p, err := b.path(key)
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		if fi.IsDir() {
			return nil, &fs.PathError{Op: "stat", Path: p, Err: fs.ErrNotExist}
		}
		return nil, notRegular(fi.Mode())
	}
	return &driver.Attributes{ContentType: "application/octet-stream", ModTime: fi.ModTime(), Size: fi.Size(),
		ETag: localETag(fi.ModTime(), fi.Size())}, nil
}

// ListPaged lists every file under the folder whose key has the prefix, in
// one page.
func (b *localBucket) ListPaged(ctx context.Context, opts *driver.ListOptions) (*driver.ListPage, error) {
	if len(opts.PageToken) > 0 {
		return &driver.ListPage{}, nil
	}
	ents, err := walkLocal(ctx, b.dir)
	if err != nil {
		return nil, err
	}
	page := &driver.ListPage{}
	for _, e := range ents {
		if strings.HasPrefix(e.key, opts.Prefix) {
			page.Objects = append(page.Objects, &driver.ListObject{Key: e.key, Size: e.size})
		}
	}
	return page, nil
}

func (b *localBucket) NewRangeReader(_ context.Context, key string, offset, length int64, _ *driver.ReaderOptions) (driver.Reader, error) {
	p, err := b.path(key)
	if err != nil {
		return nil, err
	}
	f, fi, err := openRegular(p)
	if err != nil {
		return nil, err
	}
	if offset > 0 {
		if _, err := f.Seek(offset, io.SeekStart); err != nil {
			f.Close()
			return nil, err
		}
	}
	var r io.Reader = f
	if length >= 0 {
		r = io.LimitReader(f, length)
	}
	lr := &localReader{r: r, f: f, attrs: driver.ReaderAttributes{ContentType: "application/octet-stream", ModTime: fi.ModTime(), Size: fi.Size()}}
	if mapsFiles && offset == 0 && length < 0 && fi.Size() >= MapMinBytes {
		lr.m = &Mapped{f: f, size: fi.Size()}
	}
	return lr, nil
}

// openRegular opens p for reading without blocking (a FIFO with no writer
// would block open(2) forever) and refuses anything but a regular file.
func openRegular(p string) (*os.File, os.FileInfo, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|nonBlocking, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, notRegular(fi.Mode())
	}
	return f, fi, nil
}

type localReader struct {
	r     io.Reader
	f     *os.File
	m     *Mapped // the object's bytes in place, when it is read whole from its start and large enough
	attrs driver.ReaderAttributes
}

func (r *localReader) Read(p []byte) (int, error)           { return r.r.Read(p) }
func (r *localReader) Attributes() *driver.ReaderAttributes { return &r.attrs }

func (r *localReader) Close() error {
	if r.m != nil {
		r.m.close()
	}
	return r.f.Close()
}

// As gives the object's bytes in place (**Mapped), when they may be.
func (r *localReader) As(i any) bool {
	p, ok := i.(**Mapped)
	if !ok || r.m == nil {
		return false
	}
	*p = r.m
	return true
}

var errReadOnly = errors.New("the input folder is opened read-only")

func (b *localBucket) NewTypedWriter(context.Context, string, string, *driver.WriterOptions) (driver.Writer, error) {
	return nil, errReadOnly
}
func (b *localBucket) Copy(context.Context, string, string, *driver.CopyOptions) error {
	return errReadOnly
}
func (b *localBucket) Delete(context.Context, string, *driver.DeleteOptions) error {
	return errReadOnly
}
func (b *localBucket) SignedURL(context.Context, string, *driver.SignedURLOptions) (string, error) {
	return "", errReadOnly
}
func (b *localBucket) Close() error { return nil }

// localETag is a local file's ETag: its modification time and size.
func localETag(mod time.Time, size int64) string {
	return fmt.Sprintf("\"%x-%x\"", mod.UnixNano(), size)
}
