// Package stop is how crlbatch and crlbatch-beam end at a signal (Run):
// SIGINT, SIGTERM, SIGHUP and SIGQUIT cancel the command's context, which
// cleans up as on any error, and the process exits 128 plus the signal's
// number; SIGQUIT first prints every goroutine's stack; a signal ignored at
// start (SIGHUP under nohup) stays ignored; the first signal is logged at
// info level, and a second one exits at once, naming on stderr what the
// clean-up may not have removed yet (docs/decisions.md).
package stop
