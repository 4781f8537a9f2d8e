package pipeline

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
)

// LatestConfig says where to look for the newest result.
type LatestConfig struct {
	Output string
	Opener Opener
	Retry  RetryPolicy
}

// Latest returns the URL (credentials redacted) of the newest complete
// result under OUTPUT: in the nightly layout, the result LATEST names if
// its manifest is there, else the newest results/<attempt-id>/ that has
// one; in the one-off layout, OUTPUT itself when its manifest is there.
// No complete result is a *DataError (exit 1) saying what was looked for.
func Latest(ctx context.Context, cfg LatestConfig) (string, error) {
	if cfg.Output == "" {
		return "", Usagef("latest: missing OUTPUT")
	}
	if cfg.Retry == (RetryPolicy{}) {
		cfg.Retry = DefaultRetry()
	}
	out, err := ParseLocation(cfg.Output, false)
	if err != nil {
		return "", err
	}
	if out.Local && out.Path != "" && out.Prefix == "" {
		return "", Usagef("%s is a file: want the folder or prefix a job published into", out)
	}
	j := &job{cfg: &Config{Retry: cfg.Retry}, out: out}
	b, closeB, err := openBucket(ctx, cfg.Opener, out)
	if err != nil {
		return "", err
	}
	defer closeB()
	latest, ok, err := j.readLatest(ctx, b)
	if err != nil {
		return "", err
	}
	// A local folder's URL ends in a separator too, so that
	// "$(crlbatch latest OUT)families.parquet" names a file.
	url := func(prefix string) string {
		u := out.ObjectURL(prefix)
		if out.Local && !strings.HasSuffix(u, string(filepath.Separator)) {
			u += string(filepath.Separator)
		}
		return u
	}
	if id, isResult := strings.CutPrefix(latest, ResultsDir); ok && isResult && attemptID.MatchString(strings.TrimSuffix(id, "/")) {
		if done, err := j.exists(ctx, b, out.Prefix+latest+ManifestName); err != nil {
			return "", err
		} else if done {
			return url(out.Prefix + latest), nil
		}
	}
	st, err := j.scanHistory(ctx, b)
	if err != nil {
		return "", err
	}
	if id := st.newestComplete(); id != "" {
		return url(out.Prefix + ResultsDir + id + "/"), nil
	}
	if done, err := j.exists(ctx, b, out.Prefix+ManifestName); err != nil {
		return "", err
	} else if done {
		return url(out.Prefix), nil
	}
	return "", &DataError{Err: fmt.Errorf("%s holds no complete result: no %s naming one, no %s<attempt-id>/%s, no %s at its top", out, LatestName, ResultsDir, ManifestName, ManifestName)}
}
