package ui

import (
	"github.com/dynamo-rss/dynamo/api"
	"github.com/dynamo-rss/dynamo/internal/apitest"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"golang.org/x/net/html"

	"github.com/dynamo-rss/dynamo/extractor"
	"github.com/dynamo-rss/dynamo/storage/badger"
)

// scriptPage is an annotated page whose webmaster (or whoever controls its
// text) declares extensions in the namespaces browsers run scripts from:
// the XMLData document, and so every XML feed, carries them as elements.
const scriptPage = `<html><body>
<h1><!-- <channel:title> -->News<!-- </channel:title> --></h1>
<!-- <channel:extension uri="http://www.w3.org/1999/xhtml" prefix="h" localName="script"> -->window.pwned = 'xhtml'<!-- </channel:extension> -->
<h2><!-- <item:title index="1"> -->First<!-- </item:title> --></h2>
<!-- <item:link index="1"> --><a href="/1.html">more</a><!-- </item:link> -->
<!-- <item:extension index="1" uri="http://www.w3.org/2000/svg" prefix="s" localName="script"> -->window.pwned = 'svg'<!-- </item:extension> -->
</body></html>`

// hostileDB is a real store holding the document the real extractor makes
// of scriptPage, as resource "evil".
func hostileDB(t *testing.T) *badger.DB { return extractedDB(t, scriptPage) }

// extractedDB is a real store holding the document the real extractor makes
// of page, as resource "evil".
func extractedDB(t *testing.T, page string) *badger.DB {
	t.Helper()
	res, err := extractor.Extract(strings.NewReader(page), extractor.Options{
		URL: "https://site.example/news.html", RSSID: "evil", Timestamp: fdNow.Add(-time.Hour)})
	if err != nil {
		t.Fatalf("extract: %v", err)
	}
	db := apitest.OpenDB(t)
	if _, err := db.Save(t.Context(), res.Document); err != nil {
		t.Fatalf("save: %v", err)
	}
	return db
}

// asXML serves h's answers with their feed media types replaced by
// application/xml, everything else (headers, body) as h sent it: what a
// browser that renders application/*+xml as an XML document sees (Firefox,
// Safari; Chromium 156 shows atom+xml and rss+xml as text and downloads
// rdf+xml, but renders application/xml).
type asXML struct{ h http.Handler }

func (a asXML) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.h.ServeHTTP(&xmlWriter{ResponseWriter: w}, r)
}

type xmlWriter struct {
	http.ResponseWriter
	wrote bool
}

func (w *xmlWriter) WriteHeader(code int) {
	if w.wrote {
		return
	}
	w.wrote = true
	if ct := w.Header().Get("Content-Type"); strings.Contains(ct, "+xml") {
		w.Header().Set("Content-Type", "application/xml; charset=utf-8")
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *xmlWriter) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.ResponseWriter.Write(b)
}

// TestFeedScriptsDoNotRunInBrowser opens the XML feeds of a hostile page in
// Chromium with JavaScript on, as a victim following a link with type= would,
// with the feeds rendered as XML documents (asXML): the XHTML and SVG script
// elements the page's extensions put in them would run on our origin unless
// the answer's Content-Security-Policy forbids it.
func TestFeedScriptsDoNotRunInBrowser(t *testing.T) {
	ctx := startBrowser(t, true)
	s := newFDServer(t, hostileDB(t), func(o *api.Options) { o.PublicURL = "" })
	srv := httptest.NewServer(asXML{s})
	t.Cleanup(srv.Close)
	for _, target := range []string{
		"/resources/evil?type=atom", "/resources/evil?type=rss2", "/resources/evil?type=rss1",
		"/resources/evil?index=1&type=atom", "/resources/evil?index=1&type=rss2", "/resources/evil/versions/1?type=rss1",
		"/resources?type=rss2",
	} {
		if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+target)); err != nil {
			t.Fatalf("open %s: %v", target, err)
		}
		got, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[document.contentType, String(window.pwned)]`))
		if err != nil {
			t.Fatalf("%s: %v", target, err)
		}
		if got[0] != "application/xml" {
			t.Fatalf("%s: rendered as %q, not as an XML document", target, got[0])
		}
		if got[1] != "undefined" {
			t.Errorf("%s: the page's %s script ran on our origin", target, got[1])
		}
	}
}

// TestSecurityHeadersOnEveryAnswer checks that no answer can be sniffed into
// something else, run a script, or be framed: feeds, problems, JSON, OPML,
// the pages for people, admin answers and unmatched routes.
func TestSecurityHeadersOnEveryAnswer(t *testing.T) {
	s := newFDServer(t, hostileDB(t), func(o *api.Options) { o.AdminToken = "secret" })
	page := "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
	for _, tc := range []struct {
		method, target string
		header         []string
		code           int
		html           bool // a page of ours: its own, stricter-for-pages CSP
	}{
		{"GET", "/resources/evil?type=atom", nil, 200, false},
		{"GET", "/resources/evil?type=rss2", nil, 200, false},
		{"GET", "/resources/evil?type=rss1", nil, 200, false},
		{"GET", "/resources/evil?type=json", nil, 200, false},
		{"HEAD", "/resources/evil?type=atom", nil, 200, false},
		{"GET", "/resources/evil?type=atom", []string{"If-None-Match", "*"}, 304, false},
		{"GET", "/resources/evil?index=9", nil, 404, false},
		{"GET", "/resources/nope", []string{"Accept", page}, 404, false},
		{"GET", "/resources.opml", nil, 200, false},
		{"GET", "/healthz", nil, 200, false},
		{"GET", "/no/such/route", nil, 404, false},
		{"DELETE", "/", nil, 405, false},
		{"GET", "/admin/resources/evil", nil, 401, false},
		{"GET", "/admin/resources/evil", []string{"Authorization", "Bearer secret"}, 404, false},
		{"POST", "/admin/reload", []string{"Authorization", "Bearer secret"}, 501, false},
		{"GET", "/admin/debug/pprof/", []string{"Authorization", "Bearer secret"}, 200, false},
		{"GET", "/", nil, 200, true},
		{"GET", "/view/evil", nil, 200, true},
		{"GET", "/resources/evil", []string{"Accept", page}, 200, true},
		{"GET", "/preview", nil, 200, true},
	} {
		rec := fdDo(s, tc.method, tc.target, tc.header...)
		name := tc.method + " " + tc.target
		if rec.Code != tc.code {
			t.Errorf("%s = %d, want %d\n%s", name, rec.Code, tc.code, rec.Body)
			continue
		}
		h := rec.Header()
		if got := h.Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("%s: X-Content-Type-Options %q, want nosniff", name, got)
		}
		if got := h.Get("X-Frame-Options"); got != "DENY" {
			t.Errorf("%s: X-Frame-Options %q, want DENY", name, got)
		}
		csp := h.Get("Content-Security-Policy")
		if !strings.Contains(csp, "frame-ancestors 'none'") || !strings.Contains(csp, "default-src 'none'") {
			t.Errorf("%s: Content-Security-Policy %q: no default-src 'none' or frame-ancestors 'none'", name, csp)
		}
		if tc.html {
			if csp != api.PageSecurityPolicy {
				t.Errorf("%s: Content-Security-Policy %q, want the pages' %q", name, csp, api.PageSecurityPolicy)
			}
		} else if !strings.Contains(csp, "sandbox") {
			t.Errorf("%s: Content-Security-Policy %q of a document that is no page of ours has no sandbox", name, csp)
		}
	}
}

// TestAdminAnswersNotStored checks that admin answers, which carry poll
// state and resource definitions behind the token, are kept by no cache.
func TestAdminAnswersNotStored(t *testing.T) {
	store, poller := apitest.SvcFixture()
	s := newSvcServer(t, api.Options{Store: store, Poller: poller, AdminToken: "secret"})
	for _, target := range []string{"/admin/resources/news", "/admin/debug/pprof/"} {
		rec := svcDo(s, http.MethodGet, target, nil, "Authorization", "Bearer secret")
		if rec.Code != http.StatusOK {
			t.Fatalf("GET %s = %d\n%s", target, rec.Code, rec.Body)
		}
		if got := rec.Header().Get("Cache-Control"); got != "no-store" {
			t.Errorf("GET %s: Cache-Control %q, want no-store", target, got)
		}
	}
}

// breakoutPage is an annotated page whose first item's description closes
// more than it opened: the extractor keeps its markup, stray end tags included.
const breakoutPage = `<html><body><h1><!-- <channel:title> -->News<!-- </channel:title> --></h1>
<div><!-- <item:title index="1"> -->First<!-- </item:title> -->
<!-- <item:description index="1"> -->Hi</div></li></ol></section><h2>This feed moved</h2><p>Subscribe to <a href="https://evil.example/feed">the new address</a>.<!-- </item:description> --></div>
<div><!-- <item:title index="2"> -->Second<!-- </item:title> -->
<!-- <item:description index="2"> --><b>Two</b><!-- </item:description> --></div>
</body></html>`

// TestFeedPageItemStaysInItsBox opens the feed page of breakoutPage, parses
// it as a browser does, and checks that each item's content is inside its
// own list entry: an item cannot close the list and speak as the page.
func TestFeedPageItemStaysInItsBox(t *testing.T) {
	s := newFDServer(t, extractedDB(t, breakoutPage))
	rec := fdDo(s, http.MethodGet, "/resources/evil?index=1", "Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8")
	if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") {
		t.Fatalf("GET = %d %s\n%s", rec.Code, rec.Header().Get("Content-Type"), rec.Body)
	}
	doc, err := html.Parse(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	// inItem reports whether n is inside an li.item of ol#items.
	inItem := func(n *html.Node) bool {
		var li bool
		for p := n.Parent; p != nil; p = p.Parent {
			if p.Type != html.ElementNode {
				continue
			}
			if class, _ := apitest.Attr(p, "class"); p.Data == "li" && class == "item" {
				li = true
			}
			if id, _ := apitest.Attr(p, "id"); p.Data == "ol" && id == "items" {
				return li
			}
		}
		return false
	}
	found := map[string]bool{}
	for n := range doc.Descendants() {
		if n.Type != html.TextNode {
			continue
		}
		for _, text := range []string{"This feed moved", "the new address", "Two", "Second"} {
			if strings.TrimSpace(n.Data) == text {
				found[text] = true
				if !inItem(n) {
					t.Errorf("%q is outside the items' list entries", text)
				}
			}
		}
	}
	if len(found) != 4 {
		t.Errorf("found %v of the items' texts in\n%s", found, rec.Body)
	}
}

// TestAccessLogOneLinePerRequest sends paths and identifiers with line
// breaks to a server logging in the text format dynamo serve uses by
// default: each request stays one log line (no forged entries).
func TestAccessLogOneLinePerRequest(t *testing.T) {
	var logs strings.Builder
	s := newFDServer(t, hostileDB(t), func(o *api.Options) {
		o.AccessLog = true
		o.Logger = slog.New(slog.NewTextHandler(&logs, nil))
		o.AdminToken = "secret"
	})
	targets := []string{
		"/resources/evil%0Alevel=ERROR%20msg=forged",
		"/view/x%0D%0Alevel=ERROR",
		"/admin/resources/a%0Ab",
		"/no%0Aroute",
	}
	for _, target := range targets {
		fdDo(s, http.MethodGet, target, "Authorization", "Bearer wrong\nlevel=ERROR")
	}
	if lines := strings.Count(logs.String(), "\n"); lines != len(targets) {
		t.Errorf("%d log lines for %d requests:\n%s", lines, len(targets), logs.String())
	}
	if strings.Contains(logs.String(), "wrong") {
		t.Errorf("the log quotes the Authorization header:\n%s", logs.String())
	}
}

// TestFeedsReadableAcrossOrigins checks that scripts on other sites may read
// the feeds and the OPML list (public, no credentials) with their
// validators and hub links, and nothing else: not the admin answers, the
// pages, the health checks or self-registration.
func TestFeedsReadableAcrossOrigins(t *testing.T) {
	s := newFDServer(t, hostileDB(t), func(o *api.Options) { o.AdminToken = "secret" })
	for _, tc := range []struct {
		method, target string
		header         []string
		public         bool
	}{
		{"GET", "/resources/evil?type=atom", nil, true},
		{"HEAD", "/resources/evil?type=json", nil, true},
		{"GET", "/resources/evil?type=atom", []string{"If-None-Match", "*"}, true},
		{"GET", "/resources/nope", nil, true}, // its problem too: a script can tell why
		{"GET", "/resources", nil, true},
		{"GET", "/resources.opml", nil, true},
		{"GET", "/admin/resources/evil", []string{"Authorization", "Bearer secret"}, false},
		{"GET", "/", nil, false},
		{"GET", "/view/evil", nil, false},
		{"GET", "/healthz", nil, false},
		{"POST", "/resources", []string{"Content-Type", "application/json"}, false},
	} {
		rec := fdDo(s, tc.method, tc.target, tc.header...)
		name := tc.method + " " + tc.target
		acao, expose := rec.Header().Get("Access-Control-Allow-Origin"), rec.Header().Get("Access-Control-Expose-Headers")
		switch {
		case tc.public && (acao != "*" || !strings.Contains(expose, "ETag") || !strings.Contains(expose, "Link")):
			t.Errorf("%s (%d): Access-Control-Allow-Origin %q, Expose-Headers %q; want * and ETag, Link", name, rec.Code, acao, expose)
		case !tc.public && acao != "":
			t.Errorf("%s (%d): Access-Control-Allow-Origin %q on an answer that is not a public feed", name, rec.Code, acao)
		}
		if rec.Header().Get("Access-Control-Allow-Credentials") != "" {
			t.Errorf("%s: credentials allowed across origins", name)
		}
	}
}

// TestFeedPreflight: a script on another site that revalidates a feed sets
// If-None-Match itself, which makes the browser ask first with OPTIONS (a
// CORS preflight). The feeds answer it for GET and HEAD with the
// conditional headers; self-registration, admin routes and pages do not
// invite other sites.
func TestFeedPreflight(t *testing.T) {
	s := newFDServer(t, hostileDB(t), func(o *api.Options) { o.AdminToken = "secret" })
	preflight := func(target, method, headers string) *httptest.ResponseRecorder {
		return fdDo(s, "OPTIONS", target, "Origin", "https://widget.example",
			"Access-Control-Request-Method", method, "Access-Control-Request-Headers", headers)
	}
	for _, target := range []string{"/resources/evil?type=atom", "/resources", "/resources.opml", "/resources/evil/versions/1"} {
		rec := preflight(target, "GET", "if-none-match,if-modified-since")
		h := rec.Header()
		if rec.Code != http.StatusNoContent || h.Get("Access-Control-Allow-Origin") != "*" ||
			!strings.Contains(h.Get("Access-Control-Allow-Methods"), "GET") ||
			!strings.Contains(strings.ToLower(h.Get("Access-Control-Allow-Headers")), "if-none-match") ||
			!strings.Contains(strings.ToLower(h.Get("Access-Control-Allow-Headers")), "if-modified-since") ||
			h.Get("Access-Control-Max-Age") == "" {
			t.Errorf("OPTIONS %s: %d %v; want 204 allowing GET with If-None-Match and If-Modified-Since, cached", target, rec.Code, h)
		}
		if h.Get("Access-Control-Allow-Credentials") != "" {
			t.Errorf("OPTIONS %s: credentials allowed", target)
		}
	}
	// Writing across origins is not invited: the preflight of a POST to
	// /resources does not allow POST, and nothing else gets CORS headers.
	rec := preflight("/resources", "POST", "content-type")
	if strings.Contains(rec.Header().Get("Access-Control-Allow-Methods"), "POST") {
		t.Errorf("OPTIONS /resources for POST allows it: %v", rec.Header())
	}
	for _, target := range []string{"/admin/resources/evil", "/", "/view/evil", "/preview", "/websub"} {
		rec := preflight(target, "GET", "authorization")
		if rec.Header().Get("Access-Control-Allow-Origin") != "" || rec.Header().Get("Access-Control-Allow-Methods") != "" {
			t.Errorf("OPTIONS %s: %d invites other sites: %v", target, rec.Code, rec.Header())
		}
	}
	// Without Origin it is a plain OPTIONS: the methods the resource allows.
	rec = fdDo(s, "OPTIONS", "/resources/evil")
	if rec.Code != http.StatusNoContent || !strings.Contains(rec.Header().Get("Allow"), "GET") {
		t.Errorf("plain OPTIONS /resources/evil: %d Allow %q", rec.Code, rec.Header().Get("Allow"))
	}
}
