package main

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v3"

	"github.com/crlbatch/crlbatch/pipeline"
	"github.com/crlbatch/crlbatch/protocol"
	"github.com/crlbatch/crlbatch/scoring/skyfallscore"
	"github.com/crlbatch/crlbatch/upperbound"
	"github.com/crlbatch/crlbatch/writers"
)

func boundCommand() *cli.Command {
	return &cli.Command{
		Name:      "bound",
		Usage:     "print the analytic ceiling of a reward spec",
		ArgsUsage: "SPEC (a YAML file or a bundled name)",
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "interval", DefaultText: "none", Usage: "also print the ceiling of the mean over an interval of `L` rows"},
			&cli.BoolFlag{Name: "contains-final", Usage: "the interval holds the episode's final step"},
		},
		Action: func(_ context.Context, cmd *cli.Command) error {
			name, err := oneArg(cmd, "SPEC")
			if err != nil {
				return err
			}
			// Flags are checked before anything is printed.
			if L := cmd.Int("interval"); cmd.IsSet("interval") && L < 1 {
				return pipeline.Usagef("--interval %d: want at least 1", L)
			}
			if cmd.Bool("contains-final") && !cmd.IsSet("interval") {
				return pipeline.Usagef("--contains-final needs --interval")
			}
			spec, err := skyfallscore.LoadSpecAs(name, "bound: SPEC")
			if err != nil {
				return err
			}
			b, err := upperbound.Analytic(spec)
			if err != nil {
				return pipeline.Usagef("%s: %v", name, err)
			}
			w := cmd.Root().Writer
			// Numbers for a person: the report's rule (docs/decisions.md).
			num := func(v float64) string { return writers.FormatScaled(protocol.Some(v)) }
			fmt.Fprintf(w, "%-12s per step %s   final step %s\n", spec.Name, num(b.PerStep), num(b.FinalStep))
			if cmd.IsSet("interval") {
				L := cmd.Int("interval")
				what := "not holding"
				if cmd.Bool("contains-final") {
					what = "holding"
				}
				fmt.Fprintf(w, "interval of %d %s the final step: %s\n", L, what, num(b.ForInterval(L, cmd.Bool("contains-final"))))
			}
			return nil
		},
	}
}
