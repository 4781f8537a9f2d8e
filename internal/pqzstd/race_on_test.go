//go:build race

package pqzstd

// raceEnabled: under the race detector every call of arrow-go's codec takes
// most of a second (its encoders' tables are shadowed afresh), so the
// comparison with it runs on fewer levels and pages there.
const raceEnabled = true
