package ui

import (
	"bytes"
	"context"
	"fmt"
	"github.com/dynamo-rss/dynamo/api"
	"github.com/dynamo-rss/dynamo/internal/apitest"
	"image/png"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/dynamo-rss/dynamo/schema"
	"github.com/dynamo-rss/dynamo/schema/schematest"
)

// chromiumPath finds Debian's chromium (or another Chrome), skipping the test
// when there is none unless validators are required.
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return schematest.Tool(t, "chromium") // skips, or fails under DYNAMO_REQUIRE_VALIDATORS=1
}

// newBrowser starts a headless Chromium with JavaScript off in its tab; it
// ends with the test.
func newBrowser(t *testing.T) context.Context {
	t.Helper()
	return startBrowser(t, false)
}

// startBrowser starts a headless Chromium, with JavaScript on in its tab
// when scripts is set (to see whether a hostile document's script runs).
func startBrowser(t *testing.T, scripts bool) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromiumPath(t)),
		chromedp.NoSandbox, // root in CI containers
		chromedp.DisableGPU,
		chromedp.Flag("hide-scrollbars", true),
		chromedp.Flag("disable-dev-shm-usage", true),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(t.Context(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(func() { cancelTimeout(); cancelCtx(); cancelAlloc() })
	noScript := chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true})
		return err
	})
	if scripts {
		noScript = chromedp.Func(func(context.Context, *chromedp.Target) error { return nil })
	}
	if err := chromedp.Do(ctx, noScript); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// screenshotDir is where the screenshots go: $DYNAMO_SCREENSHOTS when set
// (to look at them), else the test's temporary directory.
func screenshotDir(t *testing.T) string {
	if d := os.Getenv("DYNAMO_SCREENSHOTS"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return t.TempDir()
}

// TestPagesInChromium opens the pages in headless Chromium with JavaScript
// off, after the origin gained an item: the view shows the chart and the
// diff, a feed URL shows its items, and at phone and desktop widths no page
// scrolls sideways.
func TestPagesInChromium(t *testing.T) {
	ctx := newBrowser(t)
	db := apitest.OpenFixtureDB(t)
	// The origin adds an item: a fourth version on top of the fixture's three.
	latest, _, err := db.Version(t.Context(), "news", 1)
	if err != nil {
		t.Fatal(err)
	}
	next := *latest
	next.Timestamp = fdNow.Add(-time.Minute)
	next.Items = append([]schema.Item{apitest.FDItem(1, "d", "Library opens on Sundays", "https://example.org/news/d.html", "From next week.")}, latest.Items...)
	for i := range next.Items {
		next.Items[i].Index = i + 1
	}
	if _, err := db.Save(t.Context(), &next); err != nil {
		t.Fatal(err)
	}
	p := &histPoller{
		SvcPoller: apitest.SvcPoller{List: []api.ResourceStatus{{ID: "news", URL: "https://example.org/news/index.html", Policy: "smart", Tau: 3 * time.Hour, Interval: time.Hour,
			LastPoll: fdNow.Add(-time.Minute), NextPoll: fdNow.Add(time.Hour), LastOutcome: "changed", Polls: 300, Changes: 60, Errors: 30,
			LastError: ""}}},
		history: map[string][]api.PollRecord{"news": testHistory(300, fdNow)},
	}
	s := newFDServer(t, db, func(o *api.Options) { o.Poller = p; o.PublicURL = "" })
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)

	// The view: chart, the new item as added in version 4, permalinks.
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/view/news")); err != nil {
		t.Fatalf("open /view/news: %v", err)
	}
	checks := []struct{ name, js string }{
		{"chart SVG drawn", `(() => { const s = document.querySelector('svg.chart'); return !!s && s.getBoundingClientRect().width > 200 && s.querySelectorAll('path,circle,line,polyline').length > 50 })()`},
		{"item added on origin", `!!document.querySelector('#v4 li.added[data-item="d"]') && document.querySelector('#v4 li.added').textContent.includes('Library opens on Sundays')`},
		{"permalink", `!!document.querySelector('#v4 a[href="/resources/news/versions/4"]')`},
		{"changed field marked", `!!document.querySelector('#v3 li.changed[data-item="b"] del') && !!document.querySelector('#v3 li.changed[data-item="b"] ins')`},
		{"no scripts", `document.scripts.length === 0 && document.querySelectorAll('link[rel=stylesheet],iframe,object,embed').length === 0`},
		{"scripts are off", `(() => { const s = document.createElement('script'); s.textContent = 'window.__ran = 1'; document.body.appendChild(s); return window.__ran === undefined })()`}, // last: it adds a script
	}
	for _, c := range checks {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](c.js))
		if err != nil || !ok {
			t.Errorf("/view/news: %s: %v (err %v)", c.name, ok, err)
		}
	}

	// A feed URL opened in the browser: its items, as a page.
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/resources/news?max=10")); err != nil {
		t.Fatalf("open feed: %v", err)
	}
	items, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('#items li.item h3')].map(h => h.textContent.trim())`))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"Library opens on Sundays", "Straße closed for works", "Weather: sun at last", "Budget vote tonight"}; strings.Join(items, "|") != strings.Join(want, "|") {
		t.Errorf("feed page items %q, want %q", items, want)
	}
	// It came compressed from the render cache, with the age the clock
	// gives, and Chromium read it whole.
	sizes, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`(() => { const n = performance.getEntriesByType('navigation')[0]; return [n.encodedBodySize, n.decodedBodySize] })()`))
	if err != nil {
		t.Fatal(err)
	}
	if sizes[0] <= 0 || sizes[0] >= sizes[1] {
		t.Errorf("feed page: %v bytes sent for %v read: not compressed", sizes[0], sizes[1])
	}
	age, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('#about-feed time').textContent`))
	if err != nil || age != "1m ago" {
		t.Errorf("feed page: updated %q (err %v), want 1m ago", age, err)
	}

	// No page scrolls sideways on a phone (390 px) or a desktop (1280 px).
	dir := screenshotDir(t)
	for _, width := range []int64{390, 1280} {
		for _, path := range []string{"/", "/view/news", "/resources/news?max=10", "/preview"} {
			err := chromedp.Do(ctx,
				chromedp.EmulateViewport(width, 844, chromedp.EmulateScale(1)),
				chromedp.Navigate(srv.URL+path))
			if err != nil {
				t.Fatalf("open %s at %d px: %v", path, width, err)
			}
			dims, err := chromedp.Run(ctx, chromedp.Evaluate[[]int](`[document.documentElement.scrollWidth, window.innerWidth]`))
			if err != nil {
				t.Fatal(err)
			}
			if dims[0] > dims[1] {
				t.Errorf("%s at %d px scrolls sideways: scrollWidth %d > innerWidth %d", path, width, dims[0], dims[1])
			}
			if path != "/view/news" {
				continue
			}
			shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100) /* 100: PNG */)
			if err != nil {
				t.Fatal(err)
			}
			img, err := png.Decode(bytes.NewReader(shot))
			if err != nil {
				t.Fatalf("screenshot at %d px: %v", width, err)
			}
			if got := img.Bounds().Dx(); int64(got) != width {
				t.Errorf("screenshot at %d px is %d px wide", width, got)
			}
			name := filepath.Join(dir, fmt.Sprintf("view-%dpx.png", width))
			if err := os.WriteFile(name, shot, 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("screenshot %s (%dx%d)", name, img.Bounds().Dx(), img.Bounds().Dy())
		}
	}
}
