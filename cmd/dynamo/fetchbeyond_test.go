package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dynamo-rss/dynamo/fetch"
	"github.com/dynamo-rss/dynamo/schema/schematest"
)

// TestServeFetchBeyondHTML runs dynamo serve against a loopback origin with
// a list a script builds (fetch: browser) and a list of teasers (content:
// full): the feeds carry the script's items and the articles' text without
// their boilerplate, each article is fetched once, and /metrics counts the
// renders.
func TestServeFetchBeyondHTML(t *testing.T) {
	if _, err := fetch.FindBrowser(""); err != nil {
		schematest.Tool(t, "chromium")
	}
	var jsonHits, articleHits atomic.Int64
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		switch {
		case r.URL.Path == "/robots.txt":
			w.Header().Set("Content-Type", "text/plain")
			_, _ = io.WriteString(w, "User-agent: *\nAllow: /\n")
		case r.URL.Path == "/js.html":
			_, _ = io.WriteString(w, `<!doctype html><html><head><title>JS news</title></head><body><ul id="news"></ul>
<script>fetch('/items.json').then(r => r.json()).then(items => {
  for (const it of items) document.getElementById('news').insertAdjacentHTML('beforeend', '<li><a href="' + it.link + '">' + it.title + '</a></li>');
});</script></body></html>`)
		case r.URL.Path == "/items.json":
			jsonHits.Add(1)
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `[{"title":"Scripted story","link":"/s/1"}]`)
		case r.URL.Path == "/teasers.html":
			_, _ = io.WriteString(w, `<html><head><title>Teasers</title></head><body><div class="teaser"><h3><a href="/a/1">Long story</a></h3><p>Just a teaser.</p></div></body></html>`)
		case r.URL.Path == "/a/1":
			articleHits.Add(1)
			_, _ = io.WriteString(w, `<html><head><title>Long story</title></head><body><nav><a href="/">NAVBAR home</a> <a href="/b">NAVBAR more</a></nav>
<article><h1>Long story</h1><p>The whole of the long story is told here, in a paragraph long enough for readability to take it as the main text of the page.</p>
<p>It goes on in a second paragraph with the details a teaser leaves out, so that a reader of the feed gets the article rather than one line.</p></article>
<footer>FOOTER copyright</footer></body></html>`)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(origin.Close)
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte("e2e-token-0123456789abcdef\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(dir, "dynamo.yaml")
	extra := fmt.Sprintf(`  - id: js
    url: "%[1]s/js.html"
    fetch: browser
    wait_for: "ul#news li"
    select: {item: "ul#news li", title: "a", link: "a @href"}
    policy: {kind: flat, interval: 1s}
  - id: teasers
    url: "%[1]s/teasers.html"
    content: full
    select: {item: "div.teaser", title: "h3", link: "h3 a @href", description: "p"}
    policy: {kind: flat, interval: 1s}
`, origin.URL)
	if err := os.WriteFile(cfgPath, fmt.Appendf(nil, e2eConfig, filepath.Join(dir, "data"), tokenFile, origin.URL, extra), 0o600); err != nil {
		t.Fatal(err)
	}
	c, stop, _ := runServe(t, cfgPath, "e2e-token-0123456789abcdef")
	defer stop()

	serveEventually(t, "the rendered feed", 60*time.Second, func() bool {
		resp, _ := c.do(http.MethodGet, "/resources/js", false)
		return resp.StatusCode == http.StatusOK && len(c.feed("/resources/js?max=20").Items) > 0
	})
	js := c.feed("/resources/js?max=20")
	if len(js.Items) != 1 || js.Items[0].Title != "Scripted story" {
		t.Errorf("fetch: browser feed: %+v", js.Items)
	}
	if jsonHits.Load() == 0 {
		t.Error("the page's XHR never reached the origin")
	}
	serveEventually(t, "the teasers feed", 30*time.Second, func() bool {
		resp, _ := c.do(http.MethodGet, "/resources/teasers", false)
		return resp.StatusCode == http.StatusOK && len(c.feed("/resources/teasers?max=20").Items) > 0
	})
	// Let a few more polls of the same page run: the article is not fetched again.
	serveEventually(t, "three more polls of the teasers", 30*time.Second, func() bool {
		_, st := c.do(http.MethodGet, "/admin/resources/teasers", true)
		var s struct {
			Polls int `json:"polls"`
		}
		return json.Unmarshal(st, &s) == nil && s.Polls >= 4
	})
	_, body := c.do(http.MethodGet, "/resources/teasers?max=20&type=json", false)
	for _, want := range []string{"The whole of the long story is told here", "Just a teaser."} {
		if !strings.Contains(string(body), want) {
			t.Errorf("JSON feed lacks %q:\n%s", want, body)
		}
	}
	for _, junk := range []string{"NAVBAR", "FOOTER", "dynamo:article", "urn:dynamo-rss:article"} {
		if strings.Contains(string(body), junk) {
			t.Errorf("JSON feed has %q:\n%s", junk, body)
		}
	}
	_, rss := c.do(http.MethodGet, "/resources/teasers?max=20&type=rss2", false)
	if !strings.Contains(string(rss), "content:encoded") || strings.Contains(string(rss), "urn:dynamo-rss:article") {
		t.Errorf("RSS: the article as content:encoded, without dynamo's mark:\n%s", rss)
	}
	if n := articleHits.Load(); n != 1 {
		t.Errorf("the article was fetched %d times, want once", n)
	}
	_, metrics := c.do(http.MethodGet, "/metrics", false)
	if !strings.Contains(string(metrics), `dynamo_fetch_renders_total{outcome="ok"}`) || !strings.Contains(string(metrics), "dynamo_fetch_render_seconds") {
		t.Errorf("/metrics lacks the render metrics")
	}
}
