package figures

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// fusedOp matches an arm64 fused multiply-add, float64 (D) or float32 (S),
// in a compiler listing.
var fusedOp = regexp.MustCompile(`\b(FMADD|FMSUB|FNMADD|FNMSUB)[DS]\b`)

// TestGlyphsHaveNoFusedInstructions keeps the PNGs' glyphs the same on
// arm64 as on amd64: the arm64 compiler must compile our copy of
// golang.org/x/image/vector (figures/internal/vector, the rasterizer of
// glyphFace's masks) and glyphFace.Glyph itself without one fused
// multiply-add. An upgrade of the copy that loses the conversions fails
// here (figures/internal/vector/doc.go); TestGlyphFaceMatchesOpentype
// checks that the PNG path draws with glyphFace.
func TestGlyphsHaveNoFusedInstructions(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs the arm64 compiler")
	}
	gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
	const pkg = "github.com/crlbatch/crlbatch/figures/internal/vector"
	cmd := exec.Command(gobin, "build", "-o", os.DevNull,
		"-gcflags="+pkg+"=-S", "-gcflags=github.com/crlbatch/crlbatch/figures=-S", "./figures")
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH=arm64", "CGO_ENABLED=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("GOARCH=arm64 go build -gcflags=-S ./figures: %v: %s", err, out)
	}
	// The listing is of our copy's lerp and of glyphFace.Glyph (nothing
	// is listed for a package the build cache holds).
	for _, want := range []string{
		filepath.Join("figures", "internal", "vector", "vector.go") + ":52)",
		filepath.Join("figures", "glyphs.go") + ":",
	} {
		if !strings.Contains(string(out), want) {
			t.Fatalf("the arm64 listing has no instruction of %s", want)
		}
	}
	for _, line := range strings.Split(string(out), "\n") {
		if fusedOp.MatchString(line) {
			t.Errorf("fused multiply-add: %s", strings.TrimSpace(line))
		}
	}
}
