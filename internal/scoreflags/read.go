package scoreflags

import (
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/crlbatch/crlbatch/pipeline"
	"github.com/crlbatch/crlbatch/scoring"
)

// ReadInput fills cfg from InputFlags but --log-level and --quiet (the
// program's own logging): the protocol, the patterns, the identity fields
// and the reader's limits, each checked; a bad value is a usage error
// naming the flag, the value and what it wants.
func ReadInput(cmd *cli.Command, cfg *pipeline.Config) error {
	cfg.Protocol = cmd.String("protocol")
	if ps := cmd.StringSlice("pattern"); len(ps) > 0 {
		cfg.Patterns = ps
	}
	if cmd.IsSet("identity-fields") {
		cfg.Reader.IdentityFields = SplitList(cmd.String("identity-fields"))
		if cfg.Reader.IdentityFields == nil {
			cfg.Reader.IdentityFields = []string{}
		}
	}
	lineBytes, err := Size(cmd, "max-line-bytes")
	if err != nil {
		return err
	}
	cfg.Reader.MaxLineBytes = int(min(lineBytes, math.MaxInt))
	if cfg.Reader.MaxObjectBytes, err = Size(cmd, "max-object-bytes"); err != nil {
		return err
	}
	cfg.Reader.MaxLabels = cmd.Int("max-labels")
	cfg.Reader.MaxRuns = cmd.Int("max-runs")
	if cfg.MaxBadRows = cmd.Int("max-bad-rows"); cfg.MaxBadRows < 0 {
		return pipeline.Usagef("--max-bad-rows %d: want at least 0", cfg.MaxBadRows)
	}
	for name, v := range map[string]int64{"max-labels": int64(cfg.Reader.MaxLabels), "max-runs": int64(cfg.Reader.MaxRuns)} {
		if v < 1 {
			return pipeline.Usagef("--%s %d: want at least 1", name, v)
		}
	}
	return nil
}

// placeholder matches what reads as a placeholder in --out: a word in
// braces ({date}, {Date}, {time}, {date:%Y}).
var placeholder = regexp.MustCompile(`\{[A-Za-z_][A-Za-z0-9_:%-]*\}`)

// ReadResult fills cfg from ResultFlags, after refusing a protocol flag
// the chosen protocol (cfg.Protocol, ReadInput's) does not declare. The
// protocol flags' values are the caller's to carry (crlbatch binds cmd
// itself; crlbatch-beam encodes them for its workers); pipeline.Config's
// Check finds what else is out of range.
func ReadResult(cmd *cli.Command, cfg *pipeline.Config) error {
	cfg.Output = cmd.String("out")
	if cfg.Output == "" {
		return pipeline.Usagef("score: --out OUTPUT is required")
	}
	for _, p := range placeholder.FindAllString(cfg.Output, -1) {
		if p != "{date}" {
			return pipeline.Usagef("--out %s: %s is not a placeholder: only {date} (the job's UTC date) is replaced", pipeline.Redact(cfg.Output), p)
		}
	}
	if err := CheckProtocolFlags(cmd, cfg.Protocol); err != nil {
		return err
	}
	cfg.Overwrite = cmd.Bool("overwrite")
	cfg.History = cmd.Bool("history")
	cfg.Keep = cmd.Int("keep")
	if cmd.IsSet("group-by") {
		if cfg.GroupBy = SplitList(cmd.String("group-by")); cfg.GroupBy == nil {
			return pipeline.Usagef("--group-by: at least one field is needed")
		}
	}
	cfg.Baseline = cmd.String("baseline")
	cfg.AllowMissingBaseline = cmd.Bool("allow-missing-baseline")
	cfg.MinSteps = cmd.Int("min-steps")
	var err error
	if cfg.Where, err = pipeline.ParseWhere(cmd.StringSlice("where")); err != nil {
		return err
	}
	cfg.Resamples = cmd.Int("bootstrap-resamples")
	cfg.BootstrapSeed = cmd.Uint64("bootstrap-seed")
	return nil
}

// CheckProtocolFlags refuses a flag set on the command line (or in the job
// file) that the chosen protocol does not declare.
func CheckProtocolFlags(cmd *cli.Command, protocol string) error {
	if protocol == "" {
		protocol = scoring.Default()
	}
	owners, flags := flagOwners()
	for _, f := range flags {
		if !cmd.IsSet(f.Name) {
			continue
		}
		o := owners[f.Name]
		if !slices.Contains(o, protocol) {
			sort.Strings(o)
			return pipeline.Usagef("--%s applies to --protocol %s only, not %s", f.Name, strings.Join(o, ", "), protocol)
		}
	}
	return nil
}

// Every byte-size flag takes what pipeline.ParseBytes reads: a number of
// bytes, or a number with a unit (KiB, MiB, GiB, TiB; KB, MB, GB, TB; K, M,
// G, T as binary units; B), on the command line and in a job file.
const (
	SizeExamples = "1MiB, 256MB, 4GiB or 1048576 bytes"
	SizeUsage    = "a size such as " + SizeExamples
)

// Size reads the byte-size flag name: at least one byte, or a usage
// error naming the flag, the value and what it wants.
func Size(cmd *cli.Command, name string) (int64, error) {
	s := cmd.String(name)
	n, err := pipeline.ParseBytes(s)
	if err != nil {
		return 0, pipeline.Usagef("--%s %q: want a size such as %s", name, s, SizeExamples)
	}
	if n < 1 {
		return 0, pipeline.Usagef("--%s %q: want a size of at least 1 byte, such as %s", name, s, SizeExamples)
	}
	return n, nil
}

// SizeText prints a default size in the largest binary unit that divides it.
func SizeText(n int64) string {
	for _, u := range []struct {
		name string
		size int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.size && n%u.size == 0 {
			return strconv.FormatInt(n/u.size, 10) + u.name
		}
	}
	return strconv.FormatInt(n, 10)
}

// SplitList is a comma-separated list's fields, trimmed, empty ones
// dropped; nil when none is left.
func SplitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
