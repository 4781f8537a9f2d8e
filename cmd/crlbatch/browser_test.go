package main

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// chromium finds Debian's chromium: a test that needs it is skipped without
// it, and fails under CRLBATCH_REQUIRE_INTEGRATION=1 (CI installs it with
// .ci/install-browser).
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CRLBATCH_REQUIRE_INTEGRATION") == "1" {
		t.Fatal("chromium is not installed (.ci/install-browser installs it) and CRLBATCH_REQUIRE_INTEGRATION=1")
	}
	t.Skip("chromium is not installed: skipping the browser test (apt-get install chromium, or .ci/install-browser)")
	return ""
}

// TestReportHTMLInBrowser opens report.html of the bundled example of
// every protocol from a file:// URL in headless Chromium: no console
// error, no request but the page's own (the page fetches nothing), every
// figure drawn with a non-zero size, and screenshots at a phone's width
// and a desktop's that are not blank. CRLBATCH_SCREENSHOTS=dir keeps the
// screenshots there for a person to look at.
func TestReportHTMLInBrowser(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts a browser")
	}
	exe := chromium(t)
	shots := os.Getenv("CRLBATCH_SCREENSHOTS")
	for _, ex := range []struct{ name, in string }{
		{"skyfall", "../../configs/example-sweep"},
		{"safecrl", "../../configs/examples/safecrl"},
		{"contilab", "../../configs/examples/contilab"},
		{"skillshift", "../../configs/examples/skillshift"},
	} {
		t.Run(ex.name, func(t *testing.T) {
			t.Parallel()
			out := filepath.Join(t.TempDir(), "out")
			if code, _, stderr := crl(t, "score", ex.in, "--protocol", ex.name, "--out", out, "--quiet"); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			figs := 0
			for _, n := range listDir(t, out) {
				if strings.HasPrefix(n, "figure-") && strings.HasSuffix(n, ".svg") {
					figs++
				}
			}
			page := (&url.URL{Scheme: "file", Path: filepath.Join(out, "report.html")}).String()
			dir := shots
			if dir == "" {
				dir = t.TempDir()
			}
			for _, p := range openInBrowser(t, exe, page, figs, filepath.Join(dir, ex.name)) {
				t.Error(p)
			}
		})
	}
}

// TestBrowserCheckSeesRequests: the check above reports a page that
// fetches anything (an image from the loopback, a stylesheet beside it)
// and one that logs an error; else its silence would prove nothing.
func TestBrowserCheckSeesRequests(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts a browser")
	}
	exe := chromium(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "bad.html")
	page := `<!DOCTYPE html><html><head><link rel="stylesheet" href="missing.css"></head><body><figure><svg width="10" height="10"></svg></figure><img src="http://127.0.0.1:9/x.png"><script>console.error("boom")</script></body></html>`
	if err := os.WriteFile(path, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	u := (&url.URL{Scheme: "file", Path: path}).String()
	got := strings.Join(openInBrowser(t, exe, u, 1, filepath.Join(dir, "bad")), "\n")
	for _, want := range []string{"request to http://127.0.0.1:9/x.png", "missing.css", "console error", "1 images did not load", "phone screenshot", "desktop screenshot"} {
		if !strings.Contains(got, want) {
			t.Errorf("problems do not mention %q:\n%s", want, got)
		}
	}
}

// openInBrowser opens page, checks it and returns its problems.
func openInBrowser(t *testing.T, exe, page string, figs int, shotPrefix string) []string {
	t.Helper()
	// Chromium makes its singleton socket's folder under TMPDIR and leaves
	// it behind when chromedp ends it: the test's own folder holds it.
	tmp := t.TempDir()
	actx, cancel := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(exe),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Env("TMPDIR="+tmp),
	)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancelT := context.WithTimeout(ctx, 90*time.Second)
	defer cancelT()

	var mu sync.Mutex
	var problems []string
	if err := chromedp.Listen(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch ev := ev.(type) {
		case *network.EventRequestWillBeSent:
			if ev.Request.URL != page {
				problems = append(problems, "request to "+ev.Request.URL)
			}
		case *network.EventLoadingFailed:
			problems = append(problems, "loading failed: "+ev.ErrorText)
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeWarning {
				problems = append(problems, fmt.Sprintf("console %s", ev.Type))
			}
		case *runtime.EventExceptionThrown:
			problems = append(problems, "exception: "+ev.ExceptionDetails.Text)
		case *log.EventEntryAdded:
			if ev.Entry.Level == log.EntryLevelError || ev.Entry.Level == log.EntryLevelWarning {
				problems = append(problems, fmt.Sprintf("log %s: %s %s", ev.Entry.Level, ev.Entry.Text, ev.Entry.URL))
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, log.Enable, struct{}{}); err != nil {
		t.Logf("log.Enable: %v", err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(page)); err != nil {
		t.Fatal(err)
	}
	// Every figure is an inline SVG that has a size on the page; every
	// <img> (none is expected) has loaded.
	sizes, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`Array.from(document.querySelectorAll("figure svg")).map(s => s.getBoundingClientRect().width * s.getBoundingClientRect().height)`))
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if len(sizes) != figs {
		problems = append(problems, fmt.Sprintf("%d figures on the page, want %d", len(sizes), figs))
	}
	for i, s := range sizes {
		if s <= 0 {
			problems = append(problems, fmt.Sprintf("figure %d has no size on the page", i+1))
		}
	}
	mu.Unlock()
	broken, err := chromedp.Run(ctx, chromedp.Evaluate[int](`Array.from(document.images).filter(i => !i.complete || i.naturalWidth === 0).length`))
	if err != nil {
		t.Fatal(err)
	}
	if broken != 0 {
		mu.Lock()
		problems = append(problems, fmt.Sprintf("%d images did not load", broken))
		mu.Unlock()
	}
	for _, w := range []struct {
		name   string
		width  int64
		mobile bool
	}{{"phone", 390, true}, {"desktop", 1280, false}} {
		opts := []chromedp.EmulateViewportOption{}
		if w.mobile {
			opts = append(opts, chromedp.EmulateMobile, chromedp.EmulateTouch, chromedp.EmulatePortrait)
		}
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(w.width, 844, opts...)); err != nil {
			t.Fatal(err)
		}
		// The page must not be wider than the phone: tables scroll
		// in their own box.
		if w.mobile {
			sw, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`document.documentElement.scrollWidth`))
			if err != nil {
				t.Fatal(err)
			}
			if sw > float64(w.width) {
				mu.Lock()
				problems = append(problems, fmt.Sprintf("page is %v px wide at a %d px phone", sw, w.width))
				mu.Unlock()
			}
		}
		shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(shotPrefix), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(shotPrefix+"-"+w.name+".png", shot, 0o644); err != nil {
			t.Fatal(err)
		}
		if p := blank(w.name, shot); p != "" {
			mu.Lock()
			problems = append(problems, p)
			mu.Unlock()
		}
	}
	mu.Lock()
	defer mu.Unlock()
	return append([]string(nil), problems...)
}

// blank says what is wrong with a screenshot without ink: it wants at
// least 1 % of its pixels not near-white, and several colours (text and
// figures).
func blank(name string, shot []byte) string {
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		return fmt.Sprintf("%s screenshot: %v", name, err)
	}
	b := img.Bounds()
	ink, colours := 0, map[uint32]bool{}
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bl, _ := img.At(x, y).RGBA()
			if r < 0xe000 || g < 0xe000 || bl < 0xe000 {
				ink++
			}
			colours[(r>>12)<<8|(g>>12)<<4|bl>>12] = true
		}
	}
	total := (b.Dx() / 2) * (b.Dy() / 2)
	if ink*100 < total || len(colours) < 8 {
		return fmt.Sprintf("%s screenshot (%v) looks blank: %d of %d pixels inked, %d colours", name, b.Size(), ink, total, len(colours))
	}
	return ""
}
