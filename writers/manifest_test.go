package writers

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"
)

func sampleManifest() Manifest {
	paris := time.FixedZone("CET", 3600)
	d := NewOutputDigest()
	io.WriteString(d, "PAR1…PAR1")
	r := NewOutputDigest()
	io.WriteString(r, "# report\n")
	return Manifest{
		Version:    "0.1.0",
		Commit:     "3f1c2a9e0b7d4c5a6e8f9a0b1c2d3e4f5a6b7c8d",
		AttemptID:  "20250301T010000Z-0412873fa9c1",
		Host:       "worker-7",
		StartedAt:  time.Date(2025, 3, 1, 2, 0, 0, 0, paris),
		FinishedAt: time.Date(2025, 3, 1, 2, 3, 4, 500_000_000, paris),
		Input:      "s3://bucket/runs/2024?region=us-east-1&use_path_style=true",
		Params:     json.RawMessage(`{"anchor":"segment","alpha":0.9,"bound":{"derivation":"per_step","value":0.3333333333333333},"group_by":["algorithm_id"]}`),
		Objects: []ManifestObject{
			{Key: "a/run0.jsonl.gz", Size: 1234, ETag: `"9b2cf535f27731c974343645a3985328"`, RowsRead: 40, RunsFound: 2, Status: "ok"},
			{Key: "a/run1.jsonl", Size: 99, MD5: "0cc175b9c0f1b6a831c399e269772661", RowsRead: 3, RunsFound: 1, Status: "ok"},
		},
		Runs:     3,
		Families: 1,
		Outputs:  []ManifestOutput{d.TableOutput("runs.parquet", 6), r.FileOutput("report.md")},
		Notes:    []string{"baseline <none> not in the data: comparison columns are null"},
		Skipped:  []SkippedRow{{Object: "a/run1.jsonl", Line: 17, Reason: "line is not valid JSON"}},
	}
}

func TestManifestGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteManifest(&buf, sampleManifest()); err != nil {
		t.Fatal(err)
	}
	golden(t, "manifest.golden.json", buf.Bytes())
	var again bytes.Buffer
	if err := WriteManifest(&again, sampleManifest()); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), again.Bytes()) {
		t.Error("two encodings of the same manifest differ")
	}
}

func TestManifestEmptyListsAndParams(t *testing.T) {
	var buf bytes.Buffer
	m := Manifest{Version: "0.1.0", Params: json.RawMessage(`{}`)}
	if err := WriteManifest(&buf, m); err != nil {
		t.Fatal(err)
	}
	s := buf.String()
	for _, want := range []string{`"objects": []`, `"outputs": []`, `"notes": []`, `"skipped": []`, `"started_at": "0001-01-01T00:00:00Z"`} {
		if !strings.Contains(s, want) {
			t.Errorf("manifest lacks %s:\n%s", want, s)
		}
	}
	if !strings.HasSuffix(s, "}\n") {
		t.Error("manifest does not end with a newline")
	}
	for _, p := range []json.RawMessage{nil, json.RawMessage(`{"a":`)} {
		m.Params = p
		if err := WriteManifest(io.Discard, m); err == nil {
			t.Errorf("WriteManifest accepted params %q", p)
		}
	}
}

func TestOutputDigest(t *testing.T) {
	data := bytes.Repeat([]byte("crlbatch"), 1000)
	d := NewOutputDigest()
	w := io.MultiWriter(io.Discard, d)
	w.Write(data[:10])
	w.Write(data[10:])
	sum := sha256.Sum256(data)
	got := d.TableOutput("runs.parquet", 42)
	if got.Name != "runs.parquet" || got.Bytes != int64(len(data)) || got.SHA256 != hex.EncodeToString(sum[:]) || got.Rows == nil || *got.Rows != 42 {
		t.Errorf("TableOutput = %+v", got)
	}
	if f := d.FileOutput("report.md"); f.Rows != nil {
		t.Errorf("FileOutput has rows %d", *f.Rows)
	}
}
