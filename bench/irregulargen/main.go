// Command irregulargen writes the "irregular" benchmark sweep of
// bench/compare.sh (issue 16): skyfall rows (docs/trace-format.md) shaped the
// way a Python training loop logs them with json.dumps, not the regular rows
// of `crlbatch synth`:
//
//   - key order varies from row to row: the groups of fields (identity,
//     the step's own fields, components, flags, training statistics,
//     evaluation, episode end) come in a different order on about half of
//     the rows, and the keys within the components and the training
//     statistics are shuffled;
//   - optional keys on a share of rows: effective_rank every 25th row (now
//     and then null), invalid_action on 70 %, regime_origin on the rows of a
//     recurrence (and null on some others), the episode-end component
//     success and the episode fields at the end of each episode (50–400
//     steps), evaluation fields every 500 steps;
//   - json.dumps's separators (", " and ": "), its escapes (non-ASCII as
//     \uXXXX) and its floats: Python's repr, the shortest round-trip digits
//     with "1e-05", "1.0", "1e+16" (see pyFloat); rewards that are
//     integers on some rows (0, -1);
//   - integers of varying width (step, frames, updates, episode numbers,
//     wall-clock nanoseconds);
//   - components whose keys change across intervals (wind_drag in windy
//     intervals, slip in icy ones);
//   - a few long string fields: a run's config (about 1.5 KB) on its first
//     row, an info string on every episode end, a video path with each
//     evaluation.
//
// Every row is valid for skyfall under PROTOCOLS 1.1; crlbatch validate and
// score accept the sweep. Runs are one object each, named like synth's
// (FAMILY/FAMILY-sSEED.jsonl, .jsonl.zst with -compression zstd), so that
// compare.sh treats both shapes alike. The same flags always write the same
// bytes.
//
//	go run ./bench/irregulargen -out DIR -target-bytes 1000000000 [-compression zstd]
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"unicode/utf16"

	"github.com/klauspost/compress/zstd"
)

func main() {
	out := flag.String("out", "", "folder to write (created; must not exist)")
	target := flag.Int64("target-bytes", 100_000_000, "about this many bytes of JSONL in all (split evenly over the runs)")
	families := flag.String("families", "ppo,sac,ewc,dqn", "algorithm families, comma-separated")
	seeds := flag.Int("seeds", 5, "runs per family")
	seed := flag.Uint64("seed", 1, "seed of the generator")
	compression := flag.String("compression", "none", "none or zstd")
	flag.Parse()
	fams := strings.Split(*families, ",")
	if err := gen(*out, *target, fams, *seeds, *seed, *compression); err != nil {
		fmt.Fprintln(os.Stderr, "irregulargen:", err)
		os.Exit(1)
	}
}

func gen(out string, target int64, fams []string, seeds int, seed uint64, compression string) error {
	switch {
	case out == "":
		return fmt.Errorf("-out is required")
	case target < 1 || seeds < 1 || len(fams) == 0:
		return fmt.Errorf("-target-bytes, -seeds and -families must be positive")
	case compression != "none" && compression != "zstd":
		return fmt.Errorf("-compression %q: want none or zstd", compression)
	}
	if err := os.Mkdir(out, 0o755); err != nil {
		return err
	}
	runs := len(fams) * seeds
	per := target / int64(runs)
	errs := make([]error, runs)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2)
	for r := range runs {
		fam, s := fams[r/seeds], r%seeds
		if err := os.MkdirAll(filepath.Join(out, fam), 0o755); err != nil {
			return err
		}
		name := filepath.Join(out, fam, fmt.Sprintf("%s-s%d.jsonl", fam, s))
		if compression == "zstd" {
			name += ".zst"
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			errs[r] = writeRun(name, compression, per, fam, s, seed)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func writeRun(name, compression string, bytes int64, fam string, s int, seed uint64) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	var w io.Writer = f
	var zw *zstd.Encoder
	if compression == "zstd" {
		if zw, err = zstd.NewWriter(f, zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(zstd.SpeedDefault)); err != nil {
			f.Close()
			return err
		}
		w = zw
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	g := newRun(fam, s, seed, bytes)
	var line []byte
	for written := int64(0); written < bytes; {
		line = g.row(line[:0])
		written += int64(len(line))
		if _, err := bw.Write(line); err != nil {
			f.Close()
			return err
		}
	}
	err = bw.Flush()
	if zw != nil && err == nil {
		err = zw.Close()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// schedule: the labels of a run's six intervals; the fourth is a recurrence
// of the first (regime_origin "calm").
var schedule = []struct{ label, origin, comp string }{
	{"calm", "", ""}, {"windy", "", "wind_drag"}, {"icy", "", "slip"},
	{"calm-again", "calm", ""}, {"windy", "", "wind_drag"}, {"storm", "", "wind_drag"},
}

type run struct {
	rng                      *rand.Rand
	fam, runID, policy, task string
	seed, step, steps        int
	episode, episodeStart    int
	episodeEnd               int
	episodeReturn            float64
	lr, wallTime             float64
	skill, forget            float64
	config, host, commit     string
	groups                   []func([]byte) []byte
	order                    []int
	comps, train             []field
}

type field struct {
	key string
	val func([]byte) []byte
}

const approxRowBytes = 600 // for the interval lengths only; the run stops at its bytes

func newRun(fam string, s int, seed uint64, bytes int64) *run {
	h := uint64(0)
	for _, c := range fam {
		h = h*131 + uint64(c)
	}
	g := &run{
		rng: rand.New(rand.NewPCG(seed, h*1000+uint64(s))), fam: fam, seed: s,
		runID: fmt.Sprintf("%s-s%d", fam, s), policy: "mlp-256x2", task: "navigate",
		steps: max(int(bytes/approxRowBytes), len(schedule)),
		lr:    3e-4, wallTime: 1733040000 + float64(s)*3600.25,
	}
	g.skill = 0.2 + 0.1*g.rng.Float64()
	g.forget = 0.5 + 0.3*g.rng.Float64()
	g.host = fmt.Sprintf("gpu-node-%02d.cluster.internal", g.rng.IntN(64))
	g.commit = fmt.Sprintf("%016x%016x%08x", g.rng.Uint64(), g.rng.Uint64(), g.rng.Uint32())
	var c strings.Builder
	fmt.Fprintf(&c, `{"algo": %q, "env": "Skyfall-Navigate-v3", "seed": %d, "total_steps": %d, `, fam, s, g.steps)
	for i := range 40 {
		fmt.Fprintf(&c, `"hp_%02d": %s, `, i, pyFloat(math.Round(g.rng.Float64()*1e6)/1e6))
	}
	c.WriteString(`"notes": "ablation – sweep für Tabelle 3 (κ=0.5)"}`)
	g.config = c.String()
	g.episodeEnd = g.rng.IntN(350) + 50
	return g
}

// row appends the next row of the run, json.dumps-style, and a newline.
func (g *run) row(b []byte) []byte {
	rng := g.rng
	t := g.step
	g.step++
	iv := min(t*len(schedule)/g.steps, len(schedule)-1)
	sc := schedule[iv]
	pos := float64(t-iv*g.steps/len(schedule)) / float64(g.steps/len(schedule)+1)
	progress := g.skill + (1-g.skill)*pos*g.forget + 0.05*rng.NormFloat64()
	collided := rng.IntN(40) == 0
	episodeEnd := t == g.episodeEnd
	success := episodeEnd && rng.IntN(3) > 0
	var reward any
	switch {
	case collided:
		reward = -1 // Python int
	case rng.IntN(50) == 0:
		reward = 0 // Python int
	default:
		r := progress / 3
		if success {
			r += 2.0 / 3
		}
		if rng.IntN(20) == 0 {
			r = math.Round(r*100) / 100 // a rounded float: "0.25", "1.0"
		}
		reward = r
	}
	if f, ok := reward.(float64); ok {
		g.episodeReturn += f
	} else {
		g.episodeReturn += float64(reward.(int))
	}
	g.wallTime += 0.004 + 0.002*rng.Float64()
	g.lr = 3e-4 * (1 - float64(t)/float64(g.steps+1))

	// The groups of fields, each appended as `"key": value, ` pairs.
	identity := func(b []byte) []byte {
		b = kvStr(b, "run_id", g.runID)
		b = kvInt(b, "seed", int64(g.seed))
		b = kvStr(b, "algorithm_id", g.fam)
		b = kvStr(b, "policy_id", g.policy)
		return kvStr(b, "task", g.task)
	}
	core := func(b []byte) []byte {
		b = kvInt(b, "step", int64(t))
		b = kvAny(b, "reward", reward)
		b = kvStr(b, "regime_id", sc.label)
		if sc.origin != "" {
			b = kvStr(b, "regime_origin", sc.origin)
		} else if rng.IntN(3) == 0 {
			b = kvNull(b, "regime_origin")
		}
		return kvFloat(b, "gamma", 0.99)
	}
	comps := func(b []byte) []byte {
		g.comps = g.comps[:0]
		g.comps = append(g.comps, field{"progress", floatV(progress)})
		if collided {
			g.comps = append(g.comps, field{"collision", floatV(-1.0)})
		} else {
			g.comps = append(g.comps, field{"collision", intV(0)})
		}
		if sc.comp != "" {
			g.comps = append(g.comps, field{sc.comp, floatV(-0.01 * rng.Float64())})
		}
		if episodeEnd {
			if success {
				g.comps = append(g.comps, field{"success", intV(1)})
			} else {
				g.comps = append(g.comps, field{"success", floatV(0.0)})
			}
		}
		shuffle(rng, g.comps)
		b = key(b, "components")
		b = appendObject(b, g.comps)
		return append(b, ", "...)
	}
	flags := func(b []byte) []byte {
		if rng.IntN(10) < 7 {
			b = kvBool(b, "invalid_action", rng.IntN(100) == 0)
		}
		if t%25 == 0 {
			if rng.IntN(20) == 0 {
				b = kvNull(b, "effective_rank")
			} else {
				b = kvFloat(b, "effective_rank", 40+8*rng.Float64()-float64(t)/float64(g.steps))
			}
		}
		return b
	}
	train := func(b []byte) []byte {
		g.train = g.train[:0]
		g.train = append(g.train,
			field{"logp", floatV(-rng.ExpFloat64())},
			field{"value", floatV(3 * rng.Float64())},
			field{"entropy", floatV(1.2 - 0.5*float64(t)/float64(g.steps) + 0.01*rng.NormFloat64())},
			field{"frames", intV(int64(t) * 64)},
			field{"lr", floatV(g.lr)},
			field{"grad_norm", floatV(math.Pow(10, -8+9*rng.Float64()))},
			field{"wall_time", floatV(g.wallTime)},
		)
		if t%128 == 0 {
			g.train = append(g.train, field{"updates", intV(int64(t / 128))},
				field{"time_ns", intV(int64(g.wallTime * 1e9))})
		}
		shuffle(rng, g.train)
		for _, f := range g.train {
			b = key(b, f.key)
			b = f.val(b)
			b = append(b, ", "...)
		}
		return b
	}
	var eval func([]byte) []byte
	if t > 0 && t%500 == 0 {
		eval = func(b []byte) []byte {
			b = kvFloat(b, "eval/return", 10*progress+rng.NormFloat64())
			b = kvFloat(b, "eval/success_rate", float64(rng.IntN(11))/10)
			b = kvInt(b, "eval/episodes", 10)
			return kvStr(b, "eval/video", fmt.Sprintf("/scratch/%s/videos/%s/%s/step_%09d/episode_%03d-%03d.mp4",
				g.host, g.runID, sc.label, t, 0, 9))
		}
	}
	var end func([]byte) []byte
	if episodeEnd {
		n, start, ret := g.episode, g.episodeStart, g.episodeReturn
		end = func(b []byte) []byte {
			b = kvInt(b, "episode", int64(n))
			b = kvInt(b, "episode_len", int64(t-start+1))
			b = kvFloat(b, "episode_return", ret)
			return kvStr(b, "info", fmt.Sprintf("episode %d ended: %s after %d steps in regime %q; "+
				"TimeLimit.truncated=%v, terminal_observation shape (84, 84, 3), last action [%s, %s] — résumé ✓",
				n, map[bool]string{true: "goal reached", false: "time limit"}[success], t-start+1, sc.label,
				!success, pyFloat(rng.NormFloat64()), pyFloat(rng.NormFloat64())))
		}
		g.episode++
		g.episodeStart = t + 1
		g.episodeReturn = 0
		g.episodeEnd = t + 50 + rng.IntN(350)
	}
	meta := func(b []byte) []byte {
		b = kvStr(b, "host", g.host)
		b = kvStr(b, "git_commit", g.commit)
		if t == 0 {
			b = kvStr(b, "config", g.config)
		}
		return b
	}

	g.groups = append(g.groups[:0], identity, core, comps, flags, train, meta)
	if eval != nil {
		g.groups = append(g.groups, eval)
	}
	if end != nil {
		g.groups = append(g.groups, end)
	}
	g.order = g.order[:0]
	for i := range g.groups {
		g.order = append(g.order, i)
	}
	if rng.IntN(2) == 0 {
		rng.Shuffle(len(g.order), func(i, j int) { g.order[i], g.order[j] = g.order[j], g.order[i] })
	}
	b = append(b, '{')
	for _, i := range g.order {
		b = g.groups[i](b)
	}
	b = b[:len(b)-2] // the last ", "
	return append(b, "}\n"...)
}

func shuffle(rng *rand.Rand, fs []field) {
	rng.Shuffle(len(fs), func(i, j int) { fs[i], fs[j] = fs[j], fs[i] })
}

func appendObject(b []byte, fs []field) []byte {
	b = append(b, '{')
	for i, f := range fs {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = key(b, f.key)
		b = f.val(b)
	}
	return append(b, '}')
}

func floatV(f float64) func([]byte) []byte {
	return func(b []byte) []byte { return appendPyFloat(b, f) }
}

func intV(n int64) func([]byte) []byte {
	return func(b []byte) []byte { return strconv.AppendInt(b, n, 10) }
}

func key(b []byte, k string) []byte {
	b = appendPyString(b, k)
	return append(b, ": "...)
}

func kvStr(b []byte, k, v string) []byte {
	b = key(b, k)
	b = appendPyString(b, v)
	return append(b, ", "...)
}

func kvInt(b []byte, k string, v int64) []byte {
	b = key(b, k)
	b = strconv.AppendInt(b, v, 10)
	return append(b, ", "...)
}

func kvFloat(b []byte, k string, v float64) []byte {
	b = key(b, k)
	b = appendPyFloat(b, v)
	return append(b, ", "...)
}

func kvAny(b []byte, k string, v any) []byte {
	switch v := v.(type) {
	case int:
		return kvInt(b, k, int64(v))
	case float64:
		return kvFloat(b, k, v)
	}
	panic(fmt.Sprintf("kvAny: %T", v))
}

func kvBool(b []byte, k string, v bool) []byte {
	b = key(b, k)
	b = strconv.AppendBool(b, v)
	return append(b, ", "...)
}

func kvNull(b []byte, k string) []byte {
	b = key(b, k)
	return append(b, "null, "...)
}

// pyFloat is Python's repr of a finite float (what json.dumps prints): the
// shortest digits that round-trip, in positional notation when the decimal
// exponent is from -4 to 15 (with ".0" when there is no fraction), else as
// d.ddde±XX with at least two exponent digits.
func pyFloat(f float64) string { return string(appendPyFloat(nil, f)) }

func appendPyFloat(b []byte, f float64) []byte {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		panic("irregulargen: json.dumps would print a non-JSON number")
	}
	var tmp [32]byte
	e := strconv.AppendFloat(tmp[:0], f, 'e', -1, 64) // [-]d[.ddd]e±XX
	neg := e[0] == '-'
	if neg {
		e = e[1:]
		b = append(b, '-')
	}
	ei := 0
	for e[ei] != 'e' {
		ei++
	}
	exp, _ := strconv.Atoi(string(e[ei+1:]))
	var digits []byte
	digits = append(digits, e[0])
	if ei > 1 {
		digits = append(digits, e[2:ei]...)
	}
	decpt := exp + 1 // value = 0.DIGITS × 10^decpt
	if decpt <= -4 || decpt > 16 {
		b = append(b, digits[0])
		if len(digits) > 1 {
			b = append(b, '.')
			b = append(b, digits[1:]...)
		}
		b = append(b, 'e')
		if exp < 0 {
			b = append(b, '-')
			exp = -exp
		} else {
			b = append(b, '+')
		}
		if exp < 10 {
			b = append(b, '0')
		}
		return strconv.AppendInt(b, int64(exp), 10)
	}
	switch {
	case decpt <= 0:
		b = append(b, "0."...)
		for range -decpt {
			b = append(b, '0')
		}
		return append(b, digits...)
	case decpt >= len(digits):
		b = append(b, digits...)
		for range decpt - len(digits) {
			b = append(b, '0')
		}
		return append(b, ".0"...)
	default:
		b = append(b, digits[:decpt]...)
		b = append(b, '.')
		return append(b, digits[decpt:]...)
	}
}

// appendPyString appends s as json.dumps quotes it (ensure_ascii): the
// escapes \" \\ \n \r \t \b \f, other control characters and everything
// beyond ASCII as \uXXXX (UTF-16, surrogate pairs past U+FFFF).
func appendPyString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for _, r := range s {
		switch {
		case r == '"':
			b = append(b, `\"`...)
		case r == '\\':
			b = append(b, `\\`...)
		case r == '\n':
			b = append(b, `\n`...)
		case r == '\r':
			b = append(b, `\r`...)
		case r == '\t':
			b = append(b, `\t`...)
		case r == '\b':
			b = append(b, `\b`...)
		case r == '\f':
			b = append(b, `\f`...)
		case r < 0x20 || r > 0x7e:
			units := []rune{r}
			if r > 0xffff {
				r1, r2 := utf16.EncodeRune(r)
				units = []rune{r1, r2}
			}
			for _, u := range units {
				b = append(b, '\\', 'u', hex[u>>12&15], hex[u>>8&15], hex[u>>4&15], hex[u&15])
			}
		default:
			b = append(b, byte(r))
		}
	}
	return append(b, '"')
}
