package storage

import (
	"net/url"
	"strings"
	"testing"
)

// TestRedactUnknownParameter (round 27, breakit5): a parameter of a
// location URL that no driver knows loses its value, whatever its name:
// `s3://b?passphrase=…` is a usage error ("unknown query parameter"), and
// its message printed the value, a secret under a name the list of secret
// names misses. The parameters the drivers know keep theirs.
func TestRedactUnknownParameter(t *testing.T) {
	const secret = "Hunter2Secret77"
	for _, name := range []string{"passphrase", "pw", "cred", "apitok", "bearer", "x", "Region2", "role_external_id"} {
		for _, in := range []string{
			"s3://b/p?region=us-east-1&" + name + "=" + secret,
			"gs://b/p?" + name + "=" + url.QueryEscape(secret+"/+="),
			"azblob://c/p?domain=127.0.0.1&" + name + "=" + secret,
			`open bucket s3://b?` + name + "=" + secret + `&region=x: unknown query parameter "` + name + `"`,
			"file:///data/x?" + name + "=" + secret,
		} {
			got := Redact(in)
			if strings.Contains(got, "Hunter2") || strings.Contains(got, "Secret77") || !strings.Contains(got, name+"="+redacted) {
				t.Errorf("Redact(%q) = %q", in, got)
			}
		}
	}
	for _, keep := range []string{
		"s3://b/p?endpoint=http%3A%2F%2F127.0.0.1%3A7070&region=us-east-1&use_path_style=true&request_checksum_calculation=when_required&response_checksum_validation=when_required&profile=lab&fips=true&dualstack=false&awssdk=v2&anonymous=true&hostname_immutable=true&rate_limiter_capacity=9&disable_https=true&accelerate=false&ssetype=AES256&role=arn:aws:iam::1:role%2Fr&role_duration=1h",
		"azblob://c/p?domain=127.0.0.1%3A10000&protocol=http&localemu=true&storage_account=devstoreaccount1&cdn=false",
		"gs://b/p?access_id=me@example.com&anonymous=true",
		"file:///data/out?create_dir=true&base_url=http://h/&metadata=skip&dir_file_mode=0755&no_tmp_dir=true&prefix=a/",
		"https://127.0.0.1:7070/b?list-type=2&prefix=ewc%2F&delimiter=%2F",
	} {
		if got := Redact(keep); got != keep {
			t.Errorf("Redact(%q) = %q, want it unchanged", keep, got)
		}
	}
}
