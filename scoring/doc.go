// Package scoring is the seam between crlbatch's engines and its protocols,
// in the way gocloud.dev registers blob drivers: an engine (the local one in
// pipeline, or another driving the same steps elsewhere) knows only the
// interfaces here, and each protocol is one package that implements them and
// registers itself from its init function (Register). The command line
// blank-imports the protocol packages, builds --protocol's choices, the
// protocols' flags and their help from the registry (Protocols, Lookup).
//
// A Protocol declares itself (Description: its row fields, identity and
// group-by defaults, flags and defaults, outputs) and binds flag values and
// the engine's settings into a Job. A Job's steps take and return plain
// values, so that any engine can drive them:
//
//	Decoder().Decode      one object → Object (its runs' rows, keyed by run key)
//	Decoder().Assemble    every Object → Run, one at a time, in canonical order
//	Prepare (Preparer)    optional pass over every run kept (a ceiling from the data)
//	Score                 one Run → Scored (seed values by metric, notes, the protocol's result)
//	Fold (Folder)         optional: each Scored, with its family, in canonical order as
//	                      runs finish (skyfall merges its curves; memory flat in runs)
//	Metrics               the metrics of families.parquet, in order
//	  (the engine reduces the scored runs to families with protocol/family)
//	Render                Results → Rendered (Parquet tables, report.md, crlbatch.params,
//	                      its notes, and warnings the engine logs on stderr)
//	Figures (Figurer)     optional: Results → Drawn (figures, curves.parquet); the
//	                      engine renders them to figure-*.svg|png and builds
//	                      report.md's Figures section and report.html
//
// The engine owns everything else: listing, reading with retries, bounded
// concurrency, chunked decoding (Splitter), spilling (Spiller), --where,
// --min-steps, --max-bad-rows, the reduction, Parquet encoding, publishing.
// A protocol package does no storage I/O of its own (it may read the local
// files its flags name), starts no goroutine, and keeps its math in
// protocol/. scoring/protocoltest is the conformance suite every registered
// protocol passes.
//
// A Decoder that implements Codec can write its decoded objects to bytes
// and read them back, the runs assembled from them identical to the bit:
// the engine's --cache stores them, and another engine can ship them
// between workers. CodecKey names what decoding depends on besides the
// object, so that an option that changes decoding changes the key. A
// Codec that is also a Resumer continues an object read back from its
// entry with the lines appended to the object since (skyfall's, through
// readers.ResumeObject): the engine decodes only those, when the object's
// earlier bytes are still its first.
//
// A Decoder that implements LightAssembler hands the Preparer's pass runs
// holding only what Prepare reads (skyfall's by_configuration ceiling:
// each label's rows and final rows, counted on the engine's goroutines
// part by part), with Assemble's errors in Assemble's order.
//
// A Preparer that is also a Contributor can replay its pass from what each
// run contributes to it (PrepareFrom) and say what the result gives one run
// (PreparedFor): the engine's --cache keeps each run's contribution and
// scored run (AppendScored, with the job's ScoredCodec), and serves the
// scored run of an unchanged run whose PreparedFor is unchanged. A
// Reapplier can also bring such a scored run to a moved preparation
// (skyfall: pooled ceilings that moved), exactly, or say it cannot.
// AppendScored writes, and skyfall's ScoredCodec uses, AppendExact: the
// exact bits of a value of plain Go types (structs, slices, maps keyed by
// strings, pointers, numbers, strings), every float to the bit and nil
// apart from empty, read back by DecodeExact without a parser.
//
// A Decoder that implements ParquetDecoder reads a Parquet trace object's
// columns itself (skyfall's, through readers.DecodeParquet), with the
// result Decode gives for the same rows as JSON Lines; the engine reads a
// Parquet object of any other decoder as those JSON Lines
// (readers.ParquetLines).
//
// UsageError and DataError are the engine's error kinds; a row error is a
// *readers.DataError naming its object and line.
package scoring
