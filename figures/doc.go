// Package figures draws a job's figures and reduces the data behind them.
//
// It holds two things. The curve reduction (Downsample, Accumulator,
// Merge): one run's rewards cut into buckets of a power-of-two number of
// steps, each keeping the count, sum, minimum and maximum of its rewards per
// label, so that the runs of a family merge exactly into one line of at most
// MaxPoints points (its last bucket ending with the family's longest run);
// an Accumulator folds the runs in one at a time, as they
// are scored, keeping memory that does not grow with the number of runs
// (docs/decisions.md, "Figures and the HTML report"). And the drawing: a
// Figure is one or more gonum/plot panels stacked in a column, rendered to
// SVG and PNG bytes that depend on nothing but the figure (no clock, no
// random identifier, fonts embedded by gonum/plot); a PNG is drawn on one
// image whose pixel memory, and the gg context drawing on it, are pooled
// for the next figure (pngCanvas), with the bytes of a fresh vgimg canvas;
// its text is drawn with font faces kept with that memory, a string drawn
// level composited without gg's generic image path (text.go), and its
// polygons and dots filled, and its strokes (but dashed ones and curves)
// outlined as gg outlines them, by rasterizers kept with it (of the
// image's rows, or of a band of rows around the path) and painted a run
// of equal pixels at a time (fill.go, stroke.go), to the same pixels; the
// rasterizers are figures/internal/raster, a copy of freetype's that finds
// a crowded row's cells in a table instead of walking the row's list (a
// noisy reward line crowds hundreds in a row), to the same spans.
// gonum/plot measures text through the package's handler
// (measuredText, plot.DefaultTextHandler), which keeps the faces, extents
// and widths text.Plain computed again for every measurement: the one
// state the package shares between the figures drawn at once, with
// rgbaPool.
// What a figure draws
// grows with what it can show, not with the data: the reward figure shades
// adjacent regimes narrower than a pixel column as one stretch and labels a
// stretch only where its label fits, and the caption counts both. Each
// figure made by a constructor has a key computed without drawing it
// (Figure.Key: its kind, KeyVersion and every input it is drawn from),
// under which the engine's --cache and the test memo keep its bytes.
//
// A line's 95 % band is mean ± t·sd/√n with t = TQuantile975(runs − 1),
// stats.StudentTQuantile kept per df. Its own arithmetic has no fused
// multiply-add (every product converted to float64 before it is added) and
// its sines and cosines are internal/fpmath's, so the Parquet curves and the
// SVGs are the same bytes on every machine, and so are the PNGs: their
// glyphs are rasterized by glyphFace (glyphs.go), opentype's face with
// its Glyph redone on figures/internal/vector, a copy of
// golang.org/x/image/vector whose two multiply-adds the arm64 compiler
// fused (its lerp of a glyph's curve points moved anti-aliased pixels) are
// converted (TestGlyphsHaveNoFusedInstructions,
// TestGlyphFaceMatchesOpentype). The fused multiply-adds left in
// gonum/plot, gg and freetype move no pixel of TestCrossArchitecture's
// jobs.
//
// Like protocol/, the package is pure: no I/O beyond the writers it is
// handed, no goroutine; the engine (pipeline) renders figures concurrently.
package figures
