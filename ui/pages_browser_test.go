package ui

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestAddFeedInChromium adds a feed as a person does in headless Chromium
// with JavaScript off: log in, paste a loopback URL, switch to another
// proposal, edit its block and preview it, add it, and land on its view
// with the first version's items. The pages fit a phone's width.
func TestAddFeedInChromium(t *testing.T) {
	ctx := newBrowser(t)
	env := newPagesEnv(t)
	base := env.srv.URL
	run := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, actions...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	location := func() string {
		t.Helper()
		u, err := chromedp.Run(ctx, chromedp.Location())
		if err != nil {
			t.Fatalf("read the location: %v", err)
		}
		return strings.TrimPrefix(u, base)
	}
	eval := func(js string) []string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](js))
		if err != nil {
			t.Fatalf("evaluate %s: %v", js, err)
		}
		return v
	}

	run("open /new", chromedp.Navigate(base+"/new"), chromedp.WaitVisible(chromedp.CSS(`#token`)))
	if loc := location(); !strings.HasPrefix(loc, "/login") {
		t.Fatalf("/new before login shows %s, want the login page", loc)
	}
	run("log in",
		chromedp.SendKeys(chromedp.CSS(`#token`), pagesToken),
		chromedp.Click(chromedp.CSS(`#login button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`#url`)))
	run("paste a URL",
		chromedp.SendKeys(chromedp.CSS(`#url`), env.origin.URL+"/list.html"),
		chromedp.Click(chromedp.CSS(`#fetch button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`#p1`)))
	offer := location() // GET /new?fetch=…: the page fetched, as a reload shows it
	if !strings.HasPrefix(offer, "/new?fetch=") {
		t.Fatalf("after fetching, at %s, want /new?fetch=…", offer)
	}
	best := eval(`[...document.querySelectorAll('#p1 li.item h3')].map(h => h.textContent.trim())`)
	if len(best) != 4 || best[0] != "Budget approved for the new library wing" {
		t.Errorf("best proposal's items %q, want the four notices", best)
	}

	// Switch to another proposal (the page's menu, most likely), then
	// edit its block into the notices and preview it.
	other := eval(`document.querySelector('nav .toc a[href="#p2"]') ? ['#p2'] : ['#p1']`)[0]
	run("switch proposal", chromedp.Click(chromedp.CSS(`nav .toc a[href="`+other+`"]`)))
	if loc := location(); !strings.HasSuffix(loc, other) {
		t.Errorf("after switching, at %s, want %s", loc, other)
	}
	edited := "item: article.notice\ntitle: h3 a\nlink: h3 a @href\ndescription: p\n"
	run("edit and preview",
		chromedp.SetValue(chromedp.CSS(other+` form.preview textarea`), edited),
		chromedp.Click(chromedp.CSS(other+` form.preview button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`#preview`)))
	previewed := eval(`[...document.querySelectorAll('#preview li.item h3')].map(h => h.textContent.trim())`)
	if len(previewed) != 4 || previewed[3] != "Public consultation on the river park project" {
		t.Errorf("preview items %q, want the four notices", previewed)
	}
	descs := eval(`[...document.querySelectorAll('#preview li.item p')].map(p => p.textContent.trim())`)
	if len(descs) == 0 || descs[0] != "The council voted the budget on Monday evening." {
		t.Errorf("preview descriptions %q", descs)
	}
	if n := env.origin.count("/list.html"); n != 1 {
		t.Errorf("origin fetched %d times after a preview, want 1", n)
	}

	// Screenshots and widths of the pages, while the session lasts.
	dir := screenshotDir(t)
	for _, width := range []int64{390, 1280} {
		for _, path := range []string{offer, "/new", "/register", "/login"} {
			run("open "+path, chromedp.EmulateViewport(width, 844, chromedp.EmulateScale(1)), chromedp.Navigate(base+path))
			dims, err := chromedp.Run(ctx, chromedp.Evaluate[[]int](`[document.documentElement.scrollWidth, window.innerWidth]`))
			if err != nil {
				t.Fatal(err)
			}
			if dims[0] > dims[1] {
				t.Errorf("%s at %d px scrolls sideways: %d > %d", path, width, dims[0], dims[1])
			}
		}
		run("open the offer", chromedp.Navigate(base+offer))
		shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Join(dir, fmt.Sprintf("new-%dpx.png", width))
		if err := os.WriteFile(name, shot, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// Add the edited block from the preview: the view of the new resource.
	run("preview again",
		chromedp.Navigate(base+offer),
		chromedp.SetValue(chromedp.CSS(`#p1 form.preview textarea`), edited),
		chromedp.Click(chromedp.CSS(`#p1 form.preview button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`#preview form.add`)))
	run("add",
		chromedp.SetValue(chromedp.CSS(`#preview form.add input[name=id]`), "townhall"),
		chromedp.Click(chromedp.CSS(`#preview form.add button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`#chart`)))
	if loc := location(); loc != "/view/townhall" {
		t.Fatalf("after add, at %s, want /view/townhall", loc)
	}
	text, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`main`)))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text, "Budget approved for the new library wing") {
		t.Errorf("the view does not show the first version's items:\n%s", text)
	}
	d, ok := env.reg.Definition("townhall")
	if !ok || d.Resource.Select.Description != "p" {
		t.Errorf("registered %+v, want the edited block", d.Resource)
	}
	if n := env.origin.count("/list.html"); n != 2 {
		t.Errorf("origin fetched %d times, want 2 (/new and the first poll)", n)
	}
}
