// Package upperbound reads reward specifications and derives the reward
// ceilings (R_ub) that the ceiling-anchored metrics of skyfall are measured
// against (PROTOCOLS §2).
//
// # Contract
//
// The package is pure: functions take bytes, specs, contexts and in-memory
// traces and return values. It reads no file (ParseSpec takes the bytes and
// uses the path only in error messages; the command line does the reading),
// starts no goroutine and reads no clock. Its only project imports are
// under protocol/.
//
// # Reward specs
//
// A spec (configs/rewards/NAME.yaml) names its components, each with a
// weight, a clip range [lo, hi] whose ends may be null for unbounded, a
// cadence (step, or episode_end for terms paid only on an episode's last
// step) and an optional gate. ParseSpec is strict: an unknown or repeated
// key, a missing required key, a value of the wrong type, a clip end that is
// not a finite number, lo > hi, an unknown cadence, a component name used
// twice, an empty component list, a second YAML document and YAML aliases
// are all errors naming the file, the line and the component.
//
// # Bounds
//
// A Bound has two numbers: PerStep, the most an ordinary step can earn, and
// FinalStep, the most a step that ends an episode can earn, episode-end
// terms included. Every Bound records its derivation:
//
//   - analytic: every component at the largest value its weight and clip
//     allow (weight·hi for weight ≥ 0, weight·lo below), summed in spec
//     order; an unbounded end the weight points to is an
//     *UnboundedRewardError, never a guess. Gates are ignored: they can only
//     lower a contribution.
//   - numeric: the spec's components, as Go functions from a
//     ComponentRegistry, driven over trajectories of StepContexts; the best
//     (or a quantile) over ordinary and final contexts.
//   - data_relative: the best (or a quantile) reward recorded in traces. Because
//     it changes whenever the recorded policy does, it describes a run and
//     must not be used to rank policies.
//   - explicit: a number the user supplies (Explicit).
//
// Further derivations can be added by name with RegisterDerivation and run
// with Derive.
//
// An interval's ceiling is ForInterval: ((L−1)·PerStep + FinalStep)/L when
// it holds the final step, else PerStep. BoundsByConfiguration gives each
// label ((L_k − m_k)·PerStep + m_k·FinalStep)/L_k, pooled over all traces,
// where m_k counts the label's final steps: the rows with a nonzero
// episode-end contribution, or each run's last row when the spec has no
// episode-end component. The counts add up: a caller that cannot hold the
// traces adds them one at a time (NewLabelBounds, Add), each trace's counts
// (AddCounts), or each trace's parts counted on their own (CountPart of a
// part's trace, or CountBuilder straight from its skyfall.Builder without
// materialising it; then AddParts). Both ceilings are weighted means of
// PerStep and FinalStep, computed literally in float64; where the literal
// products leave float64 (a step near the largest float64) the same mean is
// formed without them, so a ceiling is finite whenever both steps are.
//
// # Choices where the protocol is silent
//
//   - A spec must give clip for every component (write [null, null] for a
//     term unbounded on both sides); a clip end must be null or a finite
//     number, never .inf or .nan. A gate is null or a string. YAML aliases
//     and a second document are rejected, so what a reader sees in the file
//     is what is scored.
//   - analytic reads the rule literally: a zero weight points at the high
//     end, so a zero-weighted term with an open high end is unbounded.
//   - numeric calls every component at every context, so stateful
//     components see the whole trajectory, but an episode-end component
//     counts only on a final context. A quantile applies to both PerStep
//     and FinalStep.
//   - data_relative with a spec that has no episode-end component finds no
//     final step, so both numbers are the best of all rows (the spec says
//     the last step can earn nothing extra).
//   - ForInterval panics for L < 1: an empty interval has no mean, and the
//     command line checks the number it is given.
//
// # Arithmetic
//
// Sums are float64, accumulated sequentially from 0 in spec (or row) order.
// Every product is rounded to float64 before it is added, so that no
// architecture fuses a multiply-add and the results agree bit for bit with
// an independent implementation. Quantiles interpolate linearly, as numpy
// does by default.
package upperbound
