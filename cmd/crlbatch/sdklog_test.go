package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crlbatch/crlbatch/integration"
)

// TestSDKLogsOnlyAtDebug scores a sweep from a real S3 server (versitygw,
// as integration/ starts it) in a process of its own, since the AWS SDK's
// default logger writes to the process's stderr: at the default log level
// stderr holds none of the SDK's lines (issue 12: nine "SDK … DEBUG
// Response has no supported checksum" lines per run before); at
// --log-level debug they are there, as structured log lines.
//
// Not parallel (see TestMain): it sets the SDK environment with t.Setenv
// (process-wide).
func TestSDKLogsOnlyAtDebug(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an S3 server")
	}
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	bin, err := integration.FindTool(repo, "versitygw")
	if err != nil {
		if os.Getenv("CRLBATCH_REQUIRE_INTEGRATION") == "1" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	dir := sharedDir(t)
	data := filepath.Join(dir, "data")
	for _, b := range []string{"crl-in", "crl-out"} {
		if err := os.MkdirAll(filepath.Join(data, b), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv, err := integration.StartVersitygw(ctx, bin, data, integration.ServerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	for k, v := range map[string]string{
		"AWS_ACCESS_KEY_ID": integration.S3AccessKey, "AWS_SECRET_ACCESS_KEY": integration.S3SecretKey,
		"AWS_REGION": integration.S3Region, "AWS_EC2_METADATA_DISABLED": "true",
		"AWS_CONFIG_FILE": os.DevNull, "AWS_SHARED_CREDENTIALS_FILE": os.DevNull,
	} {
		t.Setenv(k, v)
	}
	// The URL a user writes: the SDK's default checksum settings, which
	// versitygw's responses do not satisfy (the chatter of issue 12).
	s3 := func(bucket, prefix string) string {
		return fmt.Sprintf("s3://%s/%s?endpoint=%s&use_path_style=true&region=%s",
			bucket, prefix, url.QueryEscape("http://"+srv.Addr), integration.S3Region)
	}
	// Objects put in the server's folder carry no checksum, as those of
	// tools that send none: reading them is what makes the SDK log.
	if err := os.CopyFS(filepath.Join(data, "crl-in", "sweep"), os.DirFS("../../configs/example-sweep")); err != nil {
		t.Fatal(err)
	}
	for i, level := range []string{"", "info", "debug"} {
		args := []string{"score", s3("crl-in", "sweep/"), "--out", s3("crl-out", fmt.Sprintf("r%d/", i)), "--quiet", "--bootstrap-resamples", "50"}
		if level != "" {
			args = append(args, "--log-level", level)
		}
		code, _, stderr := helper(t, dir, false, 2*time.Minute, args...)
		if code != 0 {
			t.Fatalf("score (log level %q): exit %d: %s", level, code, stderr)
		}
		sdk := strings.Contains(stderr, "SDK ") || strings.Contains(stderr, "no supported checksum")
		switch level {
		case "", "info":
			if sdk || strings.Contains(stderr, "DEBUG") {
				t.Errorf("log level %q: stderr holds the SDK's debug lines:\n%s", level, stderr)
			}
		case "debug":
			if !strings.Contains(stderr, "level=DEBUG") || !strings.Contains(stderr, "no supported checksum") || !strings.Contains(stderr, "source=aws-sdk") {
				t.Errorf("--log-level debug: stderr lacks the SDK's lines as structured logs (source=aws-sdk):\n%s", tail(stderr, 3000))
			}
			if strings.Contains(stderr, "\nSDK ") || strings.HasPrefix(stderr, "SDK ") {
				t.Errorf("--log-level debug: the SDK still logs through its own logger:\n%s", tail(stderr, 3000))
			}
		}
	}
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}
