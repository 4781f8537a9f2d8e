// Package protocol holds what every protocol of crlbatch shares: the Value
// type that carries a metric or the reason it is absent.
//
// The sub-packages compute the protocols themselves (skyfall, safecrl,
// contilab, skillshift), the statistics shared by all of them (stats) and the
// reduction of runs to families (family). Everything under protocol/ is pure:
// functions take in-memory data and parameters and return values. There is no
// I/O, no goroutine, no clock and no context here, so a second engine can call
// the same code and every function can be tested without a file.
//
// An unavailable number is never a zero or a NaN: it is a Value whose OK is
// false and whose Reason says why, and that reason travels to the Parquet
// reasons column and to the Markdown report.
package protocol
