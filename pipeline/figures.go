package pipeline

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/crlbatch/crlbatch/cache"
	"github.com/crlbatch/crlbatch/figures"
	"github.com/crlbatch/crlbatch/scoring"
	"github.com/crlbatch/crlbatch/writers"
)

// Figure entries (--cache, kind "figures"): a figure's SVG and PNG bytes
// kept under its key (figures.Figure.Key: for the figures the protocols
// draw, a hash of the figure's kind, figures.KeyVersion and every input it
// is drawn from, computed without drawing; as the test memo
// figures.Memoize keys them) and the build (buildKey: the renderer and its
// fonts are part of the executable). A figure drawn from the same inputs
// as one rendered before is neither drawn nor rasterized again.
const (
	figuresKind    = "figures"
	figureCacheTag = "crlbatch-figures-2" // raise with the entries' layout or key; 2: input keys
)

// figureEntry is a figure's entry as looked up: its key, and its SVG and
// PNG when the entry was found and whole.
type figureEntry struct {
	key      string
	svg, png []byte
	found    bool
	err      error // the figure's key could not be computed
}

// lookupFigure looks f's entry up in the job's cache; an entry that cannot
// be read or trusted is warned about and left to be drawn again.
func (j *job) lookupFigure(ctx context.Context, f *figures.Figure) figureEntry {
	fk, err := f.Key()
	if err != nil {
		return figureEntry{err: err}
	}
	fc := j.cache.c.Kind(figuresKind)
	fe := figureEntry{key: cache.Key(figureCacheTag, buildKey(j.cfg.Version, j.cfg.Commit), hex.EncodeToString(fk[:]))}
	e, found, err := fc.Get(ctx, fe.key)
	if err == nil && found {
		if fe.svg, fe.png, err = splitFigure(e.Payload); err == nil {
			fe.found = true
			return fe
		}
		err = fmt.Errorf("%w: %v", cache.ErrCorrupt, err)
	}
	switch {
	case err == nil || ctx.Err() != nil:
	case errors.Is(err, cache.ErrCorrupt):
		j.log.Warn("cache entry not trusted: it is rebuilt", "of", "figure", "figure", f.Name, "entry", fc.URL(fe.key), "reason", err)
	default:
		j.entryUnreadable(ctx, err, "cache entry cannot be read", "of", "figure", "figure", f.Name, "entry", fc.URL(fe.key))
	}
	return figureEntry{key: fe.key}
}

// renderFigure renders f, through the job's figure entries when it has a
// cache (cached: read back from its entry): the entry fe when the caller
// looked it up already, else looked up here.
func (j *job) renderFigure(ctx context.Context, f *figures.Figure, fe *figureEntry) (svg, png []byte, cached bool, err error) {
	if j.cache == nil {
		svg, png, err = f.RenderContext(ctx)
		return svg, png, false, err
	}
	if fe == nil {
		e := j.lookupFigure(ctx, f)
		fe = &e
	}
	switch {
	case fe.err != nil:
		return nil, nil, false, fe.err
	case fe.found:
		return fe.svg, fe.png, true, nil
	}
	if svg, png, err = f.RenderContext(ctx); err != nil {
		return nil, nil, false, err
	}
	payload := binary.AppendUvarint(make([]byte, 0, 10+len(svg)+len(png)), uint64(len(svg)))
	payload = append(append(payload, svg...), png...)
	j.putLater(ctx, j.cache.c.Kind(figuresKind), fe.key, payload)
	return svg, png, false, nil
}

// splitFigure reads a figure entry back: the SVG's length, the SVG, the
// PNG.
func splitFigure(data []byte) (svg, png []byte, err error) {
	n, k := binary.Uvarint(data)
	if k <= 0 || uint64(len(data)-k) < n {
		return nil, nil, errors.New("not a figure entry")
	}
	svg, png = data[k:k+int(n)], data[k+int(n):]
	if len(svg) == 0 || len(png) == 0 {
		return nil, nil, errors.New("a figure entry without its SVG or PNG")
	}
	return svg, png, nil
}

// drawFigures renders what a Figurer drew (d; nil for a job that draws
// nothing), --concurrency figures at once (each into its own slot), and
// returns the figure files (figure-<name>.svg and .png, in the job's
// order), report.md's entries of them (its Figures section) and the
// figures report.html shows inline.
func (j *job) drawFigures(ctx context.Context, d *scoring.Drawn) ([]outFile, []writers.FigureRef, []writers.Figure, error) {
	if d == nil {
		d = &scoring.Drawn{}
	}
	type drawn struct {
		svg, png []byte
		cached   bool
		err      error
	}
	slots := make([]drawn, len(d.Figures))
	// On a remote cache, where a lookup is a round trip, every figure's
	// entry is looked up at once before any is drawn (eachEntry); locally
	// each as its figure's turn comes.
	var looked []figureEntry
	if j.cache != nil && j.cache.c.Remote() && len(d.Figures) > 1 {
		looked = make([]figureEntry, len(d.Figures))
		err := j.eachEntry(ctx, len(d.Figures), func(ctx context.Context, i int) error {
			looked[i] = j.lookupFigure(ctx, d.Figures[i])
			return nil
		})
		if err != nil {
			return nil, nil, nil, err
		}
	}
	j.parallel(len(d.Figures), func(i int) {
		if ctx.Err() != nil {
			return
		}
		phase("figures")
		s := &slots[i]
		var fe *figureEntry
		if looked != nil {
			fe = &looked[i]
		}
		s.svg, s.png, s.cached, s.err = j.renderFigure(ctx, d.Figures[i], fe)
	})
	if err := ctx.Err(); err != nil {
		return nil, nil, nil, err
	}
	var files []outFile
	var refs []writers.FigureRef
	var inline []writers.Figure
	served := 0
	for i, f := range d.Figures {
		if slots[i].err != nil {
			return nil, nil, nil, fmt.Errorf("drawing %s: %w", f.Name, slots[i].err)
		}
		if slots[i].cached {
			served++
		}
		svg, png := "figure-"+f.Name+".svg", "figure-"+f.Name+".png"
		files = append(files, outFile{name: svg, data: slots[i].svg}, outFile{name: png, data: slots[i].png})
		refs = append(refs, writers.FigureRef{Title: f.Title, PNG: png, SVG: svg, Caption: f.Caption})
		inline = append(inline, writers.Figure{PNG: png, SVG: slots[i].svg})
	}
	if j.cache != nil && len(d.Figures) > 0 {
		j.log.Info("figures from the cache", "served", served, "drawn", len(d.Figures)-served)
	}
	return files, refs, inline, nil
}

// reportFiles are report.md, made of parts (the protocol's report, the
// changes since the previous result, the Figures section) in one string,
// and report.html, converted from that string as it is written: the
// report is held once, as it is written (a report with a table of
// 100,000 labels is 35 MB of Markdown and 137 MB of HTML).
func reportFiles(parts []string, inline []writers.Figure) ([]outFile, error) {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	var b strings.Builder
	b.Grow(n)
	for _, p := range parts {
		b.WriteString(p)
	}
	md := b.String()
	page, err := writers.NewPage(md, inline)
	if err != nil {
		return nil, fmt.Errorf("report.html: %w", err)
	}
	return []outFile{{name: "report.md", to: stringFile(md)}, {name: "report.html", to: page}}, nil
}

// stringFile is a file's content as a string.
type stringFile string

func (s stringFile) WriteTo(w io.Writer) (int64, error) {
	var n int64
	for rest := string(s); len(rest) > 0; {
		k, err := io.WriteString(w, rest[:min(len(rest), 1<<20)])
		n += int64(k)
		if err != nil {
			return n, err
		}
		rest = rest[k:]
	}
	return n, nil
}

// folder hands the scored runs to a scoring.Folder job, each family's in
// canonical order, as they are scored (runs finish in any order; one that
// finishes early waits, with its Figure, for the runs of its family before
// it), so that a family's curve is merged while its runs are scored and
// memory does not grow with the runs (docs/decisions.md, "Figures and the
// HTML report"). A family's line depends only on its own runs and their
// order (figures.Accumulator), so a run is not held back by the runs of
// other families: on the nightly warm rerun the one changed run, scored
// while the others are served from their entries, no longer holds every
// other family's curves back until it is scored. nil when the job does not
// fold.
type folder struct {
	j    *job
	f    scoring.Folder
	mu   sync.Mutex
	runs []foldRun              // by canonical index, as the runs are handed out
	fams map[string]*foldFamily // by family
}

// foldRun is a run handed out for scoring: its family and, once scored and
// until it is folded, its result.
type foldRun struct {
	fam    *foldFamily
	name   string // the family's name as Fold takes it
	scored *scoring.Scored
	failed bool // its scoring failed: its family folds nothing more
}

// foldFamily is one family's runs in canonical order and the position of
// the one folded next.
type foldFamily struct {
	runs []int
	next int
}

func (j *job) newFolder() *folder {
	f, ok := j.proto.job.(scoring.Folder)
	if !ok {
		return nil
	}
	return &folder{j: j, f: f, fams: map[string]*foldFamily{}}
}

// add hands out run i (canonical order, from 0, each once and in order)
// with its metadata, before it is scored or served: its family is then
// known to wait for it.
func (fo *folder) add(i int, meta map[string]string) {
	if fo == nil {
		return
	}
	fam, _ := fo.j.cfg.familyOf(fo.j.proto.groupBy, meta)
	fo.mu.Lock()
	defer fo.mu.Unlock()
	if i != len(fo.runs) {
		panic(fmt.Sprintf("pipeline: run %d handed to the folder after %d runs", i, len(fo.runs)))
	}
	ff := fo.fams[fam]
	if ff == nil {
		ff = &foldFamily{}
		fo.fams[fam] = ff
	}
	ff.runs = append(ff.runs, i)
	fo.runs = append(fo.runs, foldRun{fam: ff, name: fam})
}

// done takes run i (handed out by add) once scored; s is nil when
// scoring it failed (the job fails: nothing after it in its family is
// folded).
func (fo *folder) done(i int, s *scoring.Scored) {
	if fo == nil {
		return
	}
	fo.mu.Lock()
	defer fo.mu.Unlock()
	r := &fo.runs[i]
	if s == nil {
		r.failed = true
		return
	}
	r.scored = s
	ff := r.fam
	for ff.next < len(ff.runs) {
		n := &fo.runs[ff.runs[ff.next]]
		if n.failed || n.scored == nil {
			return
		}
		s := n.scored
		n.scored = nil
		ff.next++
		cfg := fo.j.cfg
		// As reduce excludes a run (--min-steps): its Figure is not drawn.
		if cfg.MinSteps > 0 && s.Rows < cfg.MinSteps {
			s.Figure = nil
			continue
		}
		fo.f.Fold(n.name, s)
	}
}
