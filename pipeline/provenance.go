package pipeline

import (
	"encoding/json"
	"time"

	"github.com/crlbatch/crlbatch/writers"
)

// Provenance: where a result comes from.
//
// Every Parquet file carries, besides crlbatch.version, crlbatch.protocol,
// crlbatch.params and crlbatch.schema_version, only what is the same for
// the same inputs and flags: crlbatch.input (INPUT as given, credentials
// redacted) and crlbatch.commit (the VCS revision the binary was built
// from, when it carries one). What differs between two attempts over the
// same inputs (start and end time, attempt id, host, the objects' ETags,
// which locally derive from modification times) is in manifest.json
// alone, and the history view's path carries the night and the attempt:
// Parquet files and report stay byte-identical across attempts, machines
// and clones (docs/decisions.md, "Publishing: one-off and nightly").

// provenanceKV is the Parquet key/value metadata of provenance.
func (j *job) provenanceKV() []writers.KV {
	kv := []writers.KV{{Key: writers.KeyInput, Value: j.in.String()}}
	if j.cfg.Commit != "" {
		kv = append(kv, writers.KV{Key: writers.KeyCommit, Value: j.cfg.Commit})
	}
	return kv
}

// manifest is the result's manifest.json.
func (j *job) manifest(rd *read, res *result, outputs []writers.ManifestOutput) writers.Manifest {
	return writers.Manifest{
		Version:    j.cfg.Version,
		Commit:     j.cfg.Commit,
		AttemptID:  j.attempt,
		Host:       j.host,
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
}
