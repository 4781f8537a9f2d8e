package pipeline

import (
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/crlbatch/crlbatch/storage"
)

// spillName is the name the spill folders of jobs are made beside: a
// job's is storage.LocalTempName(spillName), crlbatch-spill.tmp-<host>-
// <pid>-<random hex>, so that the next job can tell the folder of a job
// that is gone.
const spillName = "crlbatch-spill"

// spillSpace is a job's folder for spill files, made in the spill
// directory (--spill-dir, or the system temp dir) at the job's first
// spill and removed, with anything left in it, when the job ends.
// Readers remove each spill file once its object is assembled or
// released; the folder is what makes a killed job's files findable: a
// job that spills first removes the folders of this host's jobs whose
// process is gone.
type spillSpace struct {
	parent string // the spill directory
	host   string // this host's name, as in the folder's name
	log    *slog.Logger

	once sync.Once
	dir  string
	err  error
}

// folder returns the job's spill folder, making it (after removing the
// folders killed jobs left) on the first call.
func (s *spillSpace) folder() (string, error) {
	s.once.Do(func() {
		s.sweep()
		dir := filepath.Join(s.parent, storage.LocalTempName(spillName))
		if err := os.Mkdir(dir, 0o700); err != nil {
			s.err = err
			return
		}
		s.dir = dir
	})
	return s.dir, s.err
}

// sweep removes the spill folders of this host's jobs whose process is
// gone (killed: a job that ends removes its own). A folder it cannot read
// or remove is left, with a warning: it only costs disk.
func (s *spillSpace) sweep() {
	ents, err := os.ReadDir(s.parent)
	if err != nil {
		return // Mkdir says what is wrong with the folder
	}
	var removed []string
	for _, e := range ents {
		name := e.Name()
		if !e.IsDir() || !strings.HasPrefix(name, spillName+".") {
			continue
		}
		host, pid, ok := storage.LocalTempOwner(name)
		if !ok || host != s.host || pid == os.Getpid() || processAlive(pid) {
			continue
		}
		dir := filepath.Join(s.parent, name)
		if err := os.RemoveAll(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
			s.log.Warn("could not remove the spill files of a killed job", "folder", dir, "error", err)
			continue
		}
		removed = append(removed, dir)
	}
	if len(removed) > 0 {
		s.log.Warn("removed the spill files killed jobs left", "folders", removed)
	}
}

// remove removes the job's spill folder, if it made one, and what is
// left in it.
func (s *spillSpace) remove() {
	if s.dir == "" {
		return
	}
	if err := os.RemoveAll(s.dir); err != nil {
		s.log.Warn("could not remove the job's spill folder", "folder", s.dir, "error", err)
	}
}
