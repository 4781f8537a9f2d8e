// Command scalegen writes a skyfall sweep of a chosen shape for `make
// bench-scale`: how many runs, objects, rows per run and distinct labels per
// run, each set on its own so that one dimension can grow while the others
// stay put. It is not `crlbatch synth` (whose runs are one object each, with a
// fixed number of labels); the rows are the same fields synth writes.
//
//	go run ./bench/scalegen -out DIR -runs 100 -rows 200 -labels 4 -objects 100
//
// Runs are spread over the objects: with fewer objects than runs, object o
// holds runs o, o+objects, …; with more objects than runs, each run is split
// into objects/runs parts of consecutive steps, one part per object. With
// -parts P, each run is split into P parts of consecutive steps whatever
// the number of objects, and part k of the runs × P (run k/P, part k mod P)
// goes to object k mod objects, so that parts per run grow while the objects
// stay put. Runs are dealt to -families families round-robin: ppo, sac, ewc,
// dqn, a2c, td3, ddpg, trpo, then (past eight) ppo8, sac9, …, so that the
// first family is always ppo, the baseline of bench/scale.sh. Run r's
// interval i (rows/intervals rows each) carries label "L<i mod labels>", so a
// run with as many intervals as labels visits every label once. The same
// flags always write the same bytes.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
)

func main() {
	out := flag.String("out", "", "folder to write (created; must not exist)")
	runs := flag.Int("runs", 100, "runs")
	rows := flag.Int("rows", 200, "rows per run")
	labels := flag.Int("labels", 4, "distinct regime_id values per run")
	intervals := flag.Int("intervals", 0, "intervals per run (default: labels)")
	objects := flag.Int("objects", 0, "objects (default: runs); a multiple or a divisor of runs")
	families := flag.Int("families", 4, "algorithm families (runs are dealt round-robin)")
	parts := flag.Int("parts", 0, "parts per run, dealt round-robin to the objects (default: objects/runs, one object each)")
	flag.Parse()
	if *objects == 0 {
		*objects = *runs
	}
	if *intervals == 0 {
		*intervals = *labels
	}
	if err := gen(*out, *runs, *rows, *labels, *intervals, *objects, *families, *parts); err != nil {
		fmt.Fprintln(os.Stderr, "scalegen:", err)
		os.Exit(1)
	}
}

func gen(out string, runs, rows, labels, intervals, objects, families, parts int) error {
	switch {
	case out == "":
		return fmt.Errorf("-out is required")
	case runs < 1 || rows < 1 || labels < 1 || objects < 1 || families < 1:
		return fmt.Errorf("-runs, -rows, -labels, -objects and -families must be positive")
	case intervals < labels || intervals > rows:
		return fmt.Errorf("-intervals must be between -labels and -rows")
	case parts < 0 || parts > rows:
		return fmt.Errorf("-parts must be between 1 and -rows")
	case parts == 0 && (objects > runs && objects%runs != 0 || objects < runs && runs%objects != 0):
		return fmt.Errorf("-objects must be a multiple or a divisor of -runs")
	}
	if err := os.Mkdir(out, 0o755); err != nil {
		return err
	}
	if parts != 0 {
		return genParts(out, runs, rows, labels, intervals, objects, families, parts)
	}
	parts = max(1, objects/runs) // objects per run
	for o := range objects {
		f, err := os.Create(filepath.Join(out, fmt.Sprintf("o%06d.jsonl", o)))
		if err != nil {
			return err
		}
		w := bufio.NewWriterSize(f, 1<<20)
		if parts > 1 {
			r, p := o/parts, o%parts
			writeRows(w, r, families, rows, labels, intervals, p*rows/parts, (p+1)*rows/parts)
		} else {
			for r := o; r < runs; r += objects {
				writeRows(w, r, families, rows, labels, intervals, 0, rows)
			}
		}
		if err := w.Flush(); err != nil {
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	return nil
}

// genParts writes the -parts layout: part k of runs × parts to object
// k mod objects, the parts of an object in the order of k.
func genParts(out string, runs, rows, labels, intervals, objects, families, parts int) error {
	for o := range objects {
		f, err := os.Create(filepath.Join(out, fmt.Sprintf("o%06d.jsonl", o)))
		if err != nil {
			return err
		}
		w := bufio.NewWriterSize(f, 1<<20)
		for k := o; k < runs*parts; k += objects {
			r, p := k/parts, k%parts
			writeRows(w, r, families, rows, labels, intervals, p*rows/parts, (p+1)*rows/parts)
		}
		if err := w.Flush(); err != nil {
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	return nil
}

var familyNames = []string{"ppo", "sac", "ewc", "dqn", "a2c", "td3", "ddpg", "trpo"}

// writeRows writes steps lo:hi of run r.
func writeRows(w *bufio.Writer, r, families, rows, labels, intervals, lo, hi int) {
	k := r % families
	fam := familyNames[k%len(familyNames)]
	if k >= len(familyNames) {
		fam += strconv.Itoa(k)
	}
	seed := r / families
	rng := rand.New(rand.NewPCG(uint64(r), uint64(lo)))
	var b []byte
	for s := lo; s < hi; s++ {
		iv := s * intervals / rows
		reward := 0.3 + 0.5*float64(s-iv*rows/intervals)/float64(rows/intervals+1) + 0.1*rng.Float64()
		b = b[:0]
		b = append(b, `{"run_id":"`...)
		b = append(b, fam...)
		b = append(b, "-s"...)
		b = strconv.AppendInt(b, int64(seed), 10)
		b = append(b, `","seed":`...)
		b = strconv.AppendInt(b, int64(seed), 10)
		b = append(b, `,"algorithm_id":"`...)
		b = append(b, fam...)
		b = append(b, `","policy_id":"mlp","task":"navigate","step":`...)
		b = strconv.AppendInt(b, int64(s), 10)
		b = append(b, `,"reward":`...)
		b = strconv.AppendFloat(b, reward, 'g', -1, 64)
		b = append(b, `,"regime_id":"L`...)
		b = strconv.AppendInt(b, int64(iv%labels), 10)
		b = append(b, `","components":{"progress":`...)
		b = strconv.AppendFloat(b, reward*1.5, 'g', -1, 64)
		b = append(b, `,"collision":0,"success":0},"invalid_action":false,"gamma":0.99}`...)
		b = append(b, '\n')
		w.Write(b)
	}
}
