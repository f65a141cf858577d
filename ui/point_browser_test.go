package ui

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestPointInChromium: in headless Chromium with JavaScript off, at 390
// and 1280 px, the offer with a picture does not scroll sideways, the
// picture fits the width with its box a screen tall at most, and a real
// click on the picture where the wanted item is drawn follows the SVG
// link to "Items like this" with that list.
func TestPointInChromium(t *testing.T) {
	ctx := newBrowser(t)
	env, _, _ := newPointEnv(t, true)
	p := pointPageNamed(t, "footer")
	// The browser's own session: log in there, and fetch the page.
	if err := chromedp.Do(ctx,
		chromedp.Navigate(env.srv.URL+"/login"), chromedp.WaitVisible(chromedp.CSS(`#token`)),
		chromedp.SendKeys(chromedp.CSS(`#token`), pagesToken),
		chromedp.Click(chromedp.CSS(`#login button[type=submit]`)), chromedp.WaitVisible(chromedp.CSS(`#url`)),
		chromedp.SendKeys(chromedp.CSS(`#url`), "https://example.org/"+p.Name),
		chromedp.Click(chromedp.CSS(`#fetch button[type=submit]`)), chromedp.WaitVisible(chromedp.CSS(`#picture`)),
	); err != nil {
		t.Fatalf("log in and fetch: %v", err)
	}
	offer, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	target := boxOfText(t, p.HTML, p.Click)
	for _, width := range []int64{390, 1280} {
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(width, 844, chromedp.EmulateScale(1)), chromedp.Navigate(offer),
			chromedp.WaitVisible(chromedp.CSS(`svg.shot`))); err != nil {
			t.Fatal(err)
		}
		// [scrollWidth, innerWidth, svg left, svg top, svg width, box height, scripts]
		m, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`(() => {
			const svg = document.querySelector('svg.shot'), box = document.querySelector('.shot-box');
			svg.scrollIntoView();
			const r = svg.getBoundingClientRect();
			return [document.documentElement.scrollWidth, window.innerWidth, r.left, r.top, r.width, box.getBoundingClientRect().height, document.scripts.length];
		})()`))
		if err != nil {
			t.Fatal(err)
		}
		if m[0] > m[1] {
			t.Errorf("at %d px the offer scrolls sideways: %v > %v", width, m[0], m[1])
		}
		if m[4] > m[1] || m[5] > 844 {
			t.Errorf("at %d px the picture is %v px wide in a box %v px tall", width, m[4], m[5])
		}
		if m[6] != 0 {
			t.Errorf("the offer has %v scripts", m[6])
		}
		scale := m[4] / 1280
		x, y := m[2]+(target.X+target.W/2)*scale, m[3]+(target.Y+target.H/2)*scale
		if err := chromedp.Do(ctx, chromedp.MouseClickXY(x, y), chromedp.WaitVisible(chromedp.CSS(`#chosen`))); err != nil {
			t.Fatalf("at %d px, a click at (%.0f, %.0f) on the picture: %v", width, x, y, err)
		}
		got, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('#chosen .items h3')].map(h => h.textContent.trim())`))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(got, "|") != strings.Join(p.Titles, "|") {
			t.Errorf("at %d px the click gave %q, want %q", width, got, p.Titles)
		}
	}
}

// TestPointOutlineInChromium: without a browser to draw pages, the
// offer's outline of the page fits 390 and 1280 px without sideways
// scroll, and its "items like this" is a plain link that gives the list.
func TestPointOutlineInChromium(t *testing.T) {
	ctx := newBrowser(t)
	env, _, _ := newPointEnv(t, false)
	p := pointPageNamed(t, "footer")
	if err := chromedp.Do(ctx,
		chromedp.Navigate(env.srv.URL+"/login"), chromedp.WaitVisible(chromedp.CSS(`#token`)),
		chromedp.SendKeys(chromedp.CSS(`#token`), pagesToken),
		chromedp.Click(chromedp.CSS(`#login button[type=submit]`)), chromedp.WaitVisible(chromedp.CSS(`#url`)),
		chromedp.SendKeys(chromedp.CSS(`#url`), "https://example.org/"+p.Name),
		chromedp.Click(chromedp.CSS(`#fetch button[type=submit]`)), chromedp.WaitVisible(chromedp.CSS(`#outline`)),
	); err != nil {
		t.Fatalf("log in and fetch: %v", err)
	}
	offer, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	for _, width := range []int64{390, 1280} {
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(width, 844, chromedp.EmulateScale(1)), chromedp.Navigate(offer),
			chromedp.WaitVisible(chromedp.CSS(`#outline a.like`))); err != nil {
			t.Fatal(err)
		}
		m, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`[document.documentElement.scrollWidth, window.innerWidth, document.querySelectorAll('#outline a.like').length, document.querySelectorAll('svg.shot').length]`))
		if err != nil {
			t.Fatal(err)
		}
		if m[0] > m[1] || m[2] < 2 || m[3] != 0 {
			t.Errorf("at %d px: scroll width %v of %v, %v lists, %v pictures", width, m[0], m[1], m[2], m[3])
		}
	}
	// The main list's "items like this": the list it names.
	js := `[...document.querySelectorAll('#outline li')].find(li => li.textContent.includes(` + "`" + p.Titles[0] + "`" + `)).querySelector('a.like').href`
	href, err := chromedp.Run(ctx, chromedp.Evaluate[string](js))
	if err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(href), chromedp.WaitVisible(chromedp.CSS(`#chosen`))); err != nil {
		t.Fatal(err)
	}
	got, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('#chosen .items h3')].map(h => h.textContent.trim())`))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, "|") != strings.Join(p.Titles, "|") {
		t.Errorf("items like this: %q, want %q", got, p.Titles)
	}
}
