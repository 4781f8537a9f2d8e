package main

import (
	"context"
	"fmt"
	"runtime/debug"

	"github.com/urfave/cli/v3"

	"github.com/crlbatch/crlbatch/pipeline"
)

func latestCommand() *cli.Command {
	return &cli.Command{
		Name:      "latest",
		Usage:     "print the URL of the newest complete result under OUTPUT (nightly or one-off)",
		ArgsUsage: "OUTPUT",
		Description: "In a nightly OUTPUT (score --history): the result LATEST names, OUTPUT/results/<attempt-id>/.\n" +
			"In a one-off OUTPUT: OUTPUT itself. Exit status 1 when OUTPUT holds no complete result.",
		Action: func(ctx context.Context, cmd *cli.Command) error {
			out, err := oneArg(cmd, "OUTPUT")
			if err != nil {
				return err
			}
			url, err := pipeline.Latest(ctx, pipeline.LatestConfig{Output: out})
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.Root().Writer, url)
			return nil
		},
	}
}

// vcsCommit is the VCS revision the binary was built from, "-dirty" when
// its tree had changes; "" when the build carries none (go test, go run
// outside a checkout).
func vcsCommit() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	var rev, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev != "" && modified == "true" {
		rev += "-dirty"
	}
	return rev
}
