package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
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
	if !exists {
		return j.out.Prefix, nil
	}
	if !j.cfg.Overwrite {
		return "", Usagef("%s already holds a complete result (%s): pass --overwrite to publish a new one beside it (the %s pointer then names the newest)", j.out, ManifestName, LatestName)
	}
	base := j.out.Prefix + AttemptsDir + j.start.Format("20060102T150405Z")
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
// result is left and an earlier result stays as it was.
func (j *job) publish(ctx context.Context, b *blob.Bucket, target string, rd *read, res *result) (outputs []writers.ManifestOutput, err error) {
	var written []string
	committed := false
	defer func() {
		if err == nil || committed {
			return
		}
		// Clean up with a fresh context: the job's may be cancelled.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		for _, k := range written {
			if derr := b.Delete(cctx, k); derr != nil && gcerrors.Code(derr) != gcerrors.NotFound {
				j.log.Warn("could not delete a partial output", "object", j.out.ObjectURL(k), "error", redactErr(derr))
			}
		}
	}()
	for _, f := range res.files {
		key := target + f.name
		written = append(written, key)
		if err := j.put(ctx, b, key, f.data); err != nil {
			return nil, err
		}
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
	key := target + ManifestName
	written = append(written, key)
	if err := j.put(ctx, b, key, buf.Bytes()); err != nil {
		return nil, err
	}
	// The result is complete from here on; a failure to move the pointer
	// is reported but leaves the result in place.
	committed = true
	if target != j.out.Prefix {
		rel := strings.TrimPrefix(target, j.out.Prefix)
		if err := j.put(ctx, b, j.out.Prefix+LatestName, []byte(rel+"\n")); err != nil {
			return nil, err
		}
	}
	return outputs, nil
}

// put writes one object with retries; a failed attempt is aborted by
// cancelling its writer's context, so no half-written object remains.
func (j *job) put(ctx context.Context, b *blob.Bucket, key string, data []byte) error {
	err := j.cfg.Retry.retry(ctx, func(ctx context.Context, touch func()) error {
		wctx, cancel := context.WithCancel(ctx)
		defer cancel()
		w, err := b.NewWriter(wctx, key, &blob.WriterOptions{ContentType: contentType(key)})
		if err != nil {
			return err
		}
		// Written in chunks, so that an upload that moves counts as progress.
		for rest := data; len(rest) > 0; {
			n := min(len(rest), 1<<20)
			if _, err := w.Write(rest[:n]); err != nil {
				cancel()
				w.Close()
				return err
			}
			rest = rest[n:]
			touch()
		}
		return w.Close()
	})
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return &StorageError{Op: "write", URL: j.out.ObjectURL(key), Err: redactErr(err)}
	}
	return nil
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
