package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/crlbatch/crlbatch/internal/synth"
)

// TestMeasure scores one ~200 MB sweep from a local folder and from each
// server and prints the times side by side with the requests the job made
// per object, counted by the proxy in front of each server. It is a
// measurement, not a test: it runs only with CRLBATCH_MEASURE=1 (see
// measure.sh). CRLBATCH_MEASURE_MB sets the sweep's size in MB of JSONL.
func TestMeasure(t *testing.T) {
	if os.Getenv("CRLBATCH_MEASURE") != "1" {
		t.Skip("a measurement: run integration/measure.sh (CRLBATCH_MEASURE=1)")
	}
	mb := 200
	if s := os.Getenv("CRLBATCH_MEASURE_MB"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("CRLBATCH_MEASURE_MB=%q: want a positive integer", s)
		}
		mb = n
	}
	ctx := context.Background()
	f := getFixture(t)
	dir := filepath.Join(root, "measure", "big")
	sum, err := synth.Run(ctx, synth.Config{
		Out: dir, Seeds: 4, SplitFiles: 4, Compression: "none", TargetBytes: int64(mb) << 20, Seed: 5,
	})
	if err != nil {
		t.Fatal(err)
	}
	objects := len(sum.Objects)
	fmt.Printf("sweep: %d objects, %d runs, %.1f MB (plain JSONL), %d rows; crlbatch %s, GOMAXPROCS %s\n",
		objects, sum.Runs, float64(sum.Bytes)/1e6, sum.Rows, f.version, orDefault(os.Getenv("GOMAXPROCS"), "default"))

	repeat := 3
	if s := os.Getenv("CRLBATCH_MEASURE_REPEAT"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("CRLBATCH_MEASURE_REPEAT=%q: want a positive integer", s)
		}
		repeat = n
	}
	type row struct {
		source string
		times  []time.Duration
		rc     *requestCounts
	}
	var rows []row
	// measure scores in into a new out(run) repeat times; before each run
	// it calls reset, after it count (nil for the local folder).
	measure := func(source, in string, out func(run int) string, reset func(), count func() requestCounts) {
		rw := row{source: source}
		for i := -1; i < repeat; i++ { // a warm-up run first, not counted
			if reset != nil {
				reset()
			}
			r := f.crl(ctx, nil, nil, "score", in, "--out", out(i), "--quiet")
			if r.code != 0 {
				t.Fatal(r)
			}
			if i < 0 {
				continue
			}
			rw.times = append(rw.times, r.elapsed)
			if count != nil {
				rc := count()
				if rw.rc != nil && rc.String() != rw.rc.String() {
					t.Errorf("%s: the requests differ between runs: %v, then %v", source, rw.rc, rc)
				}
				rw.rc = &rc
			}
		}
		slices.Sort(rw.times)
		rows = append(rows, rw)
	}
	measure("local folder", dir, func(i int) string { return filepath.Join(root, "measure", fmt.Sprintf("out-local-%d", i+1)) }, nil, nil)
	for _, name := range []string{"s3", "gcs", "azure"} {
		c := getCloud(t, name)
		start := time.Now()
		if err := upload(ctx, c, dir, "big/"); err != nil {
			t.Fatal(err)
		}
		fmt.Printf("uploaded to %s in %v\n", name, time.Since(start).Round(time.Millisecond))
		measure(name+" ("+c.srv.Name+")", c.url(inBucket, "big"), func(i int) string { return c.url(outBucket, fmt.Sprintf("measure-%d", i+1)) }, c.proxy.Reset,
			func() requestCounts { return countRequests(c.proxy.Log()) })
	}

	fmt.Println()
	fmt.Printf("| source | median time (s) | min (s) | MB/s (median) | list | GET | HEAD | PUT | DELETE | requests | GET per object | requests per object |\n")
	fmt.Printf("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, r := range rows {
		med := r.times[len(r.times)/2]
		mbps := float64(sum.Bytes) / 1e6 / med.Seconds()
		fmt.Printf("| %s | %.2f | %.2f | %.0f |", r.source, med.Seconds(), r.times[0].Seconds(), mbps)
		if r.rc == nil {
			fmt.Printf(" – | – | – | – | – | – | – | – |\n")
			continue
		}
		k := r.rc.byKind
		fmt.Printf(" %d | %d | %d | %d | %d | %d | %.2f | %.2f |\n", k["list"], k["get"], k["head"], k["put"], k["delete"], r.rc.total,
			float64(k["get"])/float64(objects), float64(r.rc.total)/float64(objects))
	}
	fmt.Printf("\n%d runs per source after a warm-up run, each into a new prefix; requests per run, counted by the proxy in\n"+
		"front of each server. Besides the input's listing and reads they include the output's: a HEAD of the INPUT prefix\n"+
		"as a possible single object, a HEAD of OUTPUT/manifest.json, and one PUT per file.\n", repeat)
}

func orDefault(s, d string) string {
	if strings.TrimSpace(s) == "" {
		return d
	}
	return s
}
