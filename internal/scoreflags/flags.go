package scoreflags

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/crlbatch/crlbatch/pipeline"
	"github.com/crlbatch/crlbatch/readers"
	"github.com/crlbatch/crlbatch/scoring"
)

// The categories of crlbatch's help.
const (
	CatInput    = "Input"
	CatMetric   = "Metrics"
	CatCeiling  = "Ceiling"
	CatFamily   = "Families and statistics"
	CatOutput   = "Output and running"
	CatProtocol = "Other protocols"
)

// InputFlags are the flags that say what is read and how (score's and
// validate's), and --log-level and --quiet.
func InputFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringSliceFlag{Name: "pattern", Category: CatInput,
			Usage: "read only objects whose base name matches `GLOB` (repeatable; default *.jsonl, *.jsonl.gz, *.jsonl.zst, *.ndjson)"},
		&cli.StringFlag{Name: "identity-fields", Category: CatInput,
			DefaultText: ProtocolDefaults(func(d scoring.Description) string { return strings.Join(d.Identity, ",") }),
			Usage:       "comma-separated row `FIELDS` whose values identify a run; rows with equal values form one run, across files (\"\" for none: one run per file; see docs/trace-format.md)"},
		&cli.StringFlag{Name: "protocol", Category: CatInput, Value: scoring.Default(),
			Usage: "the evaluation `PROTOCOL` of the rows: " + ProtocolSummaries()},
		&cli.StringFlag{Name: "max-line-bytes", Category: CatInput, Value: SizeText(readers.DefaultMaxLineBytes), DefaultText: SizeText(readers.DefaultMaxLineBytes),
			Usage: "fail on a line longer than `SIZE` (a guard against runaway rows); " + SizeUsage},
		&cli.StringFlag{Name: "max-object-bytes", Category: CatInput, Value: SizeText(readers.DefaultMaxObjectBytes), DefaultText: SizeText(readers.DefaultMaxObjectBytes),
			Usage: "fail on an object that decompresses to more than `SIZE` (a guard against decompression bombs); " + SizeUsage},
		&cli.IntFlag{Name: "max-labels", Category: CatInput, Value: readers.DefaultMaxLabels,
			Usage: "fail on a run with more than `N` distinct regime_id values"},
		&cli.IntFlag{Name: "max-runs", Category: CatInput, Value: readers.DefaultMaxRuns,
			Usage: "fail on an input with more than `N` runs"},
		&cli.IntFlag{Name: "max-bad-rows", Category: CatInput, Value: 0,
			Usage: "skip up to `N` bad rows in all (invalid JSON, a field of the wrong type, a missing reward or regime_id, …), each named in manifest.json and counted in the report; one more fails the job, naming it (validate lists every bad row, and fails only past this many). Errors of a whole object (corrupt gzip or zstd, --max-line-bytes, --max-object-bytes) are never skipped"},
		&cli.StringFlag{Name: "log-level", Category: CatOutput, Value: "warn",
			Usage: pipeline.LogLevelUsage},
		&cli.BoolFlag{Name: "quiet", Category: CatOutput, Usage: "print no progress on stderr"},
	}
}

// ResultFlags are score's flags of where the result goes and how runs
// form families and are compared.
func ResultFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Category: CatOutput,
			Usage: "where to write the results, `OUTPUT`: a folder, file://, s3://, gs:// or azblob:// prefix; {date} becomes the UTC date (s3://lab/scores/{date}/)"},
		&cli.BoolFlag{Name: "overwrite", Category: CatOutput,
			Usage: "replace the result --out already holds, in place: its manifest.json is removed first and the new one written last (without this flag the job refuses)"},
		&cli.BoolFlag{Name: "history", Category: CatOutput,
			Usage: "nightly layout: every result under --out/results/<attempt-id>/, --out/LATEST naming the newest complete one, and every night's families and run_summary under --out/history/<table>/night=<date>/attempt=<id>/"},
		&cli.IntFlag{Name: "keep", Category: CatOutput, DefaultText: "0, every result kept",
			Usage: "with --history, remove after publishing the oldest complete results beyond the `N` newest (never the one LATEST names, never a job's in progress)"},

		&cli.StringFlag{Name: "group-by", Category: CatFamily,
			DefaultText: ProtocolDefaults(func(d scoring.Description) string { return strings.Join(d.GroupBy, ",") }),
			Usage:       "run metadata `FIELD` naming a family, or several comma-separated fields whose values join with /; source (the object a run came from) works too; a field no run has is a usage error"},
		&cli.StringFlag{Name: "baseline", Category: CatFamily,
			Usage: "the `FAMILY` that the others are compared with (default: ppo if present, else the first family); a name no family has is a usage error"},
		&cli.BoolFlag{Name: "allow-missing-baseline", Category: CatFamily,
			Usage: "publish even when no family is named --baseline (for sweeps where it is absent some nights): every comparison column is then null, and a note says why"},
		&cli.IntFlag{Name: "min-steps", Category: CatFamily, DefaultText: "0, none left out",
			Usage: "leave runs with fewer than `N` rows out of every aggregate (they stay in runs.parquet, flagged excluded)"},
		&cli.StringSliceFlag{Name: "where", Category: CatFamily,
			Usage: "keep only runs whose metadata FIELD equals VALUE (`FIELD=VALUE`, repeatable: one field's values are alternatives, different fields must all match)"},
		&cli.IntFlag{Name: "bootstrap-resamples", Category: CatFamily, Value: 10000,
			Usage: "`N`, the resamples of the percentile-bootstrap confidence intervals"},
		&cli.Uint64Flag{Name: "bootstrap-seed", Category: CatFamily,
			Usage: "the `SEED` of the bootstrap draws (combined with family and metric names, so reruns are identical)"},
	}
}

// ProtocolSummaries lists the registered protocols for --protocol's help:
// "skyfall (per-step RL traces), safecrl (…)".
func ProtocolSummaries() string {
	var parts []string
	for _, p := range scoring.Protocols() {
		parts = append(parts, fmt.Sprintf("%s (%s)", p.Name(), p.Describe().Summary))
	}
	return strings.Join(parts, ", ")
}

// ProtocolDefaults describes a per-protocol default for help: "skyfall:
// a,b; safecrl, contilab: c" (protocols with the same value together).
func ProtocolDefaults(value func(scoring.Description) string) string {
	var order []string
	names := map[string][]string{}
	for _, p := range scoring.Protocols() {
		v := value(p.Describe())
		if _, seen := names[v]; !seen {
			order = append(order, v)
		}
		names[v] = append(names[v], p.Name())
	}
	if len(order) == 1 {
		return order[0]
	}
	parts := make([]string, len(order))
	for i, v := range order {
		parts[i] = strings.Join(names[v], ", ") + ": " + v
	}
	return strings.Join(parts, "; ")
}

// flagOwners maps each protocol flag to the protocols that declare it.
func flagOwners() (map[string][]string, []scoring.Flag) {
	owners := map[string][]string{}
	var flags []scoring.Flag
	for _, p := range scoring.Protocols() {
		for _, f := range p.Describe().Flags {
			if _, dup := owners[f.Name]; !dup {
				flags = append(flags, f)
			}
			owners[f.Name] = append(owners[f.Name], p.Name())
		}
	}
	return owners, flags
}

// ProtocolFlags are the flags every registered protocol declares, as
// urfave/cli flags; a flag's help names the protocols it applies to.
func ProtocolFlags() []cli.Flag {
	owners, flags := flagOwners()
	var out []cli.Flag
	for _, f := range flags {
		usage := f.Usage
		if o := owners[f.Name]; len(o) < len(scoring.Protocols()) && !(len(o) == 1 && o[0] == scoring.Default()) {
			usage = strings.Join(o, ", ") + ": " + usage
		}
		if f.Value == nil && f.DefaultText == "" && (f.Kind == scoring.FlagFloat || f.Kind == scoring.FlagInt) {
			f.DefaultText = "none" // not 0: an unset number means the flag is off
		}
		cat := f.Category
		if cat == "" {
			cat = CatProtocol
		}
		switch f.Kind {
		case scoring.FlagString:
			v, _ := f.Value.(string)
			out = append(out, &cli.StringFlag{Name: f.Name, Category: cat, Usage: usage, Value: v, DefaultText: f.DefaultText, TakesFile: f.TakesFile})
		case scoring.FlagFloat:
			v, _ := f.Value.(float64)
			out = append(out, &cli.FloatFlag{Name: f.Name, Category: cat, Usage: usage, Value: v, DefaultText: f.DefaultText})
		case scoring.FlagInt:
			v, _ := f.Value.(int)
			out = append(out, &cli.IntFlag{Name: f.Name, Category: cat, Usage: usage, Value: v, DefaultText: f.DefaultText})
		case scoring.FlagBool:
			v, _ := f.Value.(bool)
			out = append(out, &cli.BoolFlag{Name: f.Name, Category: cat, Usage: usage, Value: v, DefaultText: f.DefaultText})
		case scoring.FlagStrings:
			v, _ := f.Value.([]string)
			out = append(out, &cli.StringSliceFlag{Name: f.Name, Category: cat, Usage: usage, Value: v, DefaultText: f.DefaultText, TakesFile: f.TakesFile})
		default:
			panic(fmt.Sprintf("protocol flag --%s: unknown kind %d", f.Name, f.Kind))
		}
	}
	return out
}
