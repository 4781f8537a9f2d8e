package main

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"net/url"
	"runtime"
	"strings"

	"github.com/urfave/cli/v3"
	"gocloud.dev/blob/s3blob"

	"github.com/crlbatch/crlbatch/pipeline"
	"github.com/crlbatch/crlbatch/readers"
	"github.com/crlbatch/crlbatch/storage"
)

func convertCommand() *cli.Command {
	return &cli.Command{
		Name:      "convert",
		Usage:     "turn JSON Lines traces into Parquet traces, one Parquet object per object",
		ArgsUsage: "INPUT",
		Description: "Reads every JSON Lines object under INPUT (plain, gzip or zstd) and writes the same rows as one\n" +
			"Parquet object (zstd pages, or --compression; a column it would not shrink by an eighth\n" +
			"uncompressed) under --out: a.jsonl.gz becomes a.parquet. One column per field; objects of\n" +
			"numbers (components) a struct of numbers, or a map when their members come in varying orders\n" +
			"(or with --maps); a field whose values are of several types, nested or null is kept as each\n" +
			"row's JSON text (see docs/trace-format.md). `crlbatch score --pattern '*.parquet'` then reads\n" +
			"them with the same runs, errors and results. Blank lines are dropped: row numbers count rows.\n" +
			"Each object is read twice (its columns' types, then its rows, a row group at a time), so memory\n" +
			"holds a row group and at most 32 MiB of the Parquet object, not the JSON: a larger Parquet\n" +
			"object waits in a spill file under --spill-dir until it is written; an object rewritten between the two\n" +
			"reads is read again, and one appended to converts as the first read found it. From a store,\n" +
			"an object of at most 16 MiB is fetched once and both reads take its bytes from memory.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Usage: "folder or blob prefix to write the Parquet objects to"},
			&cli.StringSliceFlag{Name: "pattern", Usage: "convert only objects whose base name matches `GLOB` (repeatable; default *.jsonl, *.jsonl.gz, *.jsonl.zst, *.ndjson)"},
			&cli.StringFlag{Name: "compression", Value: readers.ConvertCompression, Usage: "the Parquet pages' codec: `CODEC` one of " + strings.Join(readers.ConvertCompressions, ", ")},
			&cli.BoolFlag{Name: "maps", Usage: "write objects of numbers (components) as maps in every object, never as structs: one column type in all the files of a sweep whose objects list their members in different orders (DuckDB then reads their components together without union_by_name)"},
			&cli.IntFlag{Name: "concurrency", Value: runtime.NumCPU(), Usage: "at most `N` objects converted at once"},
			&cli.StringFlag{Name: "max-line-bytes", Value: sizeText(readers.DefaultMaxLineBytes), Usage: "the longest line read (`SIZE`)"},
			&cli.StringFlag{Name: "max-object-bytes", Value: sizeText(readers.DefaultMaxObjectBytes), Usage: "the most decompressed bytes read of one object (`SIZE`)"},
			&cli.StringFlag{Name: "spill-dir", DefaultText: "the system temp dir", TakesFile: true,
				Usage: "local folder `DIR` where a Parquet object of more than 32 MiB waits until it is written (emptied when the convert ends)"},
			// For the tests of stores: a spill of every object, however small.
			&cli.StringFlag{Name: "hold-bytes", Hidden: true,
				Usage: "hold at most `SIZE` of a Parquet object in memory before it goes to a spill file (default 32MiB)"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			in, err := oneArg(cmd, "INPUT")
			if err != nil {
				return err
			}
			cfg := pipeline.ConvertConfig{Input: in, Output: cmd.String("out"), Patterns: cmd.StringSlice("pattern"),
				Concurrency: cmd.Int("concurrency"), Compression: cmd.String("compression"), Maps: cmd.Bool("maps"), Retry: pipeline.DefaultRetry(),
				SpillDir: cmd.String("spill-dir"),
				Logger:   slog.New(slog.NewTextHandler(cmd.Root().ErrWriter, &slog.HandlerOptions{Level: slog.LevelWarn}))}
			if cfg.Output == "" {
				return storage.Usagef("convert: --out OUTPUT is required")
			}
			if cfg.Concurrency < 1 {
				// As score says: ConvertConfig would read it as 1.
				return storage.Usagef("--concurrency %d: want at least 1", cfg.Concurrency)
			}
			lineBytes, err := sizeFlag(cmd, "max-line-bytes")
			if err != nil {
				return err
			}
			cfg.Reader.MaxLineBytes = int(min(lineBytes, math.MaxInt))
			if cfg.Reader.MaxObjectBytes, err = sizeFlag(cmd, "max-object-bytes"); err != nil {
				return err
			}
			if cmd.IsSet("hold-bytes") {
				if cfg.HoldBytes, err = sizeFlag(cmd, "hold-bytes"); err != nil {
					return err
				}
			}
			for _, s := range []string{cfg.Input, cfg.Output} {
				if u, err := url.Parse(s); err == nil && u.Scheme == s3blob.Scheme {
					cfg.Opener = sdkOpener(slog.New(slog.DiscardHandler))
				}
			}
			n, err := pipeline.Convert(ctx, cfg)
			if err != nil {
				return err
			}
			objects := "objects"
			if n == 1 {
				objects = "object"
			}
			fmt.Fprintf(cmd.Root().Writer, "converted %d %s to Parquet under %s\n", n, objects, storage.Redact(cfg.Output))
			return nil
		},
	}
}
