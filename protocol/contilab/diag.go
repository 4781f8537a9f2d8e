package contilab

import "strings"

// SanitizeName turns a diagnostic name into the snake_case stem of its
// column, DiagPrefix + SanitizeName(name):
//
//   - ASCII letters are lower-cased, and a word boundary inside camelCase
//     becomes "_": before an upper-case letter that follows a lower-case
//     letter or a digit ("dormantRatio" → "dormant_ratio", "layer2Norm" →
//     "layer2_norm"), and before the last capital of an acronym that starts
//     a new word ("ECEPerTask" → "ece_per_task");
//   - every run of other characters (blanks, punctuation, "-", "_", non-ASCII
//     letters) becomes one "_" ("Dormant ratio (τ=0.025)" →
//     "dormant_ratio_0_025");
//   - no "_" is left at either end.
//
// A name with no ASCII letter or digit sanitizes to "", which Score rejects.
// Names that sanitize alike ("effectiveRank", "effective rank",
// "effective_rank") are one diagnostic.
func SanitizeName(name string) string {
	var b strings.Builder
	isUpper := func(c byte) bool { return c >= 'A' && c <= 'Z' }
	isLower := func(c byte) bool { return c >= 'a' && c <= 'z' }
	isDigit := func(c byte) bool { return c >= '0' && c <= '9' }
	pending := false
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !isUpper(c) && !isLower(c) && !isDigit(c) {
			// Bytes of a multi-byte UTF-8 rune are all ≥ 0x80, so they
			// land here one by one and collapse into one separator.
			pending = b.Len() > 0
			continue
		}
		if isUpper(c) && i > 0 {
			prev := name[i-1]
			if isLower(prev) || isDigit(prev) ||
				(isUpper(prev) && i+1 < len(name) && isLower(name[i+1])) {
				pending = b.Len() > 0
			}
		}
		if pending {
			b.WriteByte('_')
			pending = false
		}
		if isUpper(c) {
			c += 'a' - 'A'
		}
		b.WriteByte(c)
	}
	return b.String()
}
