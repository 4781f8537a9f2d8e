package main

import (
	"context"
	"fmt"
	"os"

	"github.com/urfave/cli/v3"

	"github.com/crlbatch/crlbatch/pipeline"
	"github.com/crlbatch/crlbatch/protocol/skillshift"
)

func checkEntryCommand() *cli.Command {
	return &cli.Command{
		Name:      "check-entry",
		Usage:     "skillshift: verify the ten transcribed numbers per metric of a leaderboard entry",
		ArgsUsage: "ENTRY.json",
		Description: "ENTRY.json holds, per metric (SR, AS, ASC, SFR), the three website marginals, the six\n" +
			"condition marginals and the overall value, e.g. {\"SR\": {\"websites\": {...}, \"conditions\": {...},\n" +
			"\"overall\": 35.29}, \"reasons\": {\"ASC\": \"not reported\"}}; a bare {websites, conditions, overall}\n" +
			"object is one metric, named by --metric. Every null needs a reason. For each metric it checks\n" +
			"that the mean of the websites, the mean of the conditions and the overall agree to 0.01 after\n" +
			"rounding half-up to two decimals, checks what it can when numbers are null, and prints one line\n" +
			"per metric. Exit status 0 only if no metric fails.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "metric", Value: skillshift.SR, Usage: "the metric a bare entry holds: SR, AS, ASC or SFR"},
		},
		Action: func(_ context.Context, cmd *cli.Command) error {
			file, err := oneArg(cmd, "ENTRY.json")
			if err != nil {
				return err
			}
			data, err := os.ReadFile(file)
			if err != nil {
				return pipeline.Usagef("check-entry: %v", err)
			}
			res, err := skillshift.CheckEntry(data, cmd.String("metric"))
			if err != nil {
				return &problemsError{msg: fmt.Sprintf("%s: %v", file, err)}
			}
			w := cmd.Root().Writer
			for _, l := range res.Lines() {
				fmt.Fprintln(w, l)
			}
			if res.Failed() {
				return &problemsError{msg: file + ": a metric fails its identity check"}
			}
			return nil
		},
	}
}
