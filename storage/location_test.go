package storage

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gocloud.dev/blob"
	_ "gocloud.dev/blob/fileblob"
	_ "gocloud.dev/blob/memblob"
)

func TestParseLocation(t *testing.T) {
	for _, tc := range []struct{ in, bucket, prefix, path string }{
		{"s3://bucket/some/prefix?region=eu-west-1", "s3://bucket?region=eu-west-1", "some/prefix/", "some/prefix"},
		{"s3://bucket/some/prefix/", "s3://bucket", "some/prefix/", "some/prefix"},
		{"s3://bucket/p?prefix=x&region=r", "s3://bucket?region=r", "p/", "p"},
		{"gs://bucket", "gs://bucket", "", ""},
		{"mem://", "mem:", "", ""},
		{"mem://x/y/z", "mem://x", "y/z/", "y/z"},
	} {
		l, err := ParseLocation(tc.in, false)
		if err != nil || l.BucketURL != tc.bucket || l.Prefix != tc.prefix || l.Path != tc.path || l.Local || l.Raw != tc.in {
			t.Errorf("%q → %+v %v, want bucket %q prefix %q path %q", tc.in, l, err, tc.bucket, tc.prefix, tc.path)
		}
	}

	dir := t.TempDir()
	file := filepath.Join(dir, "run.jsonl")
	if err := os.WriteFile(file, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	slash := filepath.ToSlash(dir)
	for _, tc := range []struct {
		in             string
		create         bool
		bucket, path   string
		wantUsageError bool
	}{
		{dir, false, "file://" + slash + "?metadata=skip", "", false},
		{file, false, "file://" + slash + "?metadata=skip", "run.jsonl", false},
		{"file://" + slash + "/new", true, "file://" + slash + "/new?create_dir=true&metadata=skip", "", false},
		{"file://" + slash + "?no_tmp_dir=1", false, "file://" + slash + "?metadata=skip&no_tmp_dir=1", "", false},
		{filepath.Join(dir, "missing"), false, "", "", true},
	} {
		l, err := ParseLocation(tc.in, tc.create)
		var ue *UsageError
		if tc.wantUsageError {
			if !errors.As(err, &ue) {
				t.Errorf("%q: err %v, want a *UsageError", tc.in, err)
			}
			continue
		}
		if err != nil || !l.Local || l.BucketURL != tc.bucket || l.Path != tc.path || l.Prefix != "" {
			t.Errorf("%q → %+v %v, want bucket %q path %q", tc.in, l, err, tc.bucket, tc.path)
		}
	}
	for _, bad := range []string{"", "s3:///p"} {
		var ue *UsageError
		if _, err := ParseLocation(bad, false); !errors.As(err, &ue) {
			t.Errorf("%q: err %v, want a *UsageError", bad, err)
		}
	}
}

func TestOpenBucket(t *testing.T) {
	ctx := context.Background()
	l, err := ParseLocation("mem://", false)
	if err != nil {
		t.Fatal(err)
	}
	b, closeFn, err := OpenBucket(ctx, nil, l)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.WriteAll(ctx, "k", []byte("x"), nil); err != nil {
		t.Fatal(err)
	}
	if err := closeFn(); err != nil {
		t.Fatal(err)
	}

	l, _ = ParseLocation("nosuch://b/p?secret_key=hunter2", false)
	var ue *UsageError
	if _, _, err := OpenBucket(ctx, nil, l); !errors.As(err, &ue) || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("unknown scheme: %v, want a redacted *UsageError", err)
	}

	// Any other failure of the opener is a *StorageError naming the location.
	failing := func(context.Context, string) (*blob.Bucket, func() error, error) {
		return nil, nil, errors.New("dial tcp: connection refused token=hunter2")
	}
	l, _ = ParseLocation("s3://b/p", false)
	_, _, err = OpenBucket(ctx, failing, l)
	if !IsStorage(err) || !strings.Contains(err.Error(), "s3://b/p") || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("failing opener: %v", err)
	}
}

func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"s3://b/p?endpoint=http://127.0.0.1:1&region=us":   "s3://b/p?endpoint=http://127.0.0.1:1&region=us",
		"azblob://c/p?sas_token=abc&domain=x":              "azblob://c/p?sas_token=REDACTED&domain=x",
		"https://user:pass@example.com/x?AccountKey=zzzz1": "https://REDACTED@example.com/x?AccountKey=REDACTED",
	} {
		if got := Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRedactInMessages(t *testing.T) {
	msg := `open bucket "s3://b?endpoint=http://h:1&secret_access_key=hunter2&region=x": unknown query parameter "secret_access_key"`
	got := Redact(msg)
	if strings.Contains(got, "hunter2") || !strings.Contains(got, "REDACTED") || !strings.Contains(got, "region=x") {
		t.Errorf("Redact(%q) = %q", msg, got)
	}
	if got := Redact("GET https://user:pw@host/x failed; AccountKey=abc123== sig=zz"); strings.Contains(got, "pw@") || strings.Contains(got, "abc123") || strings.Contains(got, "zz") {
		t.Errorf("Redact = %q", got)
	}
	cause := errors.New(msg)
	err := RedactErr(cause)
	if strings.Contains(err.Error(), "hunter2") || !errors.Is(err, cause) {
		t.Errorf("RedactErr = %q", err)
	}
	if RedactErr(err) != err || RedactErr(nil) != nil {
		t.Error("RedactErr wraps twice or wraps nil")
	}
}

// TestOpenBucketRemovesTheFolderItMade: a local location opened to write
// makes its folder (and missing parents); when the bucket is released with
// nothing written (a job that failed, or cleaned up after itself), the
// folders it made go again, those that existed stay; with a file written,
// everything stays.
func TestOpenBucketRemovesTheFolderItMade(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	for _, write := range []bool{false, true} {
		dir := filepath.Join(root, "a", "b", "out")
		l, err := ParseLocation(dir, true)
		if err != nil {
			t.Fatal(err)
		}
		b, closeFn, err := OpenBucket(ctx, nil, l)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(dir); err != nil {
			t.Fatalf("OpenBucket did not make %s: %v", dir, err)
		}
		if write {
			if err := b.WriteAll(ctx, "k", []byte("x"), nil); err != nil {
				t.Fatal(err)
			}
		}
		if err := closeFn(); err != nil {
			t.Fatal(err)
		}
		_, err = os.Stat(filepath.Join(root, "a"))
		if write && err != nil {
			t.Errorf("a bucket written to lost its folder: %v", err)
		}
		if !write && !errors.Is(err, os.ErrNotExist) {
			t.Errorf("an empty bucket left the folders it made: %v", err)
		}
		if _, err := os.Stat(root); err != nil {
			t.Errorf("the folder that existed went: %v", err)
		}
	}
}
