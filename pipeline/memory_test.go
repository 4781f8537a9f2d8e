package pipeline

import "testing"

func TestParseBytes(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]int64{
		"1048576": 1 << 20, "4GiB": 4 << 30, "512MB": 512e6, "1.5G": 3 << 29, "2 KiB": 2048, "10B": 10, "0": 0,
	} {
		if got, err := ParseBytes(in); err != nil || got != want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "lots", "-1G", "1e30TB", "GiB"} {
		if _, err := ParseBytes(bad); err == nil {
			t.Errorf("ParseBytes(%q) accepted", bad)
		}
	}
	if DefaultMemoryLimit() < 1<<20 {
		t.Errorf("default memory limit %d", DefaultMemoryLimit())
	}
}
