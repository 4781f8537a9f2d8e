package pipeline

import (
	"bytes"
	"context"
	"debug/elf"
	"encoding"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/cespare/xxhash/v2"
	"gocloud.dev/blob"
	"golang.org/x/sync/errgroup"

	"github.com/crlbatch/crlbatch/cache"
	"github.com/crlbatch/crlbatch/readers"
	"github.com/crlbatch/crlbatch/scoring"
)

// Run-level entries (--cache). Besides each object's decoded runs, the
// cache keeps, for a job whose decoder splits objects into run pieces
// (scoring.RunSplitter) and whose scored runs encode (scoring.ScoredCodec):
//
//   - per object, an index (kind "index", keyed by the object's entry
//     key): its rows, its run parts (run key, first line) and the hash of
//     its bytes, so that an unchanged object need not be read back at all;
//   - per run, an entry (kind "runs") keyed by the run key, the entry key
//     and first line of each of its pieces (object key order), the job's
//     scoring key (scoreKey: every flag of the protocol as bound, the
//     contents of the files they name, the decoder's codec key) and the
//     build (buildKey); it holds the run's metadata (for --where), its
//     contribution to the preparation (scoring.Contributor), what the
//     preparation produced for it (PreparedFor) when it was scored, and
//     the scored run (scoring.AppendScored).
//
// A run whose entry is there and whose preparation gives the same
// PreparedFor is served whole: not read back, not assembled, not scored.
// One whose preparation moved (a pooled ceiling, in its last bits) is
// served too when the job can bring its scored run to the new
// preparation (scoring.Reapplier: skyfall's performance gaps, unless the
// ceiling anchors adaptation and recovery); its entry stays as it was
// (Reapply starts from any earlier preparation). Any other run is
// assembled from its pieces (its objects read back from their entries or
// decoded) and scored, and its entry written. A job whose
// preparation is a scoring.Preparer but not a scoring.Contributor, or one
// that goes past --max-runs, or whose decoded objects spilled, reads every
// object and scores as without these entries.

const (
	indexKind   = "index"
	runsKind    = "runs"
	runCacheTag = "crlbatch-runs-2" // raise with the entries' layout (2: scored runs encoded exactly, not in JSON)
)

// objIndex is an object's index entry.
type objIndex struct {
	Rows   int          `json:"r"`
	Runs   int          `json:"n"`
	Hash   uint64       `json:"h"`
	Pieces []indexPiece `json:"p"`
}

type indexPiece struct {
	Run  string `json:"k"`
	Line int    `json:"l"`
}

// runEntry is a run's entry: the length of its header (uvarint), the
// header (JSON: metadata, contribution, what the preparation gave it),
// then the scored run as scoring.AppendScored wrote it (nothing for a run
// --where left out), kept apart from the JSON so that it is not escaped
// and scanned twice.
type runEntry struct {
	Meta     map[string]string `json:"m"`
	Contrib  []byte            `json:"c,omitempty"`
	Prepared []byte            `json:"p,omitempty"`
	Scored   []byte            `json:"-"` // nil: left out by --where when written
}

func (e *runEntry) MarshalBinary() ([]byte, error) {
	hdr, err := json.Marshal(e)
	if err != nil {
		return nil, err
	}
	buf := binary.AppendUvarint(make([]byte, 0, 8+len(hdr)+len(e.Scored)), uint64(len(hdr)))
	return append(append(buf, hdr...), e.Scored...), nil
}

func (e *runEntry) UnmarshalBinary(data []byte) error {
	n, k := binary.Uvarint(data)
	if k <= 0 || uint64(len(data)-k) < n {
		return errors.New("not a run entry")
	}
	if err := json.Unmarshal(data[k:k+int(n)], e); err != nil {
		return err
	}
	if rest := data[k+int(n):]; len(rest) > 0 {
		e.Scored = rest
	}
	return nil
}

// runCacheStats counts, in a job with run-level entries, the runs served
// whole and those assembled (and, when kept, scored); the log's "runs from
// the cache" line says them.
type runCacheStats struct {
	// Served counts the runs served from their entries, Reapplied those
	// of them brought to a moved preparation (scoring.Reapplier).
	Served, Reapplied, Assembled, Scored int
}

// runPiece is one piece of a run: its object and its place there.
type runPiece struct {
	obj  int
	line int
	idx  int // its index among the object's pieces
}

// cachedRun is one run of the job, in canonical order.
type cachedRun struct {
	key    string
	pieces []runPiece
	entry  string // its entry's key ("" when not cacheable)
	e      *runEntry
	meta   map[string]string
	known  bool // meta known (from the entry or an assembly)
	contrb []byte
	prep   []byte
	scored *scoring.Scored
	// reapplied: scored was brought to this job's preparation.
	reapplied bool
}

// useRunCache reports whether the job keeps run-level entries.
func (j *job) useRunCache() bool {
	if j.cache == nil {
		return false
	}
	if _, ok := j.proto.dec.(scoring.RunSplitter); !ok {
		return false
	}
	if _, ok := j.proto.job.(scoring.ScoredCodec); !ok {
		return false
	}
	if _, ok := j.proto.job.(scoring.Preparer); ok {
		if _, ok := j.proto.job.(scoring.Contributor); !ok {
			return false
		}
	}
	return true
}

// readAndScore reads the objects and scores their runs, with run-level
// entries when the job can keep them.
func (j *job) readAndScore(ctx context.Context, b *blob.Bucket, objs []object, prev *previous) (*read, *result, error) {
	if !j.useRunCache() {
		rd, err := j.read(ctx, b, objs)
		if err != nil {
			return rd, nil, err
		}
		res, err := j.score(ctx, rd, prev)
		return rd, res, err
	}
	rs := j.startRead(objs)
	res, err := j.scoreRuns(ctx, b, rs, prev)
	return rs.rd, res, err
}

func (j *job) scoreRuns(ctx context.Context, b *blob.Bucket, rs *reading, prev *previous) (*result, error) {
	jc, objs, rd := j.cache, rs.objs, rs.rd
	idxC, runC := jc.c.Kind(indexKind), jc.c.Kind(runsKind)
	if err := j.keyObjects(ctx, b, objs); err != nil {
		return nil, err
	}
	// The objects' indexes: an object with one is not read (yet).
	index := make([]*objIndex, len(objs))
	err := j.eachEntry(ctx, len(objs), func(ctx context.Context, i int) error {
		if jc.keys[i] == "" {
			return nil
		}
		var x objIndex
		if j.getEntry(ctx, idxC, jc.keys[i], "object", objs[i], &x) {
			index[i] = &x
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	want := make([]bool, len(objs))
	for i := range objs {
		want[i] = index[i] == nil
	}
	// An object no index named (new, changed, grown) seldom has an entry:
	// its tails entry is read beside its own (lookupCache).
	jc.tailsBeside = true
	err = j.readSome(ctx, b, rs, want)
	jc.tailsBeside = false
	if err != nil {
		return nil, err
	}
	pieces := make([][]scoring.Piece, len(objs))
	split := func() error {
		for i, o := range rd.objects {
			if o == nil || pieces[i] != nil {
				continue
			}
			ps, err := j.proto.dec.(scoring.RunSplitter).SplitRuns(o)
			if err != nil {
				return err
			}
			pieces[i] = ps
		}
		return nil
	}
	if err := split(); err != nil {
		return nil, err
	}
	// Index the objects just read, that have an entry: read from it, or
	// written by this job (once written, beside the job).
	for i := range objs {
		if index[i] != nil || rd.objects[i] == nil || jc.keys[i] == "" {
			continue
		}
		x := &objIndex{Rows: rd.objects[i].Rows(), Runs: rd.objects[i].NumRuns(), Hash: j.hashes[objs[i].Key][1]}
		for _, p := range pieces[i] {
			x.Pieces = append(x.Pieces, indexPiece{Run: p.RunKey, Line: p.FirstLine})
		}
		key := jc.keys[i]
		if rd.how[i] == ReadCache {
			j.putEntry(ctx, idxC, key, x)
		} else {
			j.afterEntry(i, func() { j.putEntry(ctx, idxC, key, x) })
		}
	}
	// The runs, in canonical order.
	var runs []*cachedRun
	byKey := map[string]*cachedRun{}
	for i := range objs {
		var ps []indexPiece
		if index[i] != nil {
			ps = index[i].Pieces
		} else {
			for _, p := range pieces[i] {
				ps = append(ps, indexPiece{Run: p.RunKey, Line: p.FirstLine})
			}
		}
		for k, p := range ps {
			r := byKey[p.Run]
			if r == nil {
				r = &cachedRun{key: p.Run}
				byKey[p.Run] = r
				runs = append(runs, r)
			}
			r.pieces = append(r.pieces, runPiece{obj: i, line: p.Line, idx: k})
		}
	}
	lim := j.cfg.Reader.MaxRuns
	if lim == 0 {
		lim = readers.DefaultMaxRuns
	}
	if lim > 0 && len(runs) > lim || rs.bud.spilled > 0 {
		return j.scoreAll(ctx, b, rs, index, prev)
	}
	sk, err := j.scoreKey()
	if err != nil {
		return nil, err
	}
	for _, r := range runs {
		parts := []string{runCacheTag, buildKey(j.cfg.Version, j.cfg.Commit), sk, r.key}
		for _, p := range r.pieces {
			if jc.keys[p.obj] == "" {
				parts = nil
				break
			}
			parts = append(parts, jc.keys[p.obj], strconv.Itoa(p.line))
		}
		if parts != nil {
			r.entry = cache.Key(parts...)
		}
	}
	err = j.eachEntry(ctx, len(runs), func(ctx context.Context, i int) error {
		r := runs[i]
		if r.entry == "" {
			return nil
		}
		var e runEntry
		o := objs[r.pieces[0].obj]
		if !j.getEntry(ctx, runC, r.entry, "run", o, &e) {
			return nil
		}
		if e.Scored != nil {
			s, err := scoring.DecodeScored(j.proto.job, e.Scored)
			if err != nil {
				j.log.Warn("cache entry not trusted: it is rebuilt", "of", "run", "object", Redact(j.in.ObjectURL(o.Key)), "entry", runC.URL(r.entry), "reason", err)
				return nil
			}
			r.scored = s
		}
		r.e, r.meta, r.known = &e, e.Meta, true
		return nil
	})
	if err != nil {
		return nil, err
	}
	contrib, _ := j.proto.job.(scoring.Contributor)
	dec := j.proto.dec
	// load reads back (or decodes) the objects of the runs need says.
	load := func(need func(r *cachedRun) bool) error {
		want := make([]bool, len(objs))
		some := false
		for _, r := range runs {
			if need(r) {
				for _, p := range r.pieces {
					if rd.objects[p.obj] == nil {
						want[p.obj], some = true, true
					}
				}
			}
		}
		if !some {
			return nil
		}
		before := rs.bad.count()
		if err := j.readSome(ctx, b, rs, want); err != nil {
			return err
		}
		if rs.bad.count() != before {
			return fmt.Errorf("%s: an object read again from the input has bad rows it did not have when it was cached", j.in)
		}
		return split()
	}
	// assemble builds one run from its pieces.
	assemble := func(r *cachedRun, fn func(*scoring.Run) error) error {
		ps := make([]scoring.Object, len(r.pieces))
		for k, p := range r.pieces {
			ps[k] = pieces[p.obj][p.idx].Object
		}
		var fnErr error
		err := dec.Assemble(ps, func(run *scoring.Run) error {
			fnErr = fn(run)
			return fnErr
		})
		if err == nil || err == fnErr {
			return err
		}
		return dataErr(err)
	}
	stats := runCacheStats{}
	// A run without an entry, or kept without a score, is assembled.
	stale := func(r *cachedRun) bool {
		return r.e == nil || j.cfg.keep(r.meta) && r.e.Scored == nil
	}
	if err := load(stale); err != nil {
		return nil, err
	}
	if rs.bud.spilled > 0 {
		return j.scoreAll(ctx, b, rs, index, prev)
	}
	for i := range objs {
		if index[i] != nil && rd.objects[i] == nil {
			j.noteHash(objs[i].Key, objs[i].Size, index[i].Hash)
			j.prog.add(int(objs[i].Size))
			j.prog.objectDone()
		}
	}
	if err := j.finishRead(rs, func(i int) (int, int) { return index[i].Rows, index[i].Runs }); err != nil {
		return nil, err
	}
	// The preparation, from every kept run's contribution.
	if contrib != nil {
		for _, r := range runs {
			if !stale(r) {
				r.contrb = r.e.Contrib
				continue
			}
			stats.Assembled++
			err := assemble(r, func(run *scoring.Run) error {
				defer dec.Done(run)
				r.meta, r.known = run.Meta, true
				if !j.cfg.keep(run.Meta) {
					return nil
				}
				c, err := contrib.Contribution(run)
				r.contrb = c
				return err
			})
			if err != nil {
				dec.Close()
				return nil, err
			}
		}
		err := contrib.PrepareFrom(func(fn func([]byte) error) error {
			for _, r := range runs {
				if !r.known {
					return fmt.Errorf("crlbatch: run %s was not assembled from its pieces", r.key)
				}
				if j.cfg.keep(r.meta) {
					if err := fn(r.contrb); err != nil {
						return err
					}
				}
			}
			return nil
		})
		if err != nil {
			dec.Close()
			return nil, err
		}
		for _, r := range runs {
			if j.cfg.keep(r.meta) {
				if r.prep, err = contrib.PreparedFor(r.contrb); err != nil {
					dec.Close()
					return nil, err
				}
			}
		}
	}
	// A kept run whose entry scored it under another preparation is
	// brought to this one when the job can.
	if ra, ok := j.proto.job.(scoring.Reapplier); ok {
		err := j.eachLimited(ctx, len(runs), func(ctx context.Context, i int) error {
			r := runs[i]
			if !r.known || r.e == nil || r.scored == nil || !j.cfg.keep(r.meta) || bytes.Equal(r.e.Prepared, r.prep) {
				return nil
			}
			ok, err := ra.Reapply(r.scored, r.contrb)
			r.reapplied = ok
			return err
		})
		if err != nil {
			dec.Close()
			return nil, err
		}
	}
	// A kept run is served when its entry scored it under the same
	// preparation, or was brought to it; otherwise it is assembled and
	// scored.
	serve := func(r *cachedRun) bool {
		return r.known && r.e != nil && r.e.Scored != nil && j.cfg.keep(r.meta) && (r.reapplied || bytes.Equal(r.e.Prepared, r.prep))
	}
	toScore := func(r *cachedRun) bool { return !serve(r) && (!r.known || j.cfg.keep(r.meta)) }
	if err := load(toScore); err != nil {
		dec.Close()
		return nil, err
	}
	if rs.bud.spilled > 0 {
		// Spilled objects are not split: every run as without entries.
		return j.scoreAll(ctx, b, rs, index, prev)
	}
	var slots []*scoreSlot
	total := len(runs)
	fold := j.newFolder()
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(j.cfg.Concurrency)
	var aerr error // an assembly's
	for _, r := range runs {
		if err := gctx.Err(); err != nil {
			break
		}
		if r.known && !j.cfg.keep(r.meta) {
			if r.e == nil && r.entry != "" {
				j.putEntry(ctx, runC, r.entry, &runEntry{Meta: r.meta})
			}
			continue
		}
		if serve(r) {
			s := &scoreSlot{res: r.scored}
			fold.add(len(slots), r.meta)
			fold.done(len(slots), s.res)
			slots = append(slots, s)
			stats.Served++
			if r.reapplied {
				stats.Reapplied++
			}
			continue
		}
		if !toScore(r) {
			continue
		}
		if contrib == nil {
			stats.Assembled++
		}
		aerr = assemble(r, func(run *scoring.Run) error {
			r.meta, r.known = run.Meta, true
			if !j.cfg.keep(run.Meta) {
				dec.Done(run)
				if r.entry != "" {
					j.putEntry(ctx, runC, r.entry, &runEntry{Meta: r.meta})
				}
				return nil
			}
			phase("score")
			stats.Scored++
			s, i := &scoreSlot{}, len(slots)
			slots = append(slots, s)
			fold.add(i, run.Meta)
			g.Go(guarded(func() error {
				s.res, s.err = j.proto.job.Score(run)
				dec.Done(run)
				if s.err == nil && r.entry != "" {
					enc, err := scoring.AppendScored(j.proto.job, nil, s.res)
					if err != nil {
						j.log.Warn("cannot encode a scored run for the cache", "run", r.key, "error", err)
					} else {
						j.putEntry(ctx, runC, r.entry, &runEntry{Meta: r.meta, Contrib: r.contrb, Prepared: r.prep, Scored: enc})
					}
				}
				fold.done(i, s.res)
				return s.err
			}))
			return nil
		})
		if aerr != nil {
			break
		}
	}
	// As the local job: a run scored before it in canonical order that
	// failed is the one reported, before an assembly's error.
	err = j.endScoring(ctx, rd, g, aerr, slots)
	if err != nil {
		return nil, err
	}
	j.log.Info("runs from the cache", "served", stats.Served, "assembled", stats.Assembled, "scored", stats.Scored, "runs", total, "reapplied", stats.Reapplied)
	scored := make([]*scoring.Scored, len(slots))
	for i, s := range slots {
		scored[i] = s.res
	}
	return j.reduceScored(ctx, rd, scored, total, prev)
}

// scoreAll reads every object not read yet and scores as without
// run-level entries.
func (j *job) scoreAll(ctx context.Context, b *blob.Bucket, rs *reading, index []*objIndex, prev *previous) (*result, error) {
	if err := j.readSome(ctx, b, rs, nil); err != nil {
		return nil, err
	}
	if err := j.finishRead(rs, func(i int) (int, int) { return index[i].Rows, index[i].Runs }); err != nil {
		return nil, err
	}
	return j.score(ctx, rs.rd, prev)
}

// eachLimited calls fn for 0..n-1, at most Concurrency at once; its error
// is the first in index order (ordered), at any --concurrency.
func (j *job) eachLimited(ctx context.Context, n int, fn func(ctx context.Context, i int) error) error {
	_, err := ordered(ctx, n, j.cfg.Concurrency, fn)
	return err
}

// eachEntry is eachLimited for fn that each look up one cache entry: at
// most the job cache's lookups at once (Concurrency on a local cache,
// remoteReads on a remote one, where each is a round trip).
func (j *job) eachEntry(ctx context.Context, n int, fn func(ctx context.Context, i int) error) error {
	_, err := ordered(ctx, n, j.cache.lookups, fn)
	return err
}

// getEntry reads the entry of key in c into v (its UnmarshalBinary, else
// JSON), reporting whether it
// did; an entry that cannot be trusted or read is warned about (what, o:
// the object or run it stands for) and left to be rebuilt.
func (j *job) getEntry(ctx context.Context, c *cache.Cache, key, what string, o object, v any) bool {
	found, err := readEntry(ctx, c, key, v)
	if err != nil {
		j.entryFailed(ctx, c, key, what, o, err)
		return false
	}
	return found
}

// readEntry is getEntry without the warning: an entry that cannot be
// trusted is a cache.ErrCorrupt.
func readEntry(ctx context.Context, c *cache.Cache, key string, v any) (bool, error) {
	e, found, err := c.Get(ctx, key)
	if err == nil && found {
		if u, ok := v.(encoding.BinaryUnmarshaler); ok {
			err = u.UnmarshalBinary(e.Payload)
		} else {
			err = json.Unmarshal(e.Payload, v)
		}
		if err != nil {
			err = fmt.Errorf("%w: %v", cache.ErrCorrupt, err)
		}
	}
	return found && err == nil, err
}

// entryFailed warns about the entry of key in c that readEntry could not
// read or trust (what, o: the object or run it stands for).
func (j *job) entryFailed(ctx context.Context, c *cache.Cache, key, what string, o object, err error) {
	switch {
	case ctx.Err() != nil:
	case errors.Is(err, cache.ErrCorrupt):
		j.log.Warn("cache entry not trusted: it is rebuilt", "of", what, "object", Redact(j.in.ObjectURL(o.Key)), "entry", c.URL(key), "reason", err)
	default:
		j.entryUnreadable(ctx, err, "cache entry cannot be read", "of", what, "object", Redact(j.in.ObjectURL(o.Key)), "entry", c.URL(key))
	}
}

// putEntry writes v (its MarshalBinary, else JSON, encoded now) as the
// entry of key in c, beside the job (putLater); a failure is a warning.
func (j *job) putEntry(ctx context.Context, c *cache.Cache, key string, v any) {
	var data []byte
	var err error
	if m, ok := v.(encoding.BinaryMarshaler); ok {
		data, err = m.MarshalBinary()
	} else {
		data, err = json.Marshal(v)
	}
	if err != nil {
		j.cacheWriteFailed(ctx, err)
		return
	}
	j.putLater(ctx, c, key, data)
}

// scoreKey is the part of a run entry's key that says how the job scores
// a run, derived from the bound protocol rather than listed: the protocol,
// every flag it declares (scoring.Description.Flags) with whether it was
// set and its value, the contents of each file a flag names (TakesFile; a
// name that is no file, such as a bundled spec, as itself), and the
// decoder's codec key (every decoding option). Engine settings that act
// after scoring (--group-by, --baseline, --min-steps, the bootstrap) or
// not on numbers (--concurrency, --out) are not in it; --where is, through
// the preparation it shapes (PreparedFor) and the runs it keeps.
func (j *job) scoreKey() (string, error) {
	flags := j.proto.flags
	var parts []string
	parts = append(parts, "protocol", j.proto.name)
	if c, ok := j.proto.dec.(scoring.Codec); ok {
		parts = append(parts, "codec", c.CodecKey())
	}
	for _, f := range j.proto.desc.Flags {
		set := "default"
		if flags.IsSet(f.Name) {
			set = "set"
		}
		var v string
		switch f.Kind {
		case scoring.FlagString:
			v = flags.String(f.Name)
		case scoring.FlagFloat:
			v = strconv.FormatUint(math.Float64bits(flags.Float(f.Name)), 16)
		case scoring.FlagInt:
			v = strconv.Itoa(flags.Int(f.Name))
		case scoring.FlagBool:
			v = strconv.FormatBool(flags.Bool(f.Name))
		case scoring.FlagStrings:
			data, err := json.Marshal(flags.StringSlice(f.Name))
			if err != nil {
				return "", err
			}
			v = string(data)
		default:
			return "", fmt.Errorf("crlbatch: flag --%s of an unknown kind %d", f.Name, f.Kind)
		}
		parts = append(parts, "flag", f.Name, set, v)
		if f.TakesFile && v != "" {
			data, err := os.ReadFile(v)
			switch {
			case err == nil:
				parts = append(parts, "file", strconv.FormatUint(xxhash.Sum64(data), 16), strconv.Itoa(len(data)))
			case errors.Is(err, os.ErrNotExist):
				parts = append(parts, "name")
			default:
				return "", err
			}
		}
	}
	return cache.Key(parts...), nil
}

var (
	buildOnce sync.Once
	buildHash string
)

// buildKey names the build: the version and commit, and the executable's
// identity, so that a build from a changed tree, of the same version,
// does not serve another build's scores. The identity is the Go build ID
// that the go command writes into an ELF executable (its last part is a
// hash of the executable's contents, as go tool buildid prints it), read
// from its note without reading the executable (hashing all of it was
// about 5 % of a warm rerun's CPU); an executable without one (another
// format, or built with an empty -buildid) is hashed whole.
func buildKey(version, commit string) string {
	buildOnce.Do(func() {
		// Unknown: a key of this process alone (nothing is reused).
		buildHash = fmt.Sprintf("unknown-%x", rand.Uint64())
		exe, err := os.Executable()
		if err != nil {
			return
		}
		if id, ok := goBuildID(exe); ok {
			buildHash = "buildid-" + id
			return
		}
		f, err := os.Open(exe)
		if err != nil {
			return
		}
		defer f.Close()
		h := xxhash.New()
		if _, err := io.Copy(h, f); err == nil {
			buildHash = strconv.FormatUint(h.Sum64(), 16)
		}
	})
	return version + "\x00" + commit + "\x00" + buildHash
}

// goBuildID is the Go build ID in the note of the ELF executable at path:
// the note's name "Go", its type 4, an ID of four parts (action and
// content IDs) that ends in the content ID.
func goBuildID(path string) (string, bool) {
	f, err := elf.Open(path)
	if err != nil {
		return "", false
	}
	defer f.Close()
	sec := f.Section(".note.go.buildid")
	if sec == nil {
		return "", false
	}
	data, err := sec.Data()
	if err != nil || len(data) < 16 {
		return "", false
	}
	nameSize, descSize, typ := binary.LittleEndian.Uint32(data), binary.LittleEndian.Uint32(data[4:]), binary.LittleEndian.Uint32(data[8:])
	if f.ByteOrder != binary.LittleEndian || nameSize != 4 || typ != 4 || string(data[12:16]) != "Go\x00\x00" || uint64(len(data)) < 16+uint64(descSize) {
		return "", false
	}
	id := string(data[16 : 16+descSize])
	if parts := strings.Split(id, "/"); len(parts) < 2 || len(parts[len(parts)-1]) < 16 {
		return "", false
	}
	return id, true
}
