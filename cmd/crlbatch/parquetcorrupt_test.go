package main

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/file"
)

// TestParquetCorruptObject: a converted Parquet trace damaged in its pages
// (bytes flipped in a compressed data page, in an uncompressed one, in a
// dictionary page, in a page header; its row group cut short, the footer
// kept) or its footer (a length past the start) is bad input data, not a
// store failing: exit 1, nothing written, one error naming the object, the
// row (where rows were reached), the damaged column (where one column
// fails alone) and the cause once (a page whose bytes changed: the
// checksum convert wrote in its header; before convert wrote them, the
// uncompressed page's other rewards were scored as if nothing were
// wrong); the same at --concurrency 1 and 4, under --memory-limit 1KiB,
// read whole or by ranges; validate reports it as a problem of the object.
//
// Not parallel, nor its cases (see TestMain): --memory-limit sets the
// runtime's soft memory limit, the process's, and restores the one it
// found; two jobs at once restored each other's, and left the tests after
// them a limit of 96 MiB.
func TestParquetCorruptObject(t *testing.T) {
	src := filepath.Join(t.TempDir(), "pq")
	if code, _, stderr := crl(t, "convert", "../../configs/example-sweep", "--out", src); code != 0 {
		t.Fatalf("convert: exit %d: %s", code, stderr)
	}
	const victim = "ewc/ewc-s0.parquet"
	data, err := os.ReadFile(filepath.Join(src, victim))
	if err != nil {
		t.Fatal(err)
	}
	// Where the first row group's step (a compressed data page, no
	// dictionary) and run_id (a dictionary) lie.
	pf, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	rg := pf.MetaData().RowGroup(0)
	step, err := rg.ColumnChunk(rg.Schema.ColumnIndexByName("step"))
	if err != nil {
		t.Fatal(err)
	}
	runID, err := rg.ColumnChunk(rg.Schema.ColumnIndexByName("run_id"))
	if err != nil {
		t.Fatal(err)
	}
	reward, err := rg.ColumnChunk(rg.Schema.ColumnIndexByName("reward"))
	if err != nil {
		t.Fatal(err)
	}
	pf.Close()
	if step.Compression() == 0 || step.HasDictionaryPage() || !runID.HasDictionaryPage() || reward.Compression() != 0 {
		t.Fatalf("step %v (dictionary %v), run_id dictionary %v, reward %v: want a compressed step, a dictionary of run_id, rewards uncompressed",
			step.Compression(), step.HasDictionaryPage(), runID.HasDictionaryPage(), reward.Compression())
	}
	rewardEnd := reward.DataPageOffset() + reward.TotalCompressedSize()
	stepAt, stepEnd := step.DataPageOffset(), step.DataPageOffset()+step.TotalCompressedSize()
	flip := func(lo, hi int64) []byte {
		out := bytes.Clone(data)
		for i := lo; i < hi; i++ {
			out[i] ^= 0x5a
		}
		return out
	}
	footer := bytes.Clone(data)
	binary.LittleEndian.PutUint32(footer[len(data)-8:], uint32(2*len(data)))
	cases := []struct {
		name string
		data []byte
		want string // what the error says after the object's path
	}{
		{"data page", flip(stepEnd-40, stepEnd-8), ": row 1: column step: parquet: page checksum mismatch (row group 1, page 1 of the column chunk: crc "},
		{"uncompressed data page", flip(rewardEnd-16, rewardEnd-8), ": row 1: column reward: parquet: page checksum mismatch (row group 1, page 1 of the column chunk: crc "},
		{"dictionary page", flip(runID.DataPageOffset()-6, runID.DataPageOffset()-1), ": row 1: column run_id: parquet: "},
		{"page header", flip(stepAt, stepAt+8), ": row 1: column step: parquet: deserializing page header failed"},
		{"row group cut short", append(bytes.Clone(data[:stepAt+20]), data[stepEnd+200:]...), ": row 1: column step: parquet: "},
		{"footer length past the start", footer, ": not a readable Parquet file: parquet: file is smaller than indicated metadata size"},
	}
	variants := [][]string{
		{"--concurrency", "1"}, {"--concurrency", "4"},
		{"--concurrency", "1", "--memory-limit", "1KiB"}, {"--concurrency", "4", "--memory-limit", "1KiB"},
		{"--parquet-whole-bytes", "1"}, // read by ranges
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tmp := t.TempDir()
			in := filepath.Join(tmp, "in")
			if err := os.CopyFS(in, os.DirFS(src)); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(in, filepath.FromSlash(victim))
			if err := os.WriteFile(path, c.data, 0o644); err != nil {
				t.Fatal(err)
			}
			var first string
			for i, v := range variants {
				out := filepath.Join(tmp, "out", string(rune('a'+i)))
				code, _, stderr := crl(t, append([]string{"score", in, "--out", out, "--quiet", "--pattern", "*.parquet"}, v...)...)
				msg := errorLines(stderr)
				cause := strings.TrimPrefix(msg, "crlbatch: "+path)
				if code != 1 || !strings.HasPrefix(cause, c.want) || strings.Count(cause, "parquet: ") != 1 || strings.Contains(cause, "read: ") {
					t.Errorf("%v: exit %d: %s\nwant exit 1 and %s%s", v, code, stderr, path, c.want)
				}
				if first == "" {
					first = msg
				} else if msg != first {
					t.Errorf("%v said %s, %v %s", v, msg, variants[0], first)
				}
				if _, err := os.Stat(out); !os.IsNotExist(err) {
					t.Errorf("%v: the failed job left %s (%v)", v, out, err)
				}
			}
			code, stdout, stderr := crl(t, "validate", in, "--pattern", "*.parquet")
			if code != 1 || !strings.Contains(stdout, "problem (object): "+strings.TrimPrefix(first, "crlbatch: ")+"\n") {
				t.Errorf("validate: exit %d: %s%s\nwant the problem %s", code, stdout, stderr, first)
			}
		})
	}
}
