package readers

import (
	"strings"
	"testing"
)

// TestOptionsProtocol: Options.Protocol names the protocol in messages, as
// RecordOptions.Protocol does; without it the message says "the protocol".
func TestOptionsProtocol(t *testing.T) {
	for _, c := range []struct {
		protocol, want string
	}{
		{"skyfall", `readers: "reward" is a row field of skyfall and cannot be an identity field`},
		{"", `readers: "reward" is a row field of the protocol and cannot be an identity field`},
	} {
		_, err := DecodeObject(testURL, "x", strings.NewReader(okRow), Options{Protocol: c.protocol, IdentityFields: []string{"reward"}})
		if err == nil || err.Error() != c.want {
			t.Errorf("Protocol %q: got %v, want %s", c.protocol, err, c.want)
		}
	}
}
