// Package raster is github.com/golang/freetype/raster at
// v0.0.0-20170609003504-e2365dfdc4a0 (the version in go.sum): its
// raster.go, geom.go, paint.go and stroke.go, with freetype-go's LICENSE
// and, of the two licences it offers, the FreeType License
// (licenses/ftl.txt), under which this copy is used. The PNG figures'
// fills and strokes are rasterized here (figures' fill.go, raster.go and
// stroke.go).
//
// What differs from upstream, and nothing else:
//
//   - raster.go, findCell: a row whose list of cells findCell has walked
//     tableAfter (32) cells of gets an x-indexed table of its cells
//     (Rasterizer.rowTable, makeTable), where findCell then finds or adds
//     a cell of the row at once; Rasterize sweeps such a row's cells from
//     its table, in increasing x as upstream sweeps its sorted list (the
//     sweep's step moved into sweep, unchanged); Clear and SetBounds drop
//     the tables made (only those rows' entries are reset). Upstream walks
//     the row's sorted list from its head for every cell it saves, and a
//     noisy reward line of 2,000 points on a 560-pixel plot puts hundreds
//     of cells in a row: half of a job's CPU went to that walk. A cell's
//     area and cover are sums of the same integers in the same rows
//     whichever way it is found, so the spans are upstream's, in the same
//     order (TestRasterizerMatchesFreetype; figures'
//     TestBandRasterizerMatchesFreetype).
//   - raster.go: the import comment (// import
//     "github.com/golang/freetype/raster") dropped from the package clause.
//   - raster.go, geom.go, stroke.go: every fixed.Point26_6{x, y} written
//     fixed.Point26_6{X: x, Y: y} (go vet's composites check), and
//     stroke.go's panic("unreachable") after the endless loop of
//     stroker.addNonCurvy2 deleted (go vet's unreachable check).
//   - geom.go, pLen: x*x + y*y written float64(x*x) + float64(y*y), so
//     that the arm64 compiler does not fuse it into a multiply-add (the
//     conversions round each product, as amd64 computes it; fpmath's
//     TestNoFusedInstructions holds every package of figures to that).
//     With the 26.6 coordinates of a figure the products are exact
//     integers either way.
//   - this doc.go.
package raster
