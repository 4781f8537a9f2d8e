package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/crlbatch/crlbatch/writers"
)

// corpusDir holds the bad-input corpus of issue 6 (see its README.md).
const corpusDir = "../../testdata/corpus"

// corpusMinCases guards against the corpus shrinking by accident.
const corpusMinCases = 45

// corpusCase is one case.json. Unknown keys are errors, so a misspelt
// expectation cannot pass silently.
type corpusCase struct {
	Description string `json:"description"`
	// Args are the command-line arguments after the program name. IN, OUT
	// and CASE (alone, or followed by "/…", or after "--flag=") stand for the
	// input folder, a fresh output folder and the case folder.
	Args []string `json:"args"`
	// Setup commands run first, in order, and must exit 0 (e.g. a first
	// run that leaves a complete result under OUT).
	Setup [][]string `json:"setup"`
	// Generate writes inputs too large or too binary to commit.
	Generate []corpusGen `json:"generate"`

	Exit   int      `json:"exit"`
	Stderr []string `json:"stderr"` // substrings; IN/OUT/CASE expanded as in Args
	Stdout []string `json:"stdout"`

	// For a case that exits 0: substrings of report.md, of its Notes
	// section, and of manifest.json, and checks of Parquet columns.
	Report   []string        `json:"report"`
	Notes    []string        `json:"notes"`
	Manifest []string        `json:"manifest"`
	Parquet  []corpusParquet `json:"parquet"`

	// KnownBug, when set, says what crlbatch does wrong today: the case runs,
	// and is reported as skipped with this text instead of failing.
	KnownBug string `json:"known_bug"`
}

// corpusGen is an input written at test time under IN.
type corpusGen struct {
	File  string `json:"file"`
	Kind  string `json:"kind"` // long_line, gzip_bomb, fifo, symlink, truncated_while_read
	Bytes int    `json:"bytes"`
	// Target is where a symlink points (placeholders expanded).
	Target string `json:"target"`
}

// corpusParquet checks one result table. With Rows set, the table's row
// count; otherwise the column's value in Row (or, without Row, in any row
// for contains and in every row for not_contains).
type corpusParquet struct {
	File        string          `json:"file"`
	Rows        *int            `json:"rows"`
	Row         *int            `json:"row"`
	Column      string          `json:"column"`
	Equals      json.RawMessage `json:"equals"`
	Contains    string          `json:"contains"`
	NotContains string          `json:"not_contains"`
}

func TestCorpus(t *testing.T) {
	t.Parallel()
	ents, err := os.ReadDir(corpusDir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(corpusDir, e.Name())
		c, err := loadCorpusCase(dir)
		if err != nil {
			t.Errorf("%s: %v", e.Name(), err)
			continue
		}
		n++
		t.Run(e.Name(), func(t *testing.T) {
			t.Parallel()
			runCorpusCase(t, dir, c)
		})
	}
	if n < corpusMinCases {
		t.Errorf("the corpus holds %d cases, want at least %d", n, corpusMinCases)
	}
}

func loadCorpusCase(dir string) (*corpusCase, error) {
	data, err := os.ReadFile(filepath.Join(dir, "case.json"))
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var c corpusCase
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("case.json: %w", err)
	}
	switch {
	case c.Description == "":
		return nil, fmt.Errorf("case.json: no description")
	case len(c.Args) == 0:
		return nil, fmt.Errorf("case.json: no args")
	case c.Exit != 0 && len(c.Stderr) == 0:
		return nil, fmt.Errorf("case.json: a failing case must name what stderr says")
	case c.Exit != 0 && (len(c.Report)+len(c.Notes)+len(c.Manifest)+len(c.Parquet)) > 0:
		return nil, fmt.Errorf("case.json: output checks on a failing case")
	case c.Exit == 0 && (len(c.Report)+len(c.Notes)+len(c.Manifest)+len(c.Parquet)) == 0:
		return nil, fmt.Errorf("case.json: a valid case must check something in its output")
	}
	return &c, nil
}

// corpusRun is the outcome of one case, collected so that a known bug can be
// reported as a skip with what went wrong.
type corpusRun struct {
	failures []string
}

func (r *corpusRun) errorf(format string, args ...any) {
	r.failures = append(r.failures, fmt.Sprintf(format, args...))
}

func runCorpusCase(t *testing.T, dir string, c *corpusCase) {
	// A case that truncates an object while the job reads it is run again
	// when the watcher saw the job reading it too late, near its end, or
	// never (a starved watcher on a loaded machine).
	for attempt := 1; !runCorpusAttempt(t, dir, c, attempt < corpusTruncationAttempts); attempt++ {
		t.Logf("attempt %d: the object was not seen read from early enough to truncate it; again", attempt)
	}
}

// corpusTruncationAttempts is how often a truncated_while_read case is
// tried before a miss fails it.
const corpusTruncationAttempts = 5

// runCorpusAttempt runs case c once; false when a truncated_while_read
// object was not seen read from early enough to truncate it and retry is
// allowed (then nothing was checked).
func runCorpusAttempt(t *testing.T, dir string, c *corpusCase, retry bool) bool {
	tmp := t.TempDir()
	caseDir, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(tmp, "in")
	out := filepath.Join(tmp, "out")
	if err := os.MkdirAll(in, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := corpusCopyTree(filepath.Join(caseDir, "in"), in); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"IN": in, "OUT": out, "CASE": caseDir}
	for _, g := range c.Generate {
		g.Target = corpusExpand(g.Target, vars)
		if err := corpusGenerate(filepath.Join(in, filepath.FromSlash(g.File)), g); err != nil {
			t.Fatalf("generate %s: %v", g.File, err)
		}
	}
	for _, s := range c.Setup {
		code, _, stderr, panicked := corpusInvoke(corpusExpandArgs(s, vars))
		if panicked != "" || code != 0 {
			t.Fatalf("setup %q: exit %d: %s%s", s, code, stderr, panicked)
		}
	}
	inBefore := corpusSnapshot(t, in)
	outBefore := corpusSnapshot(t, out)
	// An object the job is reading when it changes: the test, not the job,
	// truncates it, so it is left out of the check that the job leaves its
	// input as it found it.
	var watched []*corpusTruncation
	for _, g := range c.Generate {
		if g.Kind == "truncated_while_read" {
			w := corpusTruncateWhenOpened(filepath.Join(in, filepath.FromSlash(g.File)))
			defer w.stop()
			watched = append(watched, w)
			delete(inBefore, g.File)
		}
	}

	args := corpusExpandArgs(c.Args, vars)
	code, stdout, stderr, panicked := corpusInvoke(args)
	for _, w := range watched {
		switch w.stop() {
		case truncationMissed, truncationNone:
			if retry {
				return false
			}
			t.Fatalf("%s was not truncated while the job read it (%d attempts; seen read from too late, or never): the case tests nothing", w.path, corpusTruncationAttempts)
		}
	}
	r := &corpusRun{}
	switch {
	case panicked != "":
		r.errorf("panic: %s", panicked)
	case strings.Contains(stderr, "panic:") || strings.Contains(stderr, "goroutine "):
		r.errorf("stderr shows a panic:\n%s", stderr)
	}
	if code != c.Exit {
		r.errorf("exit %d, want %d; stderr: %s", code, c.Exit, strings.TrimSpace(stderr))
	}
	for _, want := range c.Stderr {
		if w := corpusExpand(want, vars); !strings.Contains(stderr, w) {
			r.errorf("stderr does not contain %q: %s", w, strings.TrimSpace(stderr))
		}
	}
	for _, want := range c.Stdout {
		if w := corpusExpand(want, vars); !strings.Contains(stdout, w) {
			r.errorf("stdout does not contain %q: %s", w, strings.TrimSpace(stdout))
		}
	}
	inAfter := corpusSnapshot(t, in)
	for _, w := range watched {
		rel, _ := filepath.Rel(in, w.path)
		delete(inAfter, filepath.ToSlash(rel))
	}
	if d := corpusDiff(inBefore, inAfter); d != "" {
		r.errorf("the job changed its input: %s", d)
	}
	if code != 0 {
		if d := corpusDiff(outBefore, corpusSnapshot(t, out)); d != "" {
			r.errorf("a failed job changed OUT: %s", d)
		}
	} else if c.Exit == 0 {
		checkCorpusOutput(r, out, c)
	}

	if c.KnownBug != "" {
		if len(r.failures) == 0 {
			t.Skipf("KNOWN BUG no longer reproduces, remove the known_bug mark from %s/case.json: %s", dir, c.KnownBug)
		}
		t.Skipf("KNOWN BUG: %s\n  today: %s", c.KnownBug, strings.Join(r.failures, "\n  today: "))
	}
	for _, f := range r.failures {
		t.Errorf("%s\n  (case: %s)\n  (command: crlbatch %s)", f, c.Description, strings.Join(args, " "))
	}
	return true
}

// corpusInvoke runs the program in-process; a panic on the calling goroutine
// is caught and reported (one on another goroutine ends the test binary,
// which fails the test just as loudly).
func corpusInvoke(args []string) (code int, stdout, stderr, panicked string) {
	var o, e bytes.Buffer
	defer func() {
		if p := recover(); p != nil {
			code, stdout, stderr = -1, o.String(), e.String()
			panicked = fmt.Sprintf("%v\n%s", p, debug.Stack())
		}
	}()
	code = run(context.Background(), append([]string{"crlbatch"}, args...), &o, &e)
	return code, o.String(), e.String(), ""
}

// corpusExpand replaces a leading placeholder IN, OUT or CASE (the whole string,
// or followed by "/") with its folder.
func corpusExpand(s string, vars map[string]string) string {
	for k, v := range vars {
		if s == k {
			return v
		}
		if strings.HasPrefix(s, k+"/") {
			return v + string(filepath.Separator) + filepath.FromSlash(s[len(k)+1:])
		}
	}
	return s
}

// corpusExpandArgs expands placeholders in arguments, also after "--flag=".
func corpusExpandArgs(args []string, vars map[string]string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if strings.HasPrefix(a, "-") {
			if k, v, ok := strings.Cut(a, "="); ok {
				out[i] = k + "=" + corpusExpand(v, vars)
				continue
			}
		}
		out[i] = corpusExpand(a, vars)
	}
	return out
}

// corpusGenerate writes a generated input object.
func corpusGenerate(path string, g corpusGen) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	switch g.Kind {
	case "fifo":
		return syscall.Mkfifo(path, 0o644)
	case "symlink":
		return os.Symlink(filepath.FromSlash(g.Target), path)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	switch g.Kind {
	case "long_line":
		// Three rows; the second carries a per-step extra field that makes
		// its line g.Bytes long. It varies over the run, so it is not
		// metadata.
		head := `{"reward": 0.5, "regime_id": "a", "blob": "`
		tail := `"}`
		pad := g.Bytes - len(head) - len(tail)
		if pad < 0 {
			return fmt.Errorf("long_line: %d bytes is too short", g.Bytes)
		}
		var b bytes.Buffer
		b.Grow(g.Bytes + 128)
		b.WriteString(`{"reward": 1, "regime_id": "a"}` + "\n" + head)
		b.Write(bytes.Repeat([]byte("x"), pad))
		b.WriteString(tail + "\n" + `{"reward": 0.25, "regime_id": "b"}` + "\n")
		_, err = f.Write(b.Bytes())
	case "truncated_while_read":
		// g.Bytes of valid rows, one run, two labels; truncated to half by
		// corpusTruncateWhenOpened once the job opens it.
		var b bytes.Buffer
		for i := 0; b.Len() < g.Bytes; i++ {
			l := "a"
			if i%1000 >= 500 {
				l = "b"
			}
			fmt.Fprintf(&b, `{"step": %d, "reward": %d.5, "regime_id": %q}`+"\n", i, i%7, l)
		}
		_, err = f.Write(b.Bytes())
	case "gzip_bomb":
		// One good row, then g.Bytes of blank lines: tiny compressed, huge
		// decompressed.
		zw, _ := gzip.NewWriterLevel(f, gzip.BestCompression)
		zw.Write([]byte(`{"reward": 1, "regime_id": "a"}` + "\n"))
		blank := bytes.Repeat([]byte("\n"), 1<<20)
		for n := 0; n < g.Bytes; n += len(blank) {
			if _, err := zw.Write(blank); err != nil {
				return err
			}
		}
		err = zw.Close()
	default:
		err = fmt.Errorf("unknown kind %q (want long_line, gzip_bomb, fifo, symlink or truncated_while_read)", g.Kind)
	}
	if err != nil {
		return err
	}
	return f.Close()
}

func corpusCopyTree(src, dst string) error {
	if _, err := os.Stat(src); os.IsNotExist(err) {
		return nil
	}
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
}

// corpusSnapshot maps every file under dir to the SHA-256 of its bytes.
func corpusSnapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) && p == dir {
				return fs.SkipAll
			}
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		if !d.Type().IsRegular() { // a link or a FIFO: what it is, never its bytes
			target, _ := os.Readlink(p)
			out[filepath.ToSlash(rel)] = d.Type().String() + " " + target
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		out[filepath.ToSlash(rel)] = hex.EncodeToString(sum[:])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func corpusDiff(before, after map[string]string) string {
	var d []string
	for k, v := range after {
		switch w, ok := before[k]; {
		case !ok:
			d = append(d, "new file "+k)
		case w != v:
			d = append(d, "changed "+k)
		}
	}
	for k := range before {
		if _, ok := after[k]; !ok {
			d = append(d, "deleted "+k)
		}
	}
	sort.Strings(d)
	return strings.Join(d, ", ")
}

// corpusResultDir finds the complete result under OUT: the prefix LATEST names
// when there is one, else OUT itself.
func corpusResultDir(out string) string {
	if b, err := os.ReadFile(filepath.Join(out, "LATEST")); err == nil {
		p := strings.TrimPrefix(strings.TrimSpace(string(b)), "file://")
		if !filepath.IsAbs(p) {
			p = filepath.Join(out, filepath.FromSlash(p))
		}
		if _, err := os.Stat(filepath.Join(p, "manifest.json")); err == nil {
			return p
		}
	}
	return out
}

func checkCorpusOutput(r *corpusRun, out string, c *corpusCase) {
	res := corpusResultDir(out)
	if _, err := os.Stat(filepath.Join(res, "manifest.json")); err != nil {
		r.errorf("no manifest.json under %s: the result is not complete", res)
		return
	}
	if len(c.Report)+len(c.Notes) > 0 {
		report, err := os.ReadFile(filepath.Join(res, "report.md"))
		if err != nil {
			r.errorf("report.md: %v", err)
		}
		for _, want := range c.Report {
			if !strings.Contains(string(report), want) {
				r.errorf("report.md does not contain %q", want)
			}
		}
		notes := corpusNotes(string(report))
		for _, want := range c.Notes {
			if !strings.Contains(notes, want) {
				r.errorf("the notes of report.md do not contain %q:\n%s", want, notes)
			}
		}
	}
	if len(c.Manifest) > 0 {
		m, err := os.ReadFile(filepath.Join(res, "manifest.json"))
		if err != nil {
			r.errorf("manifest.json: %v", err)
		}
		for _, want := range c.Manifest {
			if !strings.Contains(string(m), want) {
				r.errorf("manifest.json does not contain %q", want)
			}
		}
	}
	tables := map[string]*writers.ReadBack{}
	for _, p := range c.Parquet {
		rb, ok := tables[p.File]
		if !ok {
			f, err := os.Open(filepath.Join(res, p.File))
			if err != nil {
				r.errorf("%s: %v", p.File, err)
				continue
			}
			rb, err = writers.ReadParquet(f)
			f.Close()
			if err != nil {
				r.errorf("%s: %v", p.File, err)
				continue
			}
			tables[p.File] = rb
		}
		corpusCheckParquet(r, rb, p)
	}
}

// corpusNotes is the text of the report's "## Notes" section.
func corpusNotes(report string) string {
	_, notes, ok := strings.Cut(report, "\n## Notes")
	if !ok {
		return ""
	}
	if i := strings.Index(notes, "\n## "); i >= 0 {
		notes = notes[:i]
	}
	return notes
}

func corpusCheckParquet(r *corpusRun, rb *writers.ReadBack, p corpusParquet) {
	if p.Rows != nil {
		if len(rb.Rows) != *p.Rows {
			r.errorf("%s has %d rows, want %d", p.File, len(rb.Rows), *p.Rows)
		}
		if p.Column == "" {
			return
		}
	}
	if !slices.Contains(rb.Columns, p.Column) {
		r.errorf("%s has no column %q (columns %v)", p.File, p.Column, rb.Columns)
		return
	}
	rows := rb.Rows
	where := "any row"
	if p.Row != nil {
		if *p.Row >= len(rb.Rows) {
			r.errorf("%s has %d rows, no row %d", p.File, len(rb.Rows), *p.Row)
			return
		}
		rows = rb.Rows[*p.Row : *p.Row+1]
		where = fmt.Sprintf("row %d", *p.Row)
	}
	if len(p.Equals) > 0 {
		var want any
		if err := json.Unmarshal(p.Equals, &want); err != nil {
			r.errorf("%s %s: bad equals: %v", p.File, p.Column, err)
			return
		}
		found := false
		var got []string
		for _, row := range rows {
			if corpusCellEquals(row[p.Column], want) {
				found = true
			}
			got = append(got, corpusRenderCell(row[p.Column]))
		}
		if !found {
			r.errorf("%s %s, %s: got %v, want %s", p.File, p.Column, where, got, p.Equals)
		}
	}
	if p.Contains != "" {
		found := false
		for _, row := range rows {
			if strings.Contains(corpusRenderCell(row[p.Column]), p.Contains) {
				found = true
			}
		}
		if !found {
			r.errorf("%s %s, %s: no value contains %q", p.File, p.Column, where, p.Contains)
		}
	}
	if p.NotContains != "" {
		for i, row := range rows {
			if s := corpusRenderCell(row[p.Column]); strings.Contains(s, p.NotContains) {
				r.errorf("%s %s, row %d: %q contains %q", p.File, p.Column, i, s, p.NotContains)
			}
		}
	}
}

// corpusCellEquals compares a Parquet value with a JSON one: numbers by value
// (within 1e-9 relative, 1e-12 absolute, as PROTOCOLS defines agreement),
// null as nil.
func corpusCellEquals(got, want any) bool {
	switch w := want.(type) {
	case nil:
		return got == nil
	case float64:
		var g float64
		switch v := got.(type) {
		case float64:
			g = v
		case int64:
			g = float64(v)
		case int32:
			g = float64(v)
		default:
			return false
		}
		return math.Abs(g-w) <= math.Max(1e-12, 1e-9*math.Abs(w))
	case string:
		s, ok := got.(string)
		return ok && s == w
	case bool:
		b, ok := got.(bool)
		return ok && b == w
	}
	return false
}

// corpusRenderCell renders a value for substring checks: a map as k=v pairs.
func corpusRenderCell(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case []writers.KV:
		parts := make([]string, len(v))
		for i, kv := range v {
			parts[i] = kv.Key + "=" + kv.Value
		}
		return strings.Join(parts, ", ")
	}
	return fmt.Sprint(v)
}

// corpusTruncation truncates one file to half its size as soon as this
// process (the job, run in-process) has read from it, while the job still
// has at least corpusTruncationAhead bytes of it to read (its file
// position, /proc/self/fdinfo): an object that changes while it is read.
type corpusTruncation struct {
	path string
	done chan struct{}
	hit  chan truncation
}

// truncation is what became of a watched file.
type truncation int

const (
	truncationNone   truncation = iota // never seen read from (a starved watcher, or the job did not read it)
	truncationDone                     // truncated while the job read it
	truncationMissed                   // first seen read from with too little left to read
)

// corpusTruncationAhead is how much of the file the job must still have to
// read when the watcher truncates it: milliseconds of reading, far more
// than the instant between the position read and the truncation.
const corpusTruncationAhead = 16 << 20

func corpusTruncateWhenOpened(path string) *corpusTruncation {
	w := &corpusTruncation{path: path, done: make(chan struct{}), hit: make(chan truncation, 1)}
	go func() {
		for {
			select {
			case <-w.done:
				w.hit <- truncationNone
				return
			default:
			}
			// Mapped (storage.Mapped: read whole, on one core), the job
			// reads its pages, not its descriptor: cut it once mapped.
			if maps, err := os.ReadFile("/proc/self/maps"); err == nil && bytes.Contains(maps, []byte(" "+path+"\n")) {
				got := truncationMissed
				if fi, err := os.Stat(path); err == nil && os.Truncate(path, fi.Size()/2) == nil {
					got = truncationDone
				}
				<-w.done
				w.hit <- got
				return
			}
			fds, _ := os.ReadDir("/proc/self/fd")
			for _, fd := range fds {
				if target, err := os.Readlink("/proc/self/fd/" + fd.Name()); err != nil || target != path {
					continue
				}
				fi, err := os.Stat(path)
				pos, ok := corpusFilePosition(fd.Name())
				if err != nil || !ok || pos == 0 {
					// Not read from yet: the job may still be comparing
					// the size it opened with the listed one, which would
					// report a change after listing, not while reading.
					continue
				}
				got := truncationMissed
				if pos+corpusTruncationAhead <= fi.Size() && os.Truncate(path, fi.Size()/2) == nil {
					got = truncationDone
				}
				<-w.done
				w.hit <- got
				return
			}
			time.Sleep(50 * time.Microsecond)
		}
	}()
	return w
}

// corpusFilePosition is the file position of this process's descriptor fd.
func corpusFilePosition(fd string) (int64, bool) {
	info, err := os.ReadFile("/proc/self/fdinfo/" + fd)
	if err != nil {
		return 0, false
	}
	for line := range strings.SplitSeq(string(info), "\n") {
		if v, ok := strings.CutPrefix(line, "pos:"); ok {
			pos, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return pos, err == nil
		}
	}
	return 0, false
}

// stop ends the watch and reports what became of the file; a second call
// reports truncationNone.
func (w *corpusTruncation) stop() truncation {
	select {
	case <-w.done:
		return truncationNone
	default:
	}
	close(w.done)
	return <-w.hit
}
