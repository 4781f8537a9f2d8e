package pipeline

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"sync"

	"gocloud.dev/blob"

	"github.com/crlbatch/crlbatch/readers"
	"github.com/crlbatch/crlbatch/scoring"
	"github.com/crlbatch/crlbatch/storage"
	"github.com/crlbatch/crlbatch/writers"
)

// Engine is one job's steps for another engine (Apache Beam, module beam/)
// to drive: list the input, decode one object into run pieces, score one
// run from its pieces, and finish (the reduction, the files and their
// publication, with the local job's rules: OUTPUT's claim, the attempt
// prefix, manifest.json last, LATEST). What passes between the steps is
// bytes, so the other engine can move it between workers; each step gives
// what the local job's would, so the published files are the same bytes.
//
// A job whose decoder splits objects into run pieces (scoring.RunSplitter)
// with a codec (scoring.Codec), whose scored runs encode
// (scoring.ScoredCodec), and whose preparation (scoring.Preparer), if any,
// needs no pass over the runs, is scored run by run (Split reports true).
// Any other job's objects are decoded apart and all scored in Finish, as
// the local job scores them.
type Engine struct {
	j *job

	split bool

	mu      sync.Mutex
	inB     *blob.Bucket
	inClose func() error
}

// NewEngine binds cfg, as Run would, without opening anything: the usage
// errors of the flags come here.
func NewEngine(cfg Config) (*Engine, error) {
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	j, err := newJob(&cfg)
	if err != nil {
		return nil, err
	}
	if err := j.locateOutput(); err != nil {
		return nil, err
	}
	j.prog = newProgress(nil, false)
	e := &Engine{j: j}
	_, split := j.proto.dec.(scoring.RunSplitter)
	_, codec := j.proto.dec.(scoring.Codec)
	_, sc := j.proto.job.(scoring.ScoredCodec)
	e.split = split && codec && sc
	if p, ok := j.proto.job.(scoring.Preparer); ok && e.split {
		// A job that prepares without looking at the runs (a ceiling
		// from flags or a spec alone) is prepared here, on every worker;
		// one that needs a pass over every run is scored in Finish.
		called := false
		err := p.Prepare(func(func(*scoring.Run) error) error {
			called = true
			return errNeedsRuns
		})
		e.split = !called && err == nil
	}
	return e, nil
}

// errNeedsRuns stops a Preparer that asks for the runs in NewEngine.
var errNeedsRuns = errors.New("the job's preparation needs every run")

// Close closes the input bucket, if open.
func (e *Engine) Close() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.inClose != nil {
		e.inClose()
		e.inB, e.inClose = nil, nil
	}
}

// Split reports whether runs are scored one by one (ScoreRun), rather
// than all together in Finish.
func (e *Engine) Split() bool { return e.split }

func (e *Engine) input(ctx context.Context) (*blob.Bucket, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.inB == nil {
		b, closer, err := openBucket(ctx, e.j.cfg.Opener, e.j.in)
		if err != nil {
			return nil, err
		}
		e.inB, e.inClose = b, closer
	}
	return e.inB, nil
}

// Preflight checks OUTPUT as the local job does before it reads anything
// (a result there without --overwrite, a claim held by another job, a
// foreign LATEST), then lets go of the claim it took: Finish takes it
// again.
func (e *Engine) Preflight(ctx context.Context) error {
	outB, closer, err := openBucket(ctx, e.j.cfg.Opener, e.j.out)
	if err != nil {
		return err
	}
	defer closer()
	if _, err := e.j.checkOutput(ctx, outB); err != nil {
		return err
	}
	e.j.release(ctx, outB)
	return nil
}

// List lists the input's objects that match the patterns, in bytewise key
// order, each encoded for another engine (DecodeObject reads one back).
func (e *Engine) List(ctx context.Context) ([][]byte, error) {
	b, err := e.input(ctx)
	if err != nil {
		return nil, err
	}
	objs, err := list(ctx, b, e.j.in, e.j.cfg.Patterns, e.j.cfg.Retry)
	if err != nil {
		return nil, err
	}
	if len(objs) == 0 {
		return nil, noObjectMatches(ctx, b, e.j.in, e.j.cfg.Patterns, true, e.j.cfg.Retry)
	}
	out := make([][]byte, len(objs))
	for i, o := range objs {
		if out[i], err = json.Marshal(o); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// badRow is a bad row skipped, as it travels between workers.
type badRow struct {
	URL   string
	Line  int
	Row   bool   `json:",omitempty"`
	Field string `json:",omitempty"`
	Msg   string
	Err   string `json:",omitempty"`
	Limit bool   `json:",omitempty"`
	Clash bool   `json:",omitempty"` // readers.ErrRunKeyClash
}

func toBadRow(de *readers.DataError) badRow {
	b := badRow{URL: de.URL, Line: de.Line, Row: de.Row, Field: de.Field, Msg: de.Msg}
	if de.Err != nil {
		b.Limit = errors.Is(de.Err, readers.ErrLimit)
		b.Clash = errors.Is(de.Err, readers.ErrRunKeyClash)
		if !b.Limit && !b.Clash {
			b.Err = de.Err.Error()
		}
	}
	return b
}

func (b badRow) dataError() *readers.DataError {
	de := &readers.DataError{URL: b.URL, Line: b.Line, Row: b.Row, Field: b.Field, Msg: b.Msg}
	switch {
	case b.Limit:
		de.Err = readers.ErrLimit
	case b.Clash:
		de.Err = readers.ErrRunKeyClash
	case b.Err != "":
		de.Err = errors.New(b.Err)
	}
	return de
}

// objectSummary is what Finish needs of one decoded object.
type objectSummary struct {
	Object storage.Object
	Rows   int
	Runs   int
	Read   string
	Hash   uint64
	Bad    []badRow `json:",omitempty"`
	// Failed is the object's failure, carried to Finish (the object's
	// bad rows found before it are in Bad).
	Failed *failure `json:",omitempty"`
}

// DecodeObject reads and decodes one object listed by List, retrying
// transient storage errors as the local job does. Under Split, emit
// receives each run piece: the run key, and the bytes ScoreRun reads (the
// object's position and the decoder's Codec encoding of the piece);
// otherwise it receives the whole object's encoding under the key "". The
// summary goes to Finish. An object that fails on its data or the store
// (a bad row past --max-bad-rows among its own, a storage error after the
// retries) emits nothing and does not fail the step: the summary carries
// the failure, and its bad rows, to Finish, which reports the failure the
// local job would (the first object in key order that fails; the row that
// breaks --max-bad-rows counted over all objects). The error is a bug's,
// a cancelled context's, or a usage error of the whole job.
func (e *Engine) DecodeObject(ctx context.Context, ref []byte, emit func(runKey string, piece []byte)) (summary []byte, err error) {
	j := e.j
	var o storage.Object
	if err := json.Unmarshal(ref, &o); err != nil {
		return nil, fmt.Errorf("crlbatch: not an object of List: %w", err)
	}
	b, err := e.input(ctx)
	if err != nil {
		return nil, err
	}
	codec, ok := j.proto.dec.(scoring.Codec)
	if !ok {
		return nil, Usagef("--protocol %s: its decoder has no codec: its objects cannot move between workers", j.proto.name)
	}
	type decoded struct {
		obj  scoring.Object
		how  string
		hash uint64
	}
	bad := newBadRows(1, j.cfg.MaxBadRows)
	res, err := readObjects(ctx, j, b, []object{o}, bad, func(_ int, url, rel string, r io.Reader) (decoded, error) {
		h := newObjectHash()
		tr := teeAttempt(r, h)
		obj, how, err := j.decodeAny(ctx, b, false, o, url, rel, tr, bad.hook(0))
		if err != nil {
			return decoded{}, err
		}
		if _, err := io.Copy(io.Discard, tr); err != nil { // every byte is hashed
			obj.Release()
			return decoded{}, err
		}
		return decoded{obj, how, h.Sum64()}, nil
	})
	if err != nil || bad.err() != nil {
		if err != nil && !carriable(ctx, err) {
			return nil, err
		}
		if len(res) > 0 {
			release(res[0].obj)
		}
		sum := objectSummary{Object: o}
		if err != nil {
			sum.Failed = carry(err)
		}
		for _, de := range bad.of(0) {
			sum.Bad = append(sum.Bad, toBadRow(de))
		}
		return json.Marshal(&sum)
	}
	d := res[0]
	defer d.obj.Release()
	sum := objectSummary{Object: o, Rows: d.obj.Rows(), Runs: d.obj.NumRuns(), Read: d.how, Hash: d.hash}
	for _, de := range bad.of(0) {
		sum.Bad = append(sum.Bad, toBadRow(de))
	}
	url := j.in.ObjectURL(o.Key)
	if !e.Split() {
		enc, err := codec.AppendEncoding(pieceHeader(nil, o, 0), d.obj)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", url, err)
		}
		emit("", enc)
		return json.Marshal(&sum)
	}
	pcs, err := j.proto.dec.(scoring.RunSplitter).SplitRuns(d.obj)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", url, err)
	}
	for _, p := range pcs {
		enc, err := codec.AppendEncoding(pieceHeader(nil, o, p.FirstLine), p.Object)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", url, err)
		}
		emit(p.RunKey, enc)
	}
	return json.Marshal(&sum)
}

// pieceHeader starts a piece: the object's key, its key relative to the
// input, and the piece's first line.
func pieceHeader(buf []byte, o storage.Object, line int) []byte {
	buf = binary.AppendUvarint(buf, uint64(len(o.Key)))
	buf = append(buf, o.Key...)
	buf = binary.AppendUvarint(buf, uint64(len(o.Rel)))
	buf = append(buf, o.Rel...)
	return binary.AppendUvarint(buf, uint64(line))
}

// piece is a piece read back: where it comes from and its encoding.
type piece struct {
	key, rel string
	line     int
	data     []byte
}

func readPiece(b []byte) (piece, error) {
	var p piece
	str := func() (string, bool) {
		n, k := binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < n {
			return "", false
		}
		s := string(b[k : k+int(n)])
		b = b[k+int(n):]
		return s, true
	}
	var ok1, ok2 bool
	p.key, ok1 = str()
	p.rel, ok2 = str()
	line, k := binary.Uvarint(b)
	if !ok1 || !ok2 || k <= 0 {
		return p, errors.New("crlbatch: not a run piece of DecodeObject")
	}
	p.line, p.data = int(line), b[k:]
	return p, nil
}

// decodePieces reads pieces back into the decoder's objects, sorted by key.
func (e *Engine) decodePieces(raw [][]byte) ([]piece, []scoring.Object, error) {
	codec := e.j.proto.dec.(scoring.Codec)
	pcs := make([]piece, len(raw))
	for i, r := range raw {
		p, err := readPiece(r)
		if err != nil {
			return nil, nil, err
		}
		pcs[i] = p
	}
	sort.Slice(pcs, func(a, b int) bool { return pcs[a].rel < pcs[b].rel })
	objs := make([]scoring.Object, len(pcs))
	for i, p := range pcs {
		o, err := codec.DecodeEncoding(e.j.in.ObjectURL(p.key), p.rel, p.data)
		if err != nil {
			for _, d := range objs[:i] {
				d.Release()
			}
			return nil, nil, fmt.Errorf("%s: %w", e.j.in.ObjectURL(p.key), err)
		}
		objs[i] = o
	}
	return pcs, objs, nil
}

// ScoreRun assembles and scores the run of one run key from its pieces
// (in any order: they are put in object key order first), unless --where
// leaves it out. emit receives the run's family (--group-by) and its
// encoding for Finish, which a left-out run also reaches (it counts
// toward --max-runs and --where's note). A run that fails on its data
// does not fail the step: emit receives, under the family "", the failure
// at the run's place, and Finish reports the first in canonical order, as
// the local job does. The error is a bug's.
func (e *Engine) ScoreRun(raw [][]byte, emit func(family string, scored []byte)) error {
	j := e.j
	pcs, objs, err := e.decodePieces(raw)
	if err != nil {
		return err
	}
	defer func() {
		for _, o := range objs {
			o.Release()
		}
	}()
	first := pcs[0]
	var fnErr error
	err = j.proto.dec.Assemble(objs, func(r *scoring.Run) error {
		fnErr = e.scoreOne(r, first, emit)
		return fnErr
	})
	if err == nil {
		return nil
	}
	if err != fnErr {
		err = dataErr(err)
	}
	if !carriable(context.Background(), err) {
		return err
	}
	rec, merr := json.Marshal(carry(err))
	if merr != nil {
		return merr
	}
	buf := pieceHeader(nil, storage.Object{Key: first.key, Rel: first.rel}, first.line)
	emit("", append(append(buf, scoredFailed), rec...))
	return nil
}

// What follows a scored run's place in ScoreRun's encoding: the run left
// out by --where (nothing else), scored (its scoring.AppendScored
// encoding), or failed (its failure as JSON).
const (
	scoredLeftOut byte = iota
	scoredKept
	scoredFailed
)

// scoreOne scores one assembled run (unless --where leaves it out) and
// emits it, at the position of its first piece.
func (e *Engine) scoreOne(r *scoring.Run, first piece, emit func(family string, scored []byte)) error {
	j := e.j
	defer j.proto.dec.Done(r)
	buf := pieceHeader(nil, storage.Object{Key: first.key, Rel: first.rel}, first.line)
	if !j.cfg.keep(r.Meta) {
		emit("", append(buf, scoredLeftOut))
		return nil
	}
	s, err := j.proto.job.Score(r)
	if err != nil {
		return err
	}
	enc, err := scoring.AppendScored(j.proto.job, append(buf, scoredKept), s)
	if err != nil {
		return err
	}
	fam, _ := j.cfg.familyOf(j.proto.groupBy, s.Meta)
	emit(fam, enc)
	return nil
}

// position is where a run starts: its first piece's object (relative key)
// and first line.
type position struct {
	rel  string
	line int
}

// SortScored sorts encoded runs of ScoreRun into canonical order
// (PROTOCOLS 1.2: objects in key order, runs in order of their first row),
// so that a family's runs reach the reduction in the local job's order
// whatever order the engine delivered them in.
func SortScored(runs [][]byte) error {
	keys := make([]position, len(runs))
	for i, r := range runs {
		p, err := readPiece(r)
		if err != nil {
			return err
		}
		keys[i] = position{rel: p.rel, line: p.line}
	}
	idx := make([]int, len(runs))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		ka, kb := keys[idx[a]], keys[idx[b]]
		if ka.rel != kb.rel {
			return ka.rel < kb.rel
		}
		return ka.line < kb.line
	})
	sorted := make([][]byte, len(runs))
	for i, k := range idx {
		sorted[i] = runs[k]
	}
	copy(runs, sorted)
	return nil
}

// Finish does what the local job does once every object is decoded:
// --max-bad-rows over all objects, the notes on bad rows and duplicate
// objects, then under OUTPUT's claim the tidying, the reduction, the files
// and their publication (manifest.json last; under --history LATEST).
// summaries are DecodeObject's; runs are ScoreRun's (under Split) or
// DecodeObject's whole objects (otherwise), in any order. Nothing is
// published when it fails.
func (e *Engine) Finish(ctx context.Context, summaries, runs [][]byte) (*Summary, error) {
	j := e.j
	sums := make([]objectSummary, len(summaries))
	for i, s := range summaries {
		if err := json.Unmarshal(s, &sums[i]); err != nil {
			return nil, fmt.Errorf("crlbatch: not a summary of DecodeObject: %w", err)
		}
	}
	sort.Slice(sums, func(a, b int) bool { return sums[a].Object.Key < sums[b].Object.Key })
	objs := make([]object, len(sums))
	bad := newBadRows(len(sums), j.cfg.MaxBadRows)
	rd := &read{how: make([]string, len(sums)), counts: map[string]int{}}
	j.hashes = map[string][2]uint64{}
	for i, s := range sums {
		objs[i] = s.Object
		for _, br := range s.Bad {
			bad.rows[i] = append(bad.rows[i], br.dataError())
			bad.total++
		}
		rd.how[i] = s.Read
		j.hashes[s.Object.Key] = [2]uint64{uint64(s.Object.Size), s.Hash}
	}
	// The failure the local job reports: the first object in key order
	// that fails, unless the row that breaks --max-bad-rows comes before
	// it (the local job's readObjects, over every object's summary).
	bad.place()
	for i, s := range sums {
		if s.Failed == nil {
			continue
		}
		if err := s.Failed.err(); !bad.breaksBefore(i, err) {
			return nil, err
		}
		break
	}
	if err := bad.err(); err != nil {
		return nil, err
	}
	rows := bad.all()
	rd.skipped = skippedRows(rows)
	rd.notes = badRowNotes(rows, j.cfg.MaxBadRows)
	if len(rows) > 0 {
		j.log.Warn("skipped bad rows", "rows", len(rows), "max_bad_rows", j.cfg.MaxBadRows)
	}
	for i, s := range sums {
		rd.rows += int64(s.Rows)
		rd.manObj = append(rd.manObj, writers.ManifestObject{
			Key: objs[i].Rel, Size: objs[i].Size, ETag: objs[i].ETag, MD5: objs[i].MD5,
			RowsRead: int64(s.Rows), RunsFound: s.Runs, Status: "ok", Read: rd.how[i],
		})
		rd.counts[rd.how[i]]++
	}
	if rd.rows == 0 {
		return nil, &DataError{Err: fmt.Errorf("%s: no rows in the %d object(s) read: nothing to score", j.in, len(objs))}
	}
	rd.notes = append(rd.notes, j.duplicates(objs)...)
	rd.notes = append(rd.notes, j.hiddenObjects(objs)...)

	outB, outClose, err := openBucket(ctx, j.cfg.Opener, j.out)
	if err != nil {
		return nil, err
	}
	defer outClose()
	target, err := j.checkOutput(ctx, outB)
	if err != nil {
		return nil, err
	}
	defer j.release(ctx, outB)
	if err := j.tidy(ctx, outB); err != nil {
		return nil, err
	}
	prev, err := j.loadPrevious(ctx, outB, target)
	if err != nil {
		return nil, err
	}
	var res *result
	if e.Split() {
		res, err = e.finishScored(ctx, rd, objs, runs, prev)
	} else {
		res, err = e.finishWhole(ctx, rd, runs, prev)
	}
	if err != nil {
		return nil, err
	}
	outputs, err := j.publish(ctx, outB, target, rd, res)
	if err != nil {
		return nil, err
	}
	return &Summary{Objects: len(objs), Rows: rd.rows, Runs: res.runs, Families: res.families, Read: rd.counts, Outputs: outputs,
		Output: j.out.String(), Result: j.out.ObjectURL(target)}, nil
}

// finishScored reduces runs scored apart: in canonical order, --max-runs
// over them all, the kept ones decoded.
func (e *Engine) finishScored(ctx context.Context, rd *read, objs []object, runs [][]byte, prev *previous) (*result, error) {
	j := e.j
	if err := SortScored(runs); err != nil {
		return nil, err
	}
	lim := j.cfg.Reader.MaxRuns
	if lim == 0 {
		lim = readers.DefaultMaxRuns
	}
	// The local job groups every object's run parts before it assembles
	// a run (readers' groupRuns, in key order, then line order): the first
	// part past --max-runs or naming a run key another identity has fails
	// it, whichever comes first. Then it assembles and scores the runs in
	// canonical order and reports the first that failed. Each run has its
	// record here, at its first part (a failed one's carries the failure;
	// a run key clash's, the place of the part that clashed).
	rels := make(map[string]string, len(objs))
	for _, o := range objs {
		rels[j.in.ObjectURL(o.Key)] = o.Rel
	}
	var group, scoreFail error
	var groupAt position
	if lim > 0 && len(runs) > lim {
		p, _ := readPiece(runs[lim])
		group = dataErr(&readers.DataError{URL: j.in.ObjectURL(p.key), Line: p.line,
			Msg: fmt.Sprintf("more than %d runs (the limit set by --max-runs)", lim), Err: readers.ErrLimit})
		groupAt = position{rel: p.rel, line: p.line}
	}
	for _, r := range runs {
		p, err := readPiece(r)
		if err != nil {
			return nil, err
		}
		if len(p.data) == 0 || p.data[0] != scoredFailed {
			continue
		}
		var f failure
		if err := json.Unmarshal(p.data[1:], &f); err != nil {
			return nil, fmt.Errorf("crlbatch: not a failed run of ScoreRun: %w", err)
		}
		if f.Row != nil && f.Row.Clash {
			at := position{rel: rels[f.Row.URL], line: f.Row.Line}
			// At one part the local job tests the clash first.
			if group == nil || at.rel < groupAt.rel || at.rel == groupAt.rel && at.line <= groupAt.line {
				group, groupAt = f.err(), at
			}
			continue
		}
		if scoreFail == nil {
			scoreFail = f.err()
		}
	}
	if group != nil {
		return nil, group
	}
	if scoreFail != nil {
		return nil, scoreFail
	}
	var scored []*scoring.Scored
	for _, r := range runs {
		p, err := readPiece(r)
		if err != nil {
			return nil, err
		}
		if len(p.data) == 0 || p.data[0] == scoredLeftOut {
			continue
		}
		s, err := scoring.DecodeScored(j.proto.job, p.data[1:])
		if err != nil {
			return nil, err
		}
		scored = append(scored, s)
	}
	return j.reduceScored(ctx, rd, scored, len(runs), prev)
}

// finishWhole scores whole objects decoded apart, as the local job does.
func (e *Engine) finishWhole(ctx context.Context, rd *read, runs [][]byte, prev *previous) (*result, error) {
	_, objs, err := e.decodePieces(runs)
	if err != nil {
		return nil, err
	}
	rd.objects = objs
	defer releaseAll(rd)
	return e.j.score(ctx, rd, prev)
}
