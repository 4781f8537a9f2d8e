package readers

import (
	"bytes"
	"math"
	"slices"
	"strconv"
)

// Canonical values. A JSON value's canonical form is a tag byte followed by
// its rendering (the text run metadata and run keys show):
//
//	's' string    the decoded string, as it is
//	'n' number    see appendNumber
//	'b' bool      true or false
//	'j' other     compact JSON: object keys sorted bytewise, numbers as
//	              appendNumber renders them, strings escaped minimally
//
// Two values are equal as JSON values exactly when their canonical forms
// are equal, and the tag keeps the string "1" apart from the number 1 even
// though both render as 1.
const (
	tagString = 's'
	tagNumber = 'n'
	tagBool   = 'b'
	tagJSON   = 'j'
)

// appendCanonical appends the canonical form of raw, a valid JSON value
// (never null) of the given kind.
func appendCanonical(dst, raw []byte, kind byte) []byte {
	switch kind {
	case kindString:
		return append(append(dst, tagString), decodeString(raw)...)
	case kindNumber:
		return appendNumber(append(dst, tagNumber), raw)
	case kindBool:
		return append(append(dst, tagBool), raw...)
	}
	d := rowDecoder{data: raw}
	return d.appendJSON(append(dst, tagJSON))
}

// render returns the rendering held by a canonical form.
func render(canon string) string { return canon[1:] }

// appendNumber renders a JSON number literal:
//
//   - an integer literal (no fraction, no exponent) as its digits, "-0" as 0;
//   - any other number by its nearest float64 v: when v is a whole number
//     with |v| ≤ 2^53, as that integer's digits (so 1.0, 1e0 and 1 are all
//     1); otherwise as strconv.FormatFloat(v, 'g', -1, 64): the shortest
//     decimal that parses back to v, in exponent form (1e-05, 2.5e+06) when
//     its decimal exponent is below -4 or at least 6 (see doc.go).
func appendNumber(dst, lit []byte) []byte {
	if bytes.IndexAny(lit, ".eE") < 0 {
		if string(lit) == "-0" {
			return append(dst, '0')
		}
		return append(dst, lit...)
	}
	v, _ := strconv.ParseFloat(unsafeString(lit), 64)
	if v == math.Trunc(v) && math.Abs(v) <= 1<<53 {
		return strconv.AppendInt(dst, int64(v), 10)
	}
	return strconv.AppendFloat(dst, v, 'g', -1, 64)
}

// appendJSON appends the canonical compact JSON of the (valid) value at d.pos.
func (d *rowDecoder) appendJSON(dst []byte) []byte {
	d.skipWS()
	switch d.peekKind() {
	case kindString:
		s, _ := d.scanString(true, nil)
		return appendQuoted(dst, s)
	case kindNumber:
		start := d.pos
		d.number(false)
		return appendNumber(dst, d.data[start:d.pos])
	case kindNull:
		d.pos += 4
		return append(dst, "null"...)
	case kindBool:
		if d.data[d.pos] == 't' {
			d.pos += 4
			return append(dst, "true"...)
		}
		d.pos += 5
		return append(dst, "false"...)
	case kindArray:
		d.pos++
		dst = append(dst, '[')
		d.skipWS()
		if d.data[d.pos] == ']' {
			d.pos++
			return append(dst, ']')
		}
		for {
			dst = d.appendJSON(dst)
			d.skipWS()
			if d.data[d.pos] == ']' {
				d.pos++
				return append(dst, ']')
			}
			d.pos++ // ','
			dst = append(dst, ',')
		}
	}
	// object
	type member struct{ key, val []byte }
	var members []member
	d.pos++
	d.skipWS()
	if d.data[d.pos] != '}' {
		for {
			d.skipWS()
			k, _ := d.scanString(true, nil)
			k = bytes.Clone(k)
			d.skipWS()
			d.pos++ // ':'
			v := d.appendJSON(nil)
			members = append(members, member{k, v})
			d.skipWS()
			if d.data[d.pos] == '}' {
				break
			}
			d.pos++ // ','
		}
	}
	d.pos++
	slices.SortFunc(members, func(a, b member) int { return bytes.Compare(a.key, b.key) })
	dst = append(dst, '{')
	for i, m := range members {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendQuoted(dst, m.key)
		dst = append(dst, ':')
		dst = append(dst, m.val...)
	}
	return append(dst, '}')
}

// appendQuoted writes s as a JSON string, escaping only '"', '\\' and the
// control characters (as \b \f \n \r \t, else \u00xx); every other
// character, non-ASCII included, is written as it is.
func appendQuoted(dst, s []byte) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for _, c := range s {
		switch {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c >= 0x20:
			dst = append(dst, c)
		case c == '\b':
			dst = append(dst, '\\', 'b')
		case c == '\f':
			dst = append(dst, '\\', 'f')
		case c == '\n':
			dst = append(dst, '\\', 'n')
		case c == '\r':
			dst = append(dst, '\\', 'r')
		case c == '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
		}
	}
	return append(dst, '"')
}

// describe renders a canonical value for an error message: strings quoted,
// everything else as rendered, with its JSON type.
func describe(canon string) string {
	switch canon[0] {
	case tagString:
		return strconv.Quote(canon[1:]) + " (string)"
	case tagNumber:
		return canon[1:] + " (number)"
	case tagBool:
		return canon[1:] + " (bool)"
	}
	if canon[1] == '[' {
		return canon[1:] + " (array)"
	}
	return canon[1:] + " (object)"
}
