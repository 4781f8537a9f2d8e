package storage

import (
	"context"
	"errors"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
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
	// Local is set for plain paths and file:// URLs.
	Local bool
}

// ParseLocation splits a blob URL or a local path into a bucket URL and a key
// prefix. Local directories are opened with metadata=skip, so no .attrs
// sidecar files are written; create asks for the directory to be made.
func ParseLocation(s string, create bool) (Location, error) {
	if s == "" {
		return Location{}, Usagef("empty location")
	}
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" || len(u.Scheme) == 1 { // "C:" style or no scheme: a path
		return localLocation(s, s, nil, create)
	}
	if u.Scheme == "file" {
		return localLocation(s, u.Path, u.Query(), create)
	}
	if u.Host == "" && u.Scheme != "mem" {
		return Location{}, Usagef("%s: no bucket name in the URL", Redact(s))
	}
	q := u.Query()
	q.Del("prefix")
	b := url.URL{Scheme: u.Scheme, Host: u.Host, RawQuery: q.Encode()}
	p := strings.TrimPrefix(u.Path, "/")
	loc := Location{Raw: s, BucketURL: b.String(), Path: strings.TrimSuffix(p, "/")}
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
		return key
	}
	u.RawQuery = ""
	return strings.TrimSuffix(u.String(), "/") + "/" + key
}

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
// *StorageError naming the location, with secrets redacted.
func OpenBucket(ctx context.Context, op Opener, l Location) (*blob.Bucket, func() error, error) {
	if op == nil {
		op = DefaultOpener
	}
	b, closeFn, err := op(ctx, l.BucketURL)
	if err != nil {
		if msg := err.Error(); strings.Contains(msg, "no driver registered") || strings.Contains(msg, "invalid") ||
			strings.Contains(msg, "unsupported") || strings.Contains(msg, "unknown query parameter") {
			return nil, nil, Usagef("%s: %v", l, RedactErr(err))
		}
		return nil, nil, &StorageError{Op: "open", URL: l.String(), Err: RedactErr(err)}
	}
	return b, closeFn, nil
}

var secretParams = []string{"key", "secret", "token", "sig", "password", "credential", "sas", "signature", "auth"}

// secretInText finds name=value pairs whose name looks like a secret, and
// user:password@ in URLs, anywhere in a message (drivers repeat URLs inside
// longer errors).
var (
	secretInText   = regexp.MustCompile(`(?i)([?&;\s"'(]?[a-z0-9_.-]*(?:key|secret|token|sig|password|credential|sas|signature|auth)[a-z0-9_.-]*=)([^&\s"')]+)`)
	userinfoInText = regexp.MustCompile(`(://)[^/@\s"']+@`)
)

// Redact removes the values of URL query parameters that may hold secrets
// (access keys, SAS signatures, tokens) and user:password parts, from a URL
// or from any message that quotes one.
func Redact(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" || strings.ContainsAny(s, " \t\n") {
		return redactText(s)
	}
	if u.RawQuery == "" && u.User == nil {
		return s
	}
	q := u.Query()
	keys := make([]string, 0, len(q))
	for k := range q {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	changed := false
	for _, k := range keys {
		lk := strings.ToLower(k)
		for _, sp := range secretParams {
			if strings.Contains(lk, sp) {
				q.Set(k, "REDACTED")
				changed = true
				break
			}
		}
	}
	if u.User != nil {
		u.User = url.User("REDACTED")
		changed = true
	}
	if !changed {
		return s
	}
	u.RawQuery = q.Encode()
	return u.String()
}

func redactText(s string) string {
	s = secretInText.ReplaceAllString(s, "${1}REDACTED")
	return userinfoInText.ReplaceAllString(s, "${1}REDACTED@")
}

type redacted struct{ err error }

func (r redacted) Error() string { return Redact(r.err.Error()) }
func (r redacted) Unwrap() error { return r.err }

// RedactErr wraps err so that its message is Redact'ed; errors.Is and
// errors.As still see the cause. Wrapping twice is wrapping once.
func RedactErr(err error) error {
	if err == nil {
		return nil
	}
	var r redacted
	if errors.As(err, &r) {
		return err
	}
	return redacted{err}
}
