package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v3"
	"gocloud.dev/blob/s3blob"

	"github.com/crlbatch/crlbatch/cache"
	"github.com/crlbatch/crlbatch/pipeline"
	"github.com/crlbatch/crlbatch/storage"
)

func cacheCommand() *cli.Command {
	return &cli.Command{
		Name:  "cache",
		Usage: "show or bound the decoded-object cache of score --cache",
		Description: "URL is what score's --cache names: a folder, a blob prefix, or auto (a folder under the user's\n" +
			"cache directory). Entries are never trusted blindly: a damaged one is rebuilt by the next job.",
		Commands: []*cli.Command{
			readOnly(&cli.Command{
				Name:      "stats",
				Usage:     "print the cache's entries, bytes, oldest and newest entry, and what the writes of stopped jobs left (temporary files, S3's incomplete multipart uploads)",
				ArgsUsage: "URL",
				Action: func(ctx context.Context, cmd *cli.Command) error {
					c, err := openCacheArg(ctx, cmd)
					if err != nil {
						return err
					}
					defer c.Close()
					s, err := c.Stats(ctx)
					if err != nil {
						return &pipeline.StorageError{Op: "list", URL: c.String(), Err: err}
					}
					w := cmd.Root().Writer
					fmt.Fprintf(w, "cache: %s\nentries: %d\nbytes: %d (%s)\n", c, s.Entries, s.Bytes, humanBytes(s.Bytes))
					if s.Entries > 0 {
						fmt.Fprintf(w, "oldest: %s\nnewest: %s\n", s.Oldest.UTC().Format(time.RFC3339), s.Newest.UTC().Format(time.RFC3339))
					}
					if s.OtherVersions > 0 {
						fmt.Fprintf(w, "of another format version: %d entries, %d bytes (%s), written by a build of another cache format (this one's is %d) and never read by this one; prune removes them with the rest, oldest first\n",
							s.OtherVersions, s.OtherVersionBytes, humanBytes(s.OtherVersionBytes), cache.FormatVersion)
					}
					if s.Temps > 0 {
						fmt.Fprintf(w, "unfinished writes: %d temporary files, %d bytes (%s), left by jobs stopped while writing an entry; prune removes those over %s old\n",
							s.Temps, s.TempBytes, humanBytes(s.TempBytes), shortDuration(cache.TempGrace))
					}
					if s.Uploads > 0 {
						fmt.Fprintf(w, "unfinished writes: %d incomplete multipart uploads on S3, %s, left by jobs stopped while uploading an entry (S3 bills them until they are aborted); prune aborts those started over %s ago\n",
							s.Uploads, uploadBytes(s), shortDuration(cache.TempGrace))
					}
					warn(cmd, s.Warnings)
					return nil
				},
			}),
			{
				Name:      "prune",
				Usage:     "remove entries, oldest first: those older than --older-than, then more until at most --max-bytes are left; and what the writes of a stopped job left (temporary files, S3's incomplete multipart uploads)",
				ArgsUsage: "URL",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "max-bytes", Usage: "keep at most `SIZE` of entries (the newest)"},
					&cli.StringFlag{Name: "older-than", Usage: "remove entries written more than `AGE` ago (90m, 36h, 7d)"},
				},
				Action: func(ctx context.Context, cmd *cli.Command) error {
					if !cmd.IsSet("max-bytes") && !cmd.IsSet("older-than") {
						return pipeline.Usagef("cache prune: give --max-bytes SIZE or --older-than AGE (or both)")
					}
					maxBytes := int64(-1)
					if cmd.IsSet("max-bytes") {
						n, err := pipeline.ParseBytes(cmd.String("max-bytes"))
						if err != nil || n < 0 {
							return pipeline.Usagef("--max-bytes %q: want a size such as %s", cmd.String("max-bytes"), sizeExamples)
						}
						maxBytes = n
					}
					var before time.Time
					if cmd.IsSet("older-than") {
						d, err := parseAge(cmd.String("older-than"))
						if err != nil {
							return err
						}
						before = time.Now().Add(-d)
					}
					c, err := openCacheArg(ctx, cmd)
					if err != nil {
						return err
					}
					defer c.Close()
					removed, err := c.Prune(ctx, maxBytes, before)
					if err != nil && ctx.Err() != nil {
						// Stopped between two deletes: what is left is a
						// cache as any other (cache.Prune).
						return &stoppedError{fmt.Sprintf("cache prune interrupted: removed %d entries (%d bytes) and %d temporary files before it stopped; the rest of %s is left as it was",
							removed.Entries, removed.Bytes, removed.Temps, c), ctx.Err()}
					}
					if err != nil {
						return &pipeline.StorageError{Op: "delete", URL: c.String(), Err: err}
					}
					left, err := c.Stats(ctx)
					if err != nil {
						return &pipeline.StorageError{Op: "list", URL: c.String(), Err: err}
					}
					w := cmd.Root().Writer
					fmt.Fprintf(w, "removed %d entries (%d bytes)", removed.Entries, removed.Bytes)
					if removed.Temps > 0 {
						fmt.Fprintf(w, " and %d temporary files of unfinished writes (%d bytes)", removed.Temps, removed.TempBytes)
					}
					if removed.Uploads > 0 {
						fmt.Fprintf(w, " and aborted %d incomplete multipart uploads, %s", removed.Uploads, uploadBytes(removed))
					}
					fmt.Fprintf(w, "; %d entries (%d bytes) left in %s\n", left.Entries, left.Bytes, c)
					if warn(cmd, removed.Warnings); len(removed.Warnings) == 0 {
						warn(cmd, left.Warnings) // said once: the same listing failed twice
					}
					return nil
				},
			},
		},
	}
}

func openCacheArg(ctx context.Context, cmd *cli.Command) (*cache.Cache, error) {
	raw, err := oneArg(cmd, "URL")
	if err != nil {
		return nil, err
	}
	if raw != "auto" {
		// A local folder that does not exist is a typo, not an empty
		// cache (score --cache makes it; auto's may not exist yet).
		if _, err := storage.ParseLocation(raw, false); err != nil {
			return nil, err
		}
	}
	var op storage.Opener
	if u, err := url.Parse(raw); err == nil && u.Scheme == s3blob.Scheme {
		op = sdkOpener(slog.New(slog.DiscardHandler))
	}
	return cache.Open(ctx, raw, op)
}

// uploadBytes says the bytes of s's incomplete multipart uploads, and of
// how many they are unknown (their parts could not be listed).
func uploadBytes(s cache.Stats) string {
	switch {
	case s.UploadsUnsized == 0:
		return fmt.Sprintf("%d bytes (%s) in their parts", s.UploadBytes, humanBytes(s.UploadBytes))
	case s.UploadsUnsized == s.Uploads:
		return "bytes unknown (their parts could not be listed)"
	}
	return fmt.Sprintf("%d bytes (%s) in the parts of %d of them, bytes unknown for the other %d (their parts could not be listed)",
		s.UploadBytes, humanBytes(s.UploadBytes), s.Uploads-s.UploadsUnsized, s.UploadsUnsized)
}

// warn writes errs as warnings on stderr, as score writes its warnings.
func warn(cmd *cli.Command, errs []error) {
	if len(errs) == 0 {
		return
	}
	log := slog.New(slog.NewTextHandler(cmd.Root().ErrWriter, nil))
	for _, err := range errs {
		log.Warn(pipeline.Redact(err.Error()))
	}
}

// parseAge reads a duration: Go's (90m, 36h) or a number of days (7d).
func parseAge(s string) (time.Duration, error) {
	if d, ok := strings.CutSuffix(s, "d"); ok {
		if n, err := strconv.ParseFloat(d, 64); err == nil && n >= 0 {
			return time.Duration(n * float64(24*time.Hour)), nil
		}
	} else if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return d, nil
	}
	return 0, pipeline.Usagef("--older-than %q: want an age such as 90m, 36h or 7d", s)
}

// shortDuration writes d as Go does, without zero minutes and seconds
// after hours (1h, not 1h0m0s).
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "h0m0s") {
		return strings.TrimSuffix(s, "0m0s")
	}
	return s
}

func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
