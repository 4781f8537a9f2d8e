package writers

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"io"
	"time"
)

// Manifest is manifest.json (INTERFACE.md), written last: its presence means
// the output is complete.
type Manifest struct {
	Version string `json:"version"`
	// Commit is the VCS revision the binary was built from ("-dirty" when
	// its tree had changes); "" when the binary carries none (go test).
	Commit string `json:"commit"`
	// AttemptID names this job: its UTC start and a random suffix
	// (20261201T020000Z-0412873fa9c1); a nightly result lives under
	// results/<attempt_id>/.
	AttemptID  string           `json:"attempt_id"`
	Host       string           `json:"host"` // where the job ran (os.Hostname)
	StartedAt  time.Time        `json:"started_at"`
	FinishedAt time.Time        `json:"finished_at"`
	Input      string           `json:"input"`  // the INPUT URL, credentials redacted
	Params     json.RawMessage  `json:"params"` // the same document as crlbatch.params
	Objects    []ManifestObject `json:"objects"`
	Runs       int              `json:"runs"`     // runs scored
	Families   int              `json:"families"` // families reduced
	Outputs    []ManifestOutput `json:"outputs"`
	Notes      []string         `json:"notes"`
	Skipped    []SkippedRow     `json:"skipped"`
}

// ManifestObject is one input object that was listed: its key relative to
// INPUT, its size and ETag as listed (a local file's ETag is its
// modification time and size, "<ns hex>-<size hex>", as the local driver's
// attributes give it), what reading it gave. New fields are added with
// omitempty so that older readers keep working.
type ManifestObject struct {
	Key       string `json:"key"`
	Size      int64  `json:"size"`
	ETag      string `json:"etag,omitempty"`
	MD5       string `json:"md5,omitempty"` // hex, when the store gives one
	RowsRead  int64  `json:"rows_read"`
	RunsFound int    `json:"runs_found"`
	Status    string `json:"status"`
	// Read says how the object's runs were obtained: decoded (JSON Lines),
	// parquet (a Parquet object), cache (served from --cache) or appended
	// (its earlier lines served from --cache, the lines appended since
	// decoded).
	Read string `json:"read,omitempty"`
}

// ManifestOutput is one file written under the OUTPUT prefix.
type ManifestOutput struct {
	Name   string `json:"name"`
	Rows   *int64 `json:"rows"` // null for a file that is not a table
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"` // hex
}

// SkippedRow is an input line skipped under --max-bad-rows.
type SkippedRow struct {
	Object string `json:"object"`
	Line   int64  `json:"line"` // 1-based
	Reason string `json:"reason"`
}

// WriteManifest writes m as JSON indented by two spaces with a trailing
// newline. The encoding is deterministic: fields in declaration order, times
// in UTC (RFC 3339), absent lists as [], params re-indented, no HTML escaping.
// It fails when params is not a JSON document. It never closes w.
func WriteManifest(w io.Writer, m Manifest) error {
	if !json.Valid(m.Params) {
		return fmt.Errorf("writers: manifest params is not a JSON document")
	}
	m.StartedAt, m.FinishedAt = m.StartedAt.UTC(), m.FinishedAt.UTC()
	m.Objects = nonNil(m.Objects)
	m.Outputs = nonNil(m.Outputs)
	m.Notes = nonNil(m.Notes)
	m.Skipped = nonNil(m.Skipped)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(m); err != nil {
		return fmt.Errorf("writers: encoding manifest: %w", err)
	}
	if _, err := w.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("writers: writing manifest: %w", err)
	}
	return nil
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// OutputDigest is an io.Writer that counts and hashes what goes through it, so
// that a file's manifest entry is computed while the file is written:
// io.MultiWriter(blobWriter, digest).
type OutputDigest struct {
	h hash.Hash
	n int64
}

// NewOutputDigest returns an empty digest.
func NewOutputDigest() *OutputDigest { return &OutputDigest{h: sha256.New()} }

// Write adds p to the digest; it never fails.
func (d *OutputDigest) Write(p []byte) (int, error) {
	d.h.Write(p)
	d.n += int64(len(p))
	return len(p), nil
}

// TableOutput returns the manifest entry of a table file of rows rows.
func (d *OutputDigest) TableOutput(name string, rows int) ManifestOutput {
	o := d.FileOutput(name)
	n := int64(rows)
	o.Rows = &n
	return o
}

// FileOutput returns the manifest entry of a file that is not a table.
func (d *OutputDigest) FileOutput(name string) ManifestOutput {
	return ManifestOutput{Name: name, Bytes: d.n, SHA256: hex.EncodeToString(d.h.Sum(nil))}
}
