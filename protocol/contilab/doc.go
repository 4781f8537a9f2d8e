// Package contilab scores the contilab protocol of continual supervised
// learning (PROTOCOLS.md section 4): metrics of one run's accuracy matrix,
// continual-evaluation stream and learning curve, its recorded diagnostics,
// and the comparison of families across benchmarks (average ranks, the
// Friedman test, the Nemenyi critical difference).
//
// The package is pure: no I/O, goroutines, clocks or contexts. Every
// unavailable number is a protocol.Value with OK false and a reason built
// from the Reason* constants, never a zero.
//
// # Records
//
// A Run holds the records of section 4, tasks 0-based: matrix cells R_ij
// (MatrixEntry), the untrained model's accuracies b_j (InitialEntry), the
// Joint run's accuracies a*_j (JointEntry), stream points A(k, n)
// (StreamPoint: step n, train task t, eval task k), learning-curve points
// Z_{t,b} (CurvePoint) and diagnostics (Diag). Records may come in any order;
// Score orders them by index itself.
//
// Score rejects, with an error naming the record, input that no metric could
// honestly be computed from:
//
//   - a repeated record: the same matrix cell, initial or joint task, stream
//     (step, eval_task), curve (task, batch), or diagnostic (sanitized name,
//     task) twice — even with equal values, since a repeat means the run
//     was assembled from overlapping sources;
//   - an accuracy that is negative, NaN or infinite (there is no upper bound,
//     so shares and percentages both work), or a non-finite diagnostic;
//   - a task or batch index outside 0 … MaxIndex, a step outside 0 … MaxStep;
//   - a stream step recorded with two different training tasks;
//   - an initial, joint, stream or curve record naming a task ≥ T;
//   - a scenario other than task-il, class-il, domain-il (any case, "_" for
//     "-"), or a Run.Scenario that contradicts Meta["scenario"].
//
// # Tasks and scenario
//
// T = 1 + the largest task index (after_task or eval_task) of the matrix; with
// no matrix, 1 + the largest train_task or eval_task of the stream; with
// neither, n_tasks is absent. The scenario is Run.Scenario, else the run's
// scenario metadata; an unknown scenario computes fwt (only Class-IL leaves it
// undefined) and says so in the notes.
//
// # Accuracy-matrix metrics
//
// Sums run over task indices in ascending order, one float64 accumulator,
// each term computed as the formula writes it, then divided by the count:
//
//	acc           = (Σ_{j<T} R_{T−1,j}) / T
//	aia           = (Σ_{i<T} [(Σ_{j≤i} R_ij) / (i+1)]) / T
//	bwt           = (Σ_{j<T−1} (R_{T−1,j} − R_jj)) / (T−1)
//	fwt           = (Σ_{1≤j<T} (R_{j−1,j} − b_j)) / (T−1)
//	forgetting    = (Σ_{j<T−1} f_j) / (T−1),  f_j = M_j − R_{T−1,j},  M_j = max_{j≤l≤T−2} R_lj
//	relative_forgetting = mean of f_j / M_j over the j < T−1 with M_j ≠ 0
//	learning_acc  = (Σ_{j<T} R_jj) / T
//	intransigence = (Σ_{j<T} (a*_j − R_jj)) / T
//
// A metric is computed from exactly the cells it names: the upper triangle
// beyond the first superdiagonal is never needed, and a missing cell makes
// absent only the metrics that use it, with the first missing cell (in the
// loop order above) in the reason. bwt, fwt, forgetting and
// relative_forgetting need T ≥ 2. fwt is absent in Class-IL, without initial
// rows, or without b_j for some j ≥ 1 (b_0 is never used); intransigence is
// absent without joint rows or without a*_j for some j < T. Initial or joint
// rows alone never change T. relative_forgetting is absent when every M_j is
// 0.
//
// # Continual-evaluation metrics
//
// The stream is sorted by step; points of one task are visited in step order
// and per-task terms summed over k = 0 … T−2 ascending. "After task k was
// learned" means train_task > k. min_acc, wc_acc, stability_gap and
// windowed_forgetting need T ≥ 2; any task k < T−1 whose term is undefined
// makes the whole metric absent (naming the first such k): no term is
// dropped, so the mean is always over all T−1 tasks.
//
//	min_acc       = mean over k < T−1 of min{A(k,n) : train_task > k}
//	wc_acc        = (1/T)·A(T−1, end) + (1 − 1/T)·min_acc, with A(T−1, end)
//	                the largest-step point of task T−1 (its last evaluation,
//	                not necessarily at the stream's last step)
//	stability_gap = mean over k < T−1 of [last A(k,n) with train_task = k]
//	                − [min A(k,n) with train_task = k+1]
//
// windowed_forgetting: ρ is the smallest positive gap between distinct steps
// of the whole stream (absent with a single step); length_k = (number of
// distinct steps with train_task = k)·ρ; Δ_k = WindowFraction·length_k,
// computed as f·(float64(count)·float64(ρ)). WF_k is absent when Δ_k < ρ
// (compared literally, so Δ_k = ρ is allowed), and otherwise
// max(0, max A(k,m) − A(k,n)) over pairs of points of task k, both with
// train_task > k, with m < n and n − m ≤ Δ_k (inclusive). WF_k is absent
// when no such pair exists (a single point, or points further apart than the
// window): a window that saw nothing is not a window that saw no drop. The
// metric is the mean of WF_k over k < T−1.
//
// aaa: at each step in ascending order, the mean of the accuracies of rows
// with eval_task ≤ train_task (summed in eval_task order); steps with no such
// row are skipped (absent when every step is skipped); then the mean over the
// steps kept. aaa does not need T ≥ 2.
//
// lca: β = the largest batch index of the curve; the curve must hold every
// task 0 … T−1 (1 + the largest curve task when the run has no matrix or
// stream) at every batch 0 … β, else lca is absent naming the first missing
// (batch, task). Z_b = (Σ_t Z_{t,b})/T in task order, lca = (Σ_b Z_b)/(β+1)
// in batch order.
//
// # Diagnostics
//
// Diag rows are grouped by SanitizeName(name) (snake_case; names that
// sanitize alike merge) in order of first appearance, each group's values
// summed in task order and divided by their count; the column is
// DiagPrefix + name. A name that sanitizes to "" is an error. A diagnostic's
// task only orders the sum and detects repeats; it is not checked against T.
//
// # Across benchmarks
//
// NewMeanTable averages each family's value of the rank metric
// (DefaultRankMetric, acc) per benchmark; Benchmarks ranks the families. A
// family with no score on any benchmark is left out of the ranking, then any
// benchmark lacking a score of a remaining family is dropped; both are named
// in the notes. See Benchmarks for the statistics.
//
// testdata/edge_reference.py (the accuracy-matrix metrics) and
// testdata/stream_reference.py (the continual-evaluation metrics,
// diagnostics, family statistics and the statistics across benchmarks) are
// independent Python references at the edges, written from PROTOCOLS alone;
// cmd/crlbatch checks their cases end to end (recordedges_test.go,
// recordfamilies_test.go) and `make check-references` reruns them.
package contilab
