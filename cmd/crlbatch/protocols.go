package main

import (
	"github.com/crlbatch/crlbatch/internal/scoreflags"

	// The protocols crlbatch scores: each package registers itself with
	// scoring.Register. A new protocol is one package and one line here.
	_ "github.com/crlbatch/crlbatch/scoring/contilabscore"
	_ "github.com/crlbatch/crlbatch/scoring/safecrlscore"
	_ "github.com/crlbatch/crlbatch/scoring/skillshiftscore"
	_ "github.com/crlbatch/crlbatch/scoring/skyfallscore"
)

// protocolDefaults describes a per-protocol default for help
// (scoreflags.ProtocolDefaults; the protocol flags are scoreflags', shared
// with crlbatch-beam).
var protocolDefaults = scoreflags.ProtocolDefaults
