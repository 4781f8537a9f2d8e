package bidi

import "strings"

// Close returns s with the bidi embeddings, overrides and isolates it
// leaves open closed at its end (U+202C for an embedding or override,
// U+2069 for an isolate, innermost first), as the Unicode bidi algorithm
// matches them: a name holding a right-to-left override (U+202E) left
// open reversed the rest of the sentence it sits in ("… p is 0.5000"
// drawn "0005.0 si p …"). A name without one is returned as it is.
func Close(s string) string {
	if !strings.ContainsAny(s, "\u202a\u202b\u202d\u202e\u2066\u2067\u2068") {
		return s
	}
	var open []rune
	for _, r := range s {
		switch r {
		case '\u202a', '\u202b', '\u202d', '\u202e', '\u2066', '\u2067', '\u2068':
			open = append(open, r)
		case '\u202c': // closes an embedding or override, not an isolate
			if n := len(open); n > 0 && open[n-1] < '\u2066' {
				open = open[:n-1]
			}
		case '\u2069': // closes the innermost isolate and what it holds
			j := len(open) - 1
			for j >= 0 && open[j] < '\u2066' {
				j--
			}
			if j >= 0 {
				open = open[:j]
			}
		}
	}
	if len(open) == 0 {
		return s
	}
	var b strings.Builder
	b.WriteString(s)
	for i := len(open) - 1; i >= 0; i-- {
		if open[i] >= '\u2066' {
			b.WriteRune('\u2069')
		} else {
			b.WriteRune('\u202c')
		}
	}
	return b.String()
}
