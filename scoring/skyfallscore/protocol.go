package skyfallscore

import (
	"os"
	"strings"

	"github.com/crlbatch/crlbatch/configs"
	"github.com/crlbatch/crlbatch/protocol/skyfall"
	"github.com/crlbatch/crlbatch/readers"
	"github.com/crlbatch/crlbatch/scoring"
	"github.com/crlbatch/crlbatch/upperbound"
)

// Name is skyfall's --protocol value.
const Name = "skyfall"

func init() { scoring.Register(proto{}) }

type proto struct{}

func (proto) Name() string { return Name }

// Ceiling modes of --ceiling.
const (
	CeilingByConfiguration = "by_configuration"
	CeilingPerStep         = "per_step"
	CeilingFinalStep       = "final_step"
	CeilingDataRelative    = "data_relative"
)

const (
	catMetric  = "Metrics"
	catCeiling = "Ceiling"
)

func (proto) Describe() scoring.Description {
	return scoring.Description{
		Summary: "per-step RL traces",
		Rows: []scoring.Field{
			{Name: "step", Type: "integer", Doc: "the step's index (monotone within a run)"},
			{Name: "reward", Type: "number", Required: true, Doc: "the step's reward"},
			{Name: "regime_id", Type: "string", Required: true, Doc: "the label (configuration) in force"},
			{Name: "regime_origin", Type: "string", Doc: "the label this one revisits (forgetting)"},
			{Name: "alias_of", Type: "string", Doc: "the label this one is an alias of"},
			{Name: "components", Type: "object", Doc: "reward components by name"},
			{Name: "invalid_action", Type: "boolean", Doc: "the action was invalid"},
			{Name: "effective_rank", Type: "number", Doc: "the representation's effective rank"},
			{Name: "gamma", Type: "number", Doc: "the discount of the run's return"},
		},
		Identity: readers.DefaultIdentityFields,
		GroupBy:  []string{"algorithm_id"},
		Labels:   true,
		Outputs:  []string{"runs.parquet", "intervals.parquet", "run_summary.parquet", "families.parquet", "curves.parquet"},
		Default:  true,
		Flags: []scoring.Flag{
			{Name: "anchor", Kind: scoring.FlagString, Category: catMetric, Value: "segment",
				Usage: "what adaptation and recovery are measured against: segment (the interval's own peak and tail) or ceiling (the reward's upper bound)"},
			{Name: "window", Kind: scoring.FlagString, Category: catMetric, Value: "segment",
				Usage: "rows after a shift that adaptation, recovery and zero-shot look at: segment (the interval) or post_shift (to the end of the run)"},
			{Name: "alpha", Kind: scoring.FlagFloat, Category: catMetric, DefaultText: "0.9 segment, 0.5 ceiling",
				Usage: "adapted fraction: adaptation is the first step whose running mean reaches alpha × the anchor"},
			{Name: "epsilon", Kind: scoring.FlagFloat, Category: catMetric, DefaultText: "0.5 × ceiling",
				Usage: "ceiling anchor: recovery is the first step whose running mean is within epsilon of the ceiling"},
			{Name: "epsilon-fraction", Kind: scoring.FlagFloat, Category: catMetric, Value: skyfall.DefaultEpsilonFraction,
				Usage: "segment anchor: recovery band as a fraction of the interval's settled level"},
			{Name: "epsilon-abs-floor", Kind: scoring.FlagFloat, Category: catMetric, Value: skyfall.DefaultEpsilonAbsFloor,
				Usage: "segment anchor: smallest recovery band, so a settled level near zero can still be reached"},
			{Name: "tail-fraction", Kind: scoring.FlagFloat, Category: catMetric, Value: skyfall.DefaultTailFraction,
				Usage: "share of an interval's final rows that make its settled level (0 < x ≤ 1)"},
			{Name: "zero-shot-window", Kind: scoring.FlagInt, Category: catMetric, Value: skyfall.DefaultZeroShotWindow,
				Usage: "rows after a shift averaged by the zero-shot reward"},
			{Name: "gamma", Kind: scoring.FlagFloat, Category: catMetric, DefaultText: "the run's recorded gamma, else 0.99",
				Usage: "discount of the discounted return, for every run"},
			{Name: "episode-end", Kind: scoring.FlagStrings, Category: catMetric,
				Usage: "reward component `NAME` paid only at an episode's end (repeatable): its rows are left out of forgetting and of the policy's settled reward"},
			{Name: "solve-component", Kind: scoring.FlagString, Category: catMetric,
				Usage: "reward component `NAME` whose positive value marks a solved step (solve rate is null without it)"},
			{Name: "reference", Kind: scoring.FlagString, Category: catMetric, TakesFile: true,
				Usage: "JSON `FILE` {run key or run_id: [rewards]} of reference trajectories for regret"},
			{Name: "spec", Kind: scoring.FlagString, Category: catCeiling, TakesFile: true,
				Usage: "reward `SPEC` (a YAML file, or a bundled name: " + strings.Join(configs.RewardSpecNames(), ", ") + ") whose analytic bound is the ceiling"},
			{Name: "ceiling", Kind: scoring.FlagString, Category: catCeiling, DefaultText: "by_configuration with --spec",
				Usage: "how the ceiling is derived: by_configuration (per label, from the spec and the rows), per_step, final_step, or data_relative (best reward observed per label; not for comparing families)"},
			{Name: "episode-end-from-spec", Kind: scoring.FlagBool, Category: catCeiling,
				Usage: "treat the spec's episode_end components as --episode-end components"},
			{Name: "bound", Kind: scoring.FlagFloat, Category: catCeiling, Usage: "one ceiling `X` for every label"},
			{Name: "bound-map", Kind: scoring.FlagString, Category: catCeiling, TakesFile: true,
				Usage: "JSON `FILE` {label: ceiling}; a label missing from it is an error"},
		},
	}
}

// Config is a skyfall job's parameters.
type Config struct {
	Params skyfall.Params
	// Ceiling sources; at most one of BoundScalar, BoundMap and Spec.
	BoundScalar *float64
	BoundMap    map[string]float64
	BoundMapURL string // where BoundMap came from, for the report
	Spec        *upperbound.Spec
	SpecName    string
	// CeilingMode applies with Spec: by_configuration (default),
	// per_step, final_step, data_relative. data_relative needs no spec.
	CeilingMode string
	// EpisodeEndFromSpec names the spec's episode-end components as the
	// episode-end components of forgetting and the policy's settled reward.
	EpisodeEndFromSpec bool
	// Reference maps run keys (or run_ids) to reference trajectories.
	Reference map[string][]float64
}

func (proto) New(f scoring.Flags, env scoring.Env) (scoring.Job, error) {
	cfg := Config{Params: skyfall.DefaultParams()}
	p := &cfg.Params
	p.Anchor = skyfall.Anchor(f.String("anchor"))
	p.Window = skyfall.Window(f.String("window"))
	if f.IsSet("alpha") {
		x := f.Float("alpha")
		p.Alpha = &x
	}
	if f.IsSet("epsilon") {
		if p.Anchor != skyfall.AnchorCeiling {
			return nil, scoring.Usagef("--epsilon is the ceiling anchor's tolerance; under --anchor %s recovery uses --epsilon-fraction and --epsilon-abs-floor", p.Anchor)
		}
		x := f.Float("epsilon")
		p.Epsilon = &x
	}
	for _, name := range []string{"epsilon-fraction", "epsilon-abs-floor"} {
		if f.IsSet(name) && p.Anchor == skyfall.AnchorCeiling {
			return nil, scoring.Usagef("--%s shapes the segment anchor's recovery band; under --anchor ceiling use --epsilon", name)
		}
	}
	p.EpsilonFraction = f.Float("epsilon-fraction")
	p.EpsilonAbsFloor = f.Float("epsilon-abs-floor")
	p.TailFraction = f.Float("tail-fraction")
	p.ZeroShotWindow = f.Int("zero-shot-window")
	if f.IsSet("gamma") {
		x := f.Float("gamma")
		p.Gamma = &x
	}
	p.EpisodeEnd = f.StringSlice("episode-end")
	p.SolveComponent = f.String("solve-component")
	if file := f.String("reference"); file != "" {
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, scoring.Usagef("--reference: %v", err)
		}
		if cfg.Reference, err = readReference(file, data); err != nil {
			return nil, &scoring.UsageError{Err: err}
		}
	}
	if s := f.String("spec"); s != "" {
		spec, err := LoadSpec(s)
		if err != nil {
			return nil, err
		}
		cfg.Spec, cfg.SpecName = spec, s
	}
	cfg.CeilingMode = f.String("ceiling")
	cfg.EpisodeEndFromSpec = f.Bool("episode-end-from-spec")
	if f.IsSet("bound") {
		x := f.Float("bound")
		cfg.BoundScalar = &x
	}
	if file := f.String("bound-map"); file != "" {
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, scoring.Usagef("--bound-map: %v", err)
		}
		if cfg.BoundMap, err = readBoundMap(file, data); err != nil {
			return nil, &scoring.UsageError{Err: err}
		}
		cfg.BoundMapURL = file
	}
	return NewJob(cfg, env)
}

// LoadSpec reads a reward spec from a file, or a bundled spec by name;
// its errors name the flag --spec.
func LoadSpec(s string) (*upperbound.Spec, error) { return LoadSpecAs(s, "--spec") }

// LoadSpecAs is LoadSpec with errors that name what gave s (crlbatch
// bound's argument SPEC, not a --spec flag the user never typed).
func LoadSpecAs(s, what string) (*upperbound.Spec, error) {
	data, err := os.ReadFile(s)
	path := s
	if err != nil {
		if !strings.ContainsAny(s, "/\\.") {
			b, berr := configs.RewardSpec(s)
			if berr != nil {
				return nil, scoring.Usagef("%s %s: no such file, and %v", what, s, berr)
			}
			data, path = b, configs.RewardSpecPath(s)
		} else {
			return nil, scoring.Usagef("%s: %v", what, err)
		}
	}
	spec, err := upperbound.ParseSpec(path, data)
	if err != nil {
		return nil, scoring.Usagef("%s: %v", what, err)
	}
	return spec, nil
}
