package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"

	"github.com/urfave/cli/v3"
	"gocloud.dev/blob/s3blob"

	"github.com/crlbatch/crlbatch/internal/synth"
	"github.com/crlbatch/crlbatch/storage"
)

func synthCommand() *cli.Command {
	return &cli.Command{
		Name:  "synth",
		Usage: "write a synthetic skyfall sweep (to try crlbatch out, and for benchmarks)",
		Description: "Writes one run per family and seed under --out, each a JSON Lines object of realistic rows:\n" +
			"a regime schedule that revisits its first regime through an alias, family-specific adaptation\n" +
			"and forgetting, progress/collision/success reward components (see the bundled `experiment`\n" +
			"reward spec), invalid actions and effective-rank readings. The same flags always give\n" +
			"byte-identical objects.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Usage: "folder or blob prefix to write the sweep to"},
			&cli.StringSliceFlag{Name: "family", Usage: "algorithm family (repeatable; default ppo, sac, ewc)"},
			&cli.IntFlag{Name: "seeds", Value: 3, Usage: "runs per family"},
			&cli.IntFlag{Name: "steps", Value: 600, Usage: "rows per run"},
			&cli.IntFlag{Name: "intervals", Value: 6, Usage: "regime intervals per run (at least 2)"},
			&cli.StringFlag{Name: "compression", Value: "none", Usage: "none, gzip, zstd, or mixed (rotating by run)"},
			&cli.IntFlag{Name: "split-files", Value: 1, Usage: "split each run across this many objects"},
			&cli.Int64Flag{Name: "target-bytes", DefaultText: "none", Usage: "grow the runs so the sweep holds about `N` bytes of JSONL (overrides --steps)"},
			&cli.BoolFlag{Name: "extras", Usage: "add per-step extras (obs_hash, logp, value) as real training logs carry"},
			&cli.Uint64Flag{Name: "seed", Usage: "seed of the generator"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() > 0 {
				return storage.Usagef("synth takes no arguments, got %q", cmd.Args().Slice())
			}
			if cmd.String("out") == "" {
				return storage.Usagef("synth: --out is required")
			}
			// synth.Config reads 0 as "the default"; on the command line a 0
			// is what the user asked for, and none of these can be 0.
			if cmd.Int("seeds") == 0 {
				return storage.Usagef("synth: seeds = 0 (want ≥ 1)")
			}
			if cmd.Int("intervals") == 0 {
				return storage.Usagef("synth: intervals = 0 (want ≥ 2)")
			}
			if cmd.Int("split-files") == 0 {
				return storage.Usagef("synth: split files = 0 (want ≥ 1)")
			}
			if cmd.Int("steps") == 0 {
				return storage.Usagef("synth: steps = 0 (want ≥ %d, the intervals)", max(cmd.Int("intervals"), 2))
			}
			var opener storage.Opener
			if u, err := url.Parse(cmd.String("out")); err == nil && u.Scheme == s3blob.Scheme {
				opener = sdkOpener(slog.New(slog.DiscardHandler)) // synth has no --log-level
			}
			sum, err := synth.Run(ctx, synth.Config{
				Opener:      opener,
				Out:         cmd.String("out"),
				Families:    cmd.StringSlice("family"),
				Seeds:       cmd.Int("seeds"),
				Steps:       cmd.Int("steps"),
				Intervals:   cmd.Int("intervals"),
				Compression: cmd.String("compression"),
				SplitFiles:  cmd.Int("split-files"),
				TargetBytes: cmd.Int64("target-bytes"),
				Extras:      cmd.Bool("extras"),
				Seed:        cmd.Uint64("seed"),
			})
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.Root().Writer, "wrote %d runs (%d rows each, %d objects, %.1f MB of JSONL, %.1f MB stored) to %s\n",
				sum.Runs, sum.Steps, len(sum.Objects), float64(sum.RawBytes)/1e6, float64(sum.Bytes)/1e6, storage.Redact(cmd.String("out")))
			return nil
		},
	}
}
