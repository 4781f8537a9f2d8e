package pipeline

import (
	"sort"
	"strings"

	"github.com/crlbatch/crlbatch/storage"
)

// The error types of the exit statuses live in storage; these names are
// the same types.
type (
	// UsageError is a bad flag, value or combination (exit status 2).
	UsageError = storage.UsageError
	// DataError is bad input data found after decoding (exit status 1).
	DataError = storage.DataError
	// StorageError is a failure of the blob store that persisted through
	// the retries (exit status 3).
	StorageError = storage.StorageError
)

// Usagef returns a *UsageError.
func Usagef(format string, args ...any) error { return storage.Usagef(format, args...) }

// IsStorage reports whether err is a storage error.
func IsStorage(err error) bool { return storage.IsStorage(err) }

// Closest orders names by their edit distance to want, closest first
// (ties in their given order), for "did you mean" lists in usage errors.
func Closest(want string, names []string) []string {
	type scored struct {
		name string
		d    int
	}
	s := make([]scored, len(names))
	for i, n := range names {
		s[i] = scored{n, EditDistance(want, n)}
	}
	sort.SliceStable(s, func(a, b int) bool { return s[a].d < s[b].d })
	out := make([]string, len(s))
	for i := range s {
		out[i] = s[i].name
	}
	return out
}

// EditDistance is the Levenshtein distance between a and b, in runes,
// ignoring case.
func EditDistance(a, b string) int {
	ra, rb := []rune(strings.ToLower(a)), []rune(strings.ToLower(b))
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
