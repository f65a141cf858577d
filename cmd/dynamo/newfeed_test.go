package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dynamo-rss/dynamo/internal/formclient"
)

// newFeedList is a page nobody annotated: a menu, then the list.
const newFeedList = `<html><head><title>Harbour office</title></head><body>
<nav id="menu"><a href="/">Home</a> <a href="/about.html">About</a> <a href="/contact.html">Contact</a> <a href="/faq.html">FAQ</a></nav>
<ul class="news">
<li><h2><a href="/n/3.html">Ferry timetable changes for the winter season</a></h2><p>Fewer crossings on Sundays.</p></li>
<li><h2><a href="/n/2.html">Quay 2 reopens after the storm repairs</a></h2><p>Mooring is allowed again.</p></li>
<li><h2><a href="/n/1.html">New fees for visiting yachts from January</a></h2><p>The harbour board set them on Friday.</p></li>
</ul></body></html>`

// TestAddFeedEndToEnd walks /login, /new and /register of a real service
// (Badger, the real poller and its guarded retriever) as a browser without
// JavaScript: the page is fetched once whatever the previews, Add registers
// and polls at once, and the feed then serves the list's items.
func TestAddFeedEndToEnd(t *testing.T) {
	var hits atomic.Int64
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		switch r.URL.Path {
		case "/robots.txt":
			w.Header().Set("Content-Type", "text/plain")
			_, _ = io.WriteString(w, "User-agent: *\nAllow: /\n")
		case "/list.html":
			hits.Add(1)
			_, _ = io.WriteString(w, newFeedList)
		case "/annotated.html":
			_, _ = io.WriteString(w, e2ePage("Harbour festival"))
		case "/plain.html":
			_, _ = io.WriteString(w, "<html><body><p>No news.</p></body></html>")
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(origin.Close)
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte("walk-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(dir, "dynamo.yaml")
	cfg := fmt.Appendf(nil, e2eConfig, filepath.Join(dir, "data"), tokenFile, origin.URL, "registration: open\n")
	if err := os.WriteFile(cfgPath, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	c, _, _ := runServe(t, cfgPath, "walk-token")
	b := formclient.New(t, c.base)

	if b.Get("/"); !strings.Contains(b.Body, `href="/register"`) || !strings.Contains(b.Body, `href="/login"`) {
		t.Errorf("/ links neither to /register nor to /login")
	}
	b.Get("/login")
	if code := b.Submit(b.Form("/login", "token"), "token", "walk-token"); code != http.StatusOK || b.Last.Request.URL.Path != "/new" {
		t.Fatalf("login: %d at %s", code, b.Last.Request.URL)
	}
	if code := b.Submit(b.Form("/new", "url"), "url", origin.URL+"/list.html"); code != http.StatusOK {
		t.Fatalf("fetch: %d\n%s", code, b.Body)
	}
	best := b.Body[strings.Index(b.Body, `id="p1"`):]
	best = best[:strings.Index(best, "</section>")]
	if !strings.Contains(best, "Ferry timetable changes") || strings.Contains(best, ">Contact<") {
		t.Errorf("the best proposal is not the news list:\n%s", best)
	}
	for range 3 {
		if code := b.Submit(b.Form("/new/preview", "select"), "select", "item: ul.news > li\ntitle: h2 a\nlink: h2 a @href\ndescription: p\n"); code != http.StatusOK {
			t.Fatalf("preview: %d", code)
		}
	}
	if n := hits.Load(); n != 1 {
		t.Errorf("the origin served the page %d times before Add, want 1", n)
	}
	code := followWaits(t, b, b.Submit(b.Form("/new/add", "id"), "id", "harbour"))
	if code != http.StatusOK || b.Last.Request.URL.Path != "/view/harbour" {
		t.Fatalf("add: %d at %s\n%s", code, b.Last.Request.URL, b.Body)
	}
	if !strings.Contains(b.Body, "New fees for visiting yachts") {
		t.Errorf("the view after Add does not show the first version")
	}
	if f := c.feed("/resources/harbour?max=10"); len(f.Items) != 3 || f.Items[0].Description != "Fewer crossings on Sundays." {
		t.Errorf("the added feed has %d items", len(f.Items))
	}

	// The webmasters' form.
	b.Get("/register")
	if code := b.Submit(b.Form("/register", "url"), "url", origin.URL+"/plain.html"); code != http.StatusUnprocessableEntity || !strings.Contains(b.Body, ": error: ") {
		t.Errorf("register an unannotated page: %d, want 422 with diagnostics", code)
	}
	if code := b.Submit(b.Form("/register", "url"), "url", origin.URL+"/annotated.html"); code != http.StatusOK || !strings.Contains(b.Body, `id="feed"`) {
		t.Fatalf("register an annotated page: %d\n%s", code, b.Body)
	}
	id := b.Last.Request.URL.Query().Get("feed")
	serveEventually(t, "the registered page's first version", 20*time.Second, func() bool {
		resp, _ := c.do(http.MethodGet, "/resources/"+id, false)
		return resp.StatusCode == http.StatusOK && len(c.feed("/resources/"+id).Items) == 1
	})
	// The add's first poll was the registration's only one: the page was
	// served twice in all, once to /new and once to that poll.
	if n := hits.Load(); n != 2 {
		t.Errorf("the origin served the list page %d times, want 2", n)
	}
}

// TestAddFeedRefusesPrivate: /new fetches as a poll does, so a loopback
// page is refused unless poller.allow_private, and the form says why.
func TestAddFeedRefusesPrivate(t *testing.T) {
	origin, _ := e2eOrigin(t)
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte("walk-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := strings.Replace(fmt.Sprintf(e2eConfig, filepath.Join(dir, "data"), tokenFile, origin.URL, ""), "allow_private: true", "allow_private: false", 1)
	cfgPath := filepath.Join(dir, "dynamo.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	c, _, _ := runServe(t, cfgPath, "walk-token")
	b := formclient.New(t, c.base)
	b.Get("/login")
	b.Submit(b.Form("/login", "token"), "token", "walk-token")
	code := b.Submit(b.Form("/new", "url"), "url", origin.URL+"/news.html")
	if code != http.StatusUnprocessableEntity || !strings.Contains(b.Body, "could not be fetched") || !strings.Contains(b.Body, "allow_private") {
		t.Errorf("/new with a loopback page: %d\n%s", code, b.Body)
	}
}

// followWaits follows the refresh of the pages that wait (a first poll
// longer than 2 s, a host's politeness interval) as a browser does, for
// 30 s at most, and returns the last answer's status.
func followWaits(t *testing.T, b *formclient.Client, code int) int {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); code == http.StatusOK && strings.Contains(b.Body, `http-equiv="refresh"`) && time.Now().Before(deadline); {
		time.Sleep(200 * time.Millisecond) // a browser's refresh, shortened: the condition is read again each time
		m := regexp.MustCompile(`content="\d+;url=(/new/wait/[^"]+)"`).FindStringSubmatch(b.Body)
		if m == nil {
			t.Fatalf("a waiting page without its refresh URL:\n%s", b.Body)
		}
		code = b.Get(m[1])
	}
	return code
}
