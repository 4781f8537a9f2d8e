package storage

import (
	"context"
	"errors"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"

	"gocloud.dev/blob"
)

// Location is an INPUT or OUTPUT: a bucket and a key prefix within it.
type Location struct {
	// Raw is the location as the user gave it.
	Raw string
	// BucketURL opens the bucket (gocloud.dev URL without the key prefix).
	BucketURL string
	// Prefix is the key prefix, "" or ending in "/" (directory meaning).
	Prefix string
	// Path is the key part as given (without a trailing "/"): a candidate
	// single object when the input names one.
	Path string
	// Folder is set for a bucket location given with a trailing "/": it
	// names a folder, never the object of its Path (a store may hold both
	// od/x.jsonl and od/x.jsonl/inner.jsonl).
	Folder bool
	// Local is set for plain paths and file:// URLs.
	Local bool
	// read is set for a location parsed to be read (create false): a
	// local one is then opened with this package's read-only driver.
	read bool
}

// ParseLocation splits a blob URL or a local path into a bucket URL and a key
// prefix. Local directories are opened with metadata=skip, so no .attrs
// sidecar files are written; create asks for the directory to be made.
func ParseLocation(s string, create bool) (Location, error) {
	if s == "" {
		return Location{}, Usagef("empty location")
	}
	rememberSecrets(s)
	loc, err := parseLocation(s, create)
	loc.read = !create
	return loc, err
}

func parseLocation(s string, create bool) (Location, error) {
	// A URL has a scheme followed by "://" (every gocloud.dev URL does):
	// anything else, night:1 or C:\runs, is a path.
	if !urlStart.MatchString(s) {
		return localLocation(s, s, nil, create)
	}
	u, err := url.Parse(s)
	if err != nil {
		return Location{}, Usagef("%s: not a valid URL: %v", Redact(s), RedactErr(err))
	}
	if u.Scheme == "file" {
		return localLocation(s, u.Path, u.Query(), create)
	}
	if u.Host == "" && u.Scheme != "mem" {
		return Location{}, Usagef("%s: no bucket name in the URL", Redact(s))
	}
	q := u.Query()
	if ep := q.Get("endpoint"); ep != "" && u.Scheme == "s3" {
		// The SDK parses it only at the first request, and retries what
		// it cannot parse: say so now.
		e, err := url.Parse(ep)
		if err != nil || (e.Scheme != "http" && e.Scheme != "https") || e.Host == "" {
			return Location{}, Usagef("%s: endpoint is not an http:// or https:// URL (is it percent-encoded twice?)", Redact(s))
		}
	}
	q.Del("prefix")
	b := url.URL{Scheme: u.Scheme, Host: u.Host, RawQuery: q.Encode()}
	p := strings.TrimPrefix(u.Path, "/")
	loc := Location{Raw: s, BucketURL: b.String(), Path: strings.TrimSuffix(p, "/"), Folder: strings.HasSuffix(p, "/")}
	if loc.Path != "" {
		loc.Prefix = loc.Path + "/"
	}
	return loc, nil
}

func localLocation(raw, p string, q url.Values, create bool) (Location, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return Location{}, Usagef("%s: %v", raw, err)
	}
	if q == nil {
		q = url.Values{}
	}
	q.Set("metadata", "skip")
	if create {
		q.Set("create_dir", "true")
	}
	// An OUTPUT folder given as a symbolic link is opened as the folder it
	// names: fileblob's listing does not follow a link at its root, so a
	// nightly OUTPUT behind one listed no results and LATEST never moved.
	// (An INPUT is read by local.go's driver, which follows links.)
	if fi, err := os.Lstat(abs); err == nil && create && fi.Mode()&os.ModeSymlink != 0 {
		if target, err := filepath.EvalSymlinks(abs); err == nil {
			if fi, err := os.Stat(target); err == nil && fi.IsDir() {
				abs = target
			}
		}
	}
	dir := abs
	loc := Location{Raw: raw, Local: true}
	fi, err := os.Stat(abs)
	switch {
	case err == nil && !fi.IsDir():
		dir = filepath.Dir(abs)
		loc.Path = filepath.Base(abs)
	case err != nil && !create:
		return Location{}, Usagef("%s: no such file or folder", raw)
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(dir), RawQuery: q.Encode()}
	loc.BucketURL = u.String()
	return loc, nil
}

// ObjectURL names a key of the location's bucket for messages.
func (l Location) ObjectURL(key string) string {
	if l.Local {
		u, err := url.Parse(l.BucketURL)
		if err == nil {
			return filepath.FromSlash(path.Join(u.Path, key))
		}
	}
	u, err := url.Parse(l.BucketURL)
	if err != nil {
		return Redact(key)
	}
	u.RawQuery, u.User = "", nil
	return Redact(strings.TrimSuffix(u.String(), "/") + "/" + key)
}

// localDir is the folder of a local location.
func (l Location) localDir() string {
	u, err := url.Parse(l.BucketURL)
	if err != nil {
		return ""
	}
	return filepath.FromSlash(u.Path)
}

// LocalDir is the folder of a local location; false for a blob store's.
func (l Location) LocalDir() (string, bool) {
	if !l.Local {
		return "", false
	}
	dir := l.localDir()
	return dir, dir != ""
}

// InMemory reports whether the location is a mem:// bucket.
func (l Location) InMemory() bool { return strings.HasPrefix(l.BucketURL, "mem:") }

// Remote says whether l is on a store reached over the network (S3, GCS,
// Azure Blob): neither a local folder nor mem://. There each request is a
// round trip.
func (l Location) Remote() bool { return !l.Local && !l.InMemory() }

// String is the location for messages, with secrets redacted.
func (l Location) String() string { return Redact(l.Raw) }

// Opener opens a bucket URL; the returned function releases it. Tests hand in
// an opener that shares one in-memory bucket between input and output.
type Opener func(ctx context.Context, bucketURL string) (*blob.Bucket, func() error, error)

// DefaultOpener opens buckets with gocloud.dev's default URL mux.
func DefaultOpener(ctx context.Context, bucketURL string) (*blob.Bucket, func() error, error) {
	b, err := blob.OpenBucket(ctx, bucketURL)
	if err != nil {
		return nil, nil, err
	}
	return b, b.Close, nil
}

// OpenBucket opens the bucket of l through op (nil means DefaultOpener) and
// returns it with the function that releases it. A URL no driver or option
// of gocloud.dev accepts is a *UsageError; any other failure a
// *StorageError naming the location, with secrets redacted. A local
// folder opened for writing gets its temporary files in the folder of the
// file they become (fileblob's no_tmp_dir), never in $TMPDIR.
func OpenBucket(ctx context.Context, op Opener, l Location) (*blob.Bucket, func() error, error) {
	if l.Local && l.read {
		u, err := url.Parse(l.BucketURL)
		if err != nil {
			return nil, nil, Usagef("%s: %v", l, RedactErr(err))
		}
		for k := range u.Query() {
			switch k {
			case "metadata", "create_dir", "dir_file_mode", "no_tmp_dir", "base_url", "secret_key_path":
			default:
				return nil, nil, Usagef("%s: unknown query parameter %q", l, k)
			}
		}
		b := openLocalInput(l.localDir())
		return b, b.Close, nil
	}
	if op == nil {
		op = DefaultOpener
	}
	// The topmost folder that opening a local OUTPUT makes (create_dir):
	// it goes again on release if nothing was written under it, so that
	// a job that fails, or writes nothing, leaves no folder behind.
	made := ""
	if l.Local {
		// Temporary files beside their final names, not in $TMPDIR: a
		// rename from there to another file system fails ("invalid
		// cross-device link"), and a killed process would leave them there.
		if u, err := url.Parse(l.BucketURL); err == nil {
			q := u.Query()
			q.Set("no_tmp_dir", "true")
			u.RawQuery = q.Encode()
			l.BucketURL = u.String()
		}
		for d := filepath.Clean(l.localDir()); d != filepath.Dir(d); d = filepath.Dir(d) {
			if _, err := os.Lstat(d); !errors.Is(err, os.ErrNotExist) {
				break
			}
			made = d
		}
	}
	b, closeFn, err := op(ctx, l.BucketURL)
	if err == nil && made != "" {
		inner, dir := closeFn, filepath.Clean(l.localDir())
		closeFn = func() error {
			err := inner()
			for d := dir; len(d) >= len(made); d = filepath.Dir(d) {
				// Fails, as it should, when not empty.
				if err := os.Remove(d); err != nil && !errors.Is(err, os.ErrNotExist) {
					break
				}
			}
			return err
		}
	}
	if err != nil {
		if msg := err.Error(); strings.Contains(msg, "no driver registered") || strings.Contains(msg, "invalid") ||
			strings.Contains(msg, "unsupported") || strings.Contains(msg, "unknown query parameter") {
			return nil, nil, Usagef("%s: %v", l, RedactErr(err))
		}
		return nil, nil, &StorageError{Op: "open", URL: l.String(), Err: RedactErr(err)}
	}
	return b, closeFn, nil
}
