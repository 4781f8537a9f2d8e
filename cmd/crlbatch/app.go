package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/crlbatch/crlbatch/internal/scoreflags"
	"github.com/crlbatch/crlbatch/pipeline"
)

func newApp(stdout, stderr io.Writer) *cli.Command {
	usage := func(_ context.Context, cmd *cli.Command, err error, _ bool) error {
		return &pipeline.UsageError{Err: explainUsage(cmd, err)}
	}
	cmds := []*cli.Command{scoreCommand(), readOnly(boundCommand()), readOnly(validateCommand()), readOnly(checkEntryCommand()), synthCommand(), readOnly(latestCommand()), diffCommand(), convertCommand(), cacheCommand(), versionCommand()}
	var setUsage func([]*cli.Command)
	setUsage = func(cs []*cli.Command) {
		for _, c := range cs {
			c.OnUsageError = usage
			setUsage(c.Commands) // cache stats, cache prune
		}
	}
	setUsage(cmds)
	return &cli.Command{
		Name:  "crlbatch",
		Usage: "score continual-learning runs in bulk, from a folder or a bucket prefix",
		Description: "crlbatch reads recorded training traces (JSON Lines, optionally gzip or zstd, or Parquet)\n" +
			"under a folder or an s3://, gs://, azblob:// prefix, scores every run under the skyfall\n" +
			"protocol (or --protocol safecrl, contilab, skillshift), reduces each algorithm family to mean,\n" +
			"spread and confidence intervals, and writes Parquet files, figures and a Markdown report.\n" +
			"Exit status: 0 done, 1 bad input data, 2 usage error, 3 storage error, 4 results differ\n" +
			"(diff --exit-code only), 70 internal error (a bug in crlbatch: please report it), 129 hung\n" +
			"up (SIGHUP), 130 interrupted (SIGINT), 131 quit (SIGQUIT), 143 terminated (SIGTERM).",
		Writer:                    stdout,
		ErrWriter:                 stderr,
		Commands:                  cmds,
		OnUsageError:              usage,
		ExitErrHandler:            func(context.Context, *cli.Command, error) {},
		DisableSliceFlagSeparator: true,
		HideVersion:               true,
		EnableShellCompletion:     true,
		ConfigureShellCompletionCommand: func(c *cli.Command) {
			c.Hidden = false
			c.Usage = "print a shell completion script: crlbatch completion bash|zsh|fish"
			c.OnUsageError = usage
			for _, sub := range c.Commands {
				sub.OnUsageError = usage
			}
		},
		// A first argument that names no command: without an Action,
		// urfave/cli would take it for a help topic and exit 1.
		Action: func(_ context.Context, cmd *cli.Command) error {
			if !cmd.Args().Present() {
				return cli.ShowRootCommandHelp(cmd)
			}
			return unknownCommand(cmd, cmd.Args().First())
		},
	}
}

// unknownCommand is the usage error of a command name that cmd (the root,
// or completion for a shell) does not have, with the closest one it does.
func unknownCommand(cmd *cli.Command, name string) error {
	var names []string
	for _, c := range cmd.VisibleCommands() {
		names = append(names, c.Name)
	}
	if cmd.Root() != cmd && cmd.Name == "completion" {
		return pipeline.Usagef("%s: unknown shell %q%s (shells: %s)", cmd.Name, name, didYouMean(name, names, ""), strings.Join(names, ", "))
	}
	if cmd.Root() != cmd {
		return pipeline.Usagef("%s: unknown command %q%s (commands: %s; see %s --help)",
			commandName(cmd), name, didYouMean(name, names, ""), strings.Join(names, ", "), commandPath(cmd))
	}
	return pipeline.Usagef("unknown command %q%s (commands: %s; see crlbatch --help)",
		name, didYouMean(name, names, ""), strings.Join(names, ", "))
}

// didYouMean, wants and the rewriting of urfave/cli's parse errors are
// crlbatch-beam's too (scoreflags).
var (
	didYouMean = scoreflags.DidYouMean
	wants      = scoreflags.Wants
)

// helpTopicError matches urfave/cli's error for `crlbatch help NAME` (and
// `crlbatch completion NAME`) when NAME is no command.
var helpTopicError = regexp.MustCompile(`^No help topic for '(.*)'`)

// explainUsage rewrites urfave/cli's parse errors of cmd as crlbatch's
// usage messages (scoreflags.ExplainUsage).
func explainUsage(cmd *cli.Command, err error) error {
	return scoreflags.ExplainUsage(cmd, err, commandPrefix(cmd), commandPath(cmd))
}

// commandPath is "crlbatch score" for score, "crlbatch cache stats" for
// cache stats, "crlbatch" for the root.
func commandPath(cmd *cli.Command) string {
	if cmd.Root() == cmd {
		return "crlbatch"
	}
	return "crlbatch " + commandName(cmd)
}

// commandPrefix is "score: " for score, "cache stats: " for cache stats,
// "" for the root.
func commandPrefix(cmd *cli.Command) string {
	if cmd.Root() == cmd {
		return ""
	}
	return commandName(cmd) + ": "
}

// commandName is cmd as typed after crlbatch: "score", "cache stats".
func commandName(cmd *cli.Command) string {
	if p := cmd.Path(); len(p) > 1 {
		return strings.Join(p[1:], " ")
	}
	return cmd.Name
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
		return "", pipeline.Usagef("%s: missing %s (see %s --help)", commandName(cmd), what, commandPath(cmd))
	}
	return "", pipeline.Usagef("%s: want one %s, got %d arguments: %q", commandName(cmd), what, cmd.Args().Len(), cmd.Args().Slice())
}

// readOnly makes a command that writes nothing say, when a signal stops
// it, only that it was interrupted: a job's "nothing was published, and
// files written so far were removed" is not its to say.
func readOnly(c *cli.Command) *cli.Command {
	act := c.Action
	c.Action = func(ctx context.Context, cmd *cli.Command) error {
		err := act(ctx, cmd)
		if err != nil && ctx.Err() != nil && errors.Is(err, context.Canceled) {
			return &stoppedError{msg: strings.TrimPrefix(cmd.FullName(), "crlbatch ") + " interrupted", err: err}
		}
		return err
	}
	return c
}
