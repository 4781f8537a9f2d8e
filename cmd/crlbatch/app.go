package main

import (
	"context"
	"fmt"
	"io"

	"github.com/urfave/cli/v3"

	"github.com/crlbatch/crlbatch/pipeline"
)

func newApp(stdout, stderr io.Writer) *cli.Command {
	usage := func(_ context.Context, _ *cli.Command, err error, _ bool) error {
		return &pipeline.UsageError{Err: err}
	}
	cmds := []*cli.Command{scoreCommand(), boundCommand(), validateCommand(), checkEntryCommand(), synthCommand(), versionCommand()}
	for _, c := range cmds {
		c.OnUsageError = usage
	}
	return &cli.Command{
		Name:  "crlbatch",
		Usage: "score continual-learning runs in bulk, from a folder or a bucket prefix",
		Description: "crlbatch reads recorded training traces (JSON Lines, optionally gzip or zstd) under a folder\n" +
			"or an s3://, gs://, azblob:// prefix, scores every run under the skyfall protocol, reduces each\n" +
			"algorithm family to mean, spread and confidence intervals, and writes Parquet files and a\n" +
			"Markdown report. Exit status: 0 done, 1 bad input data, 2 usage error, 3 storage error,\n" +
			"130 interrupted, 143 terminated.",
		Writer:                    stdout,
		ErrWriter:                 stderr,
		Commands:                  cmds,
		OnUsageError:              usage,
		ExitErrHandler:            func(context.Context, *cli.Command, error) {},
		DisableSliceFlagSeparator: true,
		HideVersion:               true,
	}
}

func versionCommand() *cli.Command {
	return &cli.Command{
		Name:  "version",
		Usage: "print the crlbatch version",
		Action: func(_ context.Context, cmd *cli.Command) error {
			fmt.Fprintf(cmd.Root().Writer, "crlbatch %s\n", version)
			return nil
		},
	}
}

// oneArg returns the single positional argument, or a usage error.
func oneArg(cmd *cli.Command, what string) (string, error) {
	switch cmd.Args().Len() {
	case 1:
		return cmd.Args().First(), nil
	case 0:
		return "", pipeline.Usagef("%s: missing %s (see crlbatch %s --help)", cmd.Name, what, cmd.Name)
	}
	return "", pipeline.Usagef("%s: want one %s, got %d arguments: %q", cmd.Name, what, cmd.Args().Len(), cmd.Args().Slice())
}
