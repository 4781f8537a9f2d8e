// Package testhook holds the places where crlbatch's own tests make the
// engine (and the cache's writes and prune) fail in ways no input can: a
// panic at a named place, to show that a bug ends the job cleanly (exit
// 70, nothing published, the claim and the spill files removed), a pause
// at a named place until the job is cancelled, to show that a signal
// arriving there ends it as cleanly (or to hold a job where a kill -9
// must land), and a stop for good, to show what a second signal during
// the clean-up does. Nothing outside the tests sets them; unset, each
// place costs one comparison of a string.
package testhook
