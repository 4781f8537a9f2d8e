package main

import (
	"bytes"
	"context"
	"os"
	"testing"

	"github.com/crlbatch/crlbatch/scoring"
	"github.com/crlbatch/crlbatch/scoring/protocoltest"
)

// conformanceExamples are the examples the conformance suite scores, one
// per registered protocol.
var conformanceExamples = map[string]string{
	"skyfall":    "../../configs/example-sweep",
	"safecrl":    "../../configs/examples/safecrl",
	"contilab":   "../../configs/examples/contilab",
	"skillshift": "../../configs/examples/skillshift",
}

// TestConformance runs scoring/protocoltest for every registered protocol,
// through the command as a user runs it.
func TestConformance(t *testing.T) {
	t.Parallel()
	duck := protocoltest.NodeDuckDB("../../integration", os.Getenv("CRLBATCH_REQUIRE_INTEGRATION") != "")
	for _, p := range scoring.Protocols() {
		t.Run(p.Name(), func(t *testing.T) {
			t.Parallel()
			ex, ok := conformanceExamples[p.Name()]
			if !ok {
				t.Fatalf("protocol %s is registered but has no example for the conformance suite", p.Name())
			}
			protocoltest.Run(t, protocoltest.Config{
				Protocol: p.Name(),
				Example:  ex,
				Command: func(args ...string) (int, string, string) {
					var out, errb bytes.Buffer
					code := run(context.Background(), append([]string{"crlbatch"}, args...), &out, &errb)
					return code, out.String(), errb.String()
				},
				DuckDB: duck,
			})
		})
	}
}
