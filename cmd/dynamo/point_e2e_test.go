package main

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/dynamo-rss/dynamo/internal/formclient"
	"github.com/dynamo-rss/dynamo/internal/pointpages"
	"github.com/dynamo-rss/dynamo/schema/schematest"
)

// TestPointAtTheListEndToEnd: in a real dynamo serve with Chromium on
// PATH, /new shows each synthetic page's picture; the test renders the
// page in a browser of its own at the picture's width to find where the
// wanted item is, follows the smallest region over it, and gets the wanted
// list, which it adds; on the page with an ad, "not this one" on the ad
// leaves it out; on the page whose title is a heading's second link, "this
// is the title" on it makes the titles right.
func TestPointAtTheListEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("starts browsers")
	}
	chromium := schematest.Tool(t, "chromium")
	t.Setenv("PATH", filepath.Dir(chromium)+string(os.PathListSeparator)+os.Getenv("PATH"))
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			_, _ = io.WriteString(w, "User-agent: *\nAllow: /\n")
			return
		}
		p, ok := pointpages.Named(strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/"), ".html"))
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, p.HTML)
	}))
	t.Cleanup(origin.Close)
	c, b := serveLoggedIn(t, origin.URL, "point-token", "")
	look := ownBrowser(t, chromium)

	for _, p := range pointpages.Pages {
		t.Run(p.Name, func(t *testing.T) {
			page := origin.URL + "/" + p.Name + ".html"
			b.Get("/new")
			if code := followWaits(t, b, b.Submit(b.Form("/new", "url"), "url", page)); code != http.StatusOK {
				t.Fatalf("fetch: %d\n%s", code, b.Body)
			}
			if !strings.Contains(b.Body, `<svg class="shot"`) {
				t.Fatalf("no picture of the page on /new:\n%s", b.Body)
			}
			click := func(text string) {
				t.Helper()
				x, y := whereIs(t, look, page, text)
				h := pointpages.SmallestOver(b.Body, x, y)
				if h == "" {
					t.Fatalf("no region over %q at (%.0f, %.0f)", text, x, y)
				}
				b.Get(h)
			}
			if p.Item != "" {
				// The middle of the wanted first item, wherever it falls,
				// and the smallest region around the whole item.
				box := boxOf(t, look, page, "document.querySelector("+jsString(p.Item)+")")
				offer := b.Last.Request.URL.RequestURI()
				for what, h := range map[string]string{
					"a click in the middle of":   pointpages.SmallestOver(b.Body, box[0]+box[2]/2, box[1]+box[3]/2),
					"the smallest region around": pointpages.SmallestAround(b.Body, box[0], box[1], box[2], box[3]),
				} {
					if h == "" {
						t.Fatalf("no region for %s the first %s at %v", what, p.Item, box)
					}
					b.Get(h)
					if got := pointpages.Titles(b.Body, "chosen"); len(got) == 0 || !strings.Contains(got[0], p.Titles[0]) || len(got) < len(p.Titles) {
						t.Errorf("%s the first %s gave %q", what, p.Item, got)
					}
					b.Get(offer)
				}
			}
			click(p.Click)
			got := pointpages.Titles(b.Body, "chosen")
			if p.Title != "" {
				click(p.Title)
				choose(t, b, "this is the title")
				got = pointpages.Titles(b.Body, "chosen")
			}
			if p.Ad != "" {
				if !slices.Contains(got, p.Ad) {
					t.Fatalf("the chosen list %q lacks the ad", got)
				}
				click(p.Ad)
				choose(t, b, "not this one")
				got = pointpages.Titles(b.Body, "chosen")
			}
			lookAt(t, look, b, p.Name)
			if strings.Join(got, "|") != strings.Join(p.Titles[:min(5, len(p.Titles))], "|") {
				t.Fatalf("the chosen list: %q, want %q", got, p.Titles)
			}
			if code := followWaits(t, b, b.Submit(b.Form("/new/add", "id"), "id", "pointed-"+p.Name)); code != http.StatusOK {
				t.Fatalf("add: %d\n%s", code, b.Body)
			}
			f := c.feed("/resources/pointed-" + p.Name + "?max=10")
			if len(f.Items) != len(p.Titles) || f.Items[0].Title != p.Titles[0] {
				t.Errorf("the added feed has %d items; want %d, the first %q", len(f.Items), len(p.Titles), p.Titles[0])
			}
		})
	}
}

// ownBrowser is a headless Chromium of the test's own, its tab 1280 CSS
// pixels wide like the pictures of /new.
func ownBrowser(t *testing.T, chromium string) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium), chromedp.NoSandbox,
		chromedp.DisableGPU, chromedp.Flag("hide-scrollbars", true), chromedp.Flag("disable-dev-shm-usage", true))
	actx, cancelAlloc := chromedp.NewExecAllocator(t.Context(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(func() { cancelTimeout(); cancelCtx(); cancelAlloc() })
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 800, chromedp.EmulateScale(1))); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// whereIs renders page in the test's browser and returns the middle of the
// innermost element whose own text is text, in page coordinates.
func whereIs(t *testing.T, ctx context.Context, page, text string) (x, y float64) {
	t.Helper()
	return middleOf(t, ctx, page, "document.evaluate("+jsString("//*[text()[normalize-space()='"+text+"']]")+", document, null, 9, null).singleNodeValue")
}

// middleOf renders page in the test's browser and returns the middle of
// the element the JavaScript expression el finds, in page coordinates.
func middleOf(t *testing.T, ctx context.Context, page, el string) (x, y float64) {
	t.Helper()
	b := boxOf(t, ctx, page, el)
	return b[0] + b[2]/2, b[1] + b[3]/2
}

// boxOf renders page in the test's browser and returns the box (x, y,
// width, height) of the element the JavaScript expression el finds, in
// page coordinates.
func boxOf(t *testing.T, ctx context.Context, page, el string) []float64 {
	t.Helper()
	js := `(() => { const it = ` + el + `;
		if (!it) return [];
		const r = it.getBoundingClientRect();
		return [r.left + scrollX, r.top + scrollY, r.width, r.height]; })()`
	if err := chromedp.Do(ctx, chromedp.Navigate(page)); err != nil {
		t.Fatalf("render %s: %v", page, err)
	}
	box, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](js))
	if err != nil {
		t.Fatalf("find %s on %s: %v", el, page, err)
	}
	if len(box) != 4 {
		t.Fatalf("no %s on %s", el, page)
	}
	return box
}

// jsString is s as a JavaScript string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// choose follows the link text of the picked item's choices.
func choose(t *testing.T, b *formclient.Client, text string) {
	t.Helper()
	m := regexp.MustCompile(`<a class="choice" href="([^"]+)">` + regexp.QuoteMeta(text) + `</a>`).FindStringSubmatch(b.Body)
	if m == nil {
		t.Fatalf("no %q after the click; at %s", text, b.Last.Request.URL)
	}
	b.Get(html.UnescapeString(m[1]))
}

// lookAt saves screenshots of the page b shows, at 390 and 1280 px, in
// $DYNAMO_SCREENSHOTS when it is set (to look at them), with b's session.
func lookAt(t *testing.T, ctx context.Context, b *formclient.Client, name string) {
	t.Helper()
	dir := os.Getenv("DYNAMO_SCREENSHOTS")
	if dir == "" {
		return
	}
	u := b.Last.Request.URL
	for _, ck := range b.C.Jar.Cookies(u) {
		set := chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := cdp.Call(ctx, tg, network.SetCookie, network.SetCookieParams{Name: ck.Name, Value: ck.Value, URL: u.String()})
			return err
		})
		if err := chromedp.Do(ctx, set); err != nil {
			t.Fatal(err)
		}
	}
	for _, width := range []int64{390, 1280} {
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(width, 844, chromedp.EmulateScale(1)), chromedp.Navigate(u.String())); err != nil {
			t.Fatal(err)
		}
		shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("point-%s-%d.png", name, width)), shot, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 800, chromedp.EmulateScale(1))); err != nil {
		t.Fatal(err)
	}
}
