package crlbeam

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/crlbatch/crlbatch/internal/scoreflags"
)

// TestFlagsAsCrlbatch (beamflags): crlbatch-beam reads and checks
// crlbatch score's flags with crlbatch's own code (internal/scoreflags),
// so every value, bad or good, ends both programs with the same exit
// status and the same message after the program's name. Before, a value
// of the wrong kind got urfave/cli's text (`invalid value "abc" for flag
// -max-bad-rows: strconv.ParseInt …`), a size Beam's own example list,
// and --max-labels 0, --max-runs -3, --max-line-bytes 0 or --out {time}
// started a pipeline. Every row reads an INPUT that does not exist, so a
// value both accept ends at the listing ("no such file or folder"),
// before any pipeline runs.
func TestFlagsAsCrlbatch(t *testing.T) {
	crlbatch := buildCrlbatch(t)
	dir := t.TempDir()
	ceiling := filepath.Join(dir, "ceiling.json")
	if err := os.WriteFile(ceiling, []byte(`{"a": 1, "b": null}`), 0o644); err != nil {
		t.Fatal(err)
	}
	// INPUT: none that exists, so that a value both accept ends at the
	// listing; an empty folder or one object for the protocol flags crlbatch
	// checks after listing (a ceiling file: after finding an object).
	none, empty, one := filepath.Join(dir, "nosuch"), filepath.Join(dir, "empty"), filepath.Join(dir, "one")
	for _, d := range []string{empty, one} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(one, "a.jsonl"), []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	const accepted = ": no such file or folder"
	cases := []struct {
		in   string
		args []string
		code int
		want string // in both messages
	}{
		// Values of the wrong kind: what the flag wants.
		{none, []string{"--max-bad-rows", "abc"}, exitUsage, `--max-bad-rows "abc": want a whole number, such as 4`},
		{none, []string{"--bootstrap-resamples", "1.5"}, exitUsage, `--bootstrap-resamples "1.5": want a whole number, such as 4`},
		{none, []string{"--bootstrap-seed", "-1"}, exitUsage, `--bootstrap-seed "-1": want a whole number of at least 0, such as 4`},
		{none, []string{"--tail-fraction", "half"}, exitUsage, `--tail-fraction "half": want a number, such as 0.5`},
		{none, []string{"--overwrite=maybe"}, exitUsage, `--overwrite "maybe": want true or false`},
		{none, []string{"--max-labls", "3"}, exitUsage, "score: unknown flag --max-labls; did you mean --max-labels?"},
		// Values out of range.
		{none, []string{"--max-bad-rows", "-1"}, exitUsage, "--max-bad-rows -1: want at least 0"},
		{none, []string{"--max-labels", "0"}, exitUsage, "--max-labels 0: want at least 1"},
		{none, []string{"--max-runs", "-3"}, exitUsage, "--max-runs -3: want at least 1"},
		{none, []string{"--min-steps", "-1"}, exitUsage, "--min-steps -1: want at least 0"},
		{none, []string{"--keep", "-1"}, exitUsage, "--keep -1: want at least 1"},
		{none, []string{"--bootstrap-resamples", "0"}, exitUsage, "--bootstrap-resamples 0: want at least 1"},
		{empty, []string{"--tail-fraction", "1.5"}, exitUsage, "tail fraction 1.5: want 0 < x ≤ 1"},
		{empty, []string{"--alpha", "2"}, exitUsage, "alpha 2: "},
		// Sizes.
		{none, []string{"--max-line-bytes", "0"}, exitUsage, `--max-line-bytes "0": want a size of at least 1 byte, such as 1MiB`},
		{none, []string{"--max-line-bytes", "1XB"}, exitUsage, `--max-line-bytes "1XB": want a size such as 1MiB, 256MB, 4GiB or 1048576 bytes`},
		{none, []string{"--max-object-bytes", "-5"}, exitUsage, `--max-object-bytes "-5": want a size such as`},
		// Protocols, their flags, lists and placeholders.
		{none, []string{"--protocol", "nope"}, exitUsage, `--protocol "nope": want contilab, safecrl, skillshift or skyfall`},
		{none, []string{"--protocol", "safecrl", "--tail-fraction", "0.5"}, exitUsage, "--tail-fraction applies to --protocol skyfall only, not safecrl"},
		{one, []string{"--bound-map", ceiling}, exitUsage, `label "b" has no ceiling (null)`},
		{none, []string{"--where", "algorithm_id"}, exitUsage, `--where "algorithm_id": want FIELD=VALUE`},
		{none, []string{"--group-by", ","}, exitUsage, "--group-by: at least one field is needed"},
		{none, []string{"--log-level", "loud"}, exitUsage, `--log-level "loud": want debug, info, warn or error`},
		{none, []string{"--out", out + "/{time}"}, exitUsage, "{time} is not a placeholder"},
		// No INPUT, or two (beamhelp): crlbatch's messages, pointing at
		// crlbatch-beam's help; a missing INPUT is said before any value,
		// even one crlbatch checks only after listing.
		{"", nil, exitUsage, "score: missing INPUT (see crlbatch score --help)"},
		{"", []string{"--tail-fraction", "1.5", "--alpha", "2"}, exitUsage, "score: missing INPUT (see crlbatch score --help)"},
		{"", []string{"--bound-map", ceiling}, exitUsage, "score: missing INPUT (see crlbatch score --help)"},
		{none, []string{empty}, exitUsage, `score: want one INPUT, got 2 arguments: ["` + none + `" "` + empty + `"]`},
		// Good values: both go on to list INPUT.
		{none, []string{"--max-line-bytes", "2MiB", "--max-object-bytes", "1048576", "--max-bad-rows", "3"}, exitUsage, accepted},
		{none, []string{"--max-labels", "1", "--max-runs", "7", "--min-steps", "0", "--keep", "2", "--history"}, exitUsage, accepted},
		{none, []string{"--tail-fraction", "1", "--bootstrap-resamples", "10", "--bootstrap-seed", "18446744073709551615"}, exitUsage, accepted},
		{none, []string{"--protocol", "safecrl", "--where", "env=a=b", "--group-by", "algorithm_id, seed", "--overwrite=true"}, exitUsage, accepted},
		{none, []string{"--out", out + "/{date}", "--log-level", "debug", "--identity-fields", "", "--pattern", "*.jsonl"}, exitUsage, accepted},
	}
	for _, c := range cases {
		args := []string{"score"}
		if c.in != "" {
			args = append(args, c.in)
		}
		args = append(args, c.args...)
		if !strings.HasPrefix(strings.Join(c.args, " "), "--out") {
			args = append(args, "--out", out)
		}
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			var stderr bytes.Buffer
			cmd := exec.Command(crlbatch, args...)
			cmd.Stderr = &stderr
			code := 0
			if err := cmd.Run(); err != nil {
				var ee *exec.ExitError
				if !errors.As(err, &ee) {
					t.Fatal(err)
				}
				code = ee.ExitCode()
			}
			theirs, ok := strings.CutPrefix(stderr.String(), "crlbatch: ")
			if !ok || code != c.code || !strings.Contains(theirs, c.want) {
				t.Fatalf("crlbatch: exit %d, stderr %q; want exit %d and %q", code, stderr.String(), c.code, c.want)
			}
			stderr.Reset()
			beamCode := Main(context.Background(), args, new(bytes.Buffer), &stderr)
			ours, ok := strings.CutPrefix(stderr.String(), "crlbatch-beam: ")
			theirs = strings.ReplaceAll(theirs, "(see crlbatch score --help)", "(see crlbatch-beam score --help)")
			if !ok || beamCode != code || ours != theirs {
				t.Errorf("crlbatch-beam: exit %d, stderr %q; want crlbatch's exit %d and message %q", beamCode, stderr.String(), code, theirs)
			}
		})
	}
	// A flag of crlbatch alone is refused by name.
	var stderr bytes.Buffer
	if code := Main(context.Background(), []string{"score", none, "--out", out, "--concurrency", "4"}, new(bytes.Buffer), &stderr); code != exitUsage ||
		stderr.String() != "crlbatch-beam: score: --concurrency is crlbatch's, not crlbatch-beam's (it takes none of --config, --cache, --memory-limit, --spill-dir, --concurrency, --figures)\n" {
		t.Errorf("--concurrency: exit %d, stderr %q", code, stderr.String())
	}
}

// TestHelp (beamhelp): crlbatch-beam --help, -h, help and score --help
// or -h print one usage on stdout and exit 0 (before, nothing, then
// "score: nothing to do", exit 2): the command line, every flag shared
// with crlbatch score by name (scoreflags' definitions, so their help is
// crlbatch's), the flags only crlbatch takes, Beam's pipeline options, and
// crlbatch's exit statuses but diff's 4.
func TestHelp(t *testing.T) {
	crlbatch := buildCrlbatch(t)
	root, err := exec.Command(crlbatch, "--help").Output()
	if err != nil {
		t.Fatal(err)
	}
	wantStatus := strings.Replace(exitStatusText(t, string(root)), " 4 results differ (diff --exit-code only),", "", 1)
	var first string
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}, {"score", "--help"}, {"score", "-h"}, {"score", "--out", "x", "--help"}} {
		var stdout, stderr bytes.Buffer
		if code := Main(context.Background(), args, &stdout, &stderr); code != exitOK || stderr.Len() != 0 {
			t.Fatalf("%q: exit %d, stderr %q; want exit 0 and none", args, code, stderr.String())
		}
		if first == "" {
			first = stdout.String()
		} else if stdout.String() != first {
			t.Errorf("%q prints another usage:\n%s", args, stdout.String())
		}
	}
	if !strings.Contains(first, "USAGE:\n   crlbatch-beam score [options] INPUT --out OUTPUT [Beam pipeline options]\n") {
		t.Errorf("no command line in\n%s", first)
	}
	for _, f := range append(append(scoreflags.InputFlags(), scoreflags.ResultFlags()...), scoreflags.ProtocolFlags()...) {
		// Each under its own help text, as crlbatch score --help has it.
		usage := strings.ReplaceAll(f.(interface{ GetUsage() string }).GetUsage(), "`", "")
		if !strings.Contains(first, "--"+f.Names()[0]) || !strings.Contains(first, usage) {
			t.Errorf("usage lacks --%s (%s)", f.Names()[0], usage)
		}
	}
	for _, name := range append(slices.Clone(crlbatchOnly), "runner", "endpoint", "environment_type") {
		if !strings.Contains(first, "--"+name) {
			t.Errorf("usage does not name --%s", name)
		}
	}
	if got := exitStatusText(t, first); got != wantStatus {
		t.Errorf("exit statuses %q; want crlbatch's but diff's: %q", got, wantStatus)
	}
}

// exitStatusText is the "Exit status: …." sentence of a usage, on one line.
func exitStatusText(t *testing.T, usage string) string {
	t.Helper()
	_, after, ok := strings.Cut(usage, "Exit status: ")
	end := strings.Index(after, ").")
	if !ok || end < 0 {
		t.Fatalf("no exit statuses in\n%s", usage)
	}
	return strings.Join(strings.Fields(after[:end+2]), " ")
}

// buildCrlbatch builds crlbatch (the parent module's cmd/crlbatch) for a
// test: crlbatch-beam is measured against the real program.
func buildCrlbatch(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "crlbatch")
	build := exec.Command("go", "build", "-o", bin, "./cmd/crlbatch")
	build.Dir = ".."
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build crlbatch: %v\n%s", err, b)
	}
	return bin
}
