package integration

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// secrets are the values that must never be printed: the test secret key,
// Azurite's account key, wrong keys handed in by the test, and a secret in
// a URL query; also signatures and Authorization headers made from them.
var secrets = []string{S3SecretKey, AzuriteKey, url.QueryEscape(AzuriteKey), "wrong-secret-4711",
	"d3JvbmcgYWNjb3VudCBrZXkgNDcxMQ==", "url-secret-0815"}

var signatureMarks = []string{"X-Amz-Signature", "Signature=", "SharedKey " + AzuriteAccount + ":", "Authorization:"}

func assertNoSecret(t *testing.T, what, text string) {
	t.Helper()
	for _, s := range secrets {
		if strings.Contains(text, s) {
			t.Errorf("%s contains the secret %q:\n%s", what, s, tail(text, 20))
		}
	}
	for _, s := range signatureMarks {
		if strings.Contains(text, s) {
			t.Errorf("%s contains a signature or Authorization header (%q):\n%s", what, s, tail(text, 20))
		}
	}
}

// TestNoSecretInOutput runs jobs that succeed and jobs that fail (a
// persistent fault, a wrong key, a secret in the URL) at --log-level debug
// with progress on, and checks that no secret appears in stdout, stderr or
// manifest.json.
func TestNoSecretInOutput(t *testing.T) {
	ctx := context.Background()
	for _, name := range []string{"s3", "gcs", "azure"} {
		t.Run(name+" success", func(t *testing.T) {
			t.Parallel()
			f := getFixture(t)
			c := getCloud(t, name)
			prefix := "secrets-ok"
			r := f.crl(ctx, nil, nil, append([]string{"score", c.url(inBucket, inPrefix), "--out", c.url(outBucket, prefix),
				"--log-level", "debug"}, scoreFlags...)...)
			if r.code != 0 {
				t.Fatal(r)
			}
			if !strings.Contains(r.stderr, "level=DEBUG") && !strings.Contains(r.stderr, "level=INFO") {
				t.Logf("no debug or info log line on stderr: the check covers less than it should")
			}
			assertNoSecret(t, "stdout", r.stdout)
			assertNoSecret(t, "stderr", r.stderr)
			dir, _ := download(t, c, prefix)
			m, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
			if err != nil {
				t.Fatal(err)
			}
			assertNoSecret(t, "manifest.json", string(m))
		})
	}
	t.Run("s3 persistent fault", func(t *testing.T) {
		t.Parallel()
		f, _, _, url := faultyS3(t, Always(And(Kinds("get"), KeySuffix(singleKey)), Truncate))
		r := f.crl(ctx, nil, nil, append([]string{"score", url(inBucket, inPrefix), "--out", url(outBucket, "secrets-fault"),
			"--log-level", "debug"}, scoreFlags...)...)
		if r.code != 3 {
			t.Errorf("want exit 3, got %s", r)
		}
		assertNoSecret(t, "stdout", r.stdout)
		assertNoSecret(t, "stderr", r.stderr)
	})
	t.Run("s3 wrong secret", func(t *testing.T) {
		t.Parallel()
		f := getFixture(t)
		c := getCloud(t, "s3")
		r := f.crl(ctx, []string{"AWS_SECRET_ACCESS_KEY=wrong-secret-4711"}, nil, append([]string{"score", c.url(inBucket, inPrefix),
			"--out", c.url(outBucket, "secrets-wrong"), "--log-level", "debug"}, scoreFlags...)...)
		t.Logf("exit %d: %s", r.code, strings.TrimSpace(r.stderr))
		if r.code != 3 {
			t.Errorf("want exit 3 (storage: access denied), got %s", r)
		}
		assertNoSecret(t, "stdout", r.stdout)
		assertNoSecret(t, "stderr", r.stderr)
	})
	t.Run("azure wrong key", func(t *testing.T) {
		t.Parallel()
		f := getFixture(t)
		c := getCloud(t, "azure")
		r := f.crl(ctx, []string{"AZURE_STORAGE_KEY=d3JvbmcgYWNjb3VudCBrZXkgNDcxMQ=="}, nil, append([]string{"score", c.url(inBucket, inPrefix),
			"--out", c.url(outBucket, "secrets-wrong"), "--log-level", "debug"}, scoreFlags...)...)
		t.Logf("exit %d: %s", r.code, strings.TrimSpace(r.stderr))
		if r.code != 3 {
			t.Errorf("want exit 3 (storage: authentication failed), got %s", r)
		}
		assertNoSecret(t, "stdout", r.stdout)
		assertNoSecret(t, "stderr", r.stderr)
	})
	t.Run("secret in the URL", func(t *testing.T) {
		t.Parallel()
		f := getFixture(t)
		c := getCloud(t, "s3")
		in := c.url(inBucket, inPrefix) + "&secret_access_key=url-secret-0815"
		r := f.crl(ctx, nil, nil, append([]string{"score", in, "--out", c.url(outBucket, "secrets-url"), "--log-level", "debug"}, scoreFlags...)...)
		t.Logf("exit %d: %s", r.code, strings.TrimSpace(r.stderr))
		if r.code != 2 {
			t.Errorf("an unknown URL parameter is a usage error: want exit 2, got %d", r.code)
		}
		assertNoSecret(t, "stdout", r.stdout)
		assertNoSecret(t, "stderr", r.stderr)
	})
}
