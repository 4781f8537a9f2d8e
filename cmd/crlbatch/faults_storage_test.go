package main

// The storage faults of issue 13 (findings 1, 2, 4, 5 and part of 11),
// through the command: unreadable folders, credentials nested in URL
// parameters, symbolic links, FIFOs, names that look like gocloud escapes,
// --out night:1 and --out mem://.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/blob/memblob"

	"github.com/crlbatch/crlbatch/pipeline"
)

// helperEnv, when set, makes TestHelperCrlbatch run the program with the
// arguments it holds (JSON) and exit with its status: the test binary
// doubles as crlbatch for tests that need a process of their own (a
// dropped-privilege user, a hang to time out).
const helperEnv = "CRLBATCH_TEST_HELPER_ARGS"

func TestHelperCrlbatch(t *testing.T) {
	os.Exit(run(context.Background(), helperArgs(t, helperEnv), os.Stdout, os.Stderr))
}

// sharedDir is a temporary folder every user can enter: the dropped-
// privilege helper must reach its inputs (t.TempDir is private to root).
func sharedDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "crlbatch-faults-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if d != nil && d.IsDir() {
				os.Chmod(p, 0o755)
			}
			return nil
		})
		os.RemoveAll(dir)
	})
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	return dir
}

// helper runs crlbatch ARGS as a process of its own (the test binary), as
// an unprivileged user when unprivileged is set: as uid/gid 65534 when the
// tests run as root, as the current user otherwise. It fails the test
// after timeout, killing the process.
func helper(t *testing.T, dir string, unprivileged bool, timeout time.Duration, args ...string) (int, string, string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "crlbatch.test")
	if _, err := os.Stat(bin); err != nil {
		data, err := os.ReadFile(exe)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(bin, data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	c := child{test: "TestHelperCrlbatch", argsEnv: helperEnv, env: []string{"TMPDIR=" + dir}, bin: bin, dir: dir, timeout: timeout}
	cmd, ctx, cancel := c.command(t, args)
	defer cancel()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if unprivileged && os.Getuid() == 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
	code, err := c.exitStatus(t, ctx, cmd.Run(), args, errb.String())
	if err != nil {
		if unprivileged {
			t.Skipf("cannot start a process as uid 65534 (%v): the unreadable-folder case needs an unprivileged user", err)
		}
		t.Fatal(err)
	}
	return code, out.String(), errb.String()
}

func writeRows(t *testing.T, path string, rows int, label string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for i := 0; i < rows; i++ {
		fmt.Fprintf(&b, `{"step": %d, "reward": %v, "regime_id": %q}`+"\n", i, 0.25+float64(i%4)/8, label)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestUnreadableFoldersAreStorageErrors (issue 13, finding 1): a subfolder
// the user may not read fails score and validate with a storage error
// naming it, instead of being skipped in silence; so does an unreadable
// INPUT folder (not "no object matches").
func TestUnreadableFoldersAreStorageErrors(t *testing.T) {
	t.Parallel()
	dir := sharedDir(t)
	in := filepath.Join(dir, "in")
	writeRows(t, filepath.Join(in, "a.jsonl"), 12, "a")
	writeRows(t, filepath.Join(in, "b.jsonl"), 12, "b")
	writeRows(t, filepath.Join(in, "sub", "c.jsonl"), 12, "c")
	sub := filepath.Join(in, "sub")
	if err := os.Chmod(sub, 0); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"score", in, "--out", filepath.Join(dir, "out1"), "--quiet"},
		{"validate", in, "--quiet"},
	} {
		code, _, stderr := helper(t, dir, true, 60*time.Second, args...)
		if code != exitStorage || !strings.Contains(stderr, sub) || !strings.Contains(stderr, "permission denied") {
			t.Errorf("crlbatch %s with %s unreadable: exit %d, want %d naming it; stderr: %s", args[0], sub, code, exitStorage, stderr)
		}
	}
	os.Chmod(sub, 0o755)
	if err := os.Chmod(in, 0); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := helper(t, dir, true, 60*time.Second, "score", in, "--out", filepath.Join(dir, "out2"), "--quiet")
	if code != exitStorage || !strings.Contains(stderr, in) || strings.Contains(stderr, "no object matches") {
		t.Errorf("unreadable INPUT: exit %d, want %d naming it; stderr: %s", code, exitStorage, stderr)
	}
	os.Chmod(in, 0o755)
}

// TestSpecialFilesAreRefused (issue 13, finding 5): a FIFO (or socket)
// whose name matches --pattern fails the job at once, naming it, instead of
// hanging on its first read; one whose name does not match is ignored like
// any other file.
func TestSpecialFilesAreRefused(t *testing.T) {
	t.Parallel()
	dir := sharedDir(t)
	in := filepath.Join(dir, "in")
	writeRows(t, filepath.Join(in, "a.jsonl"), 12, "a")
	fifo := filepath.Join(in, "pipe.jsonl")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	for _, args := range [][]string{
		{"score", in, "--out", filepath.Join(dir, "out"), "--quiet"},
		{"score", fifo, "--out", filepath.Join(dir, "out"), "--quiet"},
		{"validate", in, "--quiet"},
	} {
		code, _, stderr := helper(t, dir, false, 20*time.Second, args...)
		if code != exitStorage || !strings.Contains(stderr, fifo) || !strings.Contains(stderr, "not a regular file") {
			t.Errorf("crlbatch %s: exit %d, want %d naming %s; stderr: %s", strings.Join(args, " "), code, exitStorage, fifo, stderr)
		}
	}
	if err := os.Rename(fifo, filepath.Join(in, "pipe.txt")); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := crl(t, "score", in, "--out", filepath.Join(dir, "out"), "--quiet"); code != 0 {
		t.Errorf("a FIFO the patterns do not match: exit %d: %s", code, stderr)
	}
}

// TestSymlinks (issue 13, finding 4): links are followed, files and
// folders alike, and their targets' sizes are what de-duplication sees; an
// INPUT that is a link to a folder reads the folder; --out through a link
// into the input is refused; a dangling link or a loop is a storage error
// naming it.
func TestSymlinks(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	in := filepath.Join(root, "in")
	outside := filepath.Join(root, "elsewhere")
	writeRows(t, filepath.Join(in, "a.jsonl"), 12, "a")
	writeRows(t, filepath.Join(outside, "sub", "b.jsonl"), 12, "b")
	writeRows(t, filepath.Join(outside, "c.jsonl"), 12, "c")
	symlink(t, filepath.Join(in, "a.jsonl"), filepath.Join(in, "same-as-a.jsonl"))
	symlink(t, filepath.Join(outside, "sub"), filepath.Join(in, "linked"))
	symlink(t, filepath.Join(outside, "c.jsonl"), filepath.Join(in, "c.jsonl"))
	link := filepath.Join(root, "link-to-in")
	symlink(t, in, link)

	for _, input := range []string{in, link} {
		out := filepath.Join(t.TempDir(), "out")
		code, stdout, stderr := crl(t, "score", input, "--out", out, "--quiet", "--identity-fields", "")
		if code != 0 {
			t.Fatalf("score %s: exit %d: %s", input, code, stderr)
		}
		if !strings.Contains(stdout, "from 4 objects") {
			t.Errorf("score %s: %s, want the 4 objects a.jsonl, c.jsonl, linked/b.jsonl, same-as-a.jsonl", input, stdout)
		}
		report, _ := os.ReadFile(filepath.Join(out, "report.md"))
		if !strings.Contains(string(report), "objects a.jsonl, same-as-a.jsonl hold the same bytes") {
			t.Errorf("score %s: the report does not note the linked duplicate:\n%s", input, report)
		}
	}

	// --out through a link into the input.
	code, _, stderr := crl(t, "score", in, "--out", filepath.Join(link, "results"), "--quiet")
	if code != exitUsage || !strings.Contains(stderr, "inside the input") {
		t.Errorf("--out through a link into the input: exit %d: %s", code, stderr)
	}
	code, _, stderr = crl(t, "score", link, "--out", filepath.Join(in, "results"), "--quiet")
	if code != exitUsage || !strings.Contains(stderr, "inside the input") {
		t.Errorf("--out inside an INPUT given through a link: exit %d: %s", code, stderr)
	}

	// A dangling link and a loop name themselves.
	dangling := filepath.Join(in, "gone.jsonl")
	symlink(t, filepath.Join(root, "nothing-here"), dangling)
	code, _, stderr = crl(t, "score", in, "--out", filepath.Join(t.TempDir(), "out"), "--quiet")
	if code != exitStorage || !strings.Contains(stderr, dangling) {
		t.Errorf("dangling link: exit %d, want %d naming %s: %s", code, exitStorage, dangling, stderr)
	}
	os.Remove(dangling)
	loop := filepath.Join(outside, "sub", "loop")
	symlink(t, outside, loop)
	code, _, stderr = crl(t, "score", in, "--out", filepath.Join(t.TempDir(), "out"), "--quiet")
	if code != exitStorage || !strings.Contains(stderr, "loop") || !strings.Contains(stderr, filepath.Join(in, "linked", "loop")) {
		t.Errorf("link loop: exit %d, want %d naming it: %s", code, exitStorage, stderr)
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("symlink: %v", err)
	}
}

// TestLocalNamesAreLiteral (issue 13, finding 11): a local name that
// looks like one of gocloud's escapes (__0x41__) is read as it is.
func TestLocalNamesAreLiteral(t *testing.T) {
	t.Parallel()
	in := filepath.Join(t.TempDir(), "in")
	writeRows(t, filepath.Join(in, "a__0x41__.jsonl"), 12, "a")
	writeRows(t, filepath.Join(in, "aB.jsonl"), 12, "b")
	writeRows(t, filepath.Join(in, "sub__0x2f__x", "c.jsonl"), 12, "c")
	out := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := crl(t, "score", in, "--out", out, "--quiet", "--identity-fields", "")
	if code != 0 || !strings.Contains(stdout, "from 3 objects") {
		t.Fatalf("exit %d: %s%s", code, stdout, stderr)
	}
	m, _ := os.ReadFile(filepath.Join(out, "manifest.json"))
	for _, k := range []string{"a__0x41__.jsonl", "sub__0x2f__x/c.jsonl"} {
		if !strings.Contains(string(m), `"`+k+`"`) {
			t.Errorf("manifest.json does not name %s:\n%s", k, m)
		}
	}
}

// TestOutLocations (issue 13, finding 11): --out night:1 is a folder, not
// a URL; --out mem:// is refused with a usage error (the result would be
// gone when the process ends).
//
// Not parallel (see TestMain): it changes the working folder (t.Chdir).
func TestOutLocations(t *testing.T) {
	in := workedExample(t)
	t.Chdir(t.TempDir())
	code, stdout, stderr := crl(t, "score", in, "--out", "night:1", "--quiet")
	if code != 0 {
		t.Fatalf("--out night:1: exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join("night:1", "manifest.json")); err != nil {
		t.Errorf("--out night:1: %v; stdout: %s", err, stdout)
	}
	for _, out := range []string{"mem://", "mem://lab/results"} {
		code, _, stderr := crl(t, "score", in, "--out", out, "--quiet")
		if code != exitUsage || !strings.Contains(stderr, "mem://") {
			t.Errorf("--out %s: exit %d, want %d: %s", out, code, exitUsage, stderr)
		}
	}
	// The engine still writes to mem:// through an Opener of its own.
	op := sharedMem()
	cfg := pipeline.DefaultConfig()
	cfg.Input, cfg.Output, cfg.Opener, cfg.Resamples = in, "mem://lab/results", op, 200
	if _, err := pipeline.Run(context.Background(), cfg); err != nil {
		t.Errorf("pipeline.Run to mem:// through an Opener: %v", err)
	}
}

// sharedMem is an Opener that opens one in-memory bucket for every URL.
func sharedMem() pipeline.Opener {
	b := memblob.OpenBucket(nil)
	return func(context.Context, string) (*blob.Bucket, func() error, error) {
		return b, func() error { return nil }, nil
	}
}

// TestRedactionProperty (issue 13, finding 2): for random locations with
// credentials in the user part, in any query parameter, nested in a
// parameter once or twice percent-encoded, and in the errors of the store,
// no secret reaches any output file, log line, error, stdout or stderr.
//
// Not parallel (see TestMain): it sets AWS_* with t.Setenv (process-wide).
func TestRedactionProperty(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "testkey")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "testsecret123")
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	t.Setenv("AWS_MAX_ATTEMPTS", "1")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String() // nothing listens here once closed
	ln.Close()
	// A store that refuses every request (403): it fails at once, where a
	// closed port is retried for seconds.
	deny := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprintf(w, "<Error><Code>AccessDenied</Code><Message>denied %s</Message></Error>", r.URL)
	}))
	t.Cleanup(deny.Close) // after the parallel cases below, not when this function returns
	denied := strings.TrimPrefix(deny.URL, "http://")

	in := workedExample(t)
	rng := rand.New(rand.NewPCG(13, 2))
	for i := 0; i < 40; i++ {
		id, secret := "AKIA"+randWord(rng, 12), randWord(rng, 10)+"/+="+randWord(rng, 6)
		secrets := []string{id, secret}
		loc := credentialURL(rng, id, secret, denied)
		// Each case is a subtest of its own, run beside the others (the
		// parent's environment holds for them all): the locations are drawn
		// here, in order, so every case is the one it was.
		t.Run(fmt.Sprintf("case%02d", i), func(t *testing.T) {
			t.Parallel()
			check := func(what, text string) {
				t.Helper()
				for _, s := range secrets {
					for _, form := range []string{s, url.QueryEscape(s), url.PathEscape(s), strings.TrimRight(s[:len(s)-7], "/+=")} {
						if len(form) >= 6 && strings.Contains(text, form) {
							t.Errorf("case %d, %s: %s shows %q:\n%s", i, loc, what, form, text)
						}
					}
				}
			}

			// Through the engine, to and from an in-memory bucket under the
			// location's parameters: every output file and log line.
			var logs bytes.Buffer
			cfg := pipeline.DefaultConfig()
			mem := "mem://" + strings.TrimPrefix(loc, "s3://")
			op := sharedMem()
			b, _, _ := op(context.Background(), "")
			data, _ := os.ReadFile(filepath.Join(in, "seed000.jsonl"))
			b.WriteAll(context.Background(), "in/seed000.jsonl", data, nil)
			cfg.Input, cfg.Output, cfg.Opener, cfg.Resamples = withPath(mem, "in"), withPath(mem, "out"), op, 200
			cfg.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
			sum, err := pipeline.Run(context.Background(), cfg)
			if err != nil {
				t.Fatalf("case %d: %s: %v", i, mem, err)
			}
			check("the summary", fmt.Sprint(*sum))
			check("the log", logs.String())
			it := b.List(&blob.ListOptions{Prefix: "out/"})
			for {
				o, err := it.Next(context.Background())
				if err == io.EOF {
					break
				}
				data, _ := b.ReadAll(context.Background(), o.Key)
				check(o.Key, string(data))
			}

			// A store that fails quoting the location in its error.
			cfg.Opener = func(_ context.Context, u string) (*blob.Bucket, func() error, error) {
				return nil, nil, fmt.Errorf("dial %s (%s): connection refused", u, url.QueryEscape(u))
			}
			logs.Reset()
			_, err = pipeline.Run(context.Background(), cfg)
			check("the error of a failing opener", fmt.Sprint(err))
			check("the log", logs.String())

			// An S3 endpoint nobody answers (one attempt: the SDK retries a
			// refused connection for seconds on its own).
			if i < 2 {
				cfg := pipeline.DefaultConfig()
				cfg.Input, cfg.Output = strings.Replace(loc, denied, closed, 1), filepath.Join(t.TempDir(), "out")
				cfg.Retry.Attempts = 1
				logs.Reset()
				cfg.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				_, err := pipeline.Run(ctx, cfg)
				cancel()
				if err == nil {
					t.Errorf("case %d: %s: read from a closed port", i, cfg.Input)
				}
				check("the error of an unreachable store", fmt.Sprint(err))
				check("the log", logs.String())
			}

			// Through the command, against an S3 endpoint that refuses every
			// request: as INPUT (a listing error), as --out beside a local
			// INPUT, and with a parameter the driver does not know.
			if i%8 == 0 {
				for _, args := range [][]string{
					{"score", loc, "--out", filepath.Join(t.TempDir(), "out"), "--log-level", "debug"},
					{"score", in, "--out", withPath(loc, "out"), "--log-level", "debug"},
					{"validate", loc + "&bogus_option=" + url.QueryEscape(secret)},
				} {
					code, stdout, stderr := crl(t, args...)
					if code == 0 {
						t.Errorf("case %d: crlbatch %s succeeded", i, strings.Join(args, " "))
					}
					check("stdout", stdout)
					check("stderr", stderr)
				}
			}
		})
	}
}

// credentialURL places id and secret in an S3 URL of a bucket behind
// endpoint host:port (loopback), in one of the ways a user may write them.
func credentialURL(rng *rand.Rand, id, secret, hostport string) string {
	ep := "http://" + url.PathEscape(id) + ":" + url.QueryEscape(secret) + "@" + hostport
	tail := "&use_path_style=true&region=us-east-1"
	switch rng.IntN(7) {
	case 0: // the endpoint's user part, as written
		return "s3://traces?endpoint=" + ep + tail
	case 1: // the same, percent-encoded
		return "s3://traces?endpoint=" + url.QueryEscape(ep) + tail
	case 2: // encoded twice
		return "s3://traces?endpoint=" + url.QueryEscape(url.QueryEscape(ep)) + tail
	case 3: // secret-named parameters
		return "s3://traces?endpoint=http://" + hostport + "&access_key_id=" + id + "&secret_access_key=" + url.QueryEscape(secret) + tail
	case 4: // inside another parameter's nested URL
		nested := "http://" + hostport + "/?X-Amz-Credential=" + id + "&X-Amz-Signature=" + url.QueryEscape(secret)
		return "s3://traces?endpoint=http://" + hostport + "&awssdk=" + url.QueryEscape(nested) + tail
	case 5: // the outer URL's user part
		return "s3://" + url.PathEscape(id) + ":" + url.QueryEscape(secret) + "@traces?endpoint=http://" + hostport + tail
	default: // a parameter of any name holding a URL with credentials
		return "s3://traces?endpoint=http://" + hostport + "&" + randWord(rng, 5) + "=" + url.QueryEscape(ep) + tail
	}
}

// withPath puts a key prefix into a bucket URL.
func withPath(u, p string) string {
	b, q, _ := strings.Cut(u, "?")
	if i := strings.LastIndex(b, "@"); i >= 0 && !strings.Contains(b[i:], "/") {
		return b + "/" + p + "?" + q
	}
	return strings.TrimSuffix(b, "/") + "/" + p + "?" + q
}

func randWord(rng *rand.Rand, n int) string {
	const letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, n)
	for i := range b {
		b[i] = letters[rng.IntN(len(letters))]
	}
	return string(b)
}

// TestHiddenObjectsNoted: objects read from below a folder, or under a
// name, that starts with '.' or '_' (Jupyter's checkpoint copy of a trace,
// an attempt Spark left in _temporary), which dataset readers leave out,
// are read (the patterns match them) and named in a warning and a report
// note (validate prints it), at most three of them and a count; a Hive folder _x=1 and an
// INPUT below or naming such a folder are not noted.
func TestHiddenObjectsNoted(t *testing.T) {
	t.Parallel()
	in := filepath.Join(t.TempDir(), "in")
	writeRows(t, filepath.Join(in, "ppo", "a.jsonl"), 12, "a")
	writeRows(t, filepath.Join(in, "ppo", ".ipynb_checkpoints", "a-checkpoint.jsonl"), 8, "a")
	writeRows(t, filepath.Join(in, "_temporary", "0", "task_1", "b.jsonl"), 12, "b")
	writeRows(t, filepath.Join(in, "_shard=1", "c.jsonl"), 12, "c")
	writeRows(t, filepath.Join(in, "_notes.jsonl"), 12, "d")
	writeRows(t, filepath.Join(in, ".old.jsonl"), 12, "e")
	note := "4 objects read lie under a folder or name starting with '.' or '_' (.old.jsonl, _notes.jsonl, _temporary/0/task_1/b.jsonl and 1 more)"
	out := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := crl(t, "score", in, "--out", out, "--quiet", "--identity-fields", "")
	if code != 0 || !strings.Contains(stdout, "from 6 objects") {
		t.Fatalf("score: exit %d: %s%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "WARN") || !strings.Contains(stderr, note) {
		t.Errorf("no warning %q: %s", note, stderr)
	}
	report, _ := os.ReadFile(filepath.Join(out, "report.md"))
	if !strings.Contains(strings.ReplaceAll(string(report), `\_`, "_"), "- "+note+", which Spark, pyarrow and Hive leave out of a dataset") {
		t.Errorf("the report does not note them:\n%s", report)
	}
	if code, stdout, stderr := crl(t, "validate", in, "--identity-fields", ""); code != 0 || !strings.Contains(stdout, "note: "+note) {
		t.Errorf("validate: exit %d, no note %q: %s%s", code, note, stdout, stderr)
	}
	for _, input := range []string{filepath.Join(in, "_temporary"), filepath.Join(in, ".old.jsonl"), filepath.Join(in, "_shard=1")} {
		out := filepath.Join(t.TempDir(), "out")
		code, _, stderr := crl(t, "score", input, "--out", out, "--quiet", "--identity-fields", "")
		report, _ := os.ReadFile(filepath.Join(out, "report.md"))
		if code != 0 || strings.Contains(stderr, "starting with") || strings.Contains(string(report), "starting with") {
			t.Errorf("score %s: exit %d, a note where none is due: %s", input, code, stderr)
		}
	}
}
