// Package decodecand holds the benchmark that decides between crlbatch's
// JSON row decoder and the candidates issue 16 names for it: simdjson-go
// (SIMD structural indexing and a tape, as a full parser) and a structural
// index of our own in pure Go (SWAR, 64 bytes a block). It is a module of its
// own, as bench/duckdbq is, so that crlbatch's module does not depend on
// simdjson-go while the benchmark says it should not. Run it through
// bench/decode_candidates.sh, which writes the two sweep shapes' inputs and
// alternates the candidates round by round on one core; it is not run in CI.
package decodecand
