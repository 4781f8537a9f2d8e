package pipeline

import "log/slog"

// LogLevelUsage is crlbatch score's --log-level usage.
const LogLevelUsage = "structured log `LEVEL` on stderr: debug, info, warn or error (debug adds the storage SDKs' own logs)"

// ParseLogLevel reads a --log-level value: debug, info, warn or error (as
// slog reads them, any case); anything else is a usage error.
func ParseLogLevel(s string) (slog.Level, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(s)); err != nil {
		return 0, Usagef("--log-level %q: want debug, info, warn or error", s)
	}
	return level, nil
}
