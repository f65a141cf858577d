package poller

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/dynamo-rss/dynamo/fetch"
	"github.com/dynamo-rss/dynamo/schema/schematest"
)

// scriptOrigin serves a page whose list a script builds from /items.json,
// counting the JSON's requests and those that carried X-Consent: yes (a
// resource's headers).
func scriptOrigin(t *testing.T) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var jsonHits atomic.Int64
	consented.Store(0)
	mux := http.NewServeMux()
	mux.HandleFunc("/news.html", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!doctype html><html><head><title>Script news</title></head><body><ul id="news"></ul>
<script>fetch('/items.json').then(r => r.json()).then(items => {
  const ul = document.getElementById('news');
  for (const it of items) { ul.insertAdjacentHTML('beforeend', '<li><a href="' + it.link + '">' + it.title + '</a></li>'); }
});</script></body></html>`)
	})
	mux.HandleFunc("/items.json", func(w http.ResponseWriter, r *http.Request) {
		jsonHits.Add(1)
		if r.Header.Get("X-Consent") == "yes" {
			consented.Add(1)
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `[{"title":"Built by script","link":"/a/1"},{"title":"Also built","link":"/a/2"}]`)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, &jsonHits
}

// consented counts scriptOrigin's requests with the resource's header.
var consented atomic.Int64

// TestBrowserResource: a list built by a script is extracted with fetch:
// browser (its XHR seen by the origin), not with a plain GET; a resource
// whose browser is missing fails saying so, and the others go on.
func TestBrowserResource(t *testing.T) {
	if _, err := fetch.FindBrowser(""); err != nil {
		schematest.Tool(t, "chromium")
	}
	srv, jsonHits := scriptOrigin(t)
	clk := newFakeClock(t0)
	ms := newMemStore()
	sel := `select: {item: "ul#news li", title: "a", link: "a @href"}`
	cfg := testConfig(t, baseYAML(fmt.Sprintf(`  browser: {timeout: 30s}
resources:
  - {id: js, url: %q, fetch: browser, wait_for: "ul#news li", headers: {X-Consent: "yes"}, %s}
  - {id: plain, url: %q, %s}
`, srv.URL+"/news.html", sel, srv.URL+"/news.html", sel)))
	e := newTestEngine(t, cfg, ms, clk)
	t.Cleanup(func() { _ = e.Close() })

	st, err := e.PollNow(t.Context(), "js")
	if err != nil {
		t.Fatal(err)
	}
	if st.LastOutcome != OutcomeChanged {
		t.Fatalf("fetch: browser poll: %s (%s), want changed", st.LastOutcome, st.LastError)
	}
	if jsonHits.Load() == 0 {
		t.Error("the page's XHR never reached the origin")
	}
	if consented.Load() == 0 {
		t.Error("the resource's headers did not reach the origin with the page's same-host XHR")
	}
	ms.mu.Lock()
	vs := ms.versions["js"]
	doc := vs[len(vs)-1]
	ms.mu.Unlock()
	if len(doc.Items) != 2 || doc.Items[0].Title != "Built by script" || doc.Items[0].Link != srv.URL+"/a/1" {
		t.Errorf("rendered version's items: %+v", doc.Items)
	}
	// The same page fetched with a plain GET has an empty list.
	st, err = e.PollNow(t.Context(), "plain")
	if err != nil {
		t.Fatal(err)
	}
	if st.LastOutcome != OutcomeError || !strings.Contains(st.LastError, "item selector matched nothing") {
		t.Errorf("fetch: http poll of the script page: %s (%s), want the selector matching nothing", st.LastOutcome, st.LastError)
	}
	// An unchanged rendered page stores nothing new.
	if st, _ := e.PollNow(t.Context(), "js"); st.LastOutcome != OutcomeUnchanged {
		t.Errorf("second render: %s (%s), want unchanged", st.LastOutcome, st.LastError)
	}
}

func TestBrowserMissing(t *testing.T) {
	srv, _ := scriptOrigin(t)
	clk := newFakeClock(t0)
	ms := newMemStore()
	missing := filepath.Join(t.TempDir(), "no-chromium")
	cfg := testConfig(t, baseYAML(fmt.Sprintf(`  browser: {exec: %q}
resources:
  - {id: js, url: %q, fetch: browser, select: {item: "ul#news li", title: "a"}}
  - {id: page, url: %q, select: {item: "title"}}
`, missing, srv.URL+"/news.html", srv.URL+"/news.html")))
	e := newTestEngine(t, cfg, ms, clk)
	t.Cleanup(func() { _ = e.Close() })
	st, err := e.PollNow(t.Context(), "js")
	if err != nil {
		t.Fatal(err)
	}
	if st.LastOutcome != OutcomeError || !strings.Contains(st.LastError, "poller.browser.exec") || !strings.Contains(st.LastError, missing) {
		t.Errorf("poll without a browser: %s (%s), want an error naming poller.browser.exec", st.LastOutcome, st.LastError)
	}
	if st, _ := e.PollNow(t.Context(), "page"); st.LastOutcome != OutcomeChanged {
		t.Errorf("the other resource: %s (%s), want changed", st.LastOutcome, st.LastError)
	}
}

// TestBrowserPrivateRefused: with allow_private false the render of a
// loopback page is refused by the guard, naming the setting.
func TestBrowserPrivateRefused(t *testing.T) {
	if _, err := fetch.FindBrowser(""); err != nil {
		schematest.Tool(t, "chromium")
	}
	srv, jsonHits := scriptOrigin(t)
	cfg := testConfig(t, strings.Replace(baseYAML(fmt.Sprintf(`resources:
  - {id: js, url: %q, fetch: browser, select: {item: "ul#news li", title: "a"}}
`, srv.URL+"/news.html")), "allow_private: true", "allow_private: false", 1))
	e := newTestEngine(t, cfg, newMemStore(), newFakeClock(t0))
	t.Cleanup(func() { _ = e.Close() })
	st, err := e.PollNow(t.Context(), "js")
	if err != nil {
		t.Fatal(err)
	}
	if st.LastOutcome != OutcomeError || !strings.Contains(st.LastError, "poller.allow_private") {
		t.Errorf("render of a loopback page with allow_private false: %s (%s), want the guard's refusal", st.LastOutcome, st.LastError)
	}
	if jsonHits.Load() != 0 {
		t.Error("the page's XHR reached the origin")
	}
}

// TestPicturePage: the engine draws a page through its fetcher, with the
// page's scripts or without; a document that is not HTML has no picture;
// without allow_private, loopback is refused by the guard.
func TestPicturePage(t *testing.T) {
	if _, err := fetch.FindBrowser(""); err != nil {
		schematest.Tool(t, "chromium")
	}
	srv, _ := scriptOrigin(t)
	e := newTestEngine(t, testConfig(t, baseYAML("")), newMemStore(), newFakeClock(t0))
	for _, scripts := range []bool{false, true} {
		page, pic, err := e.PicturePage(t.Context(), srv.URL+"/news.html", "ul#news li", scripts)
		if err != nil {
			t.Fatalf("PicturePage (scripts %v): %v", scripts, err)
		}
		if pic == nil || pic.Image == nil || len(pic.Boxes) == 0 || page.URL != srv.URL+"/news.html" {
			t.Fatalf("PicturePage (scripts %v): %+v, picture %v; want it drawn", scripts, page, pic != nil)
		}
		if got := strings.Contains(string(page.Body), "Built by script"); got != scripts {
			t.Errorf("scripts %v: the script's list in the page = %v", scripts, got)
		}
	}
	page, pic, err := e.PicturePage(t.Context(), srv.URL+"/items.json", "", false)
	if err != nil || pic != nil || !strings.Contains(string(page.Body), "Built by script") || page.ContentType != "application/json" {
		t.Errorf("PicturePage of JSON: %+v, picture %v, %v; want the JSON as sent, undrawn", page, pic != nil, err)
	}
	strict := newTestEngine(t, testConfig(t, strings.Replace(baseYAML(""), "allow_private: true", "allow_private: false", 1)), newMemStore(), newFakeClock(t0))
	if _, _, err := strict.PicturePage(t.Context(), srv.URL+"/news.html", "", false); !errors.Is(err, ErrForbiddenAddress) {
		t.Errorf("PicturePage of loopback without allow_private: %v, want ErrForbiddenAddress", err)
	}
}
