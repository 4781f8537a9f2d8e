package pipeline

import (
	"bytes"
	"context"
	"crypto/md5"
	"errors"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"gocloud.dev/blob"

	"github.com/crlbatch/crlbatch/readers"
	"github.com/crlbatch/crlbatch/storage"
)

// ConvertConfig is one `crlbatch convert`: the JSON Lines objects under
// Input (matching Patterns) become Parquet objects under Output.
type ConvertConfig struct {
	Input, Output string
	Patterns      []string
	Concurrency   int
	// Compression names the Parquet pages' codec (one of
	// readers.ConvertCompressions; "" for readers.ConvertCompression).
	Compression string
	// Maps writes every object field of numbers (components) as a map,
	// never as a struct (--maps): one column type in every object.
	Maps bool
	// Reader holds the line and object limits (--max-line-bytes,
	// --max-object-bytes).
	Reader readers.Options
	// SpillDir is the local folder (--spill-dir; "" the system temp dir)
	// in which a converted object's Parquet file past
	// readers.ConvertHoldBytes waits to be written, in a folder of the
	// job's own that it removes when it ends (as score's spilled rows).
	SpillDir string
	// HoldBytes is how much of a Parquet file is held in memory before it
	// goes to a spill file (0: readers.ConvertHoldBytes; the hidden
	// --hold-bytes, for the tests of stores).
	HoldBytes int64
	Opener    Opener
	Retry     RetryPolicy
	// Logger receives the warnings (a claim taken over from a job that is
	// gone, one that could not be let go); nil discards them.
	Logger *slog.Logger
}

// ConvertedKey is the key under OUTPUT of the Parquet object converted
// from the object rel (relative to INPUT): its name less .jsonl, .ndjson
// and .gz or .zst, plus .parquet.
func ConvertedKey(rel string) string {
	base := rel
	for _, ext := range []string{".gz", ".zst"} {
		base = strings.TrimSuffix(base, ext)
	}
	for _, ext := range []string{".jsonl", ".ndjson", ".json"} {
		base = strings.TrimSuffix(base, ext)
	}
	return base + ".parquet"
}

// Convert writes, for every object under cfg.Input, the Parquet object of
// its rows (readers.ConvertObject, which reads it twice; from a store, an
// object of at most convertHoldBytes is fetched once and held) under
// cfg.Output at ConvertedKey,
// at most cfg.Concurrency at once. It returns the number of objects
// written. Two objects converting to one key are a usage error; an object
// that is not valid JSON Lines is a *readers.DataError naming its line.
// A convert that fails removes the objects it created before the failure
// (each was written whole); objects it replaced keep their new contents.
// It holds OUTPUT's claim, as a one-off score does (docs/decisions.md,
// "Publishing: one-off and nightly"), from before its first write to its
// end: a second convert or a one-off score into OUTPUT while it runs is a
// usage error, so that neither removes, on failing, what the other wrote.
func Convert(ctx context.Context, cfg ConvertConfig) (int, error) {
	if len(cfg.Patterns) == 0 {
		cfg.Patterns = DefaultPatterns
	}
	if cfg.Concurrency < 1 {
		cfg.Concurrency = 1
	}
	if err := CheckPatterns(cfg.Patterns); err != nil {
		return 0, err
	}
	if cfg.Compression != "" && !slices.Contains(readers.ConvertCompressions, cfg.Compression) {
		return 0, Usagef("--compression %s: want one of %s", cfg.Compression, strings.Join(readers.ConvertCompressions, ", "))
	}
	in, err := ParseLocation(cfg.Input, false)
	if err != nil {
		return 0, err
	}
	out, err := ParseLocation(cfg.Output, true)
	if err != nil {
		return 0, err
	}
	if out.Path != "" && out.Local && out.Prefix == "" {
		return 0, Usagef("--out %s is a file: want a folder or prefix", out)
	}
	if within(out, in) {
		return 0, Usagef("--out %s lies inside the input %s", out, in)
	}
	inB, inClose, err := openBucket(ctx, cfg.Opener, in)
	if err != nil {
		return 0, err
	}
	defer inClose()
	outB, outClose, err := openBucket(ctx, cfg.Opener, out)
	if err != nil {
		return 0, err
	}
	defer outClose()
	objs, err := list(ctx, inB, in, cfg.Patterns, cfg.Retry)
	if err != nil {
		return 0, err
	}
	// OUTPUT's claim (a job of the claim's own: the claim machinery's
	// retries, host, start and logger).
	cj := &job{cfg: &Config{Retry: cfg.Retry}, out: out, log: cfg.Logger, start: time.Now().UTC(), attempt: "convert"}
	cj.host, _ = os.Hostname()
	if cj.log == nil {
		cj.log = slog.New(slog.DiscardHandler)
	}
	holder, err := cj.acquire(ctx, outB, out.Prefix+jobClaim, jobClaimAge)
	if err != nil {
		return 0, err
	}
	if holder != nil {
		return 0, Usagef("%s is being written into by %s: two jobs cannot write into one OUTPUT at once; if that job is gone, delete %s, or wait: %s", out, holder, out.ObjectURL(out.Prefix+jobClaim), holder.stale(jobClaimAge))
	}
	defer cj.releaseKey(ctx, outB, out.Prefix+jobClaim)
	cj.tidyClaims(ctx, outB)
	if len(objs) == 0 {
		return 0, noObjectMatches(ctx, inB, in, cfg.Patterns, false, cfg.Retry)
	}
	keys := map[string]string{}
	for _, o := range objs {
		k := ConvertedKey(o.Rel)
		if prev, ok := keys[k]; ok {
			return 0, Usagef("%s and %s would both be converted to %s", prev, o.Rel, k)
		}
		keys[k] = o.Rel
	}
	// A failed convert removes the objects it created (not those it
	// replaced: they hold the conversion of the same name, whole), and the
	// local folders it made for them, also those of an object whose write
	// failed (a full disk), once empty (OUTPUT's own goes when outB is
	// released empty: storage.OpenBucket).
	dir, local := out.LocalDir()
	cj.tidyConvert(ctx, outB, dir, local, keys)
	// A Parquet file past readers.ConvertHoldBytes waits in a spill file
	// rather than in memory: what a convert holds stays a row group's
	// columns and that much of each file, whatever its objects' sizes.
	spillDir := cfg.SpillDir
	if spillDir == "" {
		spillDir = os.TempDir()
	}
	sp := &spillSpace{parent: spillDir, host: cj.host, log: cj.log}
	defer sp.remove()
	spill := func() (*os.File, error) {
		d, err := sp.folder()
		if err != nil {
			return nil, err
		}
		return os.CreateTemp(d, "convert-*.parquet")
	}
	var (
		mu      sync.Mutex
		created []string
		made    = &madeDirs{}
	)
	// The first object in key order that fails fails the command, at any
	// --concurrency (ordered).
	_, err = ordered(ctx, len(objs), cfg.Concurrency, func(gctx context.Context, i int) error {
		o := objs[i]
		// A signal (the context cancelled) starts no further object.
		if err := gctx.Err(); err != nil {
			return err
		}
		phase("convert")
		url := in.ObjectURL(o.Key)
		var conv *readers.Converted
		err := cfg.Retry.retry(gctx, func(actx context.Context, touch func()) error {
			// The object is read twice (its columns' types, then its rows):
			// memory holds a row group and the Parquet file, not the object.
			// From a store, an object of at most convertHoldBytes is
			// fetched once, and the bytes of its first read serve the
			// second: a GET is a request to pay for and a round trip, and
			// its bytes egress (a local file's second read is the page
			// cache's).
			var held []byte
			opened := 0
			open := func() (io.ReadCloser, error) {
				if held != nil {
					return io.NopCloser(bytes.NewReader(held)), nil
				}
				opened++
				if testHookConvertOpen != nil {
					testHookConvertOpen(o.Key)
				}
				r, err := inB.NewReader(actx, o.Key, nil)
				if err != nil {
					return nil, err
				}
				var rd io.Reader = r
				if testHookConvertReader != nil {
					rd = testHookConvertReader(rd)
				}
				// Each read is progress for the retry's watchdog, and the
				// attempt's end stops the one under way at its next read.
				rd = ctxReader{actx, rd, touch}
				if opened == 1 && !in.Local && o.Size <= convertHoldBytes {
					b, err := io.ReadAll(io.LimitReader(rd, convertHoldBytes+1))
					if err != nil {
						r.Close()
						return nil, err
					}
					if int64(len(b)) <= convertHoldBytes {
						held = b
						return io.NopCloser(bytes.NewReader(held)), r.Close()
					}
					// Grown past the threshold since it was listed: read
					// on, and read again.
					rd = io.MultiReader(bytes.NewReader(b), rd)
				}
				return struct {
					io.Reader
					io.Closer
				}{rd, r}, nil
			}
			var err error
			conv, err = readers.ConvertObjectSpilled(url, open, cfg.Reader.MaxLineBytes, cfg.Reader.MaxObjectBytes, cfg.Compression, cfg.Maps, spill, cfg.HoldBytes)
			if errors.Is(err, readers.ErrChangedWhileConverting) {
				// Rewritten meanwhile: read it again, both times.
				return storage.Transient(err)
			}
			return err
		})
		if err != nil {
			var de *readers.DataError
			if errors.As(err, &de) || gctx.Err() != nil {
				return err
			}
			if se := (*readers.SpillError)(nil); errors.As(err, &se) {
				return &StorageError{Op: "spill", URL: spillDir, Err: se}
			}
			return &StorageError{Op: "read", URL: url, Err: redactErr(err)}
		}
		defer func() {
			if err := conv.Release(); err != nil {
				cj.log.Warn("could not remove a spill file", "object", Redact(url), "error", err)
			}
		}()
		// A store gets the file's MD5 with it, as WriteAll sends it (the
		// store rejects bytes damaged on the way); written a piece at a
		// time.
		var sum []byte
		if !local {
			h := md5.New()
			if _, err := conv.WriteTo(h); err != nil {
				return spillOr(err, spillDir)
			}
			sum = h.Sum(nil)
		}
		key := out.Prefix + ConvertedKey(o.Rel)
		existed := true // when unknown, never removed
		if local {
			_, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(key)))
			existed = !errors.Is(err, os.ErrNotExist)
		} else if ok, err := cj.exists(gctx, outB, key); err == nil {
			existed = ok
		}
		err = cfg.Retry.retry(gctx, func(actx context.Context, touch func()) error {
			// Each piece written is progress (a large upload takes longer
			// than the retry's idle timeout).
			write := func(w io.Writer) (int64, error) {
				if testHookConvertWriter != nil {
					w = testHookConvertWriter(key, w)
				}
				return conv.WriteTo(&progressWriter{ctx: actx, w: w, touch: touch})
			}
			if local {
				return writeLocal(filepath.Join(dir, filepath.FromSlash(key)), made, write)
			}
			return storage.WriteObject(actx, outB, key, &blob.WriterOptions{ContentMD5: sum}, func(w *blob.Writer) error {
				_, err := write(w)
				return err
			})
		})
		if err != nil {
			if se := (*readers.SpillError)(nil); errors.As(err, &se) {
				return &StorageError{Op: "spill", URL: spillDir, Err: se}
			}
			return &StorageError{Op: "write", URL: out.ObjectURL(key), Err: redactErr(err)}
		}
		if !existed {
			mu.Lock()
			created = append(created, key)
			mu.Unlock()
		}
		return nil
	})
	if err == nil {
		// Cancelled after the last object's last check: interrupted all
		// the same (exit 130 or 143, never 0).
		err = ctx.Err()
	}
	if err != nil {
		// Past the job's cancel, but bounded as a publish's clean-up is:
		// the store that failed the convert may not answer the deletes.
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		for _, key := range created {
			if !local {
				outB.Delete(dctx, key)
				continue
			}
			os.Remove(filepath.Join(dir, filepath.FromSlash(key)))
		}
		made.removeEmpty()
		return 0, err
	}
	return len(objs), nil
}

// spillOr is err as the spill folder's StorageError when a spill file
// failed (readers.SpillError), else err.
func spillOr(err error, dir string) error {
	if se := (*readers.SpillError)(nil); errors.As(err, &se) {
		return &StorageError{Op: "spill", URL: dir, Err: se}
	}
	return err
}

// convertTemp matches the temporary files writeLocal makes: os.CreateTemp
// puts decimal digits in place of the pattern's star.
var convertTemp = regexp.MustCompile(`^\.crlbatch-convert-[0-9]+$`)

// convertTempAge is how long a temporary file in a folder a convert
// writes into must have been left untouched for the convert to remove it
// as a killed convert's.
var convertTempAge = 10 * time.Minute

// tidyConvert, for a convert holding OUTPUT's claim before it writes,
// removes what a killed convert left where this one is about to write
// (keys, relative to OUTPUT's prefix): in a local OUTPUT (dir), writeLocal's
// temporary files in the folders of those keys; on S3, the incomplete
// multipart uploads of those keys. Either is a dead job's, by the proof
// abortTopUploads uses: only the holder of OUTPUT's claim writes there, and
// this convert holds it and has not written yet; a file also only once
// untouched for convertTempAge (a convert into a folder nested in OUTPUT
// holds another claim, but writes and renames its files at once). A user's own
// files and uploads of other keys are left. Neither fails the convert: a
// warning says what was removed, or what could not be.
func (j *job) tidyConvert(ctx context.Context, b *blob.Bucket, dir string, local bool, keys map[string]string) {
	if s3u, ok := storage.S3UploadsOf(b, j.out); ok {
		ups, err := j.listUploads(ctx, s3u, j.out.Prefix)
		var doomed []storage.Upload
		for _, u := range ups {
			// (A live convert into a prefix nested in OUTPUT, which holds
			// a claim of its own, writing a key of this one's, loses its
			// upload to this abort and uploads it again: its retry.)
			if _, ok := keys[strings.TrimPrefix(u.Key, j.out.Prefix)]; ok && strings.HasPrefix(u.Key, j.out.Prefix) {
				doomed = append(doomed, u)
			}
		}
		j.abortUploads(ctx, s3u, doomed, err)
		return
	}
	if !local {
		return
	}
	folders := map[string]bool{}
	for k := range keys {
		folders[filepath.Dir(filepath.Join(dir, filepath.FromSlash(j.out.Prefix+k)))] = true
	}
	removed, now := 0, time.Now()
	var firstErr error
	for _, f := range slices.Sorted(maps.Keys(folders)) {
		entries, err := os.ReadDir(f)
		// A folder this convert may not list (write-only) holds nothing it
		// can tell is a killed convert's.
		if err != nil && !errors.Is(err, os.ErrNotExist) && !errors.Is(err, os.ErrPermission) && firstErr == nil {
			firstErr = err
		}
		for _, e := range entries {
			if !e.Type().IsRegular() || !convertTemp.MatchString(e.Name()) {
				continue
			}
			// A live convert writes its file and renames it at once: one
			// untouched for convertTempAge is not being written (a convert
			// into a folder nested in OUTPUT holds a claim of its own).
			if fi, err := e.Info(); err != nil || now.Sub(fi.ModTime()) < convertTempAge {
				continue
			}
			if err := os.Remove(filepath.Join(f, e.Name())); err == nil {
				removed++
			} else if !errors.Is(err, os.ErrNotExist) && firstErr == nil {
				firstErr = err
			}
		}
	}
	if removed > 0 {
		j.log.Warn("removed temporary files a killed convert left", "output", j.out.String(), "files", removed)
	}
	if firstErr != nil {
		j.log.Warn("could not remove the temporary files a killed convert left", "output", j.out.String(), "error", redactErr(firstErr))
	}
}

// convertHoldBytes is the size of the largest object Convert fetches once
// from a store, to read its bytes twice from memory: the size under which
// score reads a Parquet object whole (parquetWholeBytes).
var convertHoldBytes int64 = parquetWholeBytes

// testHookConvertOpen, when set, is called before each read of an input
// object by Convert from its store or file (two in each attempt, one for
// an object held), with the object's key.
var testHookConvertOpen func(key string)

// testHookConvertReader, when set, wraps the reader of each read of an
// input object by Convert.
var testHookConvertReader func(io.Reader) io.Reader

// testHookConvertWriter, when set, wraps the writer each write of a
// converted object goes to, with the object's key under OUTPUT.
var testHookConvertWriter func(key string, w io.Writer) io.Writer

// ctxReader is an io.Reader that fails with its context's error once the
// context is done, and reports each read that returns bytes as progress
// to the retry's watchdog (touch): converting a large object takes longer
// than its idle timeout.
type ctxReader struct {
	ctx   context.Context
	r     io.Reader
	touch func()
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	n, err := c.r.Read(p)
	if n > 0 {
		c.touch()
	}
	return n, err
}

// writeLocal writes to path what write writes, through a temporary file
// beside it and a rename, so that the file is whole or absent. A local
// OUTPUT is written here rather than through fileblob, which escapes names
// such as a__0x41__.jsonl into other file names (the input's keys are the
// local read-only driver's, unescaped).
func writeLocal(path string, made *madeDirs, write func(io.Writer) (int64, error)) error {
	if err := made.mkdirAll(filepath.Dir(path)); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".crlbatch-convert-*")
	if err != nil {
		return err
	}
	_, err = write(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// madeDirs are the local folders a convert made for the objects it
// writes, so that a failed convert removes those it leaves empty and no
// other: a folder that was there before it (a user's, empty or not) stays.
// Its methods may be called concurrently.
type madeDirs struct {
	mu   sync.Mutex
	dirs map[string]bool
}

// mkdirAll is os.MkdirAll(dir), noting the folders it made.
func (m *madeDirs) mkdirAll(dir string) error {
	var missing []string
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); !errors.Is(err, os.ErrNotExist) || filepath.Dir(d) == d {
			break
		}
		missing = append(missing, d)
	}
	err := os.MkdirAll(dir, 0o755)
	// Also on a failure, which may come after some were made (a folder
	// another convert made meanwhile is removed only when empty).
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.dirs == nil {
		m.dirs = map[string]bool{}
	}
	for _, d := range missing {
		m.dirs[d] = true
	}
	return err
}

// removeEmpty removes the folders made that are empty, the deepest first.
func (m *madeDirs) removeEmpty() {
	m.mu.Lock()
	defer m.mu.Unlock()
	dirs := slices.Collect(maps.Keys(m.dirs))
	slices.SortFunc(dirs, func(a, b string) int { return len(b) - len(a) })
	for _, d := range dirs {
		os.Remove(d)
	}
}
