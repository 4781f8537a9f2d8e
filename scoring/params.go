package scoring

import (
	"strings"

	"github.com/crlbatch/crlbatch/storage"
)

// UsageError and DataError are the engine's error kinds (exit statuses 2
// and 1): a protocol returns them for a bad parameter and for data that
// contradicts itself beyond one row. A *readers.DataError names an object
// and line.
type (
	UsageError = storage.UsageError
	DataError  = storage.DataError
)

// Usagef returns a *UsageError.
func Usagef(format string, args ...any) error { return storage.Usagef(format, args...) }

// Filter keeps runs whose metadata field equals one of Values (--where).
type Filter struct {
	Field  string
	Values []string
}

// DescribeWhere renders filters as given on the command line, or "none".
func DescribeWhere(fs []Filter) string {
	if len(fs) == 0 {
		return "none"
	}
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = f.Field + "=" + strings.Join(f.Values, "|")
	}
	return strings.Join(parts, ",")
}

// Common are the engine's parameters, the same for every protocol. A
// protocol's crlbatch.params embeds them after its own.
type Common struct {
	GroupBy            []string `json:"group_by"`
	Baseline           *string  `json:"baseline"`
	MinSteps           int      `json:"min_steps"`
	Where              []Filter `json:"where"`
	IdentityFields     []string `json:"identity_fields"`
	Patterns           []string `json:"patterns"`
	BootstrapResamples int      `json:"bootstrap_resamples"`
	BootstrapSeed      uint64   `json:"bootstrap_seed"`
	ConfidenceLevel    float64  `json:"confidence_level"`
}
