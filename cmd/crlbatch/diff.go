package main

import (
	"bytes"
	"context"
	"errors"
	"net/url"
	"os"
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
			"IQM and whether their 95 % bootstrap intervals overlap; the metrics a family in both has\n" +
			"in one only; the families and runs added or removed; the runs moved to another family; the\n" +
			"parameters changed. Beside them, as information and not as a change, the crlbatch build\n" +
			"(version, commit) that wrote each result, when the two differ. With --nights N it takes one\n" +
			"nightly history OUTPUT (OUTPUT/results/<attempt-id>/, OUTPUT/LATEST) and compares the newest\n" +
			"complete result with the one N-1 results before it (--nights 2: the previous one). It prints\n" +
			"Markdown to stdout, or JSON; Parquet (one row per change) needs --out.\n\n" +
			"Exit status: 0 when it ran (with --exit-code: and the results do not differ), 1 when a\n" +
			"result cannot be read as one (a damaged manifest.json or Parquet file, a LATEST naming no\n" +
			"complete result), 2 on a usage error (a folder that is no complete result, fewer results\n" +
			"than --nights), 3 when the store fails, 4 with --exit-code when the results differ (a\n" +
			"change of build alone is no difference).",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "format", Value: "markdown", Usage: "`FORMAT` of the comparison: markdown, json or parquet"},
			&cli.StringFlag{Name: "out", TakesFile: true, Usage: "write the comparison to `FILE` (a path or blob URL) instead of stdout"},
			&cli.BoolFlag{Name: "exit-code", Usage: "exit 4 when the results differ (as git diff --exit-code, whose 1 is bad data here)"},
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
			if err := outOutsideResults(cmd); err != nil {
				return err
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
				err = writeObject(ctx, out, buf.Bytes())
			} else {
				_, err = cmd.Root().Writer.Write(buf.Bytes())
			}
			if err == nil && cmd.Bool("exit-code") && !d.Empty() {
				return errChanges
			}
			return err
		},
	}
}

// errChanges is diff --exit-code finding the results different: exit 4,
// nothing printed on stderr (the comparison is the output).
var errChanges = errors.New("the results differ")

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

// outOutsideResults refuses an --out inside a result compared (OLD, NEW)
// or, with --nights, inside the history's results/ or history/ or on its
// LATEST: diff must never overwrite a file of a result.
func outOutsideResults(cmd *cli.Command) error {
	out := cmd.String("out")
	if out == "" {
		return nil
	}
	var results []string
	for _, a := range cmd.Args().Slice() {
		if !cmd.IsSet("nights") {
			results = append(results, a)
			continue
		}
		for _, sub := range []string{published.ResultsDir, pipeline.HistoryDir, published.LatestFile} {
			if u, err := url.Parse(a); err == nil && strings.Contains(a, "://") {
				u.Path = strings.TrimSuffix(u.Path, "/") + "/" + sub
				results = append(results, u.String())
			} else {
				results = append(results, filepath.Join(a, sub))
			}
		}
	}
	for _, r := range results {
		if inside(out, r) {
			return pipeline.Usagef("--out %s lies inside %s, which diff reads: write it elsewhere", storage.Redact(out), storage.Redact(r))
		}
	}
	return nil
}

// inside reports whether the path or URL p is dir or lies under it
// (local paths compared with links resolved).
func inside(p, dir string) bool {
	if !strings.Contains(p, "://") && !strings.Contains(dir, "://") {
		p, dir = canonical(p), canonical(dir)
		return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, string(filepath.Separator))+string(filepath.Separator))
	}
	pl, err1 := storage.ParseLocation(p, true)
	dl, err2 := storage.ParseLocation(dir, true)
	return err1 == nil && err2 == nil && storage.Within(pl, dl)
}

// canonical is the absolute path p with the links of its longest existing
// part resolved.
func canonical(p string) string {
	p, _ = filepath.Abs(p)
	rest := ""
	for d := p; ; d = filepath.Dir(d) {
		if r, err := filepath.EvalSymlinks(d); err == nil {
			return filepath.Join(r, rest)
		}
		if d == filepath.Dir(d) {
			return p
		}
		rest = filepath.Join(filepath.Base(d), rest)
	}
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
	if fi, err := os.Stat(out); err == nil && fi.IsDir() && !strings.Contains(out, "://") {
		return pipeline.Usagef("--out %s is a folder: want a file", out)
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
