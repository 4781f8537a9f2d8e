// Package scoreflags defines and reads the flags of `crlbatch score` that
// shape a result, once for the two programs that take them: crlbatch
// (cmd/crlbatch: score and validate) and crlbatch-beam (beam/, a nested
// module of this repository, which may import it: its import path is
// under github.com/crlbatch/crlbatch). Both build their urfave/cli
// commands from InputFlags, ResultFlags and ProtocolFlags, fill a
// pipeline.Config with ReadInput and ReadResult, and rewrite urfave/cli's
// parse errors with ExplainUsage, so a value one refuses the other refuses
// with the same message and exit status. Flags of crlbatch alone (--config,
// --cache, --memory-limit, --spill-dir, --concurrency, --figures, the
// hidden development flags) stay in cmd/crlbatch.
//
// The protocols' flags are those of the protocols registered when the
// flags are built (scoring.Protocols): each program blank-imports them
// (cmd/crlbatch/protocols.go, beam/protocols.go).
package scoreflags
