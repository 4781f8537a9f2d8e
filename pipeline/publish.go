package pipeline

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"
	"golang.org/x/sync/errgroup"

	"github.com/crlbatch/crlbatch/internal/testhook"
	"github.com/crlbatch/crlbatch/storage"
	"github.com/crlbatch/crlbatch/writers"
)

// The output layout (docs/decisions.md, "Publishing: one-off and nightly").
//
// A one-off job writes its files directly under OUTPUT; --overwrite
// replaces them in place (manifest removed first, written last). A nightly
// job (--history) writes every result under OUTPUT/results/<attempt-id>/,
// then its history partitions, then moves OUTPUT/LATEST to it.
const (
	// ManifestName is written last: its presence means the result is
	// complete.
	ManifestName = "manifest.json"
	// LatestName holds "results/<attempt-id>/\n": the newest complete
	// result of a nightly OUTPUT. It moves only forward, and only after
	// that result's manifest is written.
	LatestName = "LATEST"
	// ResultsDir holds one prefix per attempt of a nightly OUTPUT.
	ResultsDir = "results/"
	// HistoryDir holds the Hive-partitioned view of a nightly OUTPUT:
	// history/<table>/night=YYYY-MM-DD/attempt=<id>/part.parquet.
	HistoryDir = "history/"
	// legacyAttempts is where --overwrite put results before the nightly
	// layout; such an OUTPUT is left as it is and refused.
	legacyAttempts = "attempts/"
)

// HistoryTables are the tables of a result copied into the history view,
// when the protocol writes them.
var HistoryTables = []string{"families", "run_summary"}

// attemptID is an attempt id: the job's UTC start to the second, then a
// suffix of twelve characters, the microseconds of the start (six digits)
// and six random hex digits, so that ids sort by start time even within
// one second, and two jobs started together differ:
// 20261201T020000Z-0412873fa9c1.
var attemptID = regexp.MustCompile(`^[0-9]{8}T[0-9]{6}Z-[0-9]{6}[0-9a-f]{6}$`)

func newAttemptID(start time.Time) string {
	var r [3]byte
	rand.Read(r[:])
	start = start.UTC()
	return fmt.Sprintf("%s-%06d%s", start.Format("20060102T150405Z"), start.Nanosecond()/1000, hex.EncodeToString(r[:]))
}

// night is the UTC date of an attempt id, YYYY-MM-DD.
func night(id string) string { return id[:4] + "-" + id[4:6] + "-" + id[6:8] }

// historyKey is the history view's object of one table of one attempt.
func historyKey(table, id string) string {
	return HistoryDir + table + "/night=" + night(id) + "/attempt=" + id + "/part.parquet"
}

// checkOutput decides where the results go and claims it, before any
// work: a one-off job claims OUTPUT (jobClaim) and refuses an OUTPUT that
// holds a result without --overwrite; a nightly job claims a fresh
// attempt id. Release (deferred by Run) lets go of the claim.
func (j *job) checkOutput(ctx context.Context, b *blob.Bucket) (target string, err error) {
	j.attempt = newAttemptID(j.start)
	latest, hasLatest, err := j.readLatest(ctx, b)
	if err != nil {
		return "", err
	}
	if hasLatest && !strings.HasPrefix(latest, ResultsDir) && !strings.HasPrefix(latest, "attempts/") {
		return "", Usagef("%s holds a %s that was not written by crlbatch (it names %q, not %s<attempt-id>/): remove it or choose another --out", j.out, LatestName, latest, ResultsDir)
	}
	if hasLatest && !strings.HasPrefix(latest, ResultsDir) {
		return "", Usagef("%s holds results in the attempts/ layout of an earlier crlbatch (%s names %q): move them aside or choose another --out (docs/decisions.md, \"Publishing: one-off and nightly\")", j.out, LatestName, latest)
	}
	if j.cfg.History {
		if top, err := j.exists(ctx, b, j.out.Prefix+ManifestName); err != nil {
			return "", err
		} else if top {
			return "", Usagef("%s holds a one-off result (%s at its top): --history needs an OUTPUT of its own", j.out, ManifestName)
		}
		for try := 0; ; try++ {
			ok, err := j.create(ctx, b, j.out.Prefix+attemptClaims+j.attempt+".json", j.claimBytes())
			if err != nil {
				return "", err
			}
			if ok {
				break
			}
			if try == 3 {
				return "", &StorageError{Op: "write", URL: j.out.ObjectURL(attemptClaims), Err: errors.New("no free attempt id in four tries")}
			}
			j.attempt = newAttemptID(j.start)
		}
		j.claimed = j.out.Prefix + attemptClaims + j.attempt + ".json"
		return j.out.Prefix + ResultsDir + j.attempt + "/", nil
	}
	holder, err := j.acquire(ctx, b, j.out.Prefix+jobClaim, jobClaimAge)
	if err != nil {
		return "", err
	}
	if holder != nil {
		return "", Usagef("%s is being published into by %s: two one-off jobs cannot publish into one OUTPUT at once (a nightly OUTPUT takes --history, where they can); if that job is gone, delete %s, or wait: %s", j.out, holder, j.out.ObjectURL(j.out.Prefix+jobClaim), holder.stale(jobClaimAge))
	}
	j.claimed = j.out.Prefix + jobClaim
	j.tidyClaims(ctx, b)
	defer func() {
		if err != nil {
			j.release(ctx, b)
		}
	}()
	defer Recover(&err) // Run's deferred release is not in place yet
	if hasLatest {
		return "", Usagef("%s holds a nightly history (%s names %s): publish into it with --history, or choose another --out", j.out, LatestName, latest)
	}
	exists, err := j.exists(ctx, b, j.out.Prefix+ManifestName)
	if err != nil {
		return "", err
	}
	if exists && !j.cfg.Overwrite {
		return "", Usagef("%s already holds a complete result (%s): pass --overwrite to replace it in place, or --history for a nightly OUTPUT that keeps every result", j.out, ManifestName)
	}
	j.replacing = exists
	return j.out.Prefix, nil
}

// release lets go of the claim checkOutput took (once).
func (j *job) release(ctx context.Context, b *blob.Bucket) {
	if j.claimed == "" {
		return
	}
	testhook.Block("release")
	j.releaseKey(ctx, b, j.claimed)
	j.claimed = ""
}

// readLatest reads OUTPUT/LATEST, trimmed.
func (j *job) readLatest(ctx context.Context, b *blob.Bucket) (string, bool, error) {
	data, found, err := j.readKey(ctx, b, j.out.Prefix+LatestName, true)
	if err != nil || !found {
		return "", false, err
	}
	return strings.TrimSpace(string(data)), true, nil
}

// tidy runs once a job has listed its input, before it reads it. A
// one-off job, which holds OUTPUT's claim, removes the local driver's
// temporary files a killed job left at OUTPUT's top; on S3, where no
// driver writes temporary files (s3blob uploads in place), what a killed
// job leaves there is an incomplete multipart upload instead, and the
// listing of those takes the place of the files' (abortTopUploads). A
// nightly job tidies after publishing (tidyHistory).
func (j *job) tidy(ctx context.Context, b *blob.Bucket) error {
	if j.cfg.History {
		return nil
	}
	if s3u, ok := storage.S3UploadsOf(b, j.out); ok {
		j.abortTopUploads(ctx, s3u)
		return nil
	}
	var temps []string
	err := j.cfg.Retry.retry(ctx, func(ctx context.Context, _ func()) error {
		temps = temps[:0]
		page, _, err := storage.ListPage(ctx, b, blob.FirstPageToken, 1000, &blob.ListOptions{Prefix: j.out.Prefix, Delimiter: "/"})
		for _, o := range page {
			if !o.IsDir && tempName.MatchString(path.Base(o.Key)) {
				temps = append(temps, o.Key)
			}
		}
		return err
	})
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return &StorageError{Op: "list", URL: j.out.String(), Err: redactErr(err)}
	}
	for _, k := range temps {
		if err := j.delete(ctx, b, k); err != nil {
			return err
		}
	}
	if len(temps) > 0 {
		j.log.Warn("removed temporary files a killed job left", "output", j.out.String(), "objects", len(temps))
	}
	return nil
}

// tempName matches the local driver's temporary files.
var tempName = regexp.MustCompile(`^[^/]+\.[0-9a-f]+\.tmp$`)

// publish writes the result files under target (checkOutput's), then the
// manifest; a nightly job then writes the history partitions and moves
// LATEST, and tidies. If anything fails before the manifest is written,
// every file this job wrote is deleted. A one-off --overwrite first
// removes the earlier manifest (from then on OUTPUT holds no complete
// result), writes the new files, removes the earlier files the new result
// does not write, and writes the manifest last.
func (j *job) publish(ctx context.Context, b *blob.Bucket, target string, rd *read, res *result) (outputs []writers.ManifestOutput, err error) {
	var written []string // keys this job wrote
	var failed []string  // keys whose write failed or was cut short: written or not, who knows
	var stale []string   // files of the replaced result (one-off --overwrite)
	committed := false
	defer func() {
		if err == nil || committed {
			return
		}
		// Clean up with a fresh context: the job's may be cancelled.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		for _, k := range failed {
			// A failed write leaves nothing as a rule (put aborts it; an
			// upload under way at the cancel was let finish, and is in
			// written if it did); a store that committed it anyway gets it
			// deleted, and one that cannot even say (a read-only file
			// system) is not warned about.
			if ok, eerr := b.Exists(cctx, k); eerr == nil && ok {
				written = append(written, k)
			}
		}
		// The replaced result lost its manifest: its files go too.
		for _, k := range append(written, stale...) {
			if derr := b.Delete(cctx, k); derr != nil && gcerrors.Code(derr) != gcerrors.NotFound {
				j.log.Warn("could not delete a partial output", "object", j.out.ObjectURL(k), "error", redactErr(derr))
			}
		}
		if target != j.out.Prefix {
			j.removeEmptyUp(target + ManifestName)
		}
	}()
	defer Recover(&err) // a panic is cleaned up after as an error
	if j.replacing {
		if stale, err = j.unpublish(ctx, b, target); err != nil {
			return nil, err
		}
	}
	outputs, written, failed, err = j.putFiles(ctx, b, target, res.files)
	if err != nil {
		return nil, err
	}
	stale = slices.DeleteFunc(stale, func(k string) bool { return slices.Contains(written, k) })
	for len(stale) > 0 {
		if err := j.delete(ctx, b, stale[0]); err != nil {
			return nil, err
		}
		stale = stale[1:]
	}
	m := j.manifest(rd, res, outputs)
	var buf bytes.Buffer
	if err := writers.WriteManifest(&buf, m); err != nil {
		return nil, err
	}
	// Every file and the folders down to it are on disk before the
	// manifest names them.
	if err := j.syncTree(target); err != nil {
		return nil, err
	}
	testhook.At("publish")
	if err := testhook.Wait(ctx, "publish"); err != nil {
		return nil, err
	}
	if testHookBeforeManifest != nil {
		testHookBeforeManifest(target)
	}
	// A manifest never names a file that is not there as written.
	if err := j.checkWritten(ctx, b, target, res.files); err != nil {
		return nil, err
	}
	key := target + ManifestName
	if err := j.put(ctx, b, key, buf.Bytes()); err != nil {
		failed = append(failed, key)
		return nil, err
	}
	// The result is complete from here on; a failure after this point is
	// reported, with where the result is, but leaves the result in place.
	committed = true
	if testHookCommitted != nil {
		testHookCommitted(target)
	}
	if j.cfg.History {
		if err := j.afterCommit(ctx, b, target, res); err != nil {
			if ctx.Err() != nil {
				return nil, &PublishedError{Result: j.out.ObjectURL(target), Err: err}
			}
			return nil, err
		}
	}
	return outputs, nil
}

// publishAtOnce is how many result files are written at once: their
// fsyncs (a local folder) or round trips (an object store) overlap. The
// bytes are built already (report.html is converted as it is written, on
// its own goroutine): this bounds the open writers and their buffers, not
// the CPU. An upload to an object store that is under way when the job is
// cancelled is allowed to finish (uploadGraceTime), so that clean-up knows
// whether the store committed it.
const publishAtOnce = 4

// putFiles writes the result files under target, publishAtOnce at once,
// each whole and its bytes durable once its put returns (putSynced; their
// folder's entries are made durable once for all of them, by publish's
// syncTree before the manifest), and returns the manifest's entries of
// them in the order of files, whatever the order the writes end in. It
// returns the keys it wrote and the keys whose write failed or was cut
// short (a store may have committed one anyway), for publish to delete on
// failure. The first write that fails cancels the others (none is started
// after it; one to an object store that is under way may finish, see
// uploadGrace) and its error is the one returned.
func (j *job) putFiles(ctx context.Context, b *blob.Bucket, target string, files []outFile) (outputs []writers.ManifestOutput, written, failed []string, err error) {
	type slot struct {
		out     writers.ManifestOutput
		started bool // its put was called
		ok      bool // and returned no error
	}
	slots := make([]slot, len(files))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(publishAtOnce)
	for i := range files {
		if gctx.Err() != nil {
			break
		}
		g.Go(guarded(func() error {
			if err := gctx.Err(); err != nil {
				return err
			}
			phase("publish")
			f, s := &files[i], &slots[i]
			s.started = true
			var d *writers.OutputDigest // the manifest's entry, of the attempt that wrote the file
			err := j.putSynced(gctx, b, target+f.name, func(w io.Writer) error {
				d = writers.NewOutputDigest()
				return f.writeTo(io.MultiWriter(w, d))
			}, false)
			if err != nil {
				return err
			}
			s.ok = true
			s.out = d.FileOutput(f.name)
			if f.rows != nil {
				s.out = d.TableOutput(f.name, int(*f.rows))
			}
			f.size = s.out.Bytes
			return nil
		}))
	}
	err = g.Wait()
	for i, s := range slots {
		switch key := target + files[i].name; {
		case s.ok:
			written = append(written, key)
			outputs = append(outputs, s.out)
		case s.started:
			failed = append(failed, key)
		}
	}
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		return nil, written, failed, err
	}
	return outputs, written, failed, nil
}

// PublishedError is a nightly job interrupted after its result was
// complete (its manifest written), before its history partitions or
// LATEST were: the result stays, and the next --history job completes
// what is missing. Err is the interruption (context.Canceled).
type PublishedError struct {
	Result string // the complete result's URL
	Err    error
}

func (e *PublishedError) Error() string {
	return fmt.Sprintf("interrupted after the result was complete under %s (its %s is written); its history partitions or %s may be missing: the next --history job completes them", e.Result, ManifestName, LatestName)
}

func (e *PublishedError) Unwrap() error { return e.Err }

// testHookCommitted, when set, is called with the result's prefix just
// after its manifest is written (tests).
var testHookCommitted func(target string)

// unpublish, before a one-off --overwrite writes anything, removes the
// earlier result's manifest and returns the keys of its files (those the
// new result does not write are removed before the new manifest).
func (j *job) unpublish(ctx context.Context, b *blob.Bucket, target string) ([]string, error) {
	key := target + ManifestName
	data, found, err := j.readKey(ctx, b, key, true)
	if err != nil || !found {
		return nil, err
	}
	var old struct {
		Outputs []struct {
			Name string `json:"name"`
		} `json:"outputs"`
	}
	if err := json.Unmarshal(data, &old); err != nil {
		return nil, &StorageError{Op: "read", URL: j.out.ObjectURL(key), Err: fmt.Errorf("the result to replace has a manifest that is not crlbatch's: %v", err)}
	}
	var stale []string
	for _, o := range old.Outputs {
		// Only a file of a result: never ".", "..", the claims'
		// .crlbatch, a hidden or temporary file, LATEST.
		if o.Name == "" || strings.Contains(o.Name, "/") || strings.HasPrefix(o.Name, ".") || o.Name == ManifestName || o.Name == LatestName {
			continue
		}
		stale = append(stale, target+o.Name)
	}
	if err := j.delete(ctx, b, key); err != nil {
		return nil, err
	}
	j.log.Info("replacing the result in place: its manifest is removed until the new one is written", "output", j.out.String())
	return stale, nil
}

// afterCommit, for a nightly job whose manifest is written: the history
// partitions, the end of the attempt's claim, LATEST, then tidying and
// --keep.
func (j *job) afterCommit(ctx context.Context, b *blob.Bucket, target string, res *result) error {
	complete := fmt.Sprintf("the new result is complete under %s (its %s is written)", j.out.ObjectURL(target), ManifestName)
	for _, f := range res.files {
		table, ok := strings.CutSuffix(f.name, ".parquet")
		if !ok || !slices.Contains(HistoryTables, table) {
			continue
		}
		key := j.out.Prefix + historyKey(table, j.attempt)
		err := j.put(ctx, b, key, f.data)
		if err == nil {
			err = j.syncTree(path.Dir(key) + "/")
		}
		if err != nil {
			return annotate(err, "%s, but its history partitions are not all written: the next --history job writes them", complete)
		}
	}
	j.release(ctx, b)
	if err := j.moveLatest(ctx, b); err != nil {
		return annotate(err, "%s, but %s does not name it: the next --history job moves it", complete, LatestName)
	}
	if err := j.tidyHistory(ctx, b); err != nil {
		j.log.Warn("could not tidy the nightly OUTPUT (--keep, what killed jobs left); the next job tries again", "output", j.out.String(), "error", err)
	}
	return nil
}

// annotate adds to a *StorageError's cause what the failure leaves behind.
func annotate(err error, format string, args ...any) error {
	var se *StorageError
	if errors.As(err, &se) {
		se.Err = fmt.Errorf("%w; "+format, append([]any{se.Err}, args...)...)
	}
	return err
}

// moveLatest makes LATEST name the newest complete result, if it names an
// older one or no complete result, under the LATEST lock: moves never interleave, so LATEST only
// moves forward.
func (j *job) moveLatest(ctx context.Context, b *blob.Bucket) error {
	holder, err := j.waitAcquire(ctx, b, j.out.Prefix+latestLock, latestLockAge, time.Minute)
	if err != nil {
		return err
	}
	if holder != nil {
		return &StorageError{Op: "write", URL: j.out.ObjectURL(j.out.Prefix + LatestName), Err: fmt.Errorf("held for over a minute by %s", holder)}
	}
	defer j.releaseKey(ctx, b, j.out.Prefix+latestLock)
	st, err := j.scanHistory(ctx, b)
	if err != nil {
		return err
	}
	newest := st.newestComplete()
	cur, _, err := j.readLatest(ctx, b)
	if err != nil {
		return err
	}
	curID := strings.TrimSuffix(strings.TrimPrefix(cur, ResultsDir), "/")
	// The lock is held: temporary files beside LATEST are a dead mover's.
	for _, k := range st.topTemps {
		if err := j.delete(ctx, b, k); err != nil {
			return err
		}
	}
	// A LATEST naming no complete result (edited by hand, its result
	// deleted) names nothing: it is replaced, not kept as the newest.
	if newest == "" || (st.complete[curID] && newest <= curID) {
		return nil
	}
	if curID != "" && newest != j.attempt {
		j.log.Warn(LatestName+" did not name the newest complete result: it does now", "was", cur, "now", ResultsDir+newest+"/")
	}
	return j.put(ctx, b, j.out.Prefix+LatestName, []byte(ResultsDir+newest+"/\n"))
}

// historyState is what a nightly OUTPUT holds, from one listing.
type historyState struct {
	results  map[string][]string // attempt id → its keys under results/<id>/
	complete map[string]bool     // attempt id → its manifest is there
	parts    map[string][]string // attempt id → its history keys
	tables   map[string]map[string]bool
	topTemps []string          // temporary files at OUTPUT's top (LATEST's)
	claims   map[string]string // attempt id → its claim key (listed after the rest)
}

func (s *historyState) newestComplete() string {
	newest := ""
	for id := range s.complete {
		newest = max(newest, id)
	}
	return newest
}

// scanHistory lists OUTPUT, then, in a second listing, the attempt
// claims: an attempt whose files were listed has created its claim before
// them, so the claim is listed unless the attempt let it go.
func (j *job) scanHistory(ctx context.Context, b *blob.Bucket) (*historyState, error) {
	st := &historyState{results: map[string][]string{}, complete: map[string]bool{}, parts: map[string][]string{},
		tables: map[string]map[string]bool{}, claims: map[string]string{}}
	err := j.list(ctx, b, j.out.Prefix, func(key string) {
		rel := strings.TrimPrefix(key, j.out.Prefix)
		switch {
		case !strings.Contains(rel, "/"):
			if tempName.MatchString(rel) {
				st.topTemps = append(st.topTemps, key)
			}
		case strings.HasPrefix(rel, ResultsDir):
			id, file, _ := strings.Cut(strings.TrimPrefix(rel, ResultsDir), "/")
			if !attemptID.MatchString(id) {
				return
			}
			st.results[id] = append(st.results[id], key)
			if file == ManifestName {
				st.complete[id] = true
			}
		case strings.HasPrefix(rel, HistoryDir):
			parts := strings.Split(strings.TrimPrefix(rel, HistoryDir), "/")
			if len(parts) != 4 || !strings.HasPrefix(parts[1], "night=") {
				return
			}
			id, ok := strings.CutPrefix(parts[2], "attempt=")
			if !ok || !attemptID.MatchString(id) {
				return
			}
			st.parts[id] = append(st.parts[id], key)
			if parts[3] == "part.parquet" {
				if st.tables[id] == nil {
					st.tables[id] = map[string]bool{}
				}
				st.tables[id][parts[0]] = true
			}
		}
	})
	if err != nil {
		return nil, err
	}
	err = j.list(ctx, b, j.out.Prefix+attemptClaims, func(key string) {
		name := path.Base(key)
		if id, ok := strings.CutSuffix(name, ".json"); ok && attemptID.MatchString(id) {
			st.claims[id] = key
		}
	})
	return st, err
}

// list calls f with every key under prefix.
func (j *job) list(ctx context.Context, b *blob.Bucket, prefix string, f func(key string)) error {
	var keys []string
	err := j.cfg.Retry.retry(ctx, func(ctx context.Context, touch func()) error {
		keys = keys[:0]
		token := blob.FirstPageToken
		for {
			page, next, err := storage.ListPage(ctx, b, token, 1000, &blob.ListOptions{Prefix: prefix})
			if err != nil {
				return err
			}
			touch()
			for _, o := range page {
				if !o.IsDir {
					keys = append(keys, o.Key)
				}
			}
			if len(next) == 0 || ctx.Err() != nil { // fileblob never looks at ctx
				return ctx.Err()
			}
			token = next
		}
	})
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return &StorageError{Op: "list", URL: j.out.ObjectURL(prefix), Err: redactErr(err)}
	}
	for _, k := range keys {
		f(k)
	}
	return nil
}

// tidyHistory, after a nightly job published: removes the attempts of
// jobs that are provably dead (no manifest, and a claim whose holder is
// gone or no claim at all), writes history partitions a killed job did
// not, and under --keep N removes the oldest complete results beyond N
// (never the one LATEST names, never an attempt in progress). A result
// goes partitions first, then its manifest, then its files: a job killed
// midway leaves an attempt without a manifest, removed next time. On S3
// it aborts the incomplete multipart uploads of the attempts whose claim's
// holder is dead (abortAttemptUploads), listed before the claims.
func (j *job) tidyHistory(ctx context.Context, b *blob.Bucket) error {
	j.tidyClaims(ctx, b)
	s3u, ups, upErr := j.listAttemptUploads(ctx, b)
	st, err := j.scanHistory(ctx, b)
	if err != nil {
		return err
	}
	if testHookAfterScan != nil {
		testHookAfterScan()
	}
	inProgress := map[string]bool{}
	dead := map[string]bool{}
	var deadClaims []string
	for id, key := range st.claims {
		rec, _, mod, found, err := j.readClaim(ctx, b, key)
		if err != nil {
			return err
		}
		if found && !j.dead(rec, mod, jobClaimAge) {
			inProgress[id] = true
		} else if found {
			dead[id] = true
			deadClaims = append(deadClaims, key)
		}
	}
	var doomed []string
	removeAttempt := func(id string, keys []string) {
		doomed = append(doomed, st.parts[id]...)
		// The manifest first: from then on the result is no longer taken
		// for complete by anyone.
		keys = slices.Clone(keys)
		slices.SortFunc(keys, func(a, b string) int {
			return boolInt(path.Base(b) == ManifestName) - boolInt(path.Base(a) == ManifestName)
		})
		doomed = append(doomed, keys...)
	}
	ids := slices.Sorted(maps.Keys(st.results))
	for _, id := range ids {
		if st.complete[id] || inProgress[id] {
			continue
		}
		if !dead[id] {
			// Not provably dead: listed without a claim, or its claim gone
			// by the time it was read. Either it finished since (its
			// manifest is there now and it let its claim go) or it failed
			// and cleaned up. Look again: a result completed after the
			// listing keeps every file.
			if ok, err := j.exists(ctx, b, j.out.Prefix+ResultsDir+id+"/"+ManifestName); err != nil || ok {
				if err != nil {
					return err
				}
				continue
			}
		}
		removeAttempt(id, st.results[id])
	}
	for id, keys := range st.parts {
		if !st.complete[id] && !inProgress[id] && len(st.results[id]) == 0 {
			doomed = append(doomed, keys...) // a pruned attempt's leftovers
		}
	}
	if len(doomed) > 0 {
		// Files without a manifest are left by a job that did not finish
		// publishing, or by the removal of an old result (--keep, manifest
		// first) that did not finish or that another job is doing now:
		// the listing cannot tell them apart.
		j.log.Warn("removing results without a manifest: left by a job that did not finish, or by a removal under --keep that did not finish or is under way in another job", "output", j.out.String(), "objects", len(doomed))
	}
	// History partitions a killed job did not write (and the temporary
	// files of those it was writing).
	for _, id := range ids {
		if !st.complete[id] || inProgress[id] {
			continue
		}
		for _, k := range st.parts[id] {
			if path.Base(k) != "part.parquet" {
				doomed = append(doomed, k)
			}
		}
		for _, table := range HistoryTables {
			src := j.out.Prefix + ResultsDir + id + "/" + table + ".parquet"
			if st.tables[id][table] || !slices.Contains(st.results[id], src) {
				continue
			}
			data, err := j.readAll(ctx, b, src)
			if err != nil {
				return err
			}
			if err := j.put(ctx, b, j.out.Prefix+historyKey(table, id), data); err != nil {
				return err
			}
			j.log.Warn("wrote a history partition a killed job did not", "result", j.out.ObjectURL(j.out.Prefix+ResultsDir+id+"/"))
		}
	}
	if keep := j.cfg.Keep; keep > 0 {
		cur, _, err := j.readLatest(ctx, b)
		if err != nil {
			return err
		}
		named := strings.TrimSuffix(strings.TrimPrefix(cur, ResultsDir), "/")
		var complete []string
		for _, id := range ids {
			if st.complete[id] {
				complete = append(complete, id)
			}
		}
		for i, id := range complete {
			// Never this job's own result, just published: behind a
			// result from a clock ahead of this one's, or a concurrent job
			// started later that finished first, it is not among the
			// newest by id, and removing it lost the night.
			if len(complete)-i <= keep || id == named || id == j.attempt || inProgress[id] {
				continue
			}
			j.log.Info("--keep: removing an old result", "result", j.out.ObjectURL(j.out.Prefix+ResultsDir+id+"/"))
			removeAttempt(id, st.results[id])
		}
	}
	// Before the dead claims go: they are the uploads' proof.
	j.abortAttemptUploads(ctx, s3u, ups, upErr, inProgress, dead)
	for _, k := range append(doomed, deadClaims...) {
		if err := j.delete(ctx, b, k); err != nil {
			return err
		}
		j.removeEmptyUp(k)
	}
	j.removeEmptyFolders(inProgress)
	return nil
}

// removeEmptyFolders removes, under a local OUTPUT, the empty folders
// under results/, history/ and .crlbatch/ that belong to no attempt in
// progress (a job killed between creating a folder and renaming its first
// file into it leaves one).
func (j *job) removeEmptyFolders(inProgress map[string]bool) {
	root, ok := j.localPath(j.out.Prefix)
	if !ok {
		return
	}
	for _, top := range []string{ResultsDir, HistoryDir, stateDir} {
		var dirs []string
		filepath.WalkDir(filepath.Join(root, top), func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		slices.Reverse(dirs) // the deepest first
		for _, d := range dirs {
			base := strings.TrimPrefix(filepath.Base(d), "attempt=")
			if attemptID.MatchString(base) && inProgress[base] {
				continue
			}
			os.Remove(d) // only if empty
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// readAll reads one object of OUTPUT with retries.
func (j *job) readAll(ctx context.Context, b *blob.Bucket, key string) ([]byte, error) {
	data, _, err := j.readKey(ctx, b, key, false)
	return data, err
}

// readKey reads key under the retry policy. With missingOK a key that does
// not exist is found false and no error; otherwise, like every other
// failure, it is a StorageError naming the object.
func (j *job) readKey(ctx context.Context, b *blob.Bucket, key string, missingOK bool) (data []byte, found bool, err error) {
	err = j.cfg.Retry.retry(ctx, func(ctx context.Context, touch func()) error {
		var err error
		data, err = storage.ReadAll(ctx, b, key, touch)
		return err
	})
	if missingOK && gcerrors.Code(err) == gcerrors.NotFound {
		return nil, false, nil
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, false, ctx.Err()
		}
		return nil, false, &StorageError{Op: "read", URL: j.out.ObjectURL(key), Err: redactErr(err)}
	}
	return data, true, nil
}

// attemptStart is the start of the job of an attempt id, to the
// microsecond (the zero time for an id that is not one).
func attemptStart(id string) time.Time {
	if !attemptID.MatchString(id) {
		return time.Time{}
	}
	t, err := time.Parse("20060102T150405Z", id[:16])
	if err != nil {
		return time.Time{}
	}
	us, _ := strconv.Atoi(id[17:23]) // six digits, by attemptID
	return t.Add(time.Duration(us) * time.Microsecond)
}
