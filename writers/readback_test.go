package writers

import (
	"bytes"
	"testing"
)

func TestReadParquetStringList(t *testing.T) {
	tb := NewTable()
	k := tb.String("k")
	l := tb.StringList("labels")
	k.Append("a")
	l.Append([]string{"x", "y|z", "ünï"})
	if err := tb.EndRow(); err != nil {
		t.Fatal(err)
	}
	k.Append("b")
	l.Append(nil)
	if err := tb.EndRow(); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteParquet(&buf, tb, testMetadata(t)); err != nil {
		t.Fatal(err)
	}
	rb, err := ReadParquet(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if got := rb.Types[1]; got != "list<element: utf8>" {
		t.Errorf("labels type %q", got)
	}
	got := rb.Rows[0]["labels"].([]any)
	if len(got) != 3 || got[1] != "y|z" || got[2] != "ünï" {
		t.Errorf("labels %v", got)
	}
	if got := rb.Rows[1]["labels"].([]any); len(got) != 0 {
		t.Errorf("empty list read back as %v", got)
	}
	if rb.Metadata[KeyProtocol] != "skyfall" || rb.CreatedBy != CreatedBy(testVersion) {
		t.Errorf("metadata %v created_by %q", rb.Metadata, rb.CreatedBy)
	}
}
