package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crlbatch/crlbatch/diff"
	"github.com/crlbatch/crlbatch/published"
	"github.com/crlbatch/crlbatch/scoring"
)

// TestNightlyReportSaysWhatChanged: a --history job's report ends with
// "Changes since the previous result", which is exactly what `crlbatch
// diff` says of the two published results read back (issue 12): nothing on
// the first night, a family and its runs added on the second; a previous
// result that cannot be read is said so and the night still publishes; a
// one-off job's report has no such section.
func TestNightlyReportSaysWhatChanged(t *testing.T) {
	t.Parallel()
	const heading = "## Changes since the previous result"
	for _, c := range modeCases() {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			cfg, st := c.job(t)
			cfg.History = true
			night := func(where []scoring.Filter) (string, string) {
				t.Helper()
				cfg := cfg
				cfg.Where = where
				sum, err := Run(ctx, cfg)
				if err != nil {
					t.Fatal(err)
				}
				id := path.Base(filepath.ToSlash(sum.Result))
				files := st.files(t)
				checkResult(t, files, ResultsDir+id+"/")
				return id, string(files[ResultsDir+id+"/report.md"])
			}
			first, report := night([]scoring.Filter{{Field: "algorithm_id", Values: []string{"ppo", "sac"}}})
			if strings.Contains(report, heading) {
				t.Errorf("the first night's report compares with something:\n%s", report)
			}

			second, report := night(nil)
			b, loc, release, err := published.Open(ctx, cfg.Opener, cfg.Output)
			if err != nil {
				t.Fatal(err)
			}
			defer release()
			old, err := published.Load(ctx, b, loc, loc.Prefix+ResultsDir+first+"/")
			if err != nil {
				t.Fatal(err)
			}
			cur, err := published.Load(ctx, b, loc, loc.Prefix+ResultsDir+second+"/")
			if err != nil {
				t.Fatal(err)
			}
			want := diff.Section(old, cur)
			// The section comes after the report proper, before the
			// figures (drawn after it, from the final report).
			body, _, _ := strings.Cut(report, "\n## Figures\n")
			if !strings.HasSuffix(body, "\n\n"+want) {
				t.Errorf("the second night's report does not end, before its figures, with what diff says of the two results read back:\nwant suffix:\n%s\nreport:\n%s", want, report)
			}
			if d := diff.Compare(old, cur); len(d.FamiliesAdded) != 1 || d.FamiliesAdded[0] != "ewc" {
				t.Errorf("families added %q, want [ewc]", d.FamiliesAdded)
			}
			if !strings.Contains(want, "ewc") {
				t.Errorf("the section does not name the added family:\n%s", want)
			}

			// The second night's families.parquet made unreadable: the
			// third night says so and publishes.
			bad := ResultsDir + second + "/families.parquet"
			if dir, ok := st.(dirStore); ok {
				if err := os.WriteFile(filepath.Join(string(dir), filepath.FromSlash(bad)), []byte("not parquet"), 0o644); err != nil {
					t.Fatal(err)
				}
			} else {
				put(t, b, loc.Prefix+bad, []byte("not parquet"))
			}
			_, report = night(nil)
			if i := strings.Index(report, heading); i < 0 || !strings.Contains(report[i:], "could not be read") {
				t.Errorf("the third night's report does not say the previous result could not be read:\n%s", report)
			}
		})
	}
	t.Run("one-off", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "out")
		if _, err := Run(context.Background(), localJob(localSweep(t), out, nil)); err != nil {
			t.Fatal(err)
		}
		report := string(dirStore(out).files(t)["report.md"])
		if strings.Contains(report, heading) {
			t.Errorf("a one-off report compares with something:\n%s", report)
		}
	})
}

// TestNightlyReportComparesWithTheNewestComplete: when LATEST lags behind
// the newest complete result (a job killed between its manifest and
// LATEST, or LATEST set back by hand), the night compares with the newest
// complete result, as `crlbatch diff --nights 2` will after it, not with
// the older one LATEST names; with no LATEST at all, too.
func TestNightlyReportComparesWithTheNewestComplete(t *testing.T) {
	t.Parallel()
	for _, c := range modeCases() {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			cfg, st := c.job(t)
			cfg.History = true
			var ids []string
			for range 2 {
				sum, err := Run(ctx, cfg)
				if err != nil {
					t.Fatal(err)
				}
				ids = append(ids, path.Base(filepath.ToSlash(sum.Result)))
			}
			b, closeB, _ := openBucket(ctx, cfg.Opener, mustOut(t, cfg))
			defer closeB()
			prefix := mustOut(t, cfg).Prefix
			for _, latest := range []string{ResultsDir + ids[0] + "/\n", ""} {
				if latest != "" {
					put(t, b, prefix+LatestName, []byte(latest))
				} else if err := b.Delete(ctx, prefix+LatestName); err != nil {
					t.Fatal(err)
				}
				sum, err := Run(ctx, cfg)
				if err != nil {
					t.Fatal(err)
				}
				id := path.Base(filepath.ToSlash(sum.Result))
				report := string(st.files(t)[ResultsDir+id+"/report.md"])
				newest := ids[len(ids)-1]
				if !strings.Contains(report, "Previous result: `"+strings.TrimSuffix(mustOut(t, cfg).ObjectURL(prefix+ResultsDir+newest+"/"), "/")) {
					_, section, _ := strings.Cut(report, "## Changes")
					t.Errorf("LATEST %q: the report does not compare with the newest complete result %s:\n%s", latest, newest, section)
				}
				ids = append(ids, id)
			}
		})
	}
}

// TestNightlyJobBehindANewerResult: a job whose clock is behind the start
// of a complete result already in OUTPUT (that job's clock ran ahead, or
// this one's is late) publishes a result that LATEST does not name (LATEST
// moves only forward, by attempt id), and said nothing: no warning, and
// on the first night behind such a result no "Changes" section at all, as
// if the history were empty (branch breakit3). The job must warn, naming
// the newer result, and its report must say that it is not the newest.
func TestNightlyJobBehindANewerResult(t *testing.T) {
	t.Parallel()
	const future = "20991231T235959Z-000000abcdef"
	for _, withEarlier := range []bool{false, true} {
		for _, c := range modeCases() {
			t.Run(fmt.Sprintf("%s/earlier=%v", c.name, withEarlier), func(t *testing.T) {
				ctx := context.Background()
				cfg, st := c.job(t)
				cfg.History = true
				// The first result again, under an id of 2099: a job of a
				// machine whose clock is 73 years ahead.
				first, b, out := publishAhead(t, cfg, st, future, false)
				if !withEarlier {
					for k := range st.files(t) {
						if strings.Contains(k, first) {
							if err := b.Delete(ctx, out.Prefix+k); err != nil {
								t.Fatal(err)
							}
						}
					}
				}
				var log bytes.Buffer
				cfg.Logger = slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelWarn}))
				sum, err := Run(ctx, cfg)
				if err != nil {
					t.Fatal(err)
				}
				id := path.Base(filepath.ToSlash(sum.Result))
				files := st.files(t)
				checkResult(t, files, ResultsDir+id+"/")
				if got := string(files[LatestName]); got != ResultsDir+future+"/\n" {
					t.Errorf("LATEST %q: want it still to name %s", got, future)
				}
				warned := false
				for _, l := range strings.Split(log.String(), "\n") {
					warned = warned || strings.Contains(l, "not the newest") && strings.Contains(l, future)
				}
				if !warned {
					t.Errorf("no warning says the result is not the newest, naming %s:\n%s", future, log.String())
				}
				report := string(files[ResultsDir+id+"/report.md"])
				_, section, found := strings.Cut(report, "## Changes since the previous result")
				if !found {
					t.Fatalf("the report has no Changes section:\n%s", report)
				}
				if !strings.Contains(section, "Not the newest result") || !strings.Contains(section, future) {
					t.Errorf("the report does not say a newer result (%s) is complete:\n%s", future, section)
				}
				if withEarlier != strings.Contains(section, "Previous result: `") {
					t.Errorf("with an earlier result %v, the section compares with one %v:\n%s", withEarlier, !withEarlier, section)
				}
			})
		}
	}
}

func TestAttemptStart(t *testing.T) {
	for id, want := range map[string]time.Time{
		"20261201T020000Z-0412873fa9c1": time.Date(2026, 12, 1, 2, 0, 0, 41287000, time.UTC),
		"20991231T235959Z-000000abcdef": time.Date(2099, 12, 31, 23, 59, 59, 0, time.UTC),
		"20261201T020000Z-999999000000": time.Date(2026, 12, 1, 2, 0, 0, 999999000, time.UTC),
		"not an id":                     {},
		"20261301T020000Z-000000000000": {}, // month 13
	} {
		if got := attemptStart(id); !got.Equal(want) {
			t.Errorf("attemptStart(%q) = %v, want %v", id, got, want)
		}
	}
	start := time.Date(2026, 12, 4, 21, 0, 0, 123456789, time.UTC)
	if got := attemptStart(newAttemptID(start)); !got.Equal(start.Truncate(time.Microsecond)) {
		t.Errorf("attemptStart(newAttemptID(%v)) = %v", start, got)
	}
}
