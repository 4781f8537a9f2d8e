// Package vector is golang.org/x/image/vector at v0.30.0 (the version in
// go.mod): every file of it (the SIMD accumulation of acc_amd64.s, its
// generator gen.go and template, the tests) with the module's LICENSE and
// PATENTS, changed only so that the arm64 compiler fuses no multiply-add
// in it. The PNG figures' glyphs are rasterized here (figures.glyphFace)
// and must be the same pixels on arm64 as on amd64.
//
// What differs from upstream, and nothing else:
//
//   - vector.go, lerp (line 52): px + float32(t*(qx-px)) and
//     py + float32(t*(qy-py)), upstream px + t*(qx-px) and py + t*(qy-py);
//     this one placed a glyph's Bézier points with FMADDS under arm64 and
//     moved anti-aliased pixels of the PNGs.
//   - vector.go, devSquared (line 260): float32(devx*devx) +
//     float32(devy*devy), upstream devx*devx + devy*devy.
//   - vector.go: the import comment (// import "golang.org/x/image/vector")
//     dropped from the package clause.
//   - example_test.go imports this package instead of upstream's.
//   - this doc.go.
//
// The explicit float32 conversion is the Go specification's way to forbid
// the fusion; on amd64 built as crlbatch is (GOAMD64=v1, the default,
// where the compiler fuses nothing) it changes no bit, so the copy
// rasterizes as upstream does there.
//
// On an upgrade of golang.org/x/image: copy the new version's vector/
// directory and LICENSE over these files, redo the changes above, and
// convert the same way every other multiply feeding an add or subtract
// that the arm64 listing shows fused (GOARCH=arm64 go build
// -gcflags=<this package>=-S): figures' TestGlyphsHaveNoFusedInstructions
// and internal/fpmath's TestNoFusedInstructions fail while one is left.
// glyphFace.Glyph (figures/glyphs.go) is the new font/opentype's
// (*Face).Glyph redone: compare them, and run figures'
// TestGlyphFaceMatchesOpentype (our masks, bounds and advances against
// opentype's own face on amd64) and the excmp outputs.
package vector
