package main

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestCleanExecutableRanges: only the executable's private read-only
// mappings without a page of their own are dropped; its writable data,
// a read-only mapping holding copied pages, and other files are not.
func TestCleanExecutableRanges(t *testing.T) {
	const exe = "/opt/crl batch/crlbatch"
	block := func(header string, anon int) string {
		return header + "\nSize:               100 kB\nRss:                 40 kB\nPrivate_Dirty:       40 kB\nAnonymous:        " +
			strconv.Itoa(anon) + " kB\nVmFlags: rd ex mr mw me\n"
	}
	smaps := block("00400000-02832000 r-xp 00000000 fe:00 99 "+exe, 0) + // text: dropped
		block("02832000-04fd4000 r--p 02431000 fe:00 99 "+exe, 0) + // rodata: dropped
		block("04fd4000-0560f000 rw-p 04bd4000 fe:00 99 "+exe, 0) + // data: writable
		block("0560f000-05610000 r--p 04c0f000 fe:00 99 "+exe, 4) + // relocated, copied: kept
		block("7f0000000000-7f0000001000 r-xp 00000000 fe:00 12 /usr/lib/libc.so.6", 0) +
		block("7f0000001000-7f0000002000 r-xp 00000000 fe:00 99 "+exe+"x", 0) +
		block("7f0000002000-7f0000003000 r--s 00000000 fe:00 99 "+exe, 0) + // shared
		block("7ffd00000000-7ffd00001000 rw-p 00000000 00:00 0 [stack]", 4)
	got := cleanExecutableRanges(strings.NewReader(smaps), exe)
	want := []addrRange{{0x400000, 0x2832000}, {0x2832000, 0x4fd4000}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("ranges %#x, want %#x", got, want)
	}
}

// TestDropStartupPages: this test binary's pages leave its resident set
// and come back as it runs on (it goes on running: the other tests of the
// package run after it).
func TestDropStartupPages(t *testing.T) {
	before := exeRss(t)
	dropped := dropStartupPages()
	after := exeRss(t)
	t.Logf("executable's mappings: %d bytes dropped; resident %d KiB before, %d KiB after", dropped, before, after)
	if dropped <= 0 {
		t.Fatal("no page of the executable was dropped")
	}
	if after >= before {
		t.Errorf("the executable's resident pages went from %d to %d KiB", before, after)
	}
	// The code and data of the package still work.
	if got := splitList("a, b"); len(got) != 2 || got[1] != "b" {
		t.Errorf("splitList after dropping pages: %q", got)
	}
}

// exeRss is the resident KiB of the read-only mappings of this executable.
func exeRss(t *testing.T) int {
	t.Helper()
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		t.Skip(err)
	}
	b, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Skip(err)
	}
	total, in := 0, false
	for _, line := range strings.Split(string(b), "\n") {
		if h, ok := mappingHeader([]byte(line)); ok {
			fs := strings.Fields(h)
			in = len(fs) >= 6 && strings.Join(fs[5:], " ") == exe && !strings.Contains(fs[1], "w")
			continue
		}
		if rest, ok := strings.CutPrefix(line, "Rss:"); in && ok {
			n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")))
			total += n
		}
	}
	return total
}
