package pipeline

import (
	"context"
	"fmt"
	"hash"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/crlbatch/crlbatch/storage"
)

// progress reports reading progress on stderr: a bar redrawn in place on a
// terminal, a line every few seconds otherwise.
type progress struct {
	w        io.Writer
	terminal bool
	bytes    atomic.Int64
	objects  atomic.Int64
	total    atomic.Int64
	size     atomic.Int64
	start    time.Time
	stopOnce sync.Once
	quit     chan struct{}
	wg       sync.WaitGroup
	mu       sync.Mutex
}

func newProgress(w io.Writer, terminal bool) *progress {
	p := &progress{w: w, terminal: terminal, start: time.Now(), quit: make(chan struct{})}
	if w == nil {
		return p
	}
	every := 5 * time.Second
	if terminal {
		every = 200 * time.Millisecond
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-p.quit:
				return
			case <-t.C:
				p.print(false)
			}
		}
	}()
	return p
}

func (p *progress) setTotal(objects int, size int64) {
	p.total.Store(int64(objects))
	p.size.Store(size)
}

func (p *progress) add(n int) { p.bytes.Add(int64(n)) }

func (p *progress) objectDone() { p.objects.Add(1) }

func (p *progress) print(final bool) {
	if p.w == nil || p.total.Load() == 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	done, total := p.objects.Load(), p.total.Load()
	mb := float64(p.bytes.Load()) / 1e6
	secs := time.Since(p.start).Seconds()
	rate := 0.0
	if secs > 0 {
		rate = mb / secs
	}
	if p.terminal {
		const width = 30
		filled := int(width * done / max(total, 1))
		bar := strings.Repeat("#", filled) + strings.Repeat(".", width-filled)
		fmt.Fprintf(p.w, "\r[%s] %d/%d objects  %.1f MB  %.1f MB/s", bar, done, total, mb, rate)
		if final {
			fmt.Fprintln(p.w)
		}
		return
	}
	fmt.Fprintf(p.w, "progress: %d/%d objects read, %.1f MB, %.1f MB/s\n", done, total, mb, rate)
}

// done prints the final state.
func (p *progress) done() {
	p.stop()
	p.print(true)
}

func (p *progress) stop() {
	p.stopOnce.Do(func() {
		close(p.quit)
		p.wg.Wait()
	})
}

// countingReader counts the bytes read from storage for the progress report.
// It also hashes them, when h is set, to find objects stored twice; when
// head is set, it hashes the object's first headBytes bytes into it too,
// and keeps the last byte read (appended.go's tails entries). Once ctx
// (when set) is done it reads no more and returns ctx's error, so that a
// job stops within an object (a local file's reader does not watch the
// context it was opened with).
//
// With m set (a local object the store maps, storage.Mapped), it is a
// readers.MappedReader: a plain object is then decoded from its mapped
// bytes, and the bytes reported consumed are counted, hashed and kept as
// read ones are; reads go on after them (to find the end, or bytes
// appended since the object was opened).
type countingReader struct {
	ctx     context.Context
	r       io.Reader
	p       *progress
	h       hash.Hash64
	n       int64
	touch   func() // reports progress to the retry watchdog
	head    hash.Hash64
	last    byte
	m       *storage.Mapped
	mapped  bool // bytes were consumed from m: reads go on from m at n
	started bool // the object's reading started (phase "read")
}

// Mapped returns the object's mapped bytes, when nothing of it has been
// read and the store maps it (readers.MappedReader); nil once the job is
// cancelled (Read then says so).
func (c *countingReader) Mapped() []byte {
	if c.m == nil || c.n != 0 {
		return nil
	}
	data := c.m.Bytes()
	if data == nil || c.alive() != nil {
		return nil
	}
	return data
}

// Consumed counts the first n bytes of Mapped's as read, and gives their
// pages back (readers.MappedReader).
func (c *countingReader) Consumed(n int) error {
	if err := c.alive(); err != nil {
		return err
	}
	c.mapped = true
	data := c.m.Bytes()
	c.count(data[c.n:n])
	c.m.Release(n)
	return nil
}

// Ahead brings in the pages of Mapped's bytes read next
// (readers.MappedReader).
func (c *countingReader) Ahead(off, n int) { c.m.Ahead(off, n) }

// Guard runs fn, which reads Mapped's bytes (readers.MappedReader).
func (c *countingReader) Guard(fn func()) error { return storage.Guard(c.m.Bytes(), fn) }

// attempt is the context and the progress report of the read attempt c
// belongs to (attemptReader).
func (c *countingReader) attempt() (context.Context, func()) { return c.ctx, c.touch }

// attemptReader is a reader of an object within its read attempt: what is
// read of the object by other ways (a Parquet object's ranges) is read
// within the same attempt (its context, so that a read the store never
// answers is abandoned with it) and reports its progress to it.
type attemptReader interface {
	attempt() (context.Context, func())
}

// teeAttempt is io.TeeReader(r, w), keeping r's attempt.
func teeAttempt(r io.Reader, w io.Writer) io.Reader {
	t := io.TeeReader(r, w)
	if a, ok := r.(attemptReader); ok {
		return struct {
			io.Reader
			attemptReader
		}{t, a}
	}
	return t
}

func (c *countingReader) Read(b []byte) (int, error) {
	if err := c.alive(); err != nil {
		return 0, err
	}
	var n int
	var err error
	if c.mapped {
		n, err = c.m.ReadAt(b, c.n)
	} else {
		n, err = c.r.Read(b)
	}
	c.count(b[:n])
	return n, err
}

// alive returns the context's error once it is done, and says that the
// object's reading starts (phase "read") before its first byte.
func (c *countingReader) alive() error {
	if c.ctx != nil {
		if err := c.ctx.Err(); err != nil {
			return err
		}
		if c.n == 0 && !c.started {
			c.started = true
			phase("read")
		}
	}
	return nil
}

// count takes b as the object's next bytes read.
func (c *countingReader) count(b []byte) {
	n := len(b)
	c.p.add(n)
	if c.head != nil && n > 0 {
		if c.n < headBytes {
			c.head.Write(b[:min(int64(n), headBytes-c.n)])
		}
		c.last = b[n-1]
	}
	c.n += int64(n)
	if n > 0 && c.touch != nil {
		c.touch()
	}
	if c.h != nil {
		c.h.Write(b)
	}
}
