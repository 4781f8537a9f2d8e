// Package bidi closes the Unicode bidi controls a piece of text leaves
// open (Close), so that a name holding a right-to-left override does not
// reverse the text drawn after it: the reports (writers) and the figures'
// text (figures) use it.
package bidi
