package pipeline

// The engine's tests score skyfall traces, the default protocol.
import _ "github.com/crlbatch/crlbatch/scoring/skyfallscore"
