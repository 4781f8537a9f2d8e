package hugemem

import (
	"bytes"
	"strconv"
)

// ReleaseExecutable unmaps the executable's resident pages that can be
// read back from its file, and returns how many bytes were resident in
// them (0 where it does nothing: not Linux, or /proc cannot be read). The
// process goes on as before: a page touched again is mapped again from the
// page cache (a minor fault; the kernel maps the pages around it with it).
//
// A Go executable of crlbatch's size (~100 MB, most of it the cloud
// SDKs' code and tables) has ~35 MiB of itself resident once its packages
// are initialised: the initialisers and the tables they read are spread
// over the whole file, and each fault maps up to 64 KiB around the page
// it needed (the kernel's fault-around). A job touches far fewer of those
// pages after it has started; released when it starts reading, the rest
// no longer count in its peak RSS.
//
// Only mappings that hold nothing but the file's bytes are released: the
// executable's own (by path), private, not writable, and without a page
// the process wrote (smaps' Anonymous: 0 kB: an executable whose loader
// relocates read-only data, a RELRO segment, or whose code a debugger
// patched has such pages, and dropping them would undo what was written;
// crlbatch's builds, static or dynamically linked, have none). Writable
// mappings (the data and bss segments) are never touched.
func ReleaseExecutable() int64 {
	return releaseExecutable()
}

// exeMapping is an address range of the executable that ReleaseExecutable
// releases, and the bytes resident in it.
type exeMapping struct {
	lo, hi uintptr
	rss    int64
}

// exeMappings reads smaps (the contents of /proc/self/smaps) and returns
// the mappings of the file at path that ReleaseExecutable may release: private,
// readable and not writable, with resident pages and no anonymous (written)
// or locked ones. A mapping whose fields cannot be read, or that does not
// say how much of it is anonymous, is left out.
func exeMappings(smaps []byte, path string) []exeMapping {
	var out []exeMapping
	var cur *exeMapping // the mapping whose fields are being read, if a candidate
	var anon, locked, anonRead bool
	flush := func() {
		if cur != nil && anonRead && !anon && !locked && cur.rss > 0 {
			out = append(out, *cur)
		}
		cur, anon, locked, anonRead = nil, false, false, false
	}
	for len(smaps) > 0 {
		line := smaps
		if i := bytes.IndexByte(smaps, '\n'); i >= 0 {
			line, smaps = smaps[:i], smaps[i+1:]
		} else {
			smaps = nil
		}
		if m, ok := mappingHeader(line); ok {
			flush()
			if m.path == path && m.perms[0] == 'r' && m.perms[1] == '-' && m.perms[3] == 'p' {
				cur = &exeMapping{lo: m.lo, hi: m.hi}
			}
			continue
		}
		if cur == nil {
			continue
		}
		name, kb, ok := sizeField(line)
		if !ok {
			continue
		}
		switch name {
		case "Rss":
			cur.rss = kb << 10
		case "Anonymous":
			anon, anonRead = kb != 0, true
		case "Locked":
			locked = kb != 0
		}
	}
	flush()
	return out
}

// smapsHeader is a mapping's first line in smaps: its range, its
// permissions and the path of the file it maps ("" for none).
type smapsHeader struct {
	lo, hi uintptr
	perms  string
	path   string
}

// mappingHeader reads a mapping's first line ("lo-hi perms offset dev
// inode [path]"); ok is false for a field line ("Rss: ... kB").
func mappingHeader(line []byte) (smapsHeader, bool) {
	var h smapsHeader
	f := bytes.Fields(line)
	if len(f) < 5 {
		return h, false
	}
	lo, hi, ok := bytes.Cut(f[0], []byte{'-'})
	if !ok || len(f[1]) != 4 {
		return h, false
	}
	l, err1 := strconv.ParseUint(string(lo), 16, 64)
	u, err2 := strconv.ParseUint(string(hi), 16, 64)
	if err1 != nil || err2 != nil || u < l || uint64(uintptr(u)) != u {
		return h, false
	}
	h.lo, h.hi, h.perms = uintptr(l), uintptr(u), string(f[1])
	if len(f) > 5 {
		h.path = string(afterFields(line, 5))
	}
	return h, true
}

// afterFields returns what line holds after its first n fields and the
// spaces after them: a path, spaces and all.
func afterFields(line []byte, n int) []byte {
	for range n {
		line = bytes.TrimLeft(line, " \t")
		i := bytes.IndexAny(line, " \t")
		if i < 0 {
			return nil
		}
		line = line[i:]
	}
	return bytes.TrimLeft(line, " \t")
}

// sizeField reads a field line of smaps in kB ("Rss:   1234 kB").
func sizeField(line []byte) (name string, kb int64, ok bool) {
	k, v, found := bytes.Cut(line, []byte{':'})
	if !found {
		return "", 0, false
	}
	f := bytes.Fields(v)
	if len(f) != 2 || string(f[1]) != "kB" {
		return "", 0, false
	}
	n, err := strconv.ParseInt(string(f[0]), 10, 64)
	if err != nil {
		return "", 0, false
	}
	return string(k), n, true
}
