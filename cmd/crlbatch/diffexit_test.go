package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDiffExitCode: diff --exit-code exits 0 when the results do not
// differ (two results of the same inputs, or a change of the build that
// wrote them alone), 4 when they do, whatever the format and wherever the
// comparison goes, which it still prints, with nothing on stderr; and 1, 2
// and 3 as without it, so that a script tells a change from a result it
// cannot read. Without the flag a change exits 0. Both helps list 4.
func TestDiffExitCode(t *testing.T) {
	t.Parallel()
	old, new, _ := diffFixture(t)
	tmp := t.TempDir()
	// The same inputs and flags as old, scored again.
	again := filepath.Join(tmp, "again")
	if code, _, stderr := crl(t, "score", "../../configs/example-sweep", "--out", again, "--quiet", "--where", "algorithm_id=ppo", "--where", "algorithm_id=sac"); code != 0 {
		t.Fatalf("score again: exit %d: %s", code, stderr)
	}
	// old as another build wrote it: the same files, another version
	// and commit in its manifest.
	rebuilt := filepath.Join(tmp, "rebuilt")
	copyResult(t, old, rebuilt)
	var m map[string]any
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(rebuilt, "manifest.json"))), &m); err != nil {
		t.Fatal(err)
	}
	m["version"], m["commit"] = "0.0.9", "4f1c2a9e"
	data, _ := json.Marshal(m)
	writeFile(t, filepath.Join(rebuilt, "manifest.json"), string(data))
	damaged := filepath.Join(tmp, "damaged")
	copyResult(t, old, damaged)
	writeFile(t, filepath.Join(damaged, "manifest.json"), "{broken")
	// A folder where families.parquet should be: the store refuses to
	// read it (exit 3).
	unreadable := filepath.Join(tmp, "unreadable")
	copyResult(t, old, unreadable)
	if err := os.Remove(filepath.Join(unreadable, "families.parquet")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(unreadable, "families.parquet"), 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(tmp, "changes.json")

	for _, c := range []struct {
		name   string
		args   []string
		code   int
		stdout string // in stdout
		stderr string // in stderr; "" for none at all
	}{
		{"same inputs", []string{old, again, "--exit-code"}, 0, "\n\nNo changes.\n", ""},
		{"same inputs, json", []string{old, again, "--exit-code", "--format", "json"}, 0, `"metrics": []`, ""},
		{"a change", []string{old, new, "--exit-code"}, 4, "## Metrics changed", ""},
		{"a change, json", []string{old, new, "--format", "json", "--exit-code"}, 4, `"family": "sac"`, ""},
		{"a change, --out", []string{old, new, "--format", "json", "--out", out, "--exit-code"}, 4, "", ""},
		{"a change without the flag", []string{old, new}, 0, "## Metrics changed", ""},
		{"another build alone", []string{rebuilt, again, "--exit-code"}, 0, "## crlbatch build changed\n\nThe results were written by different crlbatch builds: old crlbatch `0.0.9` (commit `4f1c2a9e`), new crlbatch `0.1.0-dev` (commit unknown).", ""},
		{"another build, json", []string{rebuilt, again, "--exit-code", "--format", "json"}, 0, `"old": {
      "version": "0.0.9",
      "commit": "4f1c2a9e"
    },
    "new": {
      "version": "0.1.0-dev",
      "commit": null
    },
    "changed": true`, ""},
		{"damaged", []string{damaged, new, "--exit-code"}, 1, "", "manifest.json: invalid character"},
		{"usage", []string{old, "--exit-code"}, 2, "", "want OLD and NEW"},
		{"store", []string{old, unreadable, "--exit-code"}, 3, "", "families.parquet"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := crl(t, append([]string{"diff"}, c.args...)...)
			if code != c.code || !strings.Contains(stdout, c.stdout) || (c.stderr == "") != (stderr == "") || !strings.Contains(stderr, c.stderr) {
				t.Errorf("exit %d, stdout:\n%s\nstderr: %q\nwant exit %d, %q on stdout, %q on stderr", code, stdout, stderr, c.code, c.stdout, c.stderr)
			}
		})
	}
	if !strings.Contains(readFile(t, out), `"family": "sac"`) {
		t.Errorf("--out with --exit-code did not write the comparison")
	}
	for _, c := range []struct{ args, want string }{
		{"diff --help", "4 with --exit-code when the results differ"},
		{"--help", "4 results differ (diff --exit-code only)"},
	} {
		_, help, _ := crl(t, strings.Fields(c.args)...)
		if !strings.Contains(strings.Join(strings.Fields(help), " "), c.want) {
			t.Errorf("crlbatch %s does not give exit status 4 (%q):\n%s", c.args, c.want, help)
		}
	}
}
