package testhook

// Panic, when not empty, names the place where the engine panics:
// "decode" (a decode goroutine), "score" (a scoring goroutine), "main"
// (the job's own goroutine, after scoring and before publishing) or
// "publish" (the job's goroutine, once the result files are written and
// before the manifest is). Tests
// set it before a job starts and clear it after the job has returned.
var Panic string

// At panics when Panic names where.
func At(where string) {
	if Panic != "" && Panic == where {
		panic("test hook: a panic at " + where)
	}
}
