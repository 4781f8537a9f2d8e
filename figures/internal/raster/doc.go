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
//   - raster.go: the import comment (// import
//     "github.com/golang/freetype/raster") dropped from the package clause.
//   - raster.go, geom.go, stroke.go: every fixed.Point26_6{x, y} written
//     fixed.Point26_6{X: x, Y: y} (go vet's composites check), and
//     stroke.go's panic("unreachable") after the endless loop of
//     stroker.addNonCurvy2 deleted (go vet's unreachable check).
//   - this doc.go.
package raster
