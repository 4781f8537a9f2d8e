package pipeline

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"gocloud.dev/blob"

	"github.com/crlbatch/crlbatch/scoring"
	"github.com/crlbatch/crlbatch/storage"
)

// On S3 an output file over 16 MiB is uploaded in parts; a job killed
// during the upload leaves an incomplete multipart upload that S3 keeps,
// and bills, until it is aborted. The jobs that tidy OUTPUT abort those
// of provably dead jobs with the proofs they use for files
// (docs/decisions.md, "A killed job's incomplete S3 multipart uploads of
// outputs…"): a one-off job, holding OUTPUT's claim, those of OUTPUT's
// result files (tidy, abortTopUploads, in place of the listing of the
// local driver's temporary files, which no S3 job writes); a nightly job, after publishing,
// those of attempts whose claim's holder is dead (tidyHistory,
// listAttemptUploads, abortAttemptUploads). GCS and Azure expire
// uncommitted uploads themselves, a local folder has none: nothing is
// done there. A store that refuses to list or abort costs one warning.

// renderedName matches the names of the files other than tables a job
// writes at its target's top: the figures, the report and the manifest.
var renderedName = regexp.MustCompile(`^(figure-[^/]+\.(svg|png)|report\.(md|html)|` + regexp.QuoteMeta(ManifestName) + `)$`)

// isResultName says whether name is one a job of a registered protocol
// writes at its target's top: a table one of the protocols names in its
// Outputs (any protocol's: the dead job may have scored another one than
// this job), a figure, the report or the manifest. Another *.parquet, a
// user's own file, is not.
func isResultName(name string) bool {
	if renderedName.MatchString(name) {
		return true
	}
	for _, p := range scoring.Protocols() {
		if slices.Contains(p.Describe().Outputs, name) {
			return true
		}
	}
	return false
}

// abortTopUploads, for a one-off job holding OUTPUT's claim before it
// writes anything: aborts the incomplete multipart uploads of OUTPUT's
// result files (isResultName, at OUTPUT's top). Any such upload is a dead
// job's: only the holder of OUTPUT's claim writes there (a nightly job
// writes under results/ and history/, and LATEST, which is not a result
// name), this job holds the claim and has not written yet, and a job that
// let the claim go has finished or abandoned its writes (a failed write
// is aborted by the transfer manager), while one whose claim was taken
// over was provably dead. Uploads of other keys are left, as files are.
func (j *job) abortTopUploads(ctx context.Context, s3u *storage.S3Uploads) {
	ups, err := j.listUploads(ctx, s3u, j.out.Prefix)
	var doomed []storage.Upload
	for _, u := range ups {
		if isResultName(strings.TrimPrefix(u.Key, j.out.Prefix)) {
			doomed = append(doomed, u)
		}
	}
	j.abortUploads(ctx, s3u, doomed, err)
}

// attemptUpload is an incomplete multipart upload of a key of an attempt
// of a nightly OUTPUT.
type attemptUpload struct {
	storage.Upload
	attempt string
}

// listAttemptUploads lists, on S3, the incomplete multipart uploads of the
// keys of attempts of a nightly OUTPUT: under results/<id>/, and the
// attempt's history partitions (historyKey); one listing of OUTPUT (an
// upload is rare: one page). tidyHistory calls it before
// it lists the attempts' claims: an upload listed there was started after
// its attempt's claim was created, so the claim is listed unless the
// attempt let it go. s3u is nil when OUTPUT is not on S3.
func (j *job) listAttemptUploads(ctx context.Context, b *blob.Bucket) (s3u *storage.S3Uploads, ups []attemptUpload, err error) {
	s3u, ok := storage.S3UploadsOf(b, j.out)
	if !ok {
		return nil, nil, nil
	}
	listed, err := j.listUploads(ctx, s3u, j.out.Prefix)
	if err != nil {
		return s3u, nil, err
	}
	for _, u := range listed {
		if id := uploadAttempt(strings.TrimPrefix(u.Key, j.out.Prefix)); id != "" {
			ups = append(ups, attemptUpload{Upload: u, attempt: id})
		}
	}
	return s3u, ups, nil
}

// uploadAttempt is the attempt id whose key rel (relative to OUTPUT) is:
// results/<id>/<file>, or historyKey(<table>, <id>); "" for any other key.
func uploadAttempt(rel string) string {
	if rest, ok := strings.CutPrefix(rel, ResultsDir); ok {
		id, file, _ := strings.Cut(rest, "/")
		if attemptID.MatchString(id) && file != "" {
			return id
		}
		return ""
	}
	parts := strings.Split(strings.TrimPrefix(rel, HistoryDir), "/")
	if !strings.HasPrefix(rel, HistoryDir) || len(parts) != 4 || parts[0] == "" {
		return ""
	}
	id, ok := strings.CutPrefix(parts[2], "attempt=")
	if !ok || !attemptID.MatchString(id) || rel != historyKey(parts[0], id) {
		return ""
	}
	return id
}

// abortAttemptUploads aborts the uploads of attempts that are provably
// dead: not in progress (a claim whose holder is alive), and either
// their claim's holder is dead or the upload was initiated, by the
// store's clock, longer ago than jobClaimAge: past that bound a claim's
// holder is taken for dead whatever the host (dead), so a job that
// initiated an upload longer ago than that is taken for dead by every
// claim it could hold (docs/decisions.md has the argument). listErr is
// the listing's failure.
func (j *job) abortAttemptUploads(ctx context.Context, s3u *storage.S3Uploads, ups []attemptUpload, listErr error, inProgress, dead map[string]bool) {
	if s3u == nil {
		return
	}
	var doomed []storage.Upload
	now := time.Now()
	for _, u := range ups {
		old := !u.Initiated.IsZero() && now.Sub(u.Initiated) > jobClaimAge
		if !inProgress[u.attempt] && (dead[u.attempt] || old) {
			doomed = append(doomed, u.Upload)
		}
	}
	j.abortUploads(ctx, s3u, doomed, listErr)
}

// listUploads lists the incomplete multipart uploads under prefix, with
// retries.
func (j *job) listUploads(ctx context.Context, s3u *storage.S3Uploads, prefix string) ([]storage.Upload, error) {
	var ups []storage.Upload
	err := j.cfg.Retry.retry(ctx, func(ctx context.Context, _ func()) error {
		var err error
		ups, err = s3u.List(ctx, prefix)
		return err
	})
	return ups, err
}

// abortUploads aborts ups (one gone meanwhile is no error) and says what
// it did: a warning with how many it aborted, and one warning naming
// OUTPUT when listing (listErr) or aborting failed. Neither fails the job:
// the next job tries again, and a bucket lifecycle rule is the remedy for
// a role that may not list or abort.
func (j *job) abortUploads(ctx context.Context, s3u *storage.S3Uploads, ups []storage.Upload, listErr error) {
	aborted, failed := 0, 0
	firstErr := listErr
	for _, u := range ups {
		var gone bool
		err := j.cfg.Retry.retry(ctx, func(ctx context.Context, _ func()) error {
			var err error
			gone, err = s3u.Abort(ctx, u)
			return err
		})
		switch {
		case err != nil:
			failed++
			if firstErr == nil {
				firstErr = err
			}
		case !gone:
			aborted++
		}
	}
	if aborted > 0 {
		j.log.Warn("aborted the incomplete multipart uploads killed jobs left", "output", j.out.String(), "uploads", aborted)
	}
	if firstErr != nil && ctx.Err() == nil {
		what := "not listed"
		if listErr == nil {
			what = fmt.Sprintf("%d not aborted", failed)
		}
		j.log.Warn("could not tidy the incomplete multipart uploads killed jobs left (S3 bills them until they are aborted: a bucket lifecycle rule that aborts incomplete multipart uploads does it, or a role that may list and abort them); the next job tries again", "output", j.out.String(), "uploads", what, "error", redactErr(firstErr))
	}
}
