package main

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/crlbatch/crlbatch/pipeline"
	"github.com/crlbatch/crlbatch/scoring"

	// The protocols crlbatch scores: each package registers itself with
	// scoring.Register. A new protocol is one package and one line here.
	_ "github.com/crlbatch/crlbatch/scoring/contilabscore"
	_ "github.com/crlbatch/crlbatch/scoring/safecrlscore"
	_ "github.com/crlbatch/crlbatch/scoring/skillshiftscore"
	_ "github.com/crlbatch/crlbatch/scoring/skyfallscore"
)

// protocolSummaries lists the registered protocols for --protocol's help:
// "skyfall (per-step RL traces), safecrl (…)".
func protocolSummaries() string {
	var parts []string
	for _, p := range scoring.Protocols() {
		parts = append(parts, fmt.Sprintf("%s (%s)", p.Name(), p.Describe().Summary))
	}
	return strings.Join(parts, ", ")
}

// protocolDefaults describes a per-protocol default for help: "skyfall:
// a,b; safecrl, contilab: c" (protocols with the same value together).
func protocolDefaults(value func(scoring.Description) string) string {
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

// protocolFlags are the flags every registered protocol declares, as
// urfave/cli flags; a flag's help names the protocols it applies to.
func protocolFlags() []cli.Flag {
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
			cat = "Other protocols"
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

// checkProtocolFlags refuses a flag set on the command line (or in the job
// file) that the chosen protocol does not declare.
func checkProtocolFlags(cmd *cli.Command, protocol string) error {
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
