package pipeline

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"strings"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"

	"github.com/crlbatch/crlbatch/storage"
)

// A claim is a small JSON object created with a conditional write
// (storage.CreateExclusive): whoever creates it holds what it names until
// it deletes it. One-off jobs claim OUTPUT (jobClaim), nightly jobs their
// attempt id (attemptClaims) and, for a moment, the LATEST pointer
// (latestLock). docs/decisions.md, "Publishing: one-off and nightly".
type claimRecord struct {
	Host      string    `json:"host"`
	PID       int       `json:"pid"`
	StartedAt time.Time `json:"started_at"`
	Attempt   string    `json:"attempt"`
}

// Where the claims live, under OUTPUT.
const (
	stateDir      = ".crlbatch/"
	jobClaim      = stateDir + "job.json"
	latestLock    = stateDir + "latest.lock"
	attemptClaims = stateDir + "attempts/"
)

// Stale claims: a claim is its holder's until the holder is provably
// dead: on this host (the same os.Hostname) with its process gone, or
// older than the claim's age limit on any host.
const (
	// jobClaimAge bounds a one-off job and an attempt in progress.
	jobClaimAge = 24 * time.Hour
	// latestLockAge bounds the moment a job holds the LATEST pointer.
	latestLockAge = 10 * time.Minute
	// unreadableClaimAge: a local claim is created empty, then written;
	// one that cannot be parsed this long after its modification was
	// left by a job killed in between.
	unreadableClaimAge = time.Minute
)

func (c *claimRecord) String() string {
	if c == nil || c.PID == 0 {
		return "another job (its claim is not readable yet)"
	}
	return fmt.Sprintf("the job of pid %d on %s started %s (attempt %s)", c.PID, c.Host, c.StartedAt.Format(time.RFC3339), c.Attempt)
}

// stale says when a claim like c stops holding what it names (maxAge:
// the claim's age limit), for the message that refuses a job.
func (c *claimRecord) stale(maxAge time.Duration) string {
	if c == nil || c.PID == 0 {
		return fmt.Sprintf("a claim that cannot be read is stale %v after it was last written", unreadableClaimAge)
	}
	return fmt.Sprintf("a claim is stale once its process is gone on this host, or after %v", maxAge)
}

func (j *job) claimBytes() []byte {
	data, _ := json.Marshal(claimRecord{Host: j.host, PID: os.Getpid(), StartedAt: j.start, Attempt: j.attempt})
	return append(data, '\n')
}

// readClaim reads the claim at key: found false when there is none; rec
// nil when it cannot be parsed.
func (j *job) readClaim(ctx context.Context, b *blob.Bucket, key string) (rec *claimRecord, raw []byte, mod time.Time, found bool, err error) {
	err = j.cfg.Retry.retry(ctx, func(ctx context.Context, _ func()) error {
		var err error
		raw, err = b.ReadAll(ctx, key)
		if err != nil {
			return err
		}
		a, err := b.Attributes(ctx, key)
		if err != nil {
			return err
		}
		mod = a.ModTime
		return nil
	})
	if gcerrors.Code(err) == gcerrors.NotFound {
		return nil, nil, time.Time{}, false, nil
	}
	if err != nil {
		return nil, nil, time.Time{}, false, &StorageError{Op: "read", URL: j.out.ObjectURL(key), Err: redactErr(err)}
	}
	var c claimRecord
	if json.Unmarshal(raw, &c) == nil && c.PID > 0 {
		rec = &c
	}
	return rec, raw, mod, true, nil
}

// dead reports whether the holder of a claim is provably gone.
func (j *job) dead(rec *claimRecord, mod time.Time, maxAge time.Duration) bool {
	now := time.Now()
	if rec == nil {
		return !mod.IsZero() && now.Sub(mod) > unreadableClaimAge
	}
	if rec.Host == j.host && rec.Host != "" && !processAlive(rec.PID) {
		return true
	}
	// Started, by its holder's clock or by the store's (the claim is
	// written once, at the start), longer ago than maxAge: a holder whose
	// clock runs ahead cannot hold a claim for ever.
	return now.Sub(rec.StartedAt) > maxAge || (!mod.IsZero() && now.Sub(mod) > maxAge)
}

// create creates key exclusively with this job's claim.
func (j *job) create(ctx context.Context, b *blob.Bucket, key string, data []byte) (bool, error) {
	file, _ := j.localPath(key)
	var ok bool
	err := j.cfg.Retry.retry(ctx, func(ctx context.Context, _ func()) error {
		var err error
		ok, err = storage.CreateExclusive(ctx, b, key, file, data)
		return err
	})
	if err != nil {
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		return false, &StorageError{Op: "write", URL: j.out.ObjectURL(key), Err: redactErr(err)}
	}
	return ok, nil
}

// acquire takes the claim at key. It returns nil once this job holds it,
// or the record of the live job that does (nil error). A claim whose
// holder is provably dead is taken over: whoever creates the takeover
// marker (named by the stale claim's bytes) first, and still finds those
// bytes, deletes the stale claim; then every contender tries the
// conditional create again, and one wins.
func (j *job) acquire(ctx context.Context, b *blob.Bucket, key string, maxAge time.Duration) (*claimRecord, error) {
	mine := j.claimBytes()
	for try := 0; ; try++ {
		ok, err := j.create(ctx, b, key, mine)
		if err != nil || ok {
			return nil, err
		}
		rec, raw, mod, found, err := j.readClaim(ctx, b, key)
		if err != nil {
			return nil, err
		}
		if !found {
			continue // released meanwhile
		}
		if !j.dead(rec, mod, maxAge) || try >= 10 {
			if rec == nil {
				rec = &claimRecord{}
			}
			return rec, nil
		}
		sum := sha256.Sum256(raw)
		marker := key + ".takeover-" + hex.EncodeToString(sum[:8])
		ok, err = j.create(ctx, b, marker, mine)
		if err != nil {
			return nil, err
		}
		if !ok {
			// Another job is taking the stale claim over: let it, unless
			// it was killed doing so (its marker is then stale too).
			mrec, _, mmod, found, err := j.readClaim(ctx, b, marker)
			if err != nil {
				return nil, err
			}
			if found && j.dead(mrec, mmod, maxAge) {
				if err := j.delete(ctx, b, marker); err != nil {
					return nil, err
				}
			}
			time.Sleep(50 * time.Millisecond)
			continue
		}
		_, now, _, found, err := j.readClaim(ctx, b, key)
		if err == nil && found && bytes.Equal(now, raw) {
			j.log.Warn("took over a claim its holder left (the job is gone)", "claim", j.out.ObjectURL(key), "holder", rec.String())
			err = j.delete(ctx, b, key)
		}
		if derr := j.delete(ctx, b, marker); err == nil {
			err = derr
		}
		if err != nil {
			return nil, err
		}
	}
}

// waitAcquire acquires key, waiting up to wait for a live holder to let go.
func (j *job) waitAcquire(ctx context.Context, b *blob.Bucket, key string, maxAge, wait time.Duration) (*claimRecord, error) {
	deadline := time.Now().Add(wait)
	pause := 20 * time.Millisecond
	for {
		holder, err := j.acquire(ctx, b, key, maxAge)
		if err != nil || holder == nil || time.Now().After(deadline) {
			return holder, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(pause):
		}
		pause = min(2*pause, time.Second)
	}
}

// releaseKey deletes a claim this job holds, with a fresh context (the
// job's may be cancelled), and, under a local OUTPUT, the folders it
// leaves empty.
func (j *job) releaseKey(ctx context.Context, b *blob.Bucket, key string) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if err := j.delete(cctx, b, key); err != nil {
		j.log.Warn("could not release a claim", "claim", j.out.ObjectURL(key), "error", err)
	}
	j.removeEmptyUp(key)
}

// tidyClaims removes what killed jobs left of the claim machinery under
// OUTPUT/.crlbatch/: takeover markers whose holder is dead, and local
// temporary claim files (storage.LocalTempOwner) of a dead process of
// this host. Live jobs' objects are left; a failure is a warning.
func (j *job) tidyClaims(ctx context.Context, b *blob.Bucket) {
	var doomed []string
	err := j.list(ctx, b, j.out.Prefix+stateDir, func(key string) {
		name := path.Base(key)
		if host, pid, ok := storage.LocalTempOwner(name); ok {
			if host == j.host && !processAlive(pid) {
				doomed = append(doomed, key)
			}
			return
		}
		if strings.Contains(name, ".takeover-") {
			rec, _, mod, found, err := j.readClaim(ctx, b, key)
			if err == nil && found && j.dead(rec, mod, latestLockAge) {
				doomed = append(doomed, key)
			}
		}
	})
	for _, k := range doomed {
		if err == nil {
			err = j.delete(ctx, b, k)
			j.removeEmptyUp(k)
		}
	}
	if err != nil {
		j.log.Warn("could not remove what killed jobs left of their claims; the next job tries again", "output", j.out.String(), "error", err)
	}
}
