package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// usageCases (TestMistakesAreUsageErrors) are the mistakes of issue 12 that must fail before any work
// with exit status 2 and a message that says what would have been right.
// SWEEP is the example sweep, OUT a fresh output folder.
var usageCases = []struct {
	name string
	args []string
	want []string // substrings of stderr, in order
}{
	// A --group-by field that no run has, or a --baseline naming no family.
	{"group-by typo", []string{"score", "SWEEP", "--out", "OUT", "--group-by", "algoritm_id"},
		[]string{`crlbatch: --group-by algoritm_id: no run has the field "algoritm_id"; the runs have algorithm_id, `, "(see docs/trace-format.md)"}},
	{"group-by one field of two", []string{"score", "SWEEP", "--out", "OUT", "--group-by", "algorithm_id,sed"},
		[]string{`--group-by algorithm_id,sed: no run has the field "sed"; the runs have seed, `}},
	{"group-by under where", []string{"score", "SWEEP", "--out", "OUT", "--group-by", "nope", "--where", "algorithm_id=ppo"},
		[]string{`no run kept by --where has the field "nope"`}},
	{"baseline typo", []string{"score", "SWEEP", "--out", "OUT", "--baseline", "sca"},
		[]string{"crlbatch: --baseline sca: no family of that name (grouped by algorithm_id); the families are sac, ", "--allow-missing-baseline"}},
	{"baseline of another grouping", []string{"score", "SWEEP", "--out", "OUT", "--baseline", "sac", "--group-by", "algorithm_id,seed"},
		[]string{"--baseline sac: no family of that name (grouped by algorithm_id,seed); the families are sac/0, sac/1, sac/2, "}},
	{"baseline in a job file", []string{"score", "--config", "JOB", "--out", "OUT"},
		[]string{"--baseline sac2: no family of that name", "the families are sac, "}},

	// Unknown commands and flags, with the closest one.
	{"unknown command", []string{"scroe"},
		[]string{`crlbatch: unknown command "scroe"; did you mean score? (commands: score, bound, validate, check-entry, synth, latest, diff, convert, cache, version, completion; see crlbatch --help)`}},
	{"unknown help topic", []string{"help", "valdate"}, []string{`crlbatch: unknown command "valdate"; did you mean validate?`}},
	{"unknown command far from any", []string{"frobnicate"}, []string{`crlbatch: unknown command "frobnicate" (commands: `}},
	{"unknown shell", []string{"completion", "bassh"}, []string{`crlbatch: completion: unknown shell "bassh"; did you mean bash? (shells: bash, zsh, fish, pwsh)`}},
	{"unknown cache command", []string{"cache", "stat", "OUT"}, []string{`crlbatch: cache: unknown command "stat"; did you mean stats? (commands: stats, prune; see crlbatch cache --help)`}},
	{"unknown flag of cache prune", []string{"cache", "prune", "OUT", "--max-byte", "3"},
		[]string{"crlbatch: cache prune: unknown flag --max-byte; did you mean --max-bytes? (see crlbatch cache prune --help)"}},
	{"cache stats without URL", []string{"cache", "stats"}, []string{`crlbatch: cache stats: missing URL (see crlbatch cache stats --help)`}},
	{"unknown flag", []string{"score", "SWEEP", "--out", "OUT", "--baselin", "ppo"},
		[]string{"crlbatch: score: unknown flag --baselin; did you mean --baseline? (see crlbatch score --help)"}},
	{"unknown flag of validate", []string{"validate", "SWEEP", "--concurency", "2"},
		[]string{"crlbatch: validate: unknown flag --concurency; did you mean --concurrency?"}},
	{"unknown flag far from any", []string{"score", "SWEEP", "--out", "OUT", "--no-such-flag"},
		[]string{"crlbatch: score: unknown flag --no-such-flag (see crlbatch score --help)"}},
	{"unknown root flag", []string{"--verbose", "score"}, []string{"crlbatch: unknown flag --verbose (see crlbatch --help)"}},
	{"unknown job file key", []string{"score", "--config", "BADKEY", "--out", "OUT"},
		[]string{`line 2: unknown key "baselin"; did you mean baseline? (keys are the flag names of crlbatch score)`}},

	// Numbers that are not: which flag wanted what.
	{"int flag", []string{"score", "SWEEP", "--out", "OUT", "--concurrency", "two"},
		[]string{`crlbatch: --concurrency "two": want a whole number, such as 4`}},
	{"float flag", []string{"score", "SWEEP", "--out", "OUT", "--alpha", "most"}, []string{`crlbatch: --alpha "most": want a number, such as 0.5`}},
	{"uint flag", []string{"score", "SWEEP", "--out", "OUT", "--bootstrap-seed", "-3"},
		[]string{`crlbatch: --bootstrap-seed "-3": want a whole number of at least 0`}},
	{"protocol int flag", []string{"score", "SWEEP", "--out", "OUT", "--protocol", "safecrl", "--window-episodes", "1.5"},
		[]string{`crlbatch: --window-episodes "1.5": want a whole number`}},
	{"number in a job file", []string{"score", "--config", "BADNUM", "--out", "OUT"},
		[]string{`BADNUM.yaml: line 2: concurrency "four": want a whole number`}},

	// A job file is read by no shell: "out: ~/results" wrote into a folder
	// named "~" under the working directory.
	{"tilde in a job file", []string{"score", "--config", "TILDE", "--out", "OUT"},
		[]string{`TILDE.yaml: line 2: spill-dir "~/spill": ~ is not expanded in a job file (no shell reads it): write the path in full`}},
	{"tilde input in a job file", []string{"score", "--config", "HOMEIN", "--out", "OUT"},
		[]string{`HOMEIN.yaml: line 1: input "~": ~ is not expanded in a job file`}},

	// --out holds {date} and no other placeholder: "{Date}" or "{time}"
	// became a folder of that name.
	{"out placeholder case", []string{"score", "SWEEP", "--out", "OUT/{Date}"}, []string{"{Date} is not a placeholder: only {date} (the job's UTC date) is replaced"}},
	{"out placeholder unknown", []string{"score", "SWEEP", "--out", "OUT/{date}/{time}"}, []string{"{time} is not a placeholder"}},

	// cache stats and prune of a folder that does not exist: a typo, not an
	// empty cache (it printed "entries: 0", exit 0).
	{"cache stats of no folder", []string{"cache", "stats", "OUT/nope"}, []string{"nope: no such file or folder"}},
	{"cache prune of no folder", []string{"cache", "prune", "OUT/nope", "--max-bytes", "0"}, []string{"nope: no such file or folder"}},

	// synth: a 0 given on the command line is a 0, not "the default" (it
	// wrote 3 seeds of 600 rows in one object each).
	{"synth no seeds", []string{"synth", "--out", "OUT", "--seeds", "0"}, []string{"crlbatch: synth: seeds = 0 (want ≥ 1)"}},
	{"synth no steps", []string{"synth", "--out", "OUT", "--steps", "0"}, []string{"crlbatch: synth: steps = 0 (want ≥ 6, the intervals)"}},
	{"synth no intervals", []string{"synth", "--out", "OUT", "--intervals", "0"}, []string{"crlbatch: synth: intervals = 0 (want ≥ 2)"}},
	{"synth no files", []string{"synth", "--out", "OUT", "--split-files", "0"}, []string{"crlbatch: synth: split files = 0 (want ≥ 1)"}},

	// convert: a concurrency below 1 is refused as score refuses it (it
	// converted on one goroutine).
	{"convert concurrency 0", []string{"convert", "SWEEP", "--out", "OUT", "--concurrency", "0"}, []string{"crlbatch: --concurrency 0: want at least 1"}},
	{"convert concurrency -2", []string{"convert", "SWEEP", "--out", "OUT", "--concurrency", "-2"}, []string{"crlbatch: --concurrency -2: want at least 1"}},

	// bound: a bad flag fails before the ceiling is printed (it printed
	// the first line, then failed).
	// A --pattern that matches no base name: a "/" (a base name has none),
	// and for convert as for score, an empty or broken glob (convert said
	// "no object matches", exit 1).
	{"pattern with a folder", []string{"score", "SWEEP", "--out", "OUT", "--pattern", "ppo/*.jsonl"},
		[]string{`crlbatch: --pattern "ppo/*.jsonl": a pattern matches an object's base name (after its last /), which has no /: give the folder in INPUT`}},
	{"validate pattern with a folder", []string{"validate", "SWEEP", "--pattern", "*/*.jsonl"}, []string{`crlbatch: --pattern "*/*.jsonl": a pattern matches an object's base name`}},
	{"convert pattern with a folder", []string{"convert", "SWEEP", "--out", "OUT", "--pattern", "ppo/*.jsonl"}, []string{`crlbatch: --pattern "ppo/*.jsonl": a pattern matches an object's base name`}},
	{"convert broken pattern", []string{"convert", "SWEEP", "--out", "OUT", "--pattern", "["}, []string{`crlbatch: --pattern "[": syntax error in pattern`}},
	{"convert empty pattern", []string{"convert", "SWEEP", "--out", "OUT", "--pattern", ""}, []string{`crlbatch: --pattern: an empty glob matches no object`}},
	{"bound interval 0", []string{"bound", "experiment", "--interval", "0"}, []string{"crlbatch: --interval 0: want at least 1"}},
	{"bound contains-final alone", []string{"bound", "experiment", "--contains-final"}, []string{"crlbatch: --contains-final needs --interval"}},
}

func TestMistakesAreUsageErrors(t *testing.T) {
	t.Parallel()
	sweep, err := filepath.Abs("../../configs/example-sweep")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range usageCases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "out")
			files := map[string]string{"JOB": "baseline: sac2\n", "BADKEY": "baselin: ppo\n", "BADNUM": "concurrency: four\n", "TILDE": "spill-dir: ~/spill\n"}
			r := []string{"SWEEP", sweep, "OUT", out}
			for name, body := range files {
				f := filepath.Join(dir, name+".yaml")
				if err := os.WriteFile(f, []byte("input: "+sweep+"\n"+body), 0o644); err != nil {
					t.Fatal(err)
				}
				r = append(r, name, f)
			}
			homeIn := filepath.Join(dir, "HOMEIN.yaml")
			if err := os.WriteFile(homeIn, []byte("input: \"~\"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			r = append(r, "HOMEIN", homeIn)
			args := make([]string, len(c.args))
			for i, a := range c.args {
				args[i] = strings.NewReplacer(r...).Replace(a)
			}
			if args[0] == "score" || args[0] == "validate" {
				args = append(args, "--quiet")
			}
			code, stdout, stderr := crl(t, args...)
			if code != exitUsage {
				t.Fatalf("exit %d, want %d (usage)\nstdout: %s\nstderr: %s", code, exitUsage, stdout, stderr)
			}
			if stdout != "" {
				t.Errorf("a usage error printed on stdout: %q", stdout)
			}
			rest := stderr
			for _, w := range c.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("stderr lacks %q (in order)\nstderr: %s", w, stderr)
				}
				rest = rest[i+len(w):]
			}
			if _, err := os.Stat(out); err == nil {
				if names := listDir(t, out); len(names) > 0 {
					t.Errorf("a usage error published %v", names)
				}
			}
		})
	}
}

// TestCompletion: crlbatch completion SHELL prints a script for bash, zsh
// and fish that asks crlbatch itself for the candidates, and crlbatch
// answers with its commands and a command's flags.
//
// Not parallel (see TestMain): it sets os.Args, the process's, which
// urfave/cli reads for a completion request.
func TestCompletion(t *testing.T) {
	for shell, want := range map[string][]string{
		"bash": {"__crlbatch_bash_autocomplete", "complete ", "--generate-shell-completion"},
		"zsh":  {"#compdef crlbatch", "compdef _crlbatch crlbatch", "--generate-shell-completion"},
		"fish": {"complete -c crlbatch", "__crlbatch_perform_completion", "--generate-shell-completion"},
	} {
		code, stdout, stderr := crl(t, "completion", shell)
		if code != 0 {
			t.Fatalf("completion %s: exit %d: %s", shell, code, stderr)
		}
		for _, w := range want {
			if !strings.Contains(stdout, w) {
				t.Errorf("completion %s: the script lacks %q", shell, w)
			}
		}
	}
	// urfave/cli reads the completion request from os.Args, as the
	// scripts' call of crlbatch sets it.
	complete := func(args ...string) string {
		saved := os.Args
		defer func() { os.Args = saved }()
		os.Args = append([]string{"crlbatch"}, args...)
		_, stdout, _ := crl(t, args...)
		return stdout
	}
	stdout := complete("--generate-shell-completion")
	for _, c := range []string{"score:", "validate:", "bound:", "completion:"} {
		if !strings.Contains(stdout, "\n"+c) && !strings.HasPrefix(stdout, c) {
			t.Errorf("the candidates for a command lack %s\n%s", c, stdout)
		}
	}
	stdout = complete("score", "-", "--generate-shell-completion")
	for _, f := range []string{"--baseline:", "--group-by:", "--allow-missing-baseline:", "--window-episodes:"} {
		if !strings.Contains(stdout, f) {
			t.Errorf("the candidates for score's flags lack %s\n%s", f, stdout)
		}
	}
	if _, stdout, _ := crl(t, "--help"); !strings.Contains(stdout, "completion") {
		t.Error("crlbatch --help does not list the completion command")
	}
}

// TestHelpReadsWell: every command's --help shows each flag's placeholder
// as a word of its own (urfave/cli takes the first backquoted word of a
// usage as the placeholder: `anchor: ceiling` made "--config anchor:
// ceiling"), no stray backquote, and one default per flag.
func TestHelpReadsWell(t *testing.T) {
	t.Parallel()
	placeholder := regexp.MustCompile(`^\s+--[a-z0-9-]+(?:, -[a-z])? ([^ ]+(?: [^ -][^ ]*)?)\s{2,}`)
	for _, c := range []string{"score", "validate", "bound", "check-entry", "synth", "completion"} {
		_, stdout, _ := crl(t, c, "--help")
		for _, line := range strings.Split(stdout, "\n") {
			if !strings.HasPrefix(strings.TrimSpace(line), "--") {
				continue
			}
			if strings.Contains(line, "`") {
				t.Errorf("%s --help: a backquote: %q", c, line)
			}
			if strings.Count(line, "(default") > 1 {
				t.Errorf("%s --help: two defaults: %q", c, line)
			}
			if m := placeholder.FindStringSubmatch(line); m != nil && strings.ContainsAny(m[1], ":") {
				t.Errorf("%s --help: a garbled placeholder %q: %q", c, m[1], line)
			}
		}
	}
	_, stdout, _ := crl(t, "score", "--help")
	for _, w := range []string{"--config FILE ", "--group-by FIELD ", "--rank-metric METRIC ", "--baseline FAMILY ", "--window-episodes W ", "--bound X ", "(default: none)"} {
		if !strings.Contains(stdout, w) {
			t.Errorf("score --help lacks %q", w)
		}
	}
}
