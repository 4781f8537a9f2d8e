package readers

import (
	"strings"
	"testing"
)

// TestRunKeyConflicts: every conflict is listed, once per identity, the
// first exactly as Assemble (and AssembleRecords) reports it.
func TestRunKeyConflicts(t *testing.T) {
	objs := []object{
		{"a", `{"run_id":"1","reward":1,"regime_id":"x"}` + "\n" + `{"run_id":"2","reward":1,"regime_id":"x"}` + "\n"},
		{"b", `{"run_id":1,"reward":1,"regime_id":"x"}` + "\n" + `{"run_id":1.0,"reward":1,"regime_id":"x"}` + "\n" + `{"reward":1,"regime_id":"x"}` + "\n"},
		{"c", `{"run_id":2,"reward":1,"regime_id":"x"}` + "\n" + `{"run_id":1,"reward":1,"regime_id":"x"}` + "\n" + `{"run_id":"3","reward":1,"regime_id":"x"}` + "\n"},
	}
	var decoded []*ObjectRuns
	var records []*ObjectRecords
	for _, o := range objs {
		d, err := DecodeObject("mem://b/"+o.key, o.key, strings.NewReader(o.data), Options{})
		if err != nil {
			t.Fatal(err)
		}
		decoded = append(decoded, d)
		r, err := DecodeRecords("mem://b/"+o.key, o.key, strings.NewReader(o.data), skyfallRecordOpts)
		if err != nil {
			t.Fatal(err)
		}
		records = append(records, r)
	}
	for name, got := range map[string][]*DataError{"skyfall": RunKeyConflicts(decoded), "records": RecordRunKeyConflicts(records)} {
		if len(got) != 2 {
			t.Fatalf("%s: %d conflicts, want 2: %v", name, len(got), got)
		}
		if got[0].URL != "mem://b/b" || got[0].Line != 1 || got[1].URL != "mem://b/c" || got[1].Line != 1 {
			t.Errorf("%s: %v", name, got)
		}
		if !strings.Contains(got[1].Msg, `run_id="2" (string) (first at mem://b/a line 2)`) {
			t.Errorf("%s: %v", name, got[1])
		}
	}
	_, err := Assemble(decoded, Options{})
	if err == nil || err.Error() != RunKeyConflicts(decoded)[0].Error() {
		t.Errorf("Assemble: %v", err)
	}
	_, err = AssembleRecords(records, skyfallRecordOpts)
	if err == nil || err.Error() != RecordRunKeyConflicts(records)[0].Error() {
		t.Errorf("AssembleRecords: %v", err)
	}
	if got := RunKeyConflicts(decoded[:1]); len(got) != 0 {
		t.Errorf("no conflict: %v", got)
	}
}
