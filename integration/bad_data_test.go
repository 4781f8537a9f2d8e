package integration

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCloudBadDataExitsOne: bad data in an object that nobody touched is
// bad input on every store: exit 1 naming the object and the line (or,
// for a Parquet object that is not one, the file), as on the local disk,
// never exit 3 with "the object changed while the job read it". On GCS the
// reader reports the Last-Modified header's whole seconds and the
// attributes the object's microseconds: the check for a change compared
// the two and took every bad row for a change (exit 3).
func TestCloudBadDataExitsOne(t *testing.T) {
	f := getFixture(t)
	ctx := context.Background()
	dir := t.TempDir()
	good := `{"run_id":"a","regime_id":"r","reward":0.5}` + "\n"
	cases := []struct {
		name, file, body, want string
	}{
		{"jsonl", "x.jsonl", good + `{"run_id":"a","regime_id":"r","reward":"high"}` + "\n", "x.jsonl: line 2: reward: got string, want number"},
		{"parquet", "x.parquet", "PAR1PAR1", "x.parquet: not a readable Parquet file"},
	}
	for _, c := range cases {
		if err := os.MkdirAll(filepath.Join(dir, c.name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, c.name, c.file), []byte(c.body), 0o644); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(t.TempDir(), "out")
		r := f.score(ctx, nil, filepath.Join(dir, c.name), out, "--pattern", "x.*", "--allow-missing-baseline")
		if r.code != 1 || !strings.Contains(r.stderr, filepath.Join(dir, c.name, c.want)) {
			t.Fatalf("local %s: %s", c.name, r)
		}
	}
	for _, name := range []string{"s3", "gcs", "azure"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := getCloud(t, name)
			const prefix = "baddata"
			if err := upload(ctx, c, dir, prefix+"/"); err != nil {
				t.Fatal(err)
			}
			for _, bad := range cases {
				in := c.url(inBucket, prefix+"/"+bad.name)
				r := f.score(ctx, nil, in, filepath.Join(t.TempDir(), "out"), "--pattern", "x.*", "--allow-missing-baseline")
				file, msg, _ := strings.Cut(bad.want, ":")
				obj, _, _ := strings.Cut(c.url(inBucket, prefix+"/"+bad.name+"/"+file), "?")
				obj += ":" + msg
				if r.code != 1 || !strings.Contains(r.stderr, obj) || strings.Contains(r.stderr, "changed") {
					t.Errorf("%s: want exit 1 naming %s: %s", bad.name, obj, r)
				}
			}
		})
	}
}
