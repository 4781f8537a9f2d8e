package integration

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"gocloud.dev/blob"
)

// crlbatch diff on results in a real S3 server (versitygw): a result in
// the bucket against the local one of the same input and flags reports
// nothing; against one scored with another --gamma it reports the
// parameter and return_discounted alone; and a nightly history in the
// bucket (results/<attempt-id>/, LATEST) gives with --nights 2 what diff
// gives on its two newest results.
func TestDiffInABucket(t *testing.T) {
	t.Parallel()
	f := getFixture(t)
	c := getCloud(t, "s3")
	ctx := context.Background()
	in := c.url(inBucket, inPrefix)
	ids := []string{"20261201T020000Z-a1b2", "20261202T020000Z-c3d4"}
	a := c.url(outBucket, "diffhist/results/"+ids[0])
	b := c.url(outBucket, "diffhist/results/"+ids[1])
	if r := f.score(ctx, nil, in, a); r.code != 0 {
		t.Fatal(r)
	}
	if r := f.score(ctx, nil, in, b, "--gamma", "0.5"); r.code != 0 {
		t.Fatal(r)
	}
	diff := func(args ...string) map[string]json.RawMessage {
		t.Helper()
		r := f.crl(ctx, nil, nil, append(append([]string{"diff"}, args...), "--format", "json")...)
		if r.code != 0 {
			t.Fatal(r)
		}
		var d map[string]json.RawMessage
		if err := json.Unmarshal([]byte(r.stdout), &d); err != nil {
			t.Fatalf("%v: %s", err, r.stdout)
		}
		return d
	}
	empty := []string{"metrics", "families_added", "families_removed", "runs_added", "runs_removed", "params"}
	same := diff(f.ref, a)
	for _, k := range empty {
		if string(same[k]) != "[]" {
			t.Errorf("the bucket's result against the local one: %s = %s, want []", k, same[k])
		}
	}

	d := diff(a, b)
	var params []struct{ Key string }
	var metrics []struct{ Metric string }
	if err := json.Unmarshal(d["params"], &params); err != nil || len(params) != 1 || params[0].Key != "gamma" {
		t.Errorf("params changed %s, want gamma alone", d["params"])
	}
	if err := json.Unmarshal(d["metrics"], &metrics); err != nil || len(metrics) == 0 {
		t.Fatalf("metrics changed %s", d["metrics"])
	}
	for _, m := range metrics {
		if m.Metric != "return_discounted" {
			t.Errorf("metric %s changed with --gamma", m.Metric)
		}
	}
	for _, k := range empty[1:5] {
		if string(d[k]) != "[]" {
			t.Errorf("%s = %s, want []", k, d[k])
		}
	}

	bk, err := blob.OpenBucket(ctx, c.url(outBucket, ""))
	if err != nil {
		t.Fatal(err)
	}
	defer bk.Close()
	if err := bk.WriteAll(ctx, "diffhist/LATEST", []byte("results/"+ids[1]+"/\n"), nil); err != nil {
		t.Fatal(err)
	}
	nights := diff(c.url(outBucket, "diffhist"), "--nights", "2")
	for k, v := range d {
		if k != "old" && k != "new" && string(nights[k]) != string(v) {
			t.Errorf("--nights 2: %s = %s, diff of the two newest %s", k, nights[k], v)
		}
	}
	if !strings.Contains(string(nights["new"]), ids[1]) || !strings.Contains(string(nights["old"]), ids[0]) {
		t.Errorf("--nights 2 compared %s with %s", nights["old"], nights["new"])
	}
}
