// Package safecrl scores the safecrl protocol (PROTOCOLS.md section 3): safe
// continual RL recorded as one row per finished episode, in training order,
// each row naming its task and carrying a return and, when the writer logged
// them, a cost and a success flag.
//
// # Visits and windows
//
// A visit is a maximal block of consecutive rows with the same task; a task
// that comes back after other tasks is revisited. Tasks are reported in order
// of first appearance. W (Params.WindowEpisodes, default 20) sizes every
// window; a window asks for W episodes and takes however many exist when there
// are fewer (a visit of 3 episodes under W = 20 contributes those 3). The
// Episode field of a row is kept for reference and never used to reorder or
// compute anything.
//
// # Per-task metrics
//
//   - final_task_reward: mean return of the task's last W episodes, its visits
//     taken together in row order.
//   - total_cost: the sum of the recorded costs of the task's episodes divided
//     by the number of the task's visits that record a cost at least once. An
//     episode without a cost is left out of the sum; a visit none of whose
//     episodes records a cost is left out of the count, because dividing by it
//     would treat that visit as having cost nothing. When every episode
//     records a cost (the usual case) the divisor is simply the number of
//     visits, as the definition says.
//   - mean_episode_cost: the same sum divided by the number of episodes that
//     record a cost (what the seed's recipe computes under the name total
//     cost).
//   - forgetting: for each revisit, mean of the last W returns of the previous
//     visit minus mean of the first W returns of the revisit; the average of
//     these differences over the revisits. Positive means the agent forgot,
//     negative means transfer.
//   - normalized_forgetting: forgetting / |final_task_reward − initial|, where
//     initial is the mean of the first W returns of the task's first visit.
//     A range of exactly zero makes it absent ("the reward range is zero"); it
//     is never reported as 0.
//   - success_rate: the mean success over the last W of the task's episodes
//     that record a success. The episodes without one are removed first and
//     the window is taken afterwards, so the rate rests on up to W recorded
//     outcomes rather than on however many of the final W episodes happen to
//     carry one; this follows the rule that rows lacking a field are left out
//     of the metrics that need it, and the seed's recipe, which windows the
//     list of recorded successes.
//   - forgetting_success: forgetting computed on success, using in each visit
//     only the episodes that record one. A revisit where either side records
//     no success has no difference and is skipped (it is not bridged to an
//     older visit, which would measure forgetting over a longer gap); the
//     remaining differences are averaged.
//
// Counts per task: n_visits and n_episodes. Per run: n_tasks and n_episodes,
// and for every per-task metric the run's seed value, the mean over the tasks
// that have a value (RunResult.SeedValue), which families aggregate as in
// PROTOCOLS 1.6.
//
// # Absent values
//
// Nothing unavailable is reported as zero. An absent value is a
// protocol.Value with OK false and one of the Reason* constants; when several
// apply, the first in this order is given:
//
//   - forgetting: task never revisited.
//   - normalized_forgetting: the reason forgetting is absent; then the reward
//     range is zero.
//   - total_cost, mean_episode_cost: no cost recorded.
//   - success_rate: no success recorded.
//   - forgetting_success: no success recorded; task never revisited; no
//     revisit has success recorded on both sides.
//   - any metric: the value overflows float64 (finite returns or costs whose
//     sum leaves the float64 range), and any value computed from it.
//   - a seed value: "no task has a value: " followed by the first task's
//     reason ("the run has no task" for an empty run).
//
// # Arithmetic
//
// float64 throughout; every sum is accumulated one value at a time in row
// order (a window's sum runs from its earliest row to its latest; the
// forgetting differences are summed in revisit order; seed values in task
// order), and a mean is that sum divided by the count. An independent Python
// implementation (testdata/reference.py) agrees to 1e-9.
//
// # Input checks
//
// Score fails on a non-finite return or cost, or on a success other than 0 or
// 1 (readers turn true/false into 1/0), naming the row. The package is pure:
// no I/O, goroutines, clocks or contexts.
package safecrl
