package storage

import (
	"context"
	"errors"
	"io/fs"
	"net"
	"net/url"
	"path"
	"path/filepath"
	"strings"
	"time"
)

// Within reports whether the location out lies inside the folder or
// prefix in, where a later run over in would read out's files. It compares
// canonical locations: for local ones, folders with every symbolic link
// resolved (out need not exist yet: its nearest existing ancestor is
// resolved); for buckets, the scheme, the bucket, the store's endpoint
// (scheme, host by its addresses so that localhost is 127.0.0.1, port,
// path) and the key prefix with "." and ".." segments and doubled slashes
// cleaned. Other parameters (region, path style, checksums, credentials)
// name the same objects and are ignored. An INPUT naming a single object
// holds nothing else.
func Within(out, in Location) bool {
	if in.Path != "" && in.Local {
		return false
	}
	if out.Local != in.Local {
		return false
	}
	if out.Local {
		od, id := resolveDir(out.localDir()), resolveDir(in.localDir())
		return od == id || strings.HasPrefix(od, strings.TrimSuffix(id, string(filepath.Separator))+string(filepath.Separator))
	}
	ou, err1 := url.Parse(out.BucketURL)
	iu, err2 := url.Parse(in.BucketURL)
	if err1 != nil || err2 != nil {
		return out.BucketURL == in.BucketURL && strings.HasPrefix(out.Prefix, in.Prefix)
	}
	if !strings.EqualFold(ou.Scheme, iu.Scheme) || !strings.EqualFold(ou.Host, iu.Host) {
		return false
	}
	for _, p := range identityParams[strings.ToLower(ou.Scheme)] {
		if !sameEndpoint(ou.Query().Get(p), iu.Query().Get(p)) {
			return false
		}
	}
	op, ip := cleanPrefix(out.Prefix), cleanPrefix(in.Prefix)
	return strings.HasPrefix(op, ip)
}

// identityParams are the parameters of a bucket URL that change which
// store it names; the others change only how it is reached.
var identityParams = map[string][]string{
	"s3":     {"endpoint"},
	"azblob": {"domain", "storage_account"},
}

// cleanPrefix normalises a key prefix: "a//b/./c/../d/" is "a/b/d/".
func cleanPrefix(p string) string {
	if p == "" {
		return ""
	}
	c := strings.TrimPrefix(path.Clean("/"+p), "/")
	if c == "" {
		return ""
	}
	return c + "/"
}

// resolveDir resolves every link of dir's nearest existing ancestor and
// appends the rest.
func resolveDir(dir string) string {
	dir = filepath.Clean(dir)
	rest := ""
	for {
		if r, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(r, rest)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return filepath.Join(dir, rest)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return filepath.Join(dir, rest)
		}
		rest = filepath.Join(filepath.Base(dir), rest)
		dir = parent
	}
}

// sameEndpoint compares two endpoints (URLs, or bare hosts as azblob's
// domain): scheme, host by its addresses, port (the scheme's default when
// absent) and path.
func sameEndpoint(a, b string) bool {
	if a == b {
		return true
	}
	if a == "" || b == "" {
		return false
	}
	pa, pb := parseEndpoint(a), parseEndpoint(b)
	return pa.scheme == pb.scheme && pa.port == pb.port && pa.path == pb.path && sameHost(pa.host, pb.host)
}

type endpoint struct{ scheme, host, port, path string }

func parseEndpoint(s string) endpoint {
	if !urlStart.MatchString(s) {
		s = "https://" + s
	}
	u, err := url.Parse(s)
	if err != nil {
		return endpoint{host: strings.ToLower(s)}
	}
	e := endpoint{scheme: strings.ToLower(u.Scheme), host: strings.ToLower(u.Hostname()), port: u.Port(),
		path: strings.Trim(path.Clean("/"+u.Path), "/")}
	if e.port == "" {
		e.port = map[string]string{"http": "80", "https": "443"}[e.scheme]
	}
	return e
}

// sameHost reports whether two host names (or addresses) name one host:
// equal, or sharing an address.
func sameHost(a, b string) bool {
	if a == b {
		return true
	}
	aa, ab := addrs(a), addrs(b)
	for _, x := range aa {
		for _, y := range ab {
			if x.Equal(y) {
				return true
			}
		}
	}
	return false
}

// resolveTimeout bounds a host lookup of the inside-input check.
const resolveTimeout = 2 * time.Second

func addrs(host string) []net.IP {
	if ip := net.ParseIP(host); ip != nil {
		return []net.IP{ip}
	}
	ctx, cancel := context.WithTimeout(context.Background(), resolveTimeout)
	defer cancel()
	found, err := net.DefaultResolver.LookupHost(ctx, host)
	if err != nil {
		return nil
	}
	var out []net.IP
	for _, f := range found {
		if ip := net.ParseIP(f); ip != nil {
			out = append(out, ip)
		}
	}
	return out
}
