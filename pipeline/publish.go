package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"

	"github.com/crlbatch/crlbatch/writers"
)

// ManifestName is written last: its presence means the output is complete.
const ManifestName = "manifest.json"

// checkOutput refuses to replace a complete earlier result unless told to.
func (j *job) checkOutput(ctx context.Context, b *blob.Bucket) error {
	key := j.out.Prefix + ManifestName
	var exists bool
	err := j.cfg.Retry.retry(ctx, func() error {
		var err error
		exists, err = b.Exists(ctx, key)
		return err
	})
	if err != nil {
		return &StorageError{Op: "read", URL: j.out.ObjectURL(key), Err: redactErr(err)}
	}
	if exists && !j.cfg.Overwrite {
		return Usagef("%s already holds a complete result (%s): pass --overwrite to replace it", j.out, ManifestName)
	}
	return nil
}

// publish writes the result files, then the manifest. If anything fails,
// every file this job wrote is deleted, so no partial result is left.
func (j *job) publish(ctx context.Context, b *blob.Bucket, files []outFile, runs int) (outputs []writers.ManifestOutput, err error) {
	var written []string
	defer func() {
		if err == nil {
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
	if j.cfg.Overwrite {
		// Mark the prefix incomplete before replacing any file.
		key := j.out.Prefix + ManifestName
		if derr := j.cfg.Retry.retry(ctx, func() error { return b.Delete(ctx, key) }); derr != nil && gcerrors.Code(derr) != gcerrors.NotFound {
			return nil, &StorageError{Op: "delete", URL: j.out.ObjectURL(key), Err: redactErr(derr)}
		}
	}
	for _, f := range files {
		key := j.out.Prefix + f.name
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
	var notes []string
	notes = append(notes, j.notes...)
	m := writers.Manifest{
		Version:    j.cfg.Version,
		StartedAt:  j.start,
		FinishedAt: time.Now().UTC(),
		Input:      j.in.String(),
		Params:     json.RawMessage(j.params),
		Objects:    j.manObj,
		Runs:       runs,
		Families:   j.families,
		Outputs:    outputs,
		Notes:      notes,
	}
	var buf bytes.Buffer
	if err := writers.WriteManifest(&buf, m); err != nil {
		return nil, err
	}
	key := j.out.Prefix + ManifestName
	written = append(written, key)
	if err := j.put(ctx, b, key, buf.Bytes()); err != nil {
		return nil, err
	}
	return outputs, nil
}

// put writes one object with retries; a failed attempt is aborted by
// cancelling its writer's context, so no half-written object remains.
func (j *job) put(ctx context.Context, b *blob.Bucket, key string, data []byte) error {
	err := j.cfg.Retry.retry(ctx, func() error {
		wctx, cancel := context.WithCancel(ctx)
		defer cancel()
		w, err := b.NewWriter(wctx, key, &blob.WriterOptions{ContentType: contentType(key)})
		if err != nil {
			return err
		}
		if _, err := w.Write(data); err != nil {
			cancel()
			w.Close()
			return err
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
	case bytes.HasSuffix([]byte(key), []byte(".parquet")):
		return "application/vnd.apache.parquet"
	case bytes.HasSuffix([]byte(key), []byte(".md")):
		return "text/markdown; charset=utf-8"
	case bytes.HasSuffix([]byte(key), []byte(".json")):
		return "application/json"
	}
	return "application/octet-stream"
}
