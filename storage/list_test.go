package storage

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/blob/fileblob"
	"gocloud.dev/blob/memblob"
	"gocloud.dev/gcerrors"
)

// churn creates and removes files under dir until stop is closed: what
// another job's claims, temporary files and pruning do to a folder being
// listed.
func churn(t *testing.T, dir string, stop <-chan struct{}, wg *sync.WaitGroup) {
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			p := filepath.Join(dir, "sub", fmt.Sprintf("c-%03d.json", i%50))
			if err := os.WriteFile(p, []byte("{}"), 0o644); err != nil {
				t.Error(err)
				return
			}
			os.Remove(p)
		}
	}()
}

// TestListPageVanished: a local folder listed while files under it come
// and go. fileblob's own ListPage fails now and then (a file read from
// the folder is gone when it is stat'ed); storage.ListPage never does and
// always lists every file that stays.
func TestListPageVanished(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	const stay = 200
	for i := range stay {
		if err := os.WriteFile(filepath.Join(dir, "sub", fmt.Sprintf("s-%03d.json", i)), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := fileblob.OpenBucket(dir, &fileblob.Options{Metadata: fileblob.MetadataDontWrite})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	opts := &blob.ListOptions{Prefix: "sub/"}

	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 2 {
		churn(t, dir, stop, &wg)
	}
	defer func() { close(stop); wg.Wait() }()

	// The race is real: fileblob's page fails within a few thousand
	// listings (usually far fewer).
	deadline := time.Now().Add(20 * time.Second)
	var raw error
	for raw == nil && time.Now().Before(deadline) {
		_, _, raw = b.ListPage(ctx, blob.FirstPageToken, 1000, opts)
	}
	if raw == nil {
		t.Fatal("fileblob's ListPage never failed under churn: the test no longer exercises the race")
	}
	if !vanished(raw) || gcerrors.Code(raw) != gcerrors.NotFound {
		t.Fatalf("fileblob's failure %v is not a vanished file", raw)
	}

	for i := range 500 {
		n := 0
		err := ListEach(ctx, b, opts, func(o *blob.ListObject) error {
			if filepath.Base(o.Key)[0] == 's' {
				n++
			}
			return nil
		})
		if err != nil {
			t.Fatalf("listing %d: %v", i, err)
		}
		if n != stay {
			t.Fatalf("listing %d: %d of the %d files that stay", i, n, stay)
		}
	}
}

// TestListPageNotFoundStore: a store's NotFound is not a vanished file
// and is returned at once.
func TestListPageNotFoundStore(t *testing.T) {
	if vanished(fmt.Errorf("wrapped: %w", os.ErrNotExist)) {
		t.Error("a bare ErrNotExist (no path error) counted as a vanished local file")
	}
	if !vanished(fmt.Errorf("wrapped: %w", &os.PathError{Op: "lstat", Path: "/x", Err: os.ErrNotExist})) {
		t.Error("a path error with ErrNotExist not counted as vanished")
	}
	if vanished(&os.PathError{Op: "open", Path: "/x", Err: os.ErrPermission}) {
		t.Error("a permission error counted as vanished")
	}
	// A page of a memory bucket lists as b.ListPage does.
	ctx := context.Background()
	b := memblob.OpenBucket(nil)
	defer b.Close()
	for i := range 3 {
		if err := b.WriteAll(ctx, fmt.Sprintf("k/%d", i), []byte("x"), nil); err != nil {
			t.Fatal(err)
		}
	}
	page, next, err := ListPage(ctx, b, blob.FirstPageToken, 2, &blob.ListOptions{Prefix: "k/"})
	if err != nil || len(page) != 2 || len(next) == 0 {
		t.Fatalf("first page %d objects, next %q, %v", len(page), next, err)
	}
	page, next, err = ListPage(ctx, b, next, 2, &blob.ListOptions{Prefix: "k/"})
	if err != nil || len(page) != 1 || page[0].Key != "k/2" || len(next) != 0 {
		t.Fatalf("second page %v, next %q, %v", page, next, err)
	}
}

// TestListObjectAndFolderOfOneName: a store may hold an object and a
// "folder" of one name (od/x.jsonl and od/x.jsonl/inner.jsonl). A location
// with a trailing slash names the folder: its objects are listed, never
// the object of that name, which it read in the folder's place (a sweep
// silently swapped for one run). Without the slash the object named
// exactly is read, as before.
func TestListObjectAndFolderOfOneName(t *testing.T) {
	ctx := context.Background()
	b := memblob.OpenBucket(nil)
	defer b.Close()
	for _, k := range []string{"od/x.jsonl", "od/x.jsonl/inner.jsonl", "od/x.jsonl/inner2.jsonl", "od/y.jsonl"} {
		if err := b.WriteAll(ctx, k, []byte("{}\n"), nil); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		in   string
		want []string
	}{
		{"s3://bkt/od/x.jsonl", []string{"od/x.jsonl"}},
		{"s3://bkt/od/x.jsonl/", []string{"od/x.jsonl/inner.jsonl", "od/x.jsonl/inner2.jsonl"}},
		{"gs://bkt/od/x.jsonl/", []string{"od/x.jsonl/inner.jsonl", "od/x.jsonl/inner2.jsonl"}},
		{"azblob://bkt/od/x.jsonl/?localemu=true", []string{"od/x.jsonl/inner.jsonl", "od/x.jsonl/inner2.jsonl"}},
		{"s3://bkt/od/y.jsonl/", nil},
		{"s3://bkt/od", []string{"od/x.jsonl", "od/x.jsonl/inner.jsonl", "od/x.jsonl/inner2.jsonl", "od/y.jsonl"}},
		{"s3://bkt/od/", []string{"od/x.jsonl", "od/x.jsonl/inner.jsonl", "od/x.jsonl/inner2.jsonl", "od/y.jsonl"}},
	}
	for _, c := range cases {
		loc, err := ParseLocation(c.in, false)
		if err != nil {
			t.Fatal(err)
		}
		objs, err := List(ctx, b, loc, []string{"*.jsonl"}, RetryPolicy{})
		if err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		var got []string
		for _, o := range objs {
			got = append(got, o.Key)
		}
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s: %v, want %v", c.in, got, c.want)
		}
	}
}

// TestListEachStopsAtACancel (breakit4): a cancel while a listing is
// under way ends it before its next page. fileblob walks the whole folder
// for every page and never looks at the context, so a cache of 17,184
// entries (18 pages) took 4.2 s to list after a SIGINT and `cache prune`
// exited only then; before, ListEach looked at the context once, after
// the last page, having called f for every object.
func TestListEachStopsAtACancel(t *testing.T) {
	for _, driver := range []string{"mem", "file"} {
		t.Run(driver, func(t *testing.T) {
			ctx := context.Background()
			var b *blob.Bucket
			if driver == "mem" {
				b = memblob.OpenBucket(nil)
			} else {
				var err error
				if b, err = fileblob.OpenBucket(t.TempDir(), nil); err != nil {
					t.Fatal(err)
				}
			}
			defer b.Close()
			const n = 2500 // three pages of 1000
			for i := 0; i < n; i++ {
				if err := b.WriteAll(ctx, fmt.Sprintf("k%05d", i), []byte("x"), nil); err != nil {
					t.Fatal(err)
				}
			}
			cctx, cancel := context.WithCancel(ctx)
			defer cancel()
			calls := 0
			err := ListEach(cctx, b, nil, func(*blob.ListObject) error {
				calls++
				if calls == 10 {
					cancel()
				}
				return nil
			})
			if !errors.Is(err, context.Canceled) {
				t.Errorf("error %v, want context.Canceled", err)
			}
			if calls > 1000 {
				t.Errorf("f called %d times after a cancel on the first page, want at most the page's 1000", calls)
			}
		})
	}
}
