package storage

import (
	"errors"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"sync"
)

// Redact is the one function that removes secrets from anything crlbatch
// prints or writes: a location, an object URL, a log value, an error
// message. It removes
//
//   - the user part (user:password@) of every URL, the outer one and any
//     nested in a parameter;
//   - the value of every parameter whose name looks like a secret (key,
//     secret, token, sig, password, credential, …), at any depth, and in
//     a location URL (s3://, gs://, azblob://, file://) of every
//     parameter the drivers do not know (locationParams);
//   - the same inside parameter values that hold a URL or a query string,
//     percent-encoded once, twice or not at all (endpoint=http%3A%2F%2F
//     AKIA…%3Ahunter2%40127.0.0.1%3A7070), each value redacted as what it
//     decodes to and encoded back;
//   - in free text (a driver's error quoting a request), the same in every
//     URL-like word, and any name=value whose name looks like a secret;
//   - last, every secret found so far in a location this process parsed
//     (ParseLocation remembers them), in whatever encoding it appears: a
//     driver may quote an endpoint's user name in a message of its own.
//
// Parameters that hold no secret keep their order and encoding.
func Redact(s string) string {
	return redactKnown(redactText(s, nil, 0))
}

// redacted is what replaces a secret.
const redacted = "REDACTED"

// maxDepth bounds the nesting (and decoding) Redact follows; deeper text
// is redacted by the patterns for free text alone.
const maxDepth = 5

var (
	secretName = regexp.MustCompile(`(?i)(key|secret|token|sig|passw|pwd|credential|sas|signature|auth|session|private)`)
	// secretInText finds name=value pairs whose name looks like a secret
	// in free text, raw or percent-encoded (%3D for =).
	secretInText = regexp.MustCompile(`(?i)([a-z0-9_.-]*(?:key|secret|token|sig|passw|pwd|credential|sas|signature|auth|session|private)[a-z0-9_.-]*(?:=|%3D|%253D))((?:[^&\s"')<>,;%]|%(?:[013-9a-fA-F][0-9a-fA-F]|2[0-57-9a-fA-F]))+)`)
	// userinfoInText finds a URL's user part, raw or percent-encoded, up
	// to the last @ before the end of the authority: a password may hold
	// an unencoded "/".
	userinfoInText = regexp.MustCompile(`(?i)(://|%3A%2F%2F|%253A%252F%252F)([^\s"'<>?#&@]*)(@|%40|%2540)`)
	urlStart       = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*://`)
)

func isSecretName(name string) bool { return secretName.MatchString(name) }

// locationParams are the parameters of a location URL (s3://, gs://,
// azblob://, file://) that gocloud.dev's drivers know and that hold no
// secret: every other parameter of such a URL loses its value, whatever
// its name. A parameter no driver knows fails the job as a usage error
// whose message quotes the URL, and a secret under a name secretName
// misses (passphrase=, pw=, cred=) was printed (round 27, breakit5).
var locationParams = map[string]bool{
	// s3blob and gocloud.dev/aws
	"region": true, "endpoint": true, "profile": true, "dualstack": true, "fips": true,
	"rate_limiter_capacity": true, "anonymous": true, "role": true, "role_duration": true,
	"awssdk": true, "hostname_immutable": true, "request_checksum_calculation": true,
	"response_checksum_validation": true, "ssetype": true, "accelerate": true,
	"disable_https": true, "use_path_style": true, "s3ForcePathStyle": true,
	// gcsblob
	"access_id": true,
	// azureblob
	"domain": true, "protocol": true, "cdn": true, "localemu": true, "storage_account": true,
	// fileblob
	"create_dir": true, "base_url": true, "metadata": true, "dir_file_mode": true, "no_tmp_dir": true,
	// blob
	"prefix": true,
}

// locationSchemes are the schemes whose parameters are locationParams.
var locationSchemes = map[string]bool{"s3": true, "gs": true, "azblob": true, "file": true, "mem": true}

// redactText redacts free text word by word; found, when not nil, is told
// every secret removed.
func redactText(s string, found func(string), depth int) string {
	if !strings.ContainsAny(s, " \t\r\n\"'<>`") {
		return redactWord(s, found, depth)
	}
	var b strings.Builder
	start := -1
	for i, r := range s {
		sep := strings.ContainsRune(" \t\r\n\"'<>`", r)
		switch {
		case sep && start >= 0:
			b.WriteString(redactWord(s[start:i], found, depth))
			start = -1
			b.WriteRune(r)
		case sep:
			b.WriteRune(r)
		case start < 0:
			start = i
		}
	}
	if start >= 0 {
		b.WriteString(redactWord(s[start:], found, depth))
	}
	return b.String()
}

// redactWord redacts one word: a URL, a query string, a percent-encoded
// form of either, or anything else (patterns only).
func redactWord(w string, found func(string), depth int) string {
	if depth > maxDepth {
		return redactPatterns(w, found)
	}
	if urlStart.MatchString(w) {
		if r, ok := redactURL(w, found, depth); ok {
			return redactPairs(r, found) // the parser found the user part
		}
	} else if strings.Contains(w, "=") {
		return redactPatterns(redactQuery(w, false, found, depth), found)
	} else if strings.Contains(w, "%") {
		if d, err := url.QueryUnescape(w); err == nil && d != w {
			if r := redactText(d, found, depth+1); r != d {
				return url.QueryEscape(r)
			}
		}
	}
	return redactPatterns(w, found)
}

// redactURL redacts a URL's user part and its parameters; ok is false when
// w does not parse.
func redactURL(w string, found func(string), depth int) (string, bool) {
	u, err := url.Parse(w)
	if err != nil {
		return "", false
	}
	changed := false
	if u.User != nil {
		if found != nil {
			found(u.User.Username())
			if p, ok := u.User.Password(); ok {
				found(p)
			}
		}
		u.User = url.User(redacted)
		changed = true
	}
	// "h:12/x@host": a password with an unencoded "/" parses as a port
	// and a path; the patterns below take the whole user part.
	if u.User == nil && strings.Contains(u.Host, ":") && strings.Contains(u.Path, "@") {
		return w, false
	}
	if u.RawQuery != "" {
		if q := redactQuery(u.RawQuery, locationSchemes[strings.ToLower(u.Scheme)], found, depth); q != u.RawQuery {
			u.RawQuery = q
			changed = true
		}
	}
	if !changed {
		return w, true
	}
	return u.String(), true
}

// redactQuery redacts a query string (a=b&c=d, or one name=value): the
// values of secret names (in a location's, of every name but
// locationParams), and each other value as what it decodes to.
func redactQuery(q string, location bool, found func(string), depth int) string {
	parts := strings.Split(q, "&")
	changed := false
	for i, p := range parts {
		name, value, ok := strings.Cut(p, "=")
		if !ok || value == "" {
			continue
		}
		dn, err := url.QueryUnescape(name)
		if err != nil {
			dn = name
		}
		if isSecretName(dn) || location && !locationParams[dn] {
			if found != nil {
				if dv, err := url.QueryUnescape(value); err == nil {
					found(dv)
				}
				found(value)
			}
			parts[i] = name + "=" + redacted
			changed = true
			continue
		}
		dv, err := url.QueryUnescape(value)
		if err != nil {
			dv = value
		}
		if r := redactText(dv, found, depth+1); r != dv {
			parts[i] = name + "=" + url.QueryEscape(r)
			changed = true
		}
	}
	if !changed {
		return q
	}
	return strings.Join(parts, "&")
}

// redactPatterns is the net under the parsers: user parts and secret
// name=value pairs anywhere in w, raw or percent-encoded.
func redactPatterns(w string, found func(string)) string {
	return redactPairs(redactUserinfo(w, found), found)
}

func redactUserinfo(w string, found func(string)) string {
	return userinfoInText.ReplaceAllStringFunc(w, func(m string) string {
		sub := userinfoInText.FindStringSubmatch(m)
		if sub[2] == redacted || sub[2] == "" {
			return m
		}
		if found != nil {
			found(sub[2])
		}
		return sub[1] + redacted + sub[3]
	})
}

func redactPairs(w string, found func(string)) string {
	return secretInText.ReplaceAllStringFunc(w, func(m string) string {
		sub := secretInText.FindStringSubmatch(m)
		if sub[2] == redacted {
			return m
		}
		if found != nil {
			found(sub[2])
		}
		return sub[1] + redacted
	})
}

// The secrets of the locations this process parsed, so that Redact finds
// them in messages of any shape.
var (
	knownMu sync.RWMutex
	known   []string // longest first
)

// minKnown is the shortest secret Redact replaces wherever it appears
// (shorter ones would blot out ordinary words); the parsers above still
// remove them where they stand in a URL.
const minKnown = 6

// rememberSecrets records the secrets of a location as given.
func rememberSecrets(raw string) {
	var add []string
	collect := func(s string) {
		for _, part := range splitUserinfo(s) {
			if len(part) >= minKnown && part != redacted {
				add = append(add, part)
			}
		}
	}
	redactText(raw, collect, 0)
	if len(add) == 0 {
		return
	}
	knownMu.Lock()
	defer knownMu.Unlock()
	seen := map[string]bool{}
	for _, s := range known {
		seen[s] = true
	}
	for _, s := range add {
		if !seen[s] {
			seen[s] = true
			known = append(known, s)
		}
	}
	sort.Slice(known, func(i, j int) bool { return len(known[i]) > len(known[j]) })
}

// splitUserinfo returns s, its decoded forms, for a user part its user and
// password, and the pieces of each between punctuation.
func splitUserinfo(s string) []string {
	out := []string{s}
	for _, d := range []string{s} {
		if u, err := url.PathUnescape(d); err == nil && u != s {
			out = append(out, u)
		}
		if u, err := url.QueryUnescape(d); err == nil && u != s {
			out = append(out, u)
		}
	}
	for _, d := range append([]string(nil), out...) {
		if user, pass, ok := strings.Cut(d, ":"); ok {
			out = append(out, user, pass)
		}
		// Pieces between punctuation: a parser may quote a secret only up
		// to its first "/" or "+" (invalid port ":AbCd…").
		out = append(out, strings.FieldsFunc(d, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-')
		})...)
	}
	return out
}

// redactKnown replaces the remembered secrets in s, in the encodings a
// message may hold them.
func redactKnown(s string) string {
	knownMu.RLock()
	defer knownMu.RUnlock()
	for _, k := range known {
		for _, form := range []string{k, url.QueryEscape(k), url.PathEscape(k), url.QueryEscape(url.QueryEscape(k))} {
			if strings.Contains(s, form) {
				s = strings.ReplaceAll(s, form, redacted)
			}
		}
	}
	return s
}

type redactedErr struct{ err error }

func (r redactedErr) Error() string { return Redact(r.err.Error()) }
func (r redactedErr) Unwrap() error { return r.err }

// RedactErr wraps err so that its message is Redact'ed; errors.Is and
// errors.As still see the cause. Wrapping twice is wrapping once.
func RedactErr(err error) error {
	if err == nil {
		return nil
	}
	var r redactedErr
	if errors.As(err, &r) {
		return err
	}
	return redactedErr{err}
}
