package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckEntry(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// The published AWM SR row of seed 002.
	awm := `{"SR": {"websites": {"gitlab": 17.71, "magento": 25.49, "wordpress": 62.66},
	  "conditions": {"src": 50.07, "src-perc": 43.35, "src-exec": 22.45, "tgt": 41.28, "tgt-perc": 37.65, "tgt-exec": 16.90},
	  "overall": 35.29}}`
	code, out, stderr := crl(t, "check-entry", write("awm.json", awm))
	if code != 0 || !strings.Contains(out, "SR") || !strings.Contains(out, "pass") {
		t.Errorf("AWM row: exit %d, %q %s", code, out, stderr)
	}
	// One cell mistyped (62.66 → 26.66).
	code, out, _ = crl(t, "check-entry", write("typo.json", strings.Replace(awm, "62.66", "26.66", 1)))
	if code != exitData || !strings.Contains(out, "fail") {
		t.Errorf("mistyped row: exit %d, %q", code, out)
	}
	// A bare object under --metric, with a null that has no reason.
	bare := `{"websites": {"gitlab": 1, "magento": 2, "wordpress": null}, "conditions": {"src": 1, "src-perc": 1, "src-exec": 1, "tgt": 1, "tgt-perc": 1, "tgt-exec": 1}, "overall": 1}`
	if code, _, stderr := crl(t, "check-entry", "--metric", "AS", write("bare.json", bare)); code != exitData || !strings.Contains(stderr, "reason") {
		t.Errorf("null without a reason: exit %d, %s", code, stderr)
	}
	if code, _, _ := crl(t, "check-entry", filepath.Join(dir, "missing.json")); code != exitUsage {
		t.Errorf("missing file: exit %d", code)
	}
}
