package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"

	"github.com/crlbatch/crlbatch/writers"
)

// ManifestName is written last: its presence means the output is complete.
const ManifestName = "manifest.json"

// LatestName is the pointer object that --overwrite runs write beside the
// first result: it holds the prefix, relative to OUTPUT, of the newest
// complete result (attempts/<time>/), and moves only after that result's
// manifest is written. Without it, OUTPUT itself holds the only result.
const LatestName = "LATEST"

// attemptTime is the layout of an attempt's name: the job's start (UTC),
// with "-2", "-3"… when a job of the same second took the name first.
const attemptTime = "20060102T150405Z"

// AttemptsDir holds the results of --overwrite runs over a complete earlier
// result, one prefix per attempt, so that the earlier result is never
// overwritten in place (object stores have no atomic rename).
const AttemptsDir = "attempts/"

// checkOutput decides where the results go: under OUTPUT itself when it
// holds no complete result; refused when it does, unless --overwrite, which
// sends them to a fresh attempt prefix under OUTPUT/attempts/.
func (j *job) checkOutput(ctx context.Context, b *blob.Bucket) (target string, err error) {
	exists, err := j.exists(ctx, b, j.out.Prefix+ManifestName)
	if err != nil {
		return "", err
	}
	if exists && !j.cfg.Overwrite {
		return "", Usagef("%s already holds a complete result (%s): pass --overwrite to publish a new one beside it (the %s pointer then names the newest)", j.out, ManifestName, LatestName)
	}
	if !exists {
		return j.out.Prefix, nil
	}
	base := j.out.Prefix + AttemptsDir + j.start.Format(attemptTime)
	for n := 1; ; n++ {
		cand := base + "/"
		if n > 1 {
			cand = fmt.Sprintf("%s-%d/", base, n)
		}
		taken, err := j.exists(ctx, b, cand+ManifestName)
		if err != nil {
			return "", err
		}
		if !taken {
			return cand, nil
		}
	}
}

func (j *job) exists(ctx context.Context, b *blob.Bucket, key string) (bool, error) {
	var exists bool
	err := j.cfg.Retry.retry(ctx, func(ctx context.Context, _ func()) error {
		var err error
		exists, err = b.Exists(ctx, key)
		return err
	})
	if err != nil {
		return false, &StorageError{Op: "read", URL: j.out.ObjectURL(key), Err: redactErr(err)}
	}
	return exists, nil
}

// publish writes the result files under the target prefix (checkOutput's),
// then the manifest, then moves the LATEST pointer. If anything fails before the
// manifest is written, every file this job wrote is deleted, so no partial
// result is left and an earlier result stays as it was. A local result is
// made durable before its manifest is written (see put and syncTree).
func (j *job) publish(ctx context.Context, b *blob.Bucket, target string, rd *read, res *result) (outputs []writers.ManifestOutput, err error) {
	var written []string // keys this job wrote
	var failed string    // the key whose write failed: written or not, who knows
	committed := false
	defer func() {
		if err == nil || committed {
			return
		}
		// Clean up with a fresh context: the job's may be cancelled.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if failed != "" {
			// A failed write leaves nothing as a rule (put aborts it); a
			// store that committed it anyway gets it deleted, and one that
			// cannot even say (a read-only file system) is not warned about.
			if ok, eerr := b.Exists(cctx, failed); eerr == nil && ok {
				written = append(written, failed)
			}
		}
		for _, k := range written {
			if derr := b.Delete(cctx, k); derr != nil && gcerrors.Code(derr) != gcerrors.NotFound {
				j.log.Warn("could not delete a partial output", "object", j.out.ObjectURL(k), "error", redactErr(derr))
			}
		}
		j.removeEmptyDirs(target)
	}()
	for _, f := range res.files {
		key := target + f.name
		if err := j.put(ctx, b, key, f.data); err != nil {
			failed = key
			return nil, err
		}
		written = append(written, key)
		d := writers.NewOutputDigest()
		d.Write(f.data)
		if f.rows != nil {
			outputs = append(outputs, d.TableOutput(f.name, int(*f.rows)))
		} else {
			outputs = append(outputs, d.FileOutput(f.name))
		}
	}
	m := writers.Manifest{
		Version:    j.cfg.Version,
		StartedAt:  j.start,
		FinishedAt: time.Now().UTC(),
		Input:      j.in.String(),
		Params:     json.RawMessage(res.params),
		Objects:    rd.manObj,
		Runs:       res.runs,
		Families:   res.families,
		Outputs:    outputs,
		Notes:      res.notes,
		Skipped:    rd.skipped,
	}
	var buf bytes.Buffer
	if err := writers.WriteManifest(&buf, m); err != nil {
		return nil, err
	}
	// Every file and the folders down to it are on disk before the
	// manifest names them.
	if err := j.syncTree(target); err != nil {
		return nil, err
	}
	if testHookBeforeManifest != nil {
		testHookBeforeManifest(target)
	}
	// A manifest never names a file that is not there as written: another
	// job publishing into OUTPUT at once may have removed it (its tidy
	// takes an attempt without a manifest for a dead job's leftovers).
	if err := j.checkWritten(ctx, b, target, res.files); err != nil {
		return nil, err
	}
	key := target + ManifestName
	if err := j.put(ctx, b, key, buf.Bytes()); err != nil {
		failed = key
		return nil, err
	}
	// The result is complete from here on; a failure to move the pointer
	// is reported, with where the result is, but leaves the result in
	// place (the next --overwrite run moves the pointer: tidy).
	committed = true
	if target != j.out.Prefix {
		rel := strings.TrimPrefix(target, j.out.Prefix)
		if err := j.put(ctx, b, j.out.Prefix+LatestName, []byte(rel+"\n")); err != nil {
			var se *StorageError
			if errors.As(err, &se) {
				se.Err = fmt.Errorf("%w; the new result is complete under %s (its %s is written), but %s does not name it: the next --overwrite run will",
					se.Err, j.out.ObjectURL(target), ManifestName, LatestName)
			}
			return nil, err
		}
	}
	return outputs, nil
}

// checkWritten makes sure every file of the result is still there, with
// the size written, just before the manifest names them.
func (j *job) checkWritten(ctx context.Context, b *blob.Bucket, target string, files []outFile) error {
	for _, f := range files {
		key := target + f.name
		var size int64
		err := j.cfg.Retry.retry(ctx, func(ctx context.Context, _ func()) error {
			a, err := b.Attributes(ctx, key)
			if err == nil {
				size = a.Size
			}
			return err
		})
		if err == nil && size != int64(len(f.data)) {
			err = fmt.Errorf("%d bytes, %d written", size, len(f.data))
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return &StorageError{Op: "write", URL: j.out.ObjectURL(key), Err: fmt.Errorf(
				"the file changed or went before the manifest was written (another job publishing into %s at once?): %w", j.out, redactErr(err))}
		}
	}
	return nil
}

// testHookBeforeManifest, when set, is called with the result's prefix
// just before its files are checked and its manifest written (tests).
var testHookBeforeManifest func(target string)

// put writes one object with retries; a failed attempt is aborted by
// cancelling its writer's context, so no half-written object remains. A
// local file (fileblob) is written under a temporary name in its
// destination folder (no_tmp_dir, publishLocation), fsynced before the
// driver renames it, and its folder fsynced after.
func (j *job) put(ctx context.Context, b *blob.Bucket, key string, data []byte) error {
	err := j.cfg.Retry.retry(ctx, func(ctx context.Context, touch func()) error {
		wctx, cancel := context.WithCancel(ctx)
		defer cancel()
		var file *os.File
		w, err := b.NewWriter(wctx, key, &blob.WriterOptions{ContentType: contentType(key),
			BeforeWrite: func(as func(any) bool) error {
				var f *os.File
				if as(&f) {
					file = f
				}
				return nil
			}})
		if err != nil {
			return err
		}
		abort := func(err error) error {
			cancel()
			w.Close()
			return err
		}
		// Written in chunks, so that an upload that moves counts as progress.
		for rest := data; len(rest) > 0; {
			n := min(len(rest), 1<<20)
			if _, err := w.Write(rest[:n]); err != nil {
				return abort(err)
			}
			rest = rest[n:]
			touch()
		}
		if file != nil {
			// Write flushes nothing fileblob buffers: the bytes are in
			// the file, and go to disk now, before the rename.
			if err := syncFile(file); err != nil {
				return abort(err)
			}
		}
		if err := w.Close(); err != nil {
			return err
		}
		if dir, ok := j.localPath(key); ok {
			return syncDir(filepath.Dir(dir))
		}
		return nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return &StorageError{Op: "write", URL: j.out.ObjectURL(key), Err: redactErr(err)}
	}
	return nil
}

// syncFile and syncDir make a file's bytes and a folder's entries durable;
// tests replace them to watch the order.
var (
	syncFile = func(f *os.File) error { return f.Sync() }
	syncDir  = func(dir string) error {
		d, err := os.Open(dir)
		if err != nil {
			return err
		}
		err = d.Sync()
		if cerr := d.Close(); err == nil {
			err = cerr
		}
		// Some file systems cannot sync a folder; they are no worse off.
		if errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOTSUP) {
			return nil
		}
		return err
	}
)

// publishLocation is the OUTPUT location as publishing opens it: a local
// folder gets its temporary files in the destination folder (fileblob's
// no_tmp_dir), not in $TMPDIR, from where a rename to another file system
// fails ("invalid cross-device link") and where a killed job leaves them.
func publishLocation(l Location) Location {
	if !l.Local {
		return l
	}
	u, err := url.Parse(l.BucketURL)
	if err != nil {
		return l
	}
	q := u.Query()
	q.Set("no_tmp_dir", "true")
	u.RawQuery = q.Encode()
	l.BucketURL = u.String()
	return l
}

// localPath is the file of key under a local OUTPUT.
func (j *job) localPath(key string) (string, bool) {
	if !j.out.Local {
		return "", false
	}
	u, err := url.Parse(j.out.BucketURL)
	if err != nil || u.Path == "" {
		return "", false
	}
	return filepath.Join(filepath.FromSlash(u.Path), filepath.FromSlash(key)), true
}

// syncTree fsyncs, under a local OUTPUT, the folder of prefix and every
// folder above it up to OUTPUT's parent: the driver may have created any
// of them (attempts/<time>/, OUTPUT itself), and a new folder's entry is
// durable only once its parent is synced.
func (j *job) syncTree(prefix string) error {
	dir, ok := j.localPath(prefix)
	if !ok {
		return nil
	}
	root, _ := j.localPath("")
	stop := filepath.Dir(filepath.Clean(root))
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if err := syncDir(d); err != nil {
			return &StorageError{Op: "write", URL: d, Err: err}
		}
		if d == stop || d == filepath.Dir(d) {
			return nil
		}
	}
}

// removeEmptyDirs removes, under a local OUTPUT, the attempt folder of
// prefix and the attempts folder when they hold nothing (fileblob deletes
// files, never folders).
func (j *job) removeEmptyDirs(prefix string) {
	if prefix == j.out.Prefix {
		return
	}
	if dir, ok := j.localPath(prefix); ok {
		os.Remove(dir) // fails, as it should, when not empty
		os.Remove(filepath.Dir(filepath.Clean(dir)))
	}
}

// Leftovers of jobs that did not finish (killed, or the machine lost):
// temporary files of the local driver beside a result, and attempt
// prefixes without a manifest.
var (
	attemptName = regexp.MustCompile(`^[0-9]{8}T[0-9]{6}Z(-[0-9]+)?$`)
	tempName    = regexp.MustCompile(`^(` + LatestName + `|[^/]+\.(parquet|md|json))\.[0-9a-f]+\.tmp$`)
)

// attemptLess orders attempt names by time, then by their "-n".
func attemptLess(a, b string) bool {
	ta, na := splitAttempt(a)
	tb, nb := splitAttempt(b)
	if ta != tb {
		return ta < tb
	}
	return na < nb
}

func splitAttempt(name string) (string, int) {
	t, n, ok := strings.Cut(name, "-")
	if !ok {
		return t, 1
	}
	i, _ := strconv.Atoi(n)
	return t, i
}

// tidy runs once a job has listed its input, before it reads it. It removes what jobs that did not
// finish left under OUTPUT (an attempt prefix without a manifest, the local
// driver's temporary files beside a result, empty attempt folders), and
// makes LATEST name the newest complete attempt if it does not (a job
// killed, or failing, between its manifest and the pointer). Nothing else is
// touched: complete results, and files crlbatch does not write.
// Two jobs publishing into one OUTPUT at once are not supported: one's
// tidy may remove the other's files before its manifest is written
// (docs/decisions.md).
func (j *job) tidy(ctx context.Context, b *blob.Bucket) error {
	attempts := map[string][]string{} // attempt name → its keys
	complete := map[string]bool{}
	var temps []string
	err := j.cfg.Retry.retry(ctx, func(ctx context.Context, _ func()) error {
		clear(attempts)
		clear(complete)
		temps = temps[:0]
		it := b.List(&blob.ListOptions{Prefix: j.out.Prefix})
		for {
			o, err := it.Next(ctx)
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
			rel := strings.TrimPrefix(o.Key, j.out.Prefix)
			if tempName.MatchString(path.Base(rel)) && (!strings.Contains(rel, "/") || strings.HasPrefix(rel, AttemptsDir)) {
				temps = append(temps, o.Key)
				continue
			}
			rest, ok := strings.CutPrefix(rel, AttemptsDir)
			if !ok {
				continue
			}
			name, file, ok := strings.Cut(rest, "/")
			if !ok || !attemptName.MatchString(name) {
				continue
			}
			attempts[name] = append(attempts[name], o.Key)
			if file == ManifestName {
				complete[name] = true
			}
		}
	})
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return &StorageError{Op: "list", URL: j.out.String(), Err: redactErr(err)}
	}
	var doomed []string
	for name, keys := range attempts {
		if !complete[name] {
			doomed = append(doomed, keys...)
		}
	}
	doomed = append(doomed, temps...)
	slices.Sort(doomed)
	for _, k := range doomed {
		if err := j.delete(ctx, b, k); err != nil {
			return err
		}
	}
	if len(doomed) > 0 {
		j.log.Warn("removed what unfinished jobs left (no manifest)", "output", j.out.String(), "objects", len(doomed))
	}
	j.removeEmptyAttempts()

	var newest string
	for name := range complete {
		if newest == "" || attemptLess(newest, name) {
			newest = name
		}
	}
	if newest == "" {
		return nil
	}
	want := AttemptsDir + newest + "/"
	latestKey := j.out.Prefix + LatestName
	var cur []byte
	err = j.cfg.Retry.retry(ctx, func(ctx context.Context, _ func()) error {
		var err error
		cur, err = b.ReadAll(ctx, latestKey)
		if gcerrors.Code(err) == gcerrors.NotFound {
			cur, err = nil, nil
		}
		return err
	})
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return &StorageError{Op: "read", URL: j.out.ObjectURL(latestKey), Err: redactErr(err)}
	}
	if strings.TrimSpace(string(cur)) == want {
		return nil
	}
	j.log.Warn(LatestName+" did not name the newest complete result: it does now",
		"was", strings.TrimSpace(string(cur)), "now", want, "result", j.out.ObjectURL(j.out.Prefix+want))
	return j.put(ctx, b, latestKey, []byte(want+"\n"))
}

// delete removes one object with retries; one already gone is no error.
func (j *job) delete(ctx context.Context, b *blob.Bucket, key string) error {
	err := j.cfg.Retry.retry(ctx, func(ctx context.Context, _ func()) error {
		err := b.Delete(ctx, key)
		if gcerrors.Code(err) == gcerrors.NotFound {
			return nil
		}
		return err
	})
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return &StorageError{Op: "delete", URL: j.out.ObjectURL(key), Err: redactErr(err)}
	}
	return nil
}

// removeEmptyAttempts removes, under a local OUTPUT, attempt folders that
// hold nothing (a job killed between creating one and renaming its first
// file into it), and the attempts folder if that leaves it empty.
func (j *job) removeEmptyAttempts() {
	dir, ok := j.localPath(j.out.Prefix + AttemptsDir)
	if !ok {
		return
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if e.IsDir() && attemptName.MatchString(e.Name()) {
			os.Remove(filepath.Join(dir, e.Name())) // only if empty
		}
	}
	os.Remove(dir)
}

func contentType(key string) string {
	switch {
	case strings.HasSuffix(key, ".parquet"):
		return "application/vnd.apache.parquet"
	case strings.HasSuffix(key, ".md"):
		return "text/markdown; charset=utf-8"
	case strings.HasSuffix(key, ".json"):
		return "application/json"
	}
	return "text/plain; charset=utf-8"
}
