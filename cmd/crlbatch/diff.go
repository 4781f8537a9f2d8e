package main

import (
	"bytes"
	"context"
	"net/url"
	"path"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v3"
	"gocloud.dev/blob"

	"github.com/crlbatch/crlbatch/diff"
	"github.com/crlbatch/crlbatch/pipeline"
	"github.com/crlbatch/crlbatch/published"
	"github.com/crlbatch/crlbatch/storage"
	"github.com/crlbatch/crlbatch/writers"
)

func diffCommand() *cli.Command {
	return &cli.Command{
		Name:      "diff",
		Usage:     "what changed between two results (Markdown; --format json|parquet)",
		ArgsUsage: "OLD NEW | OUTPUT --nights N",
		Description: "diff compares two complete results (folders or blob prefixes holding manifest.json,\n" +
			"families.parquet and the run tables): per family and metric in both, the change in mean and\n" +
			"IQM and whether their 95 % bootstrap intervals overlap; the families and runs added or\n" +
			"removed; the parameters changed. With --nights N it takes one nightly history OUTPUT\n" +
			"(OUTPUT/results/<attempt-id>/, OUTPUT/LATEST) and compares the newest complete result with\n" +
			"the one N-1 results before it (--nights 2: the previous one). It prints Markdown to stdout,\n" +
			"or JSON; Parquet (one row per change) needs --out. Changes are not errors: it exits 0\n" +
			"whenever it ran, 2 on a usage error (a folder that is no complete result), 3 when the store fails.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "format", Value: "markdown", Usage: "`FORMAT` of the comparison: markdown, json or parquet"},
			&cli.StringFlag{Name: "out", TakesFile: true, Usage: "write the comparison to `FILE` (a path or blob URL) instead of stdout"},
			&cli.IntFlag{Name: "nights", DefaultText: "none", Usage: "compare the newest result of the history OUTPUT with the one `N`-1 results before it"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			format := cmd.String("format")
			switch format {
			case "markdown", "json", "parquet":
			default:
				return pipeline.Usagef("--format %q: want markdown, json or parquet", format)
			}
			if format == "parquet" && cmd.String("out") == "" {
				return pipeline.Usagef("--format parquet needs --out FILE (Parquet is not written to a terminal)")
			}
			old, new, err := loadPair(ctx, cmd)
			if err != nil {
				return err
			}
			d := diff.Compare(old, new)
			var buf bytes.Buffer
			switch format {
			case "markdown":
				buf.WriteString(d.Markdown())
			case "json":
				if err := d.JSON(&buf); err != nil {
					return err
				}
			case "parquet":
				t, err := d.Table()
				if err != nil {
					return err
				}
				proto, _ := new.Params["protocol"].(string)
				if proto == "" {
					proto = "unknown"
				}
				kv, err := writers.NewMetadata(version, proto, "1", map[string]string{"old": old.URL, "new": new.URL})
				if err != nil {
					return err
				}
				if err := writers.WriteParquet(&buf, t, kv); err != nil {
					return err
				}
			}
			if out := cmd.String("out"); out != "" {
				return writeObject(ctx, out, buf.Bytes())
			}
			_, err = cmd.Root().Writer.Write(buf.Bytes())
			return err
		},
	}
}

// loadPair loads OLD and NEW, or the two results of a history that
// --nights names.
func loadPair(ctx context.Context, cmd *cli.Command) (old, new *published.Result, err error) {
	args := cmd.Args().Slice()
	if cmd.IsSet("nights") {
		n := cmd.Int("nights")
		if n < 2 {
			return nil, nil, pipeline.Usagef("--nights %d: want at least 2", n)
		}
		if len(args) != 1 {
			return nil, nil, pipeline.Usagef("diff --nights: want one OUTPUT, got %d arguments: %q", len(args), args)
		}
		b, loc, release, err := published.Open(ctx, nil, args[0])
		if err != nil {
			return nil, nil, err
		}
		defer release()
		prefixes, err := published.Nights(ctx, b, loc, n)
		if err != nil {
			return nil, nil, err
		}
		if old, err = published.Load(ctx, b, loc, prefixes[0]); err != nil {
			return nil, nil, err
		}
		new, err = published.Load(ctx, b, loc, prefixes[len(prefixes)-1])
		return old, new, err
	}
	if len(args) != 2 {
		return nil, nil, pipeline.Usagef("diff: want OLD and NEW (or OUTPUT --nights N), got %d arguments: %q", len(args), args)
	}
	load := func(where string) (*published.Result, error) {
		b, loc, release, err := published.Open(ctx, nil, where)
		if err != nil {
			return nil, err
		}
		defer release()
		return published.Load(ctx, b, loc, loc.Prefix)
	}
	if old, err = load(args[0]); err != nil {
		return nil, nil, err
	}
	new, err = load(args[1])
	return old, new, err
}

// writeObject writes data to out, a local path or a blob URL naming an
// object.
func writeObject(ctx context.Context, out string, data []byte) error {
	dir, name := filepath.Dir(out), filepath.Base(out)
	if strings.Contains(out, "://") {
		u, err := url.Parse(out)
		if err != nil {
			return pipeline.Usagef("--out %s: %v", storage.Redact(out), storage.RedactErr(err))
		}
		name = path.Base(u.Path)
		u.Path = path.Dir(u.Path)
		dir = u.String()
	}
	if name == "" || name == "." || name == "/" {
		return pipeline.Usagef("--out %s: names no file", storage.Redact(out))
	}
	loc, err := storage.ParseLocation(dir, true)
	if err != nil {
		return err
	}
	b, release, err := storage.OpenBucket(ctx, nil, loc)
	if err != nil {
		return err
	}
	defer release()
	key := loc.Prefix + name
	err = storage.DefaultRetry().Retry(ctx, func(ctx context.Context, _ func()) error {
		return b.WriteAll(ctx, key, data, &blob.WriterOptions{ContentType: contentType(name)})
	})
	if err != nil {
		return &storage.StorageError{Op: "write", URL: loc.ObjectURL(key), Err: storage.RedactErr(err)}
	}
	return nil
}

func contentType(name string) string {
	switch path.Ext(name) {
	case ".json":
		return "application/json"
	case ".md":
		return "text/markdown; charset=utf-8"
	}
	return "application/octet-stream"
}
