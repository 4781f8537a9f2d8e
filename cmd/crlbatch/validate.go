package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/crlbatch/crlbatch/pipeline"
	"github.com/crlbatch/crlbatch/scoring"
)

// shownProblems is how many problems validate prints without
// --all-problems; the counts always cover them all.
const shownProblems = 100

func validateCommand() *cli.Command {
	return &cli.Command{
		Name:  "validate",
		Usage: "read every object and assemble runs, report every problem, write nothing",
		Description: "validate reads INPUT as score would (same protocol, patterns and limits) and lists every\n" +
			"problem in one sweep: every bad row of every object, every object that fails as a whole\n" +
			"(corrupt or truncated stream, a limit), every run-key conflict and, under safecrl, contilab\n" +
			"and skillshift, every run whose rows contradict each other; then counts. It exits 1 when\n" +
			"score would fail: any problem, except bad rows within --max-bad-rows.",
		ArgsUsage: "INPUT",
		Flags: append(inputFlags(),
			&cli.BoolFlag{Name: "all-problems", Category: catOutput,
				Usage: fmt.Sprintf("print every problem (without it, the first %d, then the counts of all)", shownProblems)}),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			cfg := pipeline.DefaultConfig()
			input, err := applyJobFile(cmd)
			if err != nil {
				return err
			}
			if err := commonConfig(cmd, &cfg, input); err != nil {
				return err
			}
			proto := cfg.Protocol
			if proto == "" {
				proto = scoring.Default()
			}
			p, err := scoring.Lookup(proto)
			if err != nil {
				return err
			}
			labels := p.Describe().Labels
			useSDKLogger(&cfg)
			rep, err := pipeline.Validate(ctx, cfg)
			if err != nil {
				return err
			}
			w := cmd.Root().Writer
			shown := rep.Problems
			if !cmd.Bool("all-problems") && len(shown) > shownProblems {
				shown = shown[:shownProblems]
			}
			for _, p := range shown {
				fmt.Fprintf(w, "problem (%s): %v\n", p.Kind, p.Err)
			}
			if n := len(rep.Problems) - len(shown); n > 0 {
				fmt.Fprintf(w, "… and %d more problems (--all-problems prints them all)\n", n)
			}
			if rep.Runs == nil {
				fmt.Fprintln(w, "runs not assembled: see the problems above")
			}
			for _, r := range rep.Runs {
				if labels {
					fmt.Fprintf(w, "run %s: %d rows, %d labels (from %s)\n", r.Key, r.Rows, r.Labels, r.Source)
				} else {
					fmt.Fprintf(w, "run %s: %d rows (from %s)\n", r.Key, r.Rows, r.Source)
				}
			}
			for _, n := range rep.Notes {
				fmt.Fprintf(w, "note: %s\n", n)
			}
			count := rep.Count()
			var kinds []string
			for _, k := range pipeline.ProblemKinds {
				if count[k] > 0 {
					kinds = append(kinds, fmt.Sprintf("%s: %d", k, count[k]))
				}
			}
			by := ""
			if len(kinds) > 0 {
				by = " (" + strings.Join(kinds, ", ") + ")"
			}
			fmt.Fprintf(w, "%d objects, %d rows, %d runs, %d bad rows, %d problems%s\n",
				rep.Objects, rep.Rows, len(rep.Runs), rep.BadRows, len(rep.Problems), by)
			if !rep.Failed() {
				if rep.BadRows > 0 {
					fmt.Fprintf(w, "bad rows within --max-bad-rows %d: score would skip them\n", rep.MaxBadRows)
				}
				return nil
			}
			msg := fmt.Sprintf("validate found %d problem(s) in %s", len(rep.Problems), cfg.Input)
			if rep.BadRows > 0 && rep.BadRows > rep.MaxBadRows {
				msg += fmt.Sprintf(" (%d bad rows, more than --max-bad-rows %d)", rep.BadRows, rep.MaxBadRows)
			}
			return &problemsError{msg: msg}
		},
	}
}
