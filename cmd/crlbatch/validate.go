package main

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v3"

	"github.com/crlbatch/crlbatch/pipeline"
)

func validateCommand() *cli.Command {
	return &cli.Command{
		Name:      "validate",
		Usage:     "read every object and assemble runs, report every problem, write nothing",
		ArgsUsage: "INPUT",
		Flags:     inputFlags(),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			cfg := pipeline.DefaultConfig()
			input, err := applyJobFile(cmd)
			if err != nil {
				return err
			}
			if err := commonConfig(cmd, &cfg, input); err != nil {
				return err
			}
			rep, err := pipeline.Validate(ctx, cfg)
			if err != nil {
				return err
			}
			w := cmd.Root().Writer
			for _, p := range rep.Problems {
				fmt.Fprintf(w, "problem: %v\n", p.Err)
			}
			for _, r := range rep.Runs {
				fmt.Fprintf(w, "run %s: %d rows, %d labels (from %s)\n", r.Key, r.Rows, r.Labels, r.Source)
			}
			fmt.Fprintf(w, "%d objects, %d rows, %d runs, %d problems\n", rep.Objects, rep.Rows, len(rep.Runs), len(rep.Problems))
			if len(rep.Problems) > 0 {
				return &problemsError{msg: fmt.Sprintf("validate found %d problem(s) in %s", len(rep.Problems), cfg.Input)}
			}
			return nil
		},
	}
}
