// Package testhook holds the places where crlbatch's own tests make the
// engine fail in ways no input can: a panic at a named place, to show that
// a bug ends the job cleanly (exit 70, nothing published, the claim and
// the spill files removed). Nothing outside the tests sets it; unset, each
// place costs one comparison of a string.
package testhook
