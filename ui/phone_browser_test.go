package ui

import (
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/dynamo-rss/dynamo/api"
	"github.com/dynamo-rss/dynamo/internal/apitest"
)

// TestViewAndFeedOnAPhone measures /view and a feed page in headless
// Chromium at a phone's width (390 px) and a desktop's (1280 px): the page
// does not scroll sideways, the chart fits the width whole (not cut off in
// a scrolling box), the subscribe field fits, and a long description is
// cut to a few lines.
func TestViewAndFeedOnAPhone(t *testing.T) {
	ctx := newBrowser(t)
	db := apitest.OpenFixtureDB(t)
	latest, _, err := db.Version(t.Context(), "news", 1)
	if err != nil {
		t.Fatal(err)
	}
	next := *latest
	next.Timestamp = fdNow.Add(-time.Minute)
	long := strings.Repeat("The council met for a long evening and discussed every line of the budget, the library wing, the tram and the river park. ", 40)
	next.Items = append(next.Items[:0:0], apitest.FDItem(1, "long", "A very long post", "https://example.org/news/long.html", long))
	next.Items = append(next.Items, latest.Items...)
	for i := range next.Items {
		next.Items[i].Index = i + 1
	}
	if _, err := db.Save(t.Context(), &next); err != nil {
		t.Fatal(err)
	}
	p := &histPoller{
		SvcPoller: apitest.SvcPoller{List: []api.ResourceStatus{{ID: "news", URL: "https://example.org/news/index.html", Policy: "smart", Tau: 3 * time.Hour, Interval: time.Hour,
			LastPoll: fdNow.Add(-time.Minute), NextPoll: fdNow.Add(time.Hour), LastOutcome: "changed", Polls: 300, Changes: 60, Errors: 30}}},
		history: map[string][]api.PollRecord{"news": testHistory(300, fdNow)},
	}
	s := newFDServer(t, db, func(o *api.Options) { o.Poller = p; o.PublicURL = "" })
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	dir := screenshotDir(t)

	measure := func(what, js string) []float64 {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](js))
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return v
	}
	for _, width := range []int64{390, 1280} {
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(width, 844, chromedp.EmulateScale(1)), chromedp.Navigate(srv.URL+"/view/news")); err != nil {
			t.Fatalf("open /view/news at %d px: %v", width, err)
		}
		// [page scrollWidth, innerWidth, chart left, chart right, chart width, chart box scrollWidth, chart box clientWidth, field right]
		m := measure("measure /view", `(() => {
			const s = document.querySelector('svg.chart').getBoundingClientRect();
			const box = document.querySelector('.chart-box');
			const f = document.querySelector('#subscribe-url').getBoundingClientRect();
			return [document.documentElement.scrollWidth, window.innerWidth, s.left, s.right, s.width, box.scrollWidth, box.clientWidth, f.right];
		})()`)
		if m[0] > m[1] {
			t.Errorf("/view at %d px scrolls sideways: scrollWidth %v > %v", width, m[0], m[1])
		}
		if m[2] < 0 || m[3] > m[1] {
			t.Errorf("/view at %d px: the chart spans %v–%v, beyond the width %v", width, m[2], m[3], m[1])
		}
		if m[5] > m[6] {
			t.Errorf("/view at %d px: the chart is cut off in its box (%v wide in %v)", width, m[5], m[6])
		}
		if m[4] < m[1]/2 {
			t.Errorf("/view at %d px: the chart is %v px wide, under half the width", width, m[4])
		}
		if m[7] > m[1] {
			t.Errorf("/view at %d px: the subscribe field ends at %v, beyond %v", width, m[7], m[1])
		}
		// Reaching the field from the keyboard selects the whole address,
		// ready to copy, without a script.
		if err := chromedp.Do(ctx, chromedp.Focus(chromedp.CSS(`#state a.url`)), chromedp.KeyEvent("\t")); err != nil {
			t.Fatalf("tab to the subscribe field: %v", err)
		}
		sel := measure("the field's selection", `(() => { const f = document.querySelector('#subscribe-url'); return [document.activeElement === f ? 1 : 0, f.selectionStart, f.selectionEnd, f.value.length] })()`)
		if sel[0] != 1 || sel[1] != 0 || sel[2] != sel[3] {
			t.Errorf("/view at %d px: tabbing to the subscribe field selects %v–%v of %v (focused %v), want all of it", width, sel[1], sel[2], sel[3], sel[0] == 1)
		}
		shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("view-phone-%dpx.png", width)), shot, 0o644); err != nil {
			t.Fatal(err)
		}

		// A feed page: the long description is cut to a few lines.
		if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/resources/news?max=10")); err != nil {
			t.Fatalf("open the feed page at %d px: %v", width, err)
		}
		// [page scrollWidth, innerWidth, description height, its full height, line height]
		d := measure("measure the feed page", `(() => {
			const li = [...document.querySelectorAll('#items li.item')].find(l => l.textContent.includes('A very long post'));
			const e = li.querySelector('.content') || li.querySelector('p:not(.muted)');
			const lh = parseFloat(getComputedStyle(e).lineHeight) || 23;
			return [document.documentElement.scrollWidth, window.innerWidth, e.getBoundingClientRect().height, e.scrollHeight, lh];
		})()`)
		if d[0] > d[1] {
			t.Errorf("feed page at %d px scrolls sideways: %v > %v", width, d[0], d[1])
		}
		maxLines := 8.0
		if width == 390 {
			maxLines = 4
		}
		if lines := d[2] / d[4]; lines > maxLines+0.5 {
			t.Errorf("feed page at %d px: the long description is %v px, %.1f lines, want at most %v", width, d[2], lines, maxLines)
		}
		if d[3] <= d[2] {
			t.Errorf("feed page at %d px: the long description is not cut (%v of %v px shown)", width, d[2], d[3])
		}
	}
}
