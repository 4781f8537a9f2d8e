package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go/logging"
	"gocloud.dev/blob"
	"gocloud.dev/blob/s3blob"

	"github.com/crlbatch/crlbatch/pipeline"
)

// The AWS SDK (under gocloud.dev's s3blob) logs through a logger of its
// own that writes "SDK <time> DEBUG …" to the process's stderr whatever
// --log-level says: a line per object read when the store sends no
// checksum. sdkOpener opens s3:// buckets as gocloud.dev's URL mux does and
// then gives the client the job's slog logger instead, at debug level (the
// SDK's warnings at info), tagged source=aws-sdk, and a transport that keeps
// more idle connections (keepS3Connections). Other schemes go to the
// default opener unchanged.
//
// What it cannot reach: the credential chain's own clients (the EC2
// metadata client, STS) are built when gocloud.dev loads the AWS config,
// with the SDK's default logger; their rare warnings ("falling back to
// IMDSv1") still go to stderr (docs/decisions.md).
func sdkOpener(logger *slog.Logger) pipeline.Opener {
	sl := sdkLogger{logger}
	return func(ctx context.Context, bucketURL string) (*blob.Bucket, func() error, error) {
		u, err := url.Parse(bucketURL)
		switch {
		case err != nil || u.Scheme != s3blob.Scheme:
			if err == nil && u.Scheme == "mem" {
				// The engine refuses mem:// when it opens buckets itself;
				// so does this opener.
				return nil, nil, pipeline.Usagef("%s: a mem:// bucket lives in this process's memory, empty when the job starts and gone when it ends: give a folder or a bucket", pipeline.Redact(bucketURL))
			}
			return pipeline.DefaultOpener(ctx, bucketURL)
		}
		o := &s3blob.URLOpener{}
		b, err := o.OpenBucketURL(ctx, u)
		if err != nil {
			return nil, nil, err
		}
		var c *s3.Client
		if !b.As(&c) {
			return b, b.Close, nil
		}
		if err := b.Close(); err != nil {
			return nil, nil, err
		}
		client := s3.New(c.Options(), func(o *s3.Options) {
			o.Logger = sl
			o.HTTPClient = keepS3Connections(o.HTTPClient)
		})
		nb, err := s3blob.OpenBucket(ctx, client, u.Host, &o.Options)
		if err != nil {
			return nil, nil, err
		}
		return nb, nb.Close, nil
	}
}

// sdkLogger is a smithy-go logger writing to slog.
type sdkLogger struct{ l *slog.Logger }

func (s sdkLogger) Logf(c logging.Classification, format string, v ...any) {
	level := slog.LevelDebug
	if c == logging.Warn {
		level = slog.LevelInfo
	}
	ctx := context.Background()
	if !s.l.Enabled(ctx, level) {
		return
	}
	s.l.Log(ctx, level, fmt.Sprintf(format, v...), "source", "aws-sdk", "sdk_level", string(c))
}

// useSDKLogger routes the SDK's logs of a job that reads or writes s3://
// through cfg.Logger. Only such a job gets the opener, so that every other
// keeps the engine's own (which refuses mem://).
func useSDKLogger(cfg *pipeline.Config) {
	for _, s := range []string{cfg.Input, cfg.Output, cfg.Cache} {
		if u, err := url.Parse(s); err == nil && u.Scheme == s3blob.Scheme {
			cfg.Opener = sdkOpener(cfg.Logger)
			return
		}
	}
}
