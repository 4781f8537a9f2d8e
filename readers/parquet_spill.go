package readers

import (
	"bufio"
	"fmt"
	"io"
	"os"
)

// ConvertSpill makes the file in which ConvertObjectSpilled keeps a
// Parquet file that has grown past ConvertHoldBytes: a new empty file,
// open for reading and writing, that no one else writes. The Converted
// made in it closes and removes it (Release).
type ConvertSpill func() (*os.File, error)

// ConvertHoldBytes is how many bytes of a Parquet file ConvertObjectSpilled
// holds in memory by default; past it the file goes to a spill file, so
// that a convert's memory does not grow with its objects (a variable for
// the tests).
var ConvertHoldBytes int64 = 32 << 20

// SpillError is the failure of a spill file (made, written or read back):
// the local folder's, not the object's.
type SpillError struct {
	Err error
}

func (e *SpillError) Error() string { return e.Err.Error() }
func (e *SpillError) Unwrap() error { return e.Err }

// spillWriter is where arrow-go writes a converted file: in memory (a
// chunkWriter) up to hold bytes, then, with spill set, to a spill file
// (through a buffer), what was held first. A spill file that cannot be
// made or written is the write's error.
type spillWriter struct {
	mem   chunkWriter
	hold  int64
	spill ConvertSpill
	n     int64

	f  *os.File
	bw *bufio.Writer
}

func (s *spillWriter) Write(p []byte) (int, error) {
	if s.f == nil && (s.spill == nil || s.n+int64(len(p)) <= s.hold) {
		s.n += int64(len(p))
		return s.mem.Write(p)
	}
	if s.f == nil {
		f, err := s.spill()
		if err != nil {
			return 0, &SpillError{fmt.Errorf("a spill file for the Parquet file: %w", err)}
		}
		s.f, s.bw = f, bufio.NewWriterSize(f, 1<<20)
		for _, c := range s.mem.chunks {
			if _, err := s.bw.Write(c); err != nil {
				return 0, s.spillErr(err)
			}
		}
		s.mem.chunks = nil
	}
	n, err := s.bw.Write(p)
	s.n += int64(n)
	if err != nil {
		return n, s.spillErr(err)
	}
	return n, nil
}

func (s *spillWriter) spillErr(err error) error {
	return &SpillError{fmt.Errorf("writing the spill file %s: %w", s.f.Name(), err)}
}

// file is what was written: the held pieces, or the spill file (flushed).
func (s *spillWriter) file() (pqFile, error) {
	if s.f == nil {
		return s.mem.chunks, nil
	}
	if err := s.bw.Flush(); err != nil {
		return nil, s.spillErr(err)
	}
	return &pqSpilled{f: s.f, n: s.n}, nil
}

// discard closes and removes the spill file, if one was made.
func (s *spillWriter) discard() {
	if s.f != nil {
		(&pqSpilled{f: s.f}).release()
		s.f = nil
	}
}

// pqSpilled is a Parquet file in a spill file of n bytes.
type pqSpilled struct {
	f    *os.File
	n    int64
	rerr error
}

func (p *pqSpilled) size() int64 { return p.n }

func (p *pqSpilled) at(off, n int64) []byte {
	b := make([]byte, n)
	if p.rerr != nil {
		return b
	}
	if _, err := p.f.ReadAt(b, off); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF // shorter than what was written to it
		}
		p.rerr = &SpillError{fmt.Errorf("reading the spill file %s: %w", p.f.Name(), err)}
		clear(b)
	}
	return b
}

func (p *pqSpilled) err() error { return p.rerr }

// release closes and removes the spill file.
func (p *pqSpilled) release() error {
	name := p.f.Name()
	cerr := p.f.Close()
	if err := os.Remove(name); err != nil {
		return err
	}
	return cerr
}
