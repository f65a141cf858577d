package ui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// longPostsPage is a blog whose list holds each post's whole body: the
// proposals show them, and on a phone they must not make the page tens of
// thousands of pixels tall.
var longPostsPage = func() string {
	var b strings.Builder
	b.WriteString("<html><head><title>Long posts</title></head><body><main>\n")
	for i := 1; i <= 6; i++ {
		fmt.Fprintf(&b, "<article class=\"post\"><h2><a href=\"/p/%d.html\">Post number %d about the harbour works</a></h2><p>%s</p></article>\n",
			i, i, strings.Repeat(fmt.Sprintf("Sentence %d of a long post body that goes on and on. ", i), 120))
	}
	b.WriteString("</main></body></html>")
	return b.String()
}()

// TestNewProposalsOnAPhone: at 390 px (and 1280 px) the proposals of a page
// whose items carry whole post bodies are cut to a few lines each, the
// offer does not scroll sideways, and the whole page stays a few screens
// tall (the issue measured 11,000–20,000 px before).
func TestNewProposalsOnAPhone(t *testing.T) {
	ctx := newBrowser(t)
	env := newPagesEnv(t)
	base := env.srv.URL
	if err := chromedp.Do(ctx,
		chromedp.Navigate(base+"/login"), chromedp.WaitVisible(chromedp.CSS(`#token`)),
		chromedp.SendKeys(chromedp.CSS(`#token`), pagesToken),
		chromedp.Click(chromedp.CSS(`#login button[type=submit]`)), chromedp.WaitVisible(chromedp.CSS(`#url`)),
		chromedp.SendKeys(chromedp.CSS(`#url`), env.origin.URL+"/posts.html"),
		chromedp.Click(chromedp.CSS(`#fetch button[type=submit]`)), chromedp.WaitVisible(chromedp.CSS(`#p1`)),
	); err != nil {
		t.Fatalf("log in and fetch: %v", err)
	}
	offer, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		width    int64
		lines    float64 // description lines at most
		maxPages float64 // page height at most, in viewport heights
	}{{390, 4, 12}, {1280, 8, 8}} {
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(c.width, 844, chromedp.EmulateScale(1)), chromedp.Navigate(offer)); err != nil {
			t.Fatal(err)
		}
		// [scrollWidth, innerWidth, page height, tallest description, its line height, descriptions]
		m, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`(() => {
			const ps = [...document.querySelectorAll('#p1 .items > li > p:not(.muted)')];
			let tall = 0, lh = 0;
			for (const p of ps) { const h = p.getBoundingClientRect().height; if (h > tall) { tall = h; lh = parseFloat(getComputedStyle(p).lineHeight) || 1.45 * parseFloat(getComputedStyle(p).fontSize); } }
			return [document.documentElement.scrollWidth, window.innerWidth, document.documentElement.scrollHeight, tall, lh, ps.length];
		})()`))
		if err != nil {
			t.Fatal(err)
		}
		if m[5] == 0 {
			t.Fatalf("at %d px: no description in the best proposal", c.width)
		}
		if m[0] > m[1] {
			t.Errorf("the offer at %d px scrolls sideways: %v > %v", c.width, m[0], m[1])
		}
		if m[3] > (c.lines+0.5)*m[4] {
			t.Errorf("at %d px a description is %v px tall, over %v lines of %v px", c.width, m[3], c.lines, m[4])
		}
		if m[2] > c.maxPages*844 {
			t.Errorf("the offer at %d px is %v px tall, over %v screens", c.width, m[2], c.maxPages)
		}
		t.Logf("%d px: page %v px tall, tallest description %v px (line %v px)", c.width, m[2], m[3], m[4])
	}
}
