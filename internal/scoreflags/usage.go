package scoreflags

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/crlbatch/crlbatch/pipeline"
)

// flagNotDefined and invalidValue match urfave/cli's parse errors.
var (
	flagNotDefined = regexp.MustCompile(`^flag provided but not defined: -+(.*)$`)
	invalidValue   = regexp.MustCompile(`^invalid value "(.*)" for flag -+([^:]*): `)
)

// ExplainUsage rewrites urfave/cli's parse errors of cmd as crlbatch's
// usage messages: an unknown flag with the closest flag cmd has, a value of
// the wrong kind with what the flag wants. prefix starts the unknown
// flag's message ("score: "), whose help path says where the flags are
// listed ("crlbatch score").
func ExplainUsage(cmd *cli.Command, err error, prefix, path string) error {
	if name, ok := UnknownFlag(err); ok {
		var names []string
		for _, f := range cmd.VisibleFlags() {
			for _, n := range f.Names() {
				if len(n) > 1 {
					names = append(names, n)
				}
			}
		}
		return fmt.Errorf("%sunknown flag --%s%s (see %s --help)", prefix, name, DidYouMean(name, names, "--"), path)
	}
	if m := invalidValue.FindStringSubmatch(err.Error()); m != nil {
		if w := Wants(cmd, m[2]); w != "" {
			return fmt.Errorf("--%s %q: %s", m[2], m[1], w)
		}
	}
	return err
}

// DidYouMean is "; did you mean PREFIX+X?" for the closest of names when it
// is close enough to be a typo of want, or "".
func DidYouMean(want string, names []string, prefix string) string {
	if len(names) == 0 {
		return ""
	}
	best := pipeline.Closest(want, names)[0]
	if d := pipeline.EditDistance(want, best); d > max(2, len([]rune(want))/3) && !strings.HasPrefix(best, want) {
		return ""
	}
	return "; did you mean " + prefix + best + "?"
}

// Wants says what kind of value the flag name of cmd takes, or "" when
// its own error says it better.
func Wants(cmd *cli.Command, name string) string {
	for _, f := range cmd.Flags {
		for _, n := range f.Names() {
			if n != name {
				continue
			}
			switch f.(type) {
			case *cli.IntFlag:
				return "want a whole number, such as 4"
			case *cli.Uint64Flag, *cli.UintFlag:
				return "want a whole number of at least 0, such as 4"
			case *cli.FloatFlag:
				return "want a number, such as 0.5"
			case *cli.BoolFlag:
				return "want true or false"
			}
		}
	}
	return ""
}

// UnknownFlag is the name of the flag urfave/cli's parse error err says
// is not defined.
func UnknownFlag(err error) (name string, ok bool) {
	if m := flagNotDefined.FindStringSubmatch(err.Error()); m != nil {
		return m[1], true
	}
	return "", false
}
