package readers

import "github.com/crlbatch/crlbatch/protocol/skyfall"

// UseSlabs says whether the decoded rows' full-size chunks are carved out
// of shared slabs advised for huge pages (skyfall.UseSlabs), for the
// chunks made after the call, in every decoder of the process: the
// pipeline decides it per read step, without naming a protocol.
func UseSlabs(on bool) { skyfall.UseSlabs(on) }

// SlabsInUse reports the choice UseSlabs made last.
func SlabsInUse() bool { return skyfall.SlabsInUse() }
