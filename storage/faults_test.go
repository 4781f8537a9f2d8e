package storage

import (
	"context"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestRedactNested (issue 13, finding 2): credentials nested in a
// parameter, raw or percent-encoded once or twice, in a query string or in
// free text, are removed; what holds no secret is left as it is.
func TestRedactNested(t *testing.T) {
	ep := "http://AKIASECRETID:hunter2@127.0.0.1:7070"
	for _, in := range []string{
		"s3://traces?endpoint=" + ep + "&region=us-east-1",
		"s3://traces?endpoint=" + url.QueryEscape(ep) + "&region=us-east-1",
		"s3://traces?endpoint=" + url.QueryEscape(url.QueryEscape(ep)) + "&region=us-east-1",
		"s3://traces?x=" + url.QueryEscape("https://h/?token=hunter2&sig=AKIASECRETID"),
		`list "s3://traces?endpoint=` + ep + `": Get "` + ep + `/traces": refused`,
		"endpoint=" + url.QueryEscape(ep),
		"(" + ep + ")",
		"http://AKIASECRETID:hun/ter2@127.0.0.1/x",
		"http://AKIASECRETID:12/hunter2@127.0.0.1/x",
		"dial: AccountKey=hunter2; SharedAccessSignature=AKIASECRETID",
	} {
		got := Redact(in)
		for _, s := range []string{"hunter2", "AKIASECRETID", "ter2", "SECRETID"} {
			if strings.Contains(got, s) {
				t.Errorf("Redact(%q) = %q shows %q", in, got, s)
			}
		}
		if !strings.Contains(got, redacted) {
			t.Errorf("Redact(%q) = %q: nothing redacted", in, got)
		}
	}
	for _, keep := range []string{
		"s3://lab/runs/algo@v2/x.jsonl",
		"s3://traces/p?endpoint=http%3A%2F%2F127.0.0.1%3A7070&region=us-east-1&use_path_style=true",
		"/data/runs/a=b/x.jsonl: line 3: reward: not a number",
	} {
		if got := Redact(keep); got != keep {
			t.Errorf("Redact(%q) = %q, want it unchanged", keep, got)
		}
	}
}

// TestParseLocationIsAPathWithoutScheme (issue 13, finding 11): only
// scheme:// makes a URL; night:1 is a folder.
func TestParseLocationIsAPathWithoutScheme(t *testing.T) {
	t.Chdir(t.TempDir())
	l, err := ParseLocation("night:1", true)
	if err != nil || !l.Local || !strings.HasSuffix(l.localDir(), "night:1") {
		t.Errorf("night:1 → %+v, %v; want the local folder night:1", l, err)
	}
}

// TestWithinCanonical (issue 13, finding 4): the inside-input check
// compares canonical locations.
func TestWithinCanonical(t *testing.T) {
	for _, tc := range []struct {
		out, in string
		want    bool
	}{
		{"s3://b/in/out?endpoint=http://localhost:7070", "s3://b/in?endpoint=http://127.0.0.1:7070", true},
		{"s3://b/in/out?endpoint=http://127.0.0.1:7070&region=x&use_path_style=true", "s3://b/in?endpoint=http://127.0.0.1:7070/", true},
		{"s3://b/in/./x/../out", "s3://b//in", true},
		{"s3://B/in/out", "s3://b/in", true},
		{"s3://b/in/out?endpoint=http://u:p@127.0.0.1:7070", "s3://b/in?endpoint=http://127.0.0.1:7070", true},
		{"s3://b/in/out?endpoint=http://127.0.0.1:7071", "s3://b/in?endpoint=http://127.0.0.1:7070", false},
		{"s3://b/in-out", "s3://b/in", false},
		{"s3://b/out", "s3://b", true},
		{"s3://c/in/out", "s3://b/in", false},
		{"gs://b/in/out", "s3://b/in", false},
		{"azblob://c/in/out?domain=localhost:10000&protocol=http", "azblob://c/in?domain=127.0.0.1:10000", true},
		{"mem://lab/in/out", "mem://lab/in", true},
	} {
		out, err1 := ParseLocation(tc.out, true)
		in, err2 := ParseLocation(tc.in, false)
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		if got := Within(out, in); got != tc.want {
			t.Errorf("Within(%s, %s) = %v, want %v", tc.out, tc.in, got, tc.want)
		}
	}

	root := t.TempDir()
	in := filepath.Join(root, "in")
	os.MkdirAll(in, 0o755)
	link := filepath.Join(root, "link")
	if err := os.Symlink(in, link); err != nil {
		t.Skip(err)
	}
	for _, tc := range []struct {
		out, in string
		want    bool
	}{
		{filepath.Join(link, "results", "new"), in, true},
		{filepath.Join(in, "results"), link, true},
		{"file://" + filepath.ToSlash(filepath.Join(link, "r")), in, true},
		{filepath.Join(root, "out"), link, false},
	} {
		out, _ := ParseLocation(tc.out, true)
		inl, _ := ParseLocation(tc.in, false)
		if got := Within(out, inl); got != tc.want {
			t.Errorf("Within(%s, %s) = %v, want %v", tc.out, tc.in, got, tc.want)
		}
	}
}

// TestListLocal (issue 13, findings 4, 5 and 11): a local INPUT is listed
// with links followed and targets' sizes, names as they are, and special
// files refused by name; reading never blocks on a FIFO.
func TestListLocal(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	in := filepath.Join(root, "in")
	write := func(p, s string) {
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(in, "a__0x41__.jsonl"), "{}\n")
	write(filepath.Join(root, "ext", "b.jsonl"), "{\"x\": 1}\n")
	if err := os.Symlink(filepath.Join(root, "ext"), filepath.Join(in, "ext")); err != nil {
		t.Skip(err)
	}
	loc, err := ParseLocation(in, false)
	if err != nil {
		t.Fatal(err)
	}
	b, closeFn, err := OpenBucket(ctx, nil, loc)
	if err != nil {
		t.Fatal(err)
	}
	defer closeFn()
	objs, err := List(ctx, b, loc, []string{"*.jsonl"}, RetryPolicy{Attempts: 1})
	if err != nil || len(objs) != 2 || objs[0].Key != "a__0x41__.jsonl" || objs[1].Key != "ext/b.jsonl" || objs[1].Size != 9 {
		t.Fatalf("List = %+v, %v", objs, err)
	}
	for _, o := range objs {
		if _, err := b.ReadAll(ctx, o.Key); err != nil {
			t.Errorf("read %s: %v", o.Key, err)
		}
	}
	if err := b.WriteAll(ctx, "x.jsonl", nil, nil); err == nil {
		t.Error("the input folder was written to")
	}

	fifo := filepath.Join(in, "p.jsonl")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip(err)
	}
	_, err = List(ctx, b, loc, []string{"*.jsonl"}, RetryPolicy{Attempts: 1})
	if !IsStorage(err) || !strings.Contains(err.Error(), fifo) || !strings.Contains(err.Error(), "named pipe") {
		t.Errorf("a FIFO: %v", err)
	}
	if _, err := List(ctx, b, loc, []string{"a*.jsonl"}, RetryPolicy{Attempts: 1}); err != nil {
		t.Errorf("a FIFO the patterns do not match: %v", err)
	}
	if _, err := b.NewReader(ctx, "p.jsonl", nil); !errors.Is(err, errNotRegular) {
		t.Errorf("reading a FIFO: %v", err)
	}
	fl, _ := ParseLocation(fifo, false)
	if _, err := List(ctx, b, fl, []string{"*"}, RetryPolicy{Attempts: 1}); !IsStorage(err) || !strings.Contains(err.Error(), "named pipe") {
		t.Errorf("a FIFO as INPUT: %v", err)
	}
}
