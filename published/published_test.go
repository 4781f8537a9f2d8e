package published

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"gocloud.dev/blob"
	"gocloud.dev/blob/memblob"

	"github.com/crlbatch/crlbatch/storage"
)

// putResult copies the golden result of the example sweep under prefix.
func putResult(t *testing.T, b *blob.Bucket, prefix string, manifest bool) {
	t.Helper()
	dir := "../cmd/crlbatch/testdata/golden/sweep"
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.Name() == "manifest.json" && !manifest {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := b.WriteAll(context.Background(), prefix+e.Name(), data, nil); err != nil {
			t.Fatal(err)
		}
	}
}

// The history layout in a bucket (not a folder): the newest complete
// result is the one LATEST names, attempts without a manifest are skipped,
// and Load reads a result through gocloud.dev/blob.
func TestNightsAndLoadInABucket(t *testing.T) {
	ctx := context.Background()
	b := memblob.OpenBucket(nil)
	defer b.Close()
	loc := storage.Location{Raw: "mem://nightly", BucketURL: "mem://", Prefix: "nightly/"}
	ids := []string{"20261130T020000Z-aaaa", "20261201T020000Z-bbbb", "20261202T020000Z-cccc", "20261203T020000Z-dddd"}
	putResult(t, b, "nightly/results/"+ids[0]+"/", true)
	putResult(t, b, "nightly/results/"+ids[1]+"/", false) // never finished
	putResult(t, b, "nightly/results/"+ids[2]+"/", true)
	putResult(t, b, "nightly/results/"+ids[3]+"/", true) // newer than LATEST: still being published
	// Another history beside it must not be read.
	putResult(t, b, "nightly-old/results/20991231T000000Z-zzzz/", true)

	got, err := Nights(ctx, b, loc, 2)
	if err != nil || len(got) != 2 || got[0] != "nightly/results/"+ids[2]+"/" || got[1] != "nightly/results/"+ids[3]+"/" {
		t.Fatalf("without LATEST: %v %v", got, err)
	}
	if err := b.WriteAll(ctx, "nightly/LATEST", []byte("results/"+ids[2]+"/\n"), nil); err != nil {
		t.Fatal(err)
	}
	got, err = Nights(ctx, b, loc, 2)
	if err != nil || len(got) != 2 || got[0] != "nightly/results/"+ids[0]+"/" || got[1] != "nightly/results/"+ids[2]+"/" {
		t.Fatalf("with LATEST: %v %v", got, err)
	}
	var ue *storage.UsageError
	if _, err := Nights(ctx, b, loc, 3); !errors.As(err, &ue) {
		t.Errorf("three nights of two: %v, want a usage error", err)
	}
	res, err := Load(ctx, b, loc, got[1])
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Families) != 3 || len(res.Runs) != 9 || len(res.Rows) != 3*20 || res.Params["protocol"] != "skyfall" {
		t.Errorf("loaded %d families, %d runs, %d rows, params %v", len(res.Families), len(res.Runs), len(res.Rows), res.Params["protocol"])
	}
	if _, err := Load(ctx, b, loc, "nightly/results/"+ids[1]+"/"); !errors.As(err, &ue) {
		t.Errorf("an unfinished attempt: %v, want a usage error", err)
	}
}
