// Package pqzstd replaces arrow-go's zstd codec for Parquet pages with one
// that writes the same bytes at a fraction of the set-up cost. Importing it
// is enough: its init registers the codec for compress.Codecs.Zstd in the
// process (writers and readers import it, so every Parquet file crlbatch
// writes, results and `crlbatch convert`'s traces, goes through it).
//
// arrow-go v18's codec takes a *zstd.Encoder from a sync.Pool for every
// page and, when giving it back, calls Reset(nil) on it. EncodeAll, the only
// method the codec uses, never needs what Reset sets up: a streaming
// encoder's own match tables and block buffers (about 1.2 MiB at the
// default level), allocated on the first Reset of every pooled encoder.
// And a sync.Pool is emptied by the garbage collector, so after each
// collection the next pages build fresh encoders (tables for EncodeAll, then
// the unused streaming state again). A job writing its five result tables
// allocated about 6 MiB of encoder state this way, every page of it touched
// for the first time; under the race detector each such range is also
// shadowed, which made these set-ups most of a small job's time.
//
// This codec keeps encoders in a free list of its own (per level, at most
// keepPerLevel, held across collections) and never calls Reset on them. The
// encoders are built with arrow-go's options (zero frames, the level,
// concurrency 1, entropy coding of all literals) and EncodeAll resets its
// block encoder for every call, so the bytes are the same as arrow-go's for
// every input and level (TestSameBytesAsArrow). Decoding, Encode without a
// level and the streaming writers are arrow-go's own, unchanged.
package pqzstd
