package storage

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"
)

// CreateExclusive writes data to key only if no object of that name exists:
// it reports false, with no error, when one does. Two callers creating the
// same key at once, in one process or in two, on one machine or on two,
// never both get true.
//
// A bucket object is written with blob.WriterOptions.IfNotExist (S3
// If-None-Match: *, a GCS DoesNotExist precondition, an Azure If-None-Match
// on *); a store that ignores the condition gives no exclusion, which is
// why the integration tests check the S3 server's. A local file (file is
// its path, non-empty for a local location) is written whole under a
// temporary name and linked to its name (link(2) fails like O_EXCL when
// the name exists): fileblob's own IfNotExist only excludes writers within
// one process (a mutex around a stat and a rename).
//
// A local claim is not fsynced, nor is its folder: it excludes jobs that
// are alive, and a crash of the machine ends every job that held one.
// Whatever of it a crash leaves (nothing, an empty or partial file, the
// whole claim) reads as free, as unreadable (dead a minute after its
// modification) or as a holder whose process is gone, as the claim of a
// killed job does. Two fsyncs cost a job ~3 ms at its start
// (docs/decisions.md, "Claims not fsynced").
func CreateExclusive(ctx context.Context, b *blob.Bucket, key, file string, data []byte) (bool, error) {
	if file != "" {
		return createLocal(file, data)
	}
	err := WriteObject(ctx, b, key, &blob.WriterOptions{IfNotExist: true, ContentType: "application/json"}, func(w *blob.Writer) error {
		_, err := w.Write(data)
		return err
	})
	switch c := gcerrors.Code(err); {
	case err == nil:
		return true, nil
	case c == gcerrors.FailedPrecondition || c == gcerrors.AlreadyExists:
		// The store refused the condition: the object exists. (Usually
		// at Close; a driver that sends the body as it is written can
		// report it from Write.)
		return false, nil
	default:
		return false, err
	}
}

// createLocal writes data to a temporary file beside file, named after
// this host and process (LocalTempOwner parses it back), and links it to
// file: link(2) fails like O_EXCL when file exists, and, while the machine
// runs, file never exists without its bytes. Where links are not
// supported, file is created with O_CREATE|O_EXCL and written.
func createLocal(file string, data []byte) (bool, error) {
	dir := filepath.Dir(file)
	tmp := LocalTempName(file)
	var f *os.File
	var err error
	for try := 0; try < 3; try++ {
		if err = os.MkdirAll(dir, 0o755); err != nil {
			return false, err
		}
		f, err = os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		// Another job may remove an empty folder between the two calls.
		if !errors.Is(err, fs.ErrNotExist) {
			break
		}
	}
	if err != nil {
		return false, err
	}
	defer os.Remove(tmp)
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return false, err
	}
	err = os.Link(tmp, file)
	if errors.Is(err, fs.ErrExist) {
		return false, nil
	}
	if err != nil && (errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.ENOTSUP) || errors.Is(err, syscall.EXDEV)) {
		return createExcl(file, data)
	}
	if err != nil {
		return false, err
	}
	return true, nil
}

// createExcl creates file with O_CREATE|O_EXCL and writes it: a reader may
// see it empty for a moment.
func createExcl(file string, data []byte) (bool, error) {
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(file)
		return false, err
	}
	return true, nil
}

// localTempMark separates a local claim's name from its temporary
// suffix: <name>.tmp-<host>-<pid>-<random hex>.
const localTempMark = ".tmp-"

// LocalTempName is a name for a temporary file or folder of this process
// beside name: <name>.tmp-<host>-<pid>-<random hex>, which LocalTempOwner
// parses back, so that a later job can tell one a killed process left.
func LocalTempName(name string) string {
	host, _ := os.Hostname()
	var r [4]byte
	rand.Read(r[:])
	return fmt.Sprintf("%s%s%s-%d-%x", name, localTempMark, host, os.Getpid(), r)
}

// LocalTempOwner reports, for the base name of a temporary file or folder
// LocalTempName named (such as one CreateExclusive left, its process
// killed between writing and linking), the host and pid that made it.
func LocalTempOwner(name string) (host string, pid int, ok bool) {
	i := strings.LastIndex(name, localTempMark)
	if i < 0 {
		return "", 0, false
	}
	rest := name[i+len(localTempMark):]
	j := strings.LastIndex(rest, "-")
	if j < 0 {
		return "", 0, false
	}
	rest = rest[:j] // host-pid
	k := strings.LastIndex(rest, "-")
	if k < 0 {
		return "", 0, false
	}
	pid, err := strconv.Atoi(rest[k+1:])
	if err != nil || pid <= 0 {
		return "", 0, false
	}
	return rest[:k], pid, true
}
