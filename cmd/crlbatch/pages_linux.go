package main

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// Startup pages. Package initialisation (about 500 packages: the cloud
// SDKs' endpoint tables, protobuf descriptors, gRPC and its xDS stack)
// touches code and read-only data scattered over the whole binary, and the
// kernel maps each touched page with its neighbours (fault-around): about
// 43 MiB of the executable are resident before the job reads a byte, most
// of them never used again, and they count in the process's RSS for the
// whole job (issue 16: a third of the peak of the 1 GB sweeps). Once
// initialised, crlbatch drops the clean pages of its read-only mappings of
// its own executable (madvise MADV_DONTNEED); the kernel maps back, from
// the page cache, the pages still used when they are next touched. Writable
// mappings and any mapping holding a page copied on write are left alone:
// only pages of the file itself are dropped, so nothing is lost. It changes
// what the process maps, not the page cache: the file's pages stay cached
// (and charged to the cgroup that read them) until the kernel reclaims
// them, which it can now do without unmapping them from crlbatch first.

// dropStartupPages drops the clean pages of this executable's read-only
// mappings and returns the bytes of the mappings dropped. It is best
// effort: a failure leaves the pages mapped, and nothing else changes.
func dropStartupPages() int64 {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return 0
	}
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return 0
	}
	ranges := cleanExecutableRanges(f, exe)
	f.Close()
	var dropped int64
	for _, r := range ranges {
		// The addresses are the kernel's, of memory the Go heap does not
		// manage: passed to madvise as numbers.
		if _, _, errno := syscall.Syscall(syscall.SYS_MADVISE, r.start, r.end-r.start, syscall.MADV_DONTNEED); errno == 0 {
			dropped += int64(r.end - r.start)
		}
	}
	return dropped
}

type addrRange struct{ start, end uintptr }

// cleanExecutableRanges reads /proc/self/smaps and returns the mappings of
// the file exe that are private, not writable, and hold no page of their
// own (Anonymous 0 kB: no page was copied on write, as relocated read-only
// data of a position-independent binary is): every page mapped is the
// file's, in the page cache, which MADV_DONTNEED unmaps and the kernel maps
// again, the same, on the next touch. (Private_Dirty is not a sign of a
// copy: a binary just written has dirty page-cache pages.)
func cleanExecutableRanges(smaps io.Reader, exe string) []addrRange {
	var out []addrRange
	var cur addrRange
	candidate, clean := false, false
	flush := func() {
		if candidate && clean {
			out = append(out, cur)
		}
		candidate, clean = false, false
	}
	sc := bufio.NewScanner(smaps)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if header, ok := mappingHeader(line); ok {
			flush()
			fs := strings.Fields(header)
			// address perms offset dev inode [path]
			if len(fs) < 6 || strings.Join(fs[5:], " ") != exe {
				continue
			}
			perms := fs[1]
			if len(perms) != 4 || perms[0] != 'r' || perms[1] != '-' || perms[3] != 'p' {
				continue
			}
			lo, hi, ok := strings.Cut(fs[0], "-")
			if !ok {
				continue
			}
			s, err1 := strconv.ParseUint(lo, 16, 64)
			e, err2 := strconv.ParseUint(hi, 16, 64)
			if err1 != nil || err2 != nil || e <= s {
				continue
			}
			cur, candidate, clean = addrRange{uintptr(s), uintptr(e)}, true, true
			continue
		}
		if !candidate {
			continue
		}
		if rest, ok := bytes.CutPrefix(line, []byte("Anonymous:")); ok {
			if v := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(string(rest)), "kB")); v != "0" {
				clean = false
			}
		}
	}
	flush()
	if sc.Err() != nil {
		return nil
	}
	return out
}

// mappingHeader reports whether line starts a mapping in smaps ("start-end
// perms ...", the start in hexadecimal), and returns it.
func mappingHeader(line []byte) (string, bool) {
	i := bytes.IndexByte(line, '-')
	if i <= 0 {
		return "", false
	}
	for _, c := range line[:i] {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return "", false
		}
	}
	return string(line), true
}
