// Package skyfallscore is the skyfall protocol (PROTOCOLS 1–2) on the
// scoring seam, registered under the name "skyfall" as crlbatch's default
// protocol; import it for its side effect.
//
// It reads per-step traces with readers' fast row decoder (compact columns
// that can spill, chunked decoding of one large object, runs assembled one
// at a time with their dense columns lent through a skyfall.TracePool),
// derives the ceiling through upperbound (an explicit bound or map, the
// analytic bound of a reward spec through upperbound.Derive, per label by
// configuration, or the data-relative ceiling through
// upperbound.DataRelativeLabels — the last two in a Prepare pass over the
// runs kept (by configuration over the decoder's light runs when it can:
// each part's labels counted on its own, scoring.LightAssembler), which
// PrepareFrom replays from each run's contribution, its
// labels' rows and final steps or best rewards: scoring.Contributor, for
// --cache; a run scored under other ceilings has the moved ones re-applied,
// skyfall.Receil, scoring.Reapplier), scores each run with protocol/skyfall, and renders
// runs.parquet, intervals.parquet, run_summary.parquet, families.parquet
// and the report (with a note, also a warning on stderr through
// scoring.Rendered.Warnings, on each --episode-end or --solve-component
// that no row of any scored run carries); its figures (figures.go) are each family's reward against
// step, from curves downsampled while each run is scored, with the lines in
// curves.parquet. Its flags (--anchor, --window, --spec, --bound, …) are
// declared here; New reads the files they name (--reference, --bound-map,
// --spec) strictly, refusing a repeated key.
package skyfallscore
