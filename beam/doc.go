// Package crlbeam runs crlbatch's scoring on Apache Beam (the Go SDK):
// the same steps as the local job (pipeline.Engine), the same published
// files to the byte, on any Beam runner: Prism in the process, Google
// Cloud Dataflow, Flink or Spark through a portable job server.
//
// The pipeline (Build): the objects listed at construction → Reshuffle →
// decode each object into run pieces keyed by run key (the decoder's
// binary codec, scoring.Codec; bytes, so Beam's own bytes coder moves
// them) → GroupByKey on run key → assemble and score each run (pieces in
// object key order) → key by family → GroupByKey, each family's runs in
// canonical order → one final step, which reduces, renders and publishes
// with the local job's writers and rules (pipeline.Engine.Finish). A job
// that needs a pass over every run before scoring (scoring.Preparer: a
// ceiling from the data) sends its decoded objects to the final step,
// which scores them as the local job does.
//
// Every DoFn is registered (register package): nothing is built by
// reflection at run time. The job travels to the workers as Spec (JSON).
// A failed DoFn's error reaches Main as the runner's text only: it carries
// crlbatch's exit status on its last line (carryStatus), and Main prints
// it, as everything it prints, redacted.
// crlbatch score's flags are crlbatch's own (internal/scoreflags: their
// definitions, reading and checks), so a bad value gets crlbatch's
// message and status, and `crlbatch-beam score --help` lists them under
// their own help text (scoreCommand). This package holds no protocol code: protocols.go
// blank-imports the protocols, which register themselves.
package crlbeam
