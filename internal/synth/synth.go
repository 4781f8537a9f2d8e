package synth

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"gocloud.dev/blob"
	"golang.org/x/sync/errgroup"

	"github.com/crlbatch/crlbatch/storage"
)

// Defaults of Config; a zero field takes its default.
const (
	DefaultSeeds     = 3
	DefaultSteps     = 600
	DefaultIntervals = 6
	// AliasSuffix names the revisit label: Labels[0]+AliasSuffix.
	AliasSuffix = "_again"
)

// The fixed shape of the generated rows.
const (
	rowTask     = "navigate"  // task of every row
	rowPolicyID = "mlp-256x2" // policy_id of every row
	rowGamma    = 0.99        // gamma of every row
	episodeMin  = 160         // episode lengths are drawn uniformly from
	episodeMax  = 240         //   [episodeMin, episodeMax] steps
	rankEvery   = 10          // effective_rank is a number every 10 steps,
	rankNullAt  = 5           //   null at step%10 == 5, absent otherwise
	wProgress   = 0.3333333333333333
	wSuccess    = 0.6666666666666667
	chunkBytes  = 256 << 10 // rows are written in chunks of about this size
	pilotRows   = 4096      // rows formatted per family when estimating TargetBytes
	cleanupTime = time.Minute
	contentType = "application/x-ndjson"
)

// DefaultFamilies and DefaultLabels are the defaults of
// Config.Families and Config.Labels.
var (
	DefaultFamilies = []string{"ppo", "sac", "ewc"}
	DefaultLabels   = []string{"calm", "gusty", "storm"}
)

// Config configures Synth. The zero value (with Out set) is the default
// sweep: 3 families × 3 seeds × 600 rows, plain JSONL.
type Config struct {
	// Out is a blob URL (s3://bucket/prefix?region=…, file:///dir, mem://)
	// or a plain local path; objects are written under it.
	Out string
	// Families are the algorithm families (algorithm_id), default ppo, sac,
	// ewc. ppo, sac and ewc have hand-set dynamics; any other name gets
	// dynamics derived from its name. A name may not contain '/'.
	Families []string
	// Seeds is the number of seeds (runs) per family, default 3.
	Seeds int
	// Steps is the number of rows per run, default 600; at least Intervals.
	Steps int
	// Labels are the regimes, default calm, gusty, storm. The schedule runs
	// through them in order, then revisits the first through the alias label
	// Labels[0]+"_again" (regime_origin Labels[0]) and cycles on:
	// calm, gusty, storm, calm_again, gusty, storm, calm_again, …
	Labels []string
	// Intervals is the number of intervals per run (≥ 2), default 6. The
	// rows are split evenly (lengths differ by at most one).
	Intervals int
	// Compression is none (default), gzip, zstd, or mixed (rotate none,
	// gzip, zstd by run).
	Compression string
	// SplitFiles splits each run across this many objects (default 1; at
	// most Steps) to exercise reassembly across objects.
	SplitFiles int
	// TargetBytes, if > 0, replaces Steps by the row count that makes the
	// whole sweep about this many bytes of JSONL (before compression).
	TargetBytes int64
	// Extras adds per-step extras to every row: obs_hash (16 hex digits),
	// logp and value. They come from a PRNG stream of their own, so the
	// other fields are the same with or without them.
	Extras bool
	// Seed seeds the PRNG; the same config gives byte-identical objects.
	Seed uint64
	// Concurrency is the number of runs generated at once; 0 means
	// GOMAXPROCS. It never changes the output.
	Concurrency int
	// Opener opens the bucket of Out (Run only); nil means
	// storage.DefaultOpener, gocloud.dev's URL mux.
	Opener storage.Opener
	// Retry retries transient failures of each object's write (the object
	// is generated again); the zero value means storage.DefaultRetry().
	Retry storage.RetryPolicy
}

// Object is one object Run or Write wrote.
type Object struct {
	Key      string // the object key relative to Out
	RunID    string // the run_id of its rows
	Rows     int    // rows (lines) in the object
	Bytes    int64  // bytes stored (after compression)
	RawBytes int64  // bytes of JSONL (before compression)
}

// Summary reports what Run or Write wrote.
type Summary struct {
	Objects  []Object // in bytewise key order
	Runs     int
	Rows     int64
	Steps    int   // rows per run (differs from Config.Steps under TargetBytes)
	Bytes    int64 // bytes stored, summed over Objects
	RawBytes int64 // bytes of JSONL, summed over Objects
}

// Run writes a synthetic skyfall sweep under cfg.Out: one run per family
// and seed, each in <family>/<run_id>.jsonl[.gz|.zst] or, with SplitFiles >
// 1, in <family>/<run_id>/part-000.jsonl[.gz|.zst], part-001…
//
// cfg.Out is parsed by storage.ParseLocation and its bucket opened by
// storage.OpenBucket through cfg.Opener, as every input and output of
// crlbatch is, and each object is written under cfg.Retry. An object is
// written through a blob.Writer whose context is cancelled before Close on
// any error, so no partial object is committed; if Run fails, it also
// removes (best effort) the objects it had already committed. Opening Out
// with the default opener needs the blob driver of its scheme to be linked
// in (cmd blank-imports them).
func Run(ctx context.Context, cfg Config) (Summary, error) {
	// Validate before touching storage, so that a usage error creates nothing.
	p, err := newPlan(cfg)
	if err != nil {
		return Summary{}, err
	}
	if cfg.Out == "" {
		return Summary{}, storage.Usagef("synth: no output given")
	}
	loc, err := storage.ParseLocation(cfg.Out, true)
	if err != nil {
		return Summary{}, fmt.Errorf("synth: %w", err)
	}
	if loc.Local && loc.Path != "" {
		return Summary{}, storage.Usagef("synth: %s is a file, not a folder", loc)
	}
	b, closeFn, err := storage.OpenBucket(ctx, cfg.Opener, loc)
	if err != nil {
		return Summary{}, fmt.Errorf("synth: %w", err)
	}
	sum, err := p.write(ctx, b, loc.Prefix, func(key string) string {
		return storage.Redact(loc.ObjectURL(loc.Prefix + key))
	})
	if cerr := closeFn(); cerr != nil && err == nil {
		err = &storage.StorageError{Op: "close", URL: loc.String(), Err: storage.RedactErr(cerr)}
	}
	if err == nil && loc.Local {
		removeStaleTemps(loc, sum.Objects)
	}
	return sum, err
}

// removeStaleTemps removes, beside each object just written to a local
// folder, the temporary files of that object a killed synth left
// (fileblob's, <name>.<hex>.tmp, written beside their final names): this
// run has written the object whole since, and a listing with a broad
// --pattern would read them. What cannot be removed stays.
func removeStaleTemps(loc storage.Location, objs []Object) {
	dir, ok := loc.LocalDir()
	if !ok {
		return
	}
	for _, o := range objs {
		p := filepath.Join(dir, filepath.FromSlash(loc.Prefix+o.Key))
		stale := regexp.MustCompile(`^` + regexp.QuoteMeta(filepath.Base(p)) + `\.[0-9a-f]+\.tmp$`)
		entries, _ := os.ReadDir(filepath.Dir(p))
		for _, e := range entries {
			if e.Type().IsRegular() && stale.MatchString(e.Name()) {
				os.Remove(filepath.Join(filepath.Dir(p), e.Name()))
			}
		}
	}
}

// Write is Run writing into an open bucket under the key prefix (empty, or
// ending in '/'); cfg.Opener is not used, and cfg.Out only names the output
// in error messages. Summary keys are relative to prefix.
func Write(ctx context.Context, b *blob.Bucket, prefix string, cfg Config) (Summary, error) {
	p, err := newPlan(cfg)
	if err != nil {
		return Summary{}, err
	}
	where := cfg.Out
	if where == "" {
		where = "bucket"
	}
	return p.write(ctx, b, prefix, func(key string) string { return storage.Redact(join(where, key)) })
}

// write generates and writes every run; name gives the (redacted) URL of a
// key for errors.
func (p *plan) write(ctx context.Context, b *blob.Bucket, prefix string, name func(key string) string) (Summary, error) {
	if err := ctx.Err(); err != nil {
		return Summary{}, fmt.Errorf("synth: %w", err)
	}
	conc := p.cfg.Concurrency
	if conc <= 0 {
		conc = runtime.GOMAXPROCS(0)
	}
	results := make([][]Object, len(p.runs)) // one slot per run
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(conc)
	for i := range p.runs {
		if gctx.Err() != nil {
			break
		}
		g.Go(func() error {
			return p.writeRun(gctx, b, prefix, name, i, &results[i])
		})
	}
	err := g.Wait()
	if err == nil && ctx.Err() != nil {
		err = fmt.Errorf("synth: %w", ctx.Err())
	}

	var sum Summary
	for _, objs := range results {
		sum.Objects = append(sum.Objects, objs...)
	}
	if err != nil {
		// Remove what was committed, so that a failed synth does not leave a
		// smaller sweep that a later score would read without complaint.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTime)
		defer cancel()
		for _, o := range sum.Objects {
			_ = b.Delete(cctx, prefix+o.Key)
		}
		return Summary{}, err
	}
	slices.SortFunc(sum.Objects, func(a, b Object) int { return strings.Compare(a.Key, b.Key) })
	sum.Runs = len(p.runs)
	sum.Steps = p.steps
	for _, o := range sum.Objects {
		sum.Rows += int64(o.Rows)
		sum.Bytes += o.Bytes
		sum.RawBytes += o.RawBytes
	}
	return sum, nil
}

// ---------------------------------------------------------------------------
// The plan: the normalized configuration, the schedule and the runs.

// regime is one regime label of the schedule.
type regime struct {
	name       string
	originJSON []byte // "null" or the quoted origin
	origin     int    // index of the origin label (itself unless an alias)
	level      float64
	collision  float64 // base collision probability per step
}

// runSpec is one run of the sweep.
type runSpec struct {
	family int
	seed   int
	runID  string
	comp   string // none, gzip or zstd
}

type plan struct {
	cfg      Config // normalized
	steps    int
	families []familyModel
	labels   []regime // cfg.Labels, then the alias
	schedule []int    // label index per interval
	bounds   []int    // interval i holds rows [bounds[i], bounds[i+1])
	runs     []runSpec
}

func newPlan(cfg Config) (*plan, error) {
	bad := func(format string, a ...any) error { return storage.Usagef("synth: "+format, a...) }
	if len(cfg.Families) == 0 {
		cfg.Families = DefaultFamilies
	}
	if len(cfg.Labels) == 0 {
		cfg.Labels = DefaultLabels
	}
	cfg.Families = slices.Clone(cfg.Families)
	cfg.Labels = slices.Clone(cfg.Labels)
	for i, f := range cfg.Families {
		switch {
		case f == "" || f == "." || f == "..":
			return nil, bad("family %d is %q", i+1, f)
		case strings.ContainsAny(f, "/\\"):
			return nil, bad("family %q contains a path separator", f)
		case !utf8.ValidString(f):
			return nil, bad("family %q is not valid UTF-8", f)
		case slices.Index(cfg.Families, f) != i:
			return nil, bad("family %q is named twice", f)
		}
	}
	alias := cfg.Labels[0] + AliasSuffix
	for i, l := range cfg.Labels {
		switch {
		case l == "":
			return nil, bad("label %d is empty", i+1)
		case !utf8.ValidString(l):
			return nil, bad("label %q is not valid UTF-8", l)
		case slices.Index(cfg.Labels, l) != i:
			return nil, bad("label %q is named twice", l)
		case l == alias:
			return nil, bad("label %q is the revisit alias of %q", l, cfg.Labels[0])
		}
	}
	switch {
	case cfg.Seeds < 0:
		return nil, bad("seeds = %d (want ≥ 1)", cfg.Seeds)
	case cfg.Seeds == 0:
		cfg.Seeds = DefaultSeeds
	}
	switch {
	case cfg.Intervals < 0 || cfg.Intervals == 1:
		return nil, bad("intervals = %d (want ≥ 2)", cfg.Intervals)
	case cfg.Intervals == 0:
		cfg.Intervals = DefaultIntervals
	}
	switch {
	case cfg.SplitFiles < 0:
		return nil, bad("split files = %d (want ≥ 1)", cfg.SplitFiles)
	case cfg.SplitFiles == 0:
		cfg.SplitFiles = 1
	}
	switch {
	case cfg.Steps < 0:
		return nil, bad("steps = %d (want ≥ %d, the intervals)", cfg.Steps, cfg.Intervals)
	case cfg.Steps == 0:
		cfg.Steps = DefaultSteps
	}
	if cfg.TargetBytes < 0 {
		return nil, bad("target bytes = %d (want ≥ 0)", cfg.TargetBytes)
	}
	switch cfg.Compression {
	case "":
		cfg.Compression = "none"
	case "none", "gzip", "zstd", "mixed":
	default:
		return nil, bad("compression %q (want none, gzip, zstd or mixed)", cfg.Compression)
	}
	if cfg.Retry == (storage.RetryPolicy{}) {
		cfg.Retry = storage.DefaultRetry()
	}

	p := &plan{cfg: cfg}
	for _, f := range cfg.Families {
		p.families = append(p.families, modelFor(f))
	}
	nl := len(cfg.Labels)
	for i, l := range cfg.Labels {
		frac := 0.0
		if nl > 1 {
			frac = float64(i) / float64(nl-1)
		}
		p.labels = append(p.labels, regime{
			name:       l,
			originJSON: []byte("null"),
			origin:     i,
			level:      0.85 - 0.40*frac,
			collision:  0.01 + 0.06*frac,
		})
	}
	first := p.labels[0]
	p.labels = append(p.labels, regime{
		name:       alias,
		originJSON: quote(first.name),
		origin:     0,
		level:      first.level,
		collision:  first.collision,
	})
	for i := range cfg.Intervals {
		p.schedule = append(p.schedule, scheduleAt(nl, i))
	}

	digits := len(strconv.Itoa(cfg.Seeds - 1))
	comps := []string{"none", "gzip", "zstd"}
	for f, fam := range cfg.Families {
		for s := range cfg.Seeds {
			c := cfg.Compression
			if c == "mixed" {
				c = comps[len(p.runs)%len(comps)]
			}
			p.runs = append(p.runs, runSpec{
				family: f,
				seed:   s,
				runID:  fmt.Sprintf("%s-s%0*d", fam, digits, s),
				comp:   c,
			})
		}
	}

	steps := cfg.Steps
	if cfg.TargetBytes > 0 {
		steps = p.stepsForTarget(cfg.TargetBytes)
	}
	if steps < cfg.Intervals {
		return nil, bad("steps = %d is fewer than the %d intervals", steps, cfg.Intervals)
	}
	if cfg.SplitFiles > steps {
		return nil, bad("split files = %d is more than the %d rows of a run", cfg.SplitFiles, steps)
	}
	p.setSteps(steps)
	return p, nil
}

// scheduleAt is the label index of interval i with n labels: the labels
// in order, then the alias (index n) in place of the first label on every
// revisit. With one label it alternates between the label and its alias.
func scheduleAt(n, i int) int {
	if n == 1 {
		return i % 2
	}
	if i < n {
		return i
	}
	if j := (i - n) % n; j != 0 {
		return j
	}
	return n
}

func (p *plan) setSteps(steps int) {
	p.steps = steps
	n := len(p.schedule)
	p.bounds = make([]int, n+1)
	for i := range p.bounds {
		p.bounds[i] = i * steps / n
	}
}

// stepsForTarget finds the rows per run that make the sweep about target
// bytes of JSONL: a few fixed-point steps over an estimate that formats a
// sample of the rows of each family's first seed.
func (p *plan) stepsForTarget(target int64) int {
	minSteps := max(p.cfg.Intervals, p.cfg.SplitFiles)
	steps := max(minSteps, p.cfg.Steps)
	for range 6 {
		p.setSteps(steps)
		est := p.estimateBytes()
		next := int(math.Round(float64(steps) * float64(target) / float64(est)))
		next = max(next, minSteps)
		if next == steps {
			break
		}
		steps = next
	}
	return steps
}

// estimateBytes estimates the JSONL bytes of the whole sweep at p.steps.
func (p *plan) estimateBytes() int64 {
	var total float64
	every := max(1, p.steps/pilotRows)
	for every > 1 && gcd(every, rankEvery) != 1 {
		every++ // a stride sharing a factor with the effective_rank cadence is biased
	}
	var buf []byte
	for f := range p.families {
		first := f * p.cfg.Seeds // the run of seed 0
		g := p.newGen(first)
		var row genRow
		var sampled, n int
		for t := range p.steps {
			g.next(&row)
			if t%every == 0 {
				buf = g.appendRow(buf[:0], &row)
				sampled += len(buf)
				n++
			}
		}
		perRun := float64(sampled) / float64(n) * float64(p.steps)
		total += perRun * float64(p.cfg.Seeds)
		// Seeds ≥ 10 print more digits in "seed" than seed 0 does.
		for s := range p.cfg.Seeds {
			total += float64(p.steps) * float64(len(strconv.Itoa(s))-1)
		}
	}
	return int64(total)
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// ---------------------------------------------------------------------------
// Family dynamics.

// familyModel is how one family behaves.
type familyModel struct {
	tauFrac   float64 // adaptation time constant, as a fraction of an interval
	start     float64 // competence right after a shift to a new regime
	retention float64 // share of competence kept until a revisit
	decay     float64 // plasticity loss: the level falls by this share over the run
	noise     float64 // per-step noise of progress
	rank0     float64 // initial effective rank
	rankDecay float64 // share of effective rank lost over the run
	collMul   float64 // scales the regimes' collision probabilities
}

// modelFor returns the hand-set dynamics of ppo, sac and ewc, and
// dynamics derived from the name of any other family.
func modelFor(name string) familyModel {
	switch name {
	case "ppo":
		return familyModel{tauFrac: 0.12, start: 0.12, retention: 0.35, decay: 0.18, noise: 0.07, rank0: 48, rankDecay: 0.25, collMul: 1.0}
	case "sac":
		return familyModel{tauFrac: 0.05, start: 0.18, retention: 0.15, decay: 0.28, noise: 0.09, rank0: 96, rankDecay: 0.35, collMul: 1.2}
	case "ewc":
		return familyModel{tauFrac: 0.20, start: 0.10, retention: 0.85, decay: 0.06, noise: 0.06, rank0: 56, rankDecay: 0.10, collMul: 0.9}
	}
	r := rand.New(rand.NewPCG(hashOf(name), 0x6a09e667f3bcc908))
	u := func(lo, hi float64) float64 { return lo + (hi-lo)*r.Float64() }
	return familyModel{
		tauFrac:   u(0.05, 0.25),
		start:     u(0.08, 0.2),
		retention: u(0.1, 0.9),
		decay:     u(0.04, 0.3),
		noise:     u(0.05, 0.1),
		rank0:     math.Round(u(32, 128)),
		rankDecay: u(0.05, 0.4),
		collMul:   u(0.8, 1.3),
	}
}

func hashOf(parts ...string) uint64 {
	h := fnv.New64a()
	for _, s := range parts {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return h.Sum64()
}

// ---------------------------------------------------------------------------
// Row generation.

// genRow is one generated row before formatting.
type genRow struct {
	step      int
	label     int
	progress  float64
	collision float64
	success   bool
	invalid   bool
	rankKind  uint8 // 0 absent, 1 null, 2 number
	rank      float64
	reward    float64
	obsHash   uint64
	logp      float64
	value     float64
}

// generator generates the rows of one run, in order.
type generator struct {
	p    *plan
	fam  familyModel
	rng  *rand.Rand // every field but the extras
	xrng *rand.Rand // the extras

	levelOff float64 // per-seed offset of every regime level
	tauMul   float64 // per-seed factor on the adaptation time constant

	t           int // row index
	interval    int
	c0, tau     float64 // the current interval's starting competence and time constant
	comp        float64 // competence at the last row
	endComp     []float64
	episodeLeft int

	prefix []byte   // the identity fields and `"step":`
	labels [][]byte // per label: `,"regime_id":…,"regime_origin":…,"components":{"progress":`
}

func (p *plan) newGen(run int) *generator {
	rs := p.runs[run]
	famName := p.cfg.Families[rs.family]
	h := hashOf(famName, strconv.Itoa(rs.seed))
	g := &generator{
		p:        p,
		fam:      p.families[rs.family],
		rng:      rand.New(rand.NewPCG(p.cfg.Seed, h)),
		xrng:     rand.New(rand.NewPCG(p.cfg.Seed^0x9e3779b97f4a7c15, h^0xbb67ae8584caa73b)),
		interval: -1,
		endComp:  make([]float64, len(p.labels)),
	}
	for i := range g.endComp {
		g.endComp[i] = -1
	}
	g.levelOff = 0.02 * g.rng.NormFloat64()
	g.tauMul = math.Exp(0.15 * g.rng.NormFloat64())
	g.episodeLeft = g.episodeLen()

	var b []byte
	b = append(b, `{"run_id":`...)
	b = append(b, quote(rs.runID)...)
	b = append(b, `,"seed":`...)
	b = strconv.AppendInt(b, int64(rs.seed), 10)
	b = append(b, `,"algorithm_id":`...)
	b = append(b, quote(famName)...)
	b = append(b, `,"policy_id":`...)
	b = append(b, quote(rowPolicyID)...)
	b = append(b, `,"task":`...)
	b = append(b, quote(rowTask)...)
	b = append(b, `,"step":`...)
	g.prefix = b
	for _, l := range p.labels {
		var lb []byte
		lb = append(lb, `,"regime_id":`...)
		lb = append(lb, quote(l.name)...)
		lb = append(lb, `,"regime_origin":`...)
		lb = append(lb, l.originJSON...)
		lb = append(lb, `,"components":{"progress":`...)
		g.labels = append(g.labels, lb)
	}
	return g
}

func (g *generator) episodeLen() int {
	return episodeMin + g.rng.IntN(episodeMax-episodeMin+1)
}

// next generates the next row into r.
func (g *generator) next(r *genRow) {
	p, fam, rng := g.p, g.fam, g.rng
	t := g.t
	g.t++
	if g.interval < 0 || t == p.bounds[g.interval+1] {
		if g.interval >= 0 { // remember how far the left regime got
			g.endComp[p.labels[p.schedule[g.interval]].origin] = g.comp
		}
		g.interval++
		o := p.labels[p.schedule[g.interval]].origin
		// A new regime starts near the family's zero-shot competence; a revisit
		// starts from what the family retained of its last encounter.
		g.c0 = fam.start * (1 + 0.1*rng.NormFloat64())
		if prev := g.endComp[o]; prev >= 0 {
			g.c0 = max(g.c0, fam.retention*prev)
		}
		g.c0 = min(max(g.c0, 0), 1)
		n := p.bounds[g.interval+1] - p.bounds[g.interval]
		g.tau = max(1, fam.tauFrac*g.tauMul*float64(n))
	}
	li := p.schedule[g.interval]
	lab := &p.labels[li]
	elapsed := float64(t) / float64(p.steps)
	tau := float64(t - p.bounds[g.interval])
	c := g.c0 + (1-g.c0)*(1-math.Exp(-tau/g.tau))
	g.comp = c
	level := min(max(lab.level+g.levelOff, 0.05), 1) * (1 - fam.decay*elapsed)
	mean := level * c

	*r = genRow{step: t, label: li}
	r.invalid = rng.Float64() < 0.004+0.03*(1-c)
	if !r.invalid {
		r.progress = min(max(mean+fam.noise*rng.NormFloat64(), 0), 1)
	}
	if rng.Float64() < lab.collision*fam.collMul*(1-0.7*c) {
		u := rng.Float64()
		r.collision = -min(0.1+0.6*u*u, 1)
	}
	g.episodeLeft--
	if g.episodeLeft == 0 {
		r.success = rng.Float64() < min(1.1*mean, 1)
		g.episodeLeft = g.episodeLen()
	}
	switch t % rankEvery {
	case 0:
		r.rankKind = 2
		r.rank = max(1, fam.rank0*(1-fam.rankDecay*elapsed)*(0.92+0.08*c)+0.5*rng.NormFloat64())
	case rankNullAt:
		r.rankKind = 1
	}
	success := 0.0
	if r.success {
		success = 1
	}
	r.reward = wProgress*r.progress + r.collision + wSuccess*success

	if g.p.cfg.Extras {
		x := g.xrng
		r.obsHash = x.Uint64()
		r.logp = -(0.05 + 1.2*(1-c)*x.Float64() + 0.2*math.Abs(x.NormFloat64()))
		r.value = (wProgress*mean+wSuccess*mean/200)/(1-rowGamma) + 0.5*x.NormFloat64()
	}
}

// appendRow formats r as one JSONL line (with its '\n').
func (g *generator) appendRow(b []byte, r *genRow) []byte {
	b = append(b, g.prefix...)
	b = strconv.AppendInt(b, int64(r.step), 10)
	b = append(b, `,"reward":`...)
	b = appendFloat(b, r.reward)
	b = append(b, g.labels[r.label]...)
	b = appendFloat(b, r.progress)
	b = append(b, `,"collision":`...)
	b = appendFloat(b, r.collision)
	if r.success {
		b = append(b, `,"success":1},"invalid_action":`...)
	} else {
		b = append(b, `,"success":0},"invalid_action":`...)
	}
	b = strconv.AppendBool(b, r.invalid)
	switch r.rankKind {
	case 1:
		b = append(b, `,"effective_rank":null`...)
	case 2:
		b = append(b, `,"effective_rank":`...)
		b = appendFloat(b, r.rank)
	}
	b = append(b, `,"gamma":`...)
	b = appendFloat(b, rowGamma)
	if g.p.cfg.Extras {
		const hex = "0123456789abcdef"
		b = append(b, `,"obs_hash":"`...)
		for shift := 60; shift >= 0; shift -= 4 {
			b = append(b, hex[(r.obsHash>>uint(shift))&0xf])
		}
		b = append(b, `","logp":`...)
		b = appendFloat(b, r.logp)
		b = append(b, `,"value":`...)
		b = appendFloat(b, r.value)
	}
	return append(b, "}\n"...)
}

// appendFloat appends x in shortest round-trip form ('g', -1), writing
// 0 for both zeros.
func appendFloat(b []byte, x float64) []byte {
	if x == 0 {
		return append(b, '0')
	}
	return strconv.AppendFloat(b, x, 'g', -1, 64)
}

func quote(s string) []byte {
	q, err := json.Marshal(s)
	if err != nil { // a string always marshals
		panic(err)
	}
	return q
}

// ---------------------------------------------------------------------------
// Writing.

// keys returns the object keys of a run (relative to the prefix).
func (p *plan) keys(run int) []string {
	rs := p.runs[run]
	ext := ".jsonl"
	switch rs.comp {
	case "gzip":
		ext += ".gz"
	case "zstd":
		ext += ".zst"
	}
	fam := p.cfg.Families[rs.family]
	n := p.cfg.SplitFiles
	if n == 1 {
		return []string{fam + "/" + rs.runID + ext}
	}
	width := max(3, len(strconv.Itoa(n-1)))
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("%s/%s/part-%0*d%s", fam, rs.runID, width, i, ext)
	}
	return keys
}

// writeRun writes the objects of one run, appending each committed one to
// *out. Each object is written under the retry policy; an attempt that
// failed after generating rows starts the run's generator again and skips
// to the object's first row, so a retried object has the same bytes.
func (p *plan) writeRun(ctx context.Context, b *blob.Bucket, prefix string, name func(string) string, run int, out *[]Object) error {
	g := p.newGen(run)
	keys := p.keys(run)
	var row genRow
	buf := make([]byte, 0, chunkBytes+4096)
	for part, key := range keys {
		lo, hi := part*p.steps/len(keys), (part+1)*p.steps/len(keys)
		var obj Object
		err := p.cfg.Retry.Retry(ctx, func(actx context.Context, touch func()) error {
			if g.t != lo { // a failed attempt got under way: generate the object again
				g = p.newGen(run)
				for g.t < lo {
					g.next(&row)
				}
			}
			buf = buf[:0]
			var err error
			obj, err = p.writeObject(actx, b, prefix+key, p.runs[run].comp, func(w io.Writer) (int64, error) {
				var raw int64
				for range hi - lo {
					g.next(&row)
					buf = g.appendRow(buf, &row)
					if len(buf) >= chunkBytes {
						if err := actx.Err(); err != nil {
							return raw, err
						}
						if _, err := w.Write(buf); err != nil {
							return raw, err
						}
						touch()
						raw += int64(len(buf))
						buf = buf[:0]
					}
				}
				if len(buf) > 0 {
					if _, err := w.Write(buf); err != nil {
						return raw, err
					}
					touch()
					raw += int64(len(buf))
					buf = buf[:0]
				}
				return raw, actx.Err()
			})
			return err
		})
		if err != nil {
			url := name(key)
			if ctx.Err() != nil {
				return fmt.Errorf("synth: write %s: %w", url, ctx.Err())
			}
			return &storage.StorageError{Op: "write", URL: url, Err: storage.RedactErr(err)}
		}
		obj.Key, obj.RunID, obj.Rows = key, p.runs[run].runID, hi-lo
		*out = append(*out, obj)
	}
	return nil
}

// join names a key under where (the output as given) in messages.
func join(where, key string) string {
	if i := strings.IndexByte(where, '?'); i >= 0 {
		return strings.TrimRight(where[:i], "/") + "/" + key + where[i:]
	}
	return strings.TrimRight(where, "/") + "/" + key
}

// counter counts the bytes written through it.
type counter struct {
	w io.Writer
	n int64
}

func (c *counter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
}

// writeObject commits one object whose JSONL body fill writes, compressed as
// comp. On any error the object is not committed (storage.WriteObject).
func (p *plan) writeObject(ctx context.Context, b *blob.Bucket, key, comp string, fill func(io.Writer) (int64, error)) (Object, error) {
	if err := ctx.Err(); err != nil {
		return Object{}, err
	}
	ctype := contentType
	switch comp {
	case "gzip":
		ctype = "application/gzip"
	case "zstd":
		ctype = "application/zstd"
	}
	var cw *counter
	var raw int64
	err := storage.WriteObject(ctx, b, key, &blob.WriterOptions{ContentType: ctype}, func(bw *blob.Writer) error {
		cw = &counter{w: bw}
		var body io.WriteCloser
		var err error
		switch comp {
		case "gzip":
			body, err = gzip.NewWriterLevel(cw, gzip.DefaultCompression)
		case "zstd":
			body, err = zstd.NewWriter(cw, zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(zstd.SpeedDefault))
		}
		if err != nil {
			return err
		}
		if body == nil {
			raw, err = fill(cw)
		} else {
			raw, err = fill(body)
			if err == nil {
				err = body.Close() // flushes the compressor, never closes bw
			}
		}
		if err == nil {
			err = ctx.Err()
		}
		return err
	})
	if err != nil {
		return Object{}, err
	}
	return Object{Bytes: cw.n, RawBytes: raw}, nil
}
