package published

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"gocloud.dev/blob"
	"gocloud.dev/blob/memblob"

	"github.com/crlbatch/crlbatch/protocol"
	"github.com/crlbatch/crlbatch/protocol/family"
	"github.com/crlbatch/crlbatch/storage"
	"github.com/crlbatch/crlbatch/writers"
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

// FromFamilies gives what Load reads back once the reduction is published:
// a hand-made reduction (a null with its reason, a count, a second family)
// written with writers.FamiliesTable and a manifest, then loaded.
func TestFromFamiliesIsWhatLoadReads(t *testing.T) {
	ctx := context.Background()
	up := true
	row := func(fam, metric string, hib *bool, n int, mean float64) family.Row {
		r := family.Row{Family: fam, Metric: metric, HigherIsBetter: hib, N: n, Mean: protocol.Some(mean), IQM: protocol.Some(mean + 0.01),
			CILow: protocol.Some(mean - 0.1), CIHigh: protocol.Some(mean + 0.1), IQMCILow: protocol.Some(mean - 0.2), IQMCIHigh: protocol.Some(mean + 0.2),
			Std: protocol.Some(0.1), Min: protocol.Some(mean), Max: protocol.Some(mean), Median: protocol.Some(mean),
			Baseline: "a", RelativeAdaptationAdvantage: protocol.None("n/a"), PValue: protocol.None("no pairs"), PValueAdjusted: protocol.None("no pairs"),
			MinP: protocol.None("no pairs"), DiffMean: protocol.None("no pairs"), DiffCILow: protocol.None("no pairs"), DiffCIHigh: protocol.None("no pairs"),
			ProbImprovement: protocol.None("no pairs"), ProbImprovementCILow: protocol.None("no pairs"), ProbImprovementCIHigh: protocol.None("no pairs")}
		return r
	}
	one := row("b", "reward", &up, 1, 0.7)
	one.CILow, one.CIHigh, one.IQMCILow, one.IQMCIHigh = protocol.None("fewer than two seeds"), protocol.None("fewer than two seeds"), protocol.None("fewer than two seeds"), protocol.None("fewer than two seeds")
	fams := &family.Result{Baseline: "a", BaselineFound: true, Families: []family.Family{
		{Name: "a", Rows: []family.Row{row("a", "reward", &up, 3, 0.5), row("a", "n_steps", nil, 3, 400)}},
		{Name: "b", Rows: []family.Row{one, row("b", "n_steps", nil, 1, 400)}},
	}}
	params := map[string]any{"protocol": "toy", "alpha": 0.9, "where": []any{}}
	tab, err := writers.FamiliesTable(fams)
	if err != nil {
		t.Fatal(err)
	}
	kv, err := writers.NewMetadata("0", "toy", "1", params)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := writers.WriteParquet(&buf, tab, kv); err != nil {
		t.Fatal(err)
	}
	b := memblob.OpenBucket(nil)
	defer b.Close()
	manifest, _ := json.Marshal(map[string]any{"version": "0.3.1", "commit": "4f1c2a9e", "params": params, "outputs": []any{map[string]string{"name": "families.parquet"}}})
	for k, v := range map[string][]byte{"r/families.parquet": buf.Bytes(), "r/manifest.json": manifest} {
		if err := b.WriteAll(ctx, k, v, nil); err != nil {
			t.Fatal(err)
		}
	}
	loc := storage.Location{Raw: "mem://x", BucketURL: "mem://"}
	got, err := Load(ctx, b, loc, "r/")
	if err != nil {
		t.Fatal(err)
	}
	want, err := FromFamilies(got.URL, Build{Version: "0.3.1", Commit: "4f1c2a9e"}, params, fams, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Load:\n%+v\nFromFamilies:\n%+v", got, want)
	}
}

// TestLoadHalfDeletedResult: a complete result (its manifest there) whose
// listed Parquet file is gone cannot be read as one: bad data (exit 1),
// as a damaged file is, naming the file. It was a storage error (exit 3,
// "the store failed after retries"), which a nightly script retries in
// vain: the store answered, and the file is not there.
func TestLoadHalfDeletedResult(t *testing.T) {
	ctx := context.Background()
	for _, gone := range []string{"families.parquet", "run_summary.parquet"} {
		t.Run(gone, func(t *testing.T) {
			b := memblob.OpenBucket(nil)
			defer b.Close()
			loc := storage.Location{Raw: "mem://r", BucketURL: "mem://", Prefix: "r/"}
			putResult(t, b, "r/", true)
			if err := b.Delete(ctx, "r/"+gone); err != nil {
				t.Fatal(err)
			}
			_, err := Load(ctx, b, loc, "r/")
			var de *storage.DataError
			var se *storage.StorageError
			if !errors.As(err, &de) || errors.As(err, &se) || !strings.Contains(err.Error(), "r/"+gone+": listed in manifest.json but missing") {
				t.Errorf("Load without %s: %v (%T), want bad data naming it", gone, err, err)
			}
		})
	}
}
