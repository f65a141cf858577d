package api

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mmcdole/gofeed"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/dynamo-rss/dynamo/schema"
	"github.com/dynamo-rss/dynamo/storage"
)

// guids returns the item guids of an RSS 2.0 answer, in order.
func guids(t *testing.T, body []byte) []string {
	t.Helper()
	f := parseFeed(t, body)
	out := []string{}
	for _, it := range f.Items {
		out = append(out, it.GUID)
	}
	return out
}

// TestKeywordQuery is the truth table of keyword terms through HTTP, both on
// a version's items (?index, filtered by the api) and over history (?max,
// filtered by the store): terms combine left to right with the op before each.
func TestKeywordQuery(t *testing.T) {
	store := newFDStore()
	var items []schema.Item
	for bits := range 8 {
		a, b, c := bits&1 != 0, bits&2 != 0, bits&4 != 0
		title := "item"
		if a {
			title += " Alpha"
		}
		if b {
			title += " BETA"
		}
		desc := "plain"
		if c {
			desc = "with gamma and Straße"
		}
		items = append(items, schema.Item{Index: bits + 1, ID: fmt.Sprintf("i%d", bits), Title: title, Link: "https://example.org/" + fmt.Sprint(bits), Description: desc})
	}
	store.Save(&schema.Document{URL: "https://example.org/", RSSID: "kw", Timestamp: fdT0, Channel: schema.Channel{Title: "KW", Link: "https://example.org/"}, Items: items})
	s := newFDServer(t, store)
	tests := []struct {
		query string
		want  func(a, b, c bool) bool
	}{
		{"title=alpha", func(a, b, c bool) bool { return a }},
		{"title=alpha&title=beta", func(a, b, c bool) bool { return a && b }},
		{"title=alpha&op=and&title=beta", func(a, b, c bool) bool { return a && b }},
		{"title=alpha&op=or&title=beta", func(a, b, c bool) bool { return a || b }},
		{"title=alpha&op=or&title=beta&desc=gamma", func(a, b, c bool) bool { return (a || b) && c }},
		{"desc=gamma&op=or&title=alpha&title=beta", func(a, b, c bool) bool { return (c || a) && b }},
		{"title=alpha&title=beta&op=or&desc=gamma", func(a, b, c bool) bool { return a && b || c }},
		{"op=or&title=alpha", func(a, b, c bool) bool { return a }},
		{"title=ALPHA&op=OR&description=GAMMA", func(a, b, c bool) bool { return a || c }},
		{"title=alpha;op=or;title=beta", func(a, b, c bool) bool { return a || b }},
		{"desc=STRASSE", func(a, b, c bool) bool { return c }},
		{"title=%61lpha&op=or&desc=stra%C3%9Fe", func(a, b, c bool) bool { return a || c }},
		{"link=example.org%2F3&op=or&link=%2F5", func(a, b, c bool) bool { return a && b && !c || a && !b && c }},
		{"title=alpha&cachebuster=123&utm_source=x", func(a, b, c bool) bool { return a }},
		{"title=nothing-matches", func(a, b, c bool) bool { return false }},
	}
	for _, tt := range tests {
		for _, mode := range []string{"index=1", "max=100"} {
			t.Run(mode+"&"+tt.query, func(t *testing.T) {
				rec := fdDo(s, http.MethodGet, "/resources/kw?type=rss2&"+mode+"&"+tt.query)
				if rec.Code != http.StatusOK {
					t.Fatalf("status %d\n%s", rec.Code, rec.Body)
				}
				var want []string
				for _, it := range items {
					bits := it.Index - 1
					a, b, c := bits&1 != 0, bits&2 != 0, bits&4 != 0
					if tt.want(a, b, c) {
						want = append(want, it.ID)
					}
				}
				got := guids(t, rec.Body.Bytes())
				if mode == "max=100" { // over history: newest first by first seen, all seen together: page order
					slices.Sort(got)
				}
				if want == nil {
					want = []string{}
				}
				if !slices.Equal(got, want) {
					t.Errorf("items = %v, want %v", got, want)
				}
			})
		}
	}
}

// TestConditionalRequests checks the validators: a matching If-None-Match or
// If-Modified-Since gets 304 without reading history or rendering, and a new
// version changes the ETag.
func TestConditionalRequests(t *testing.T) {
	store := fdFixture()
	s := newFDServer(t, store)
	first := fdDo(s, http.MethodGet, "/resources/news?max=2")
	if first.Code != http.StatusOK {
		t.Fatalf("status %d\n%s", first.Code, first.Body)
	}
	etag := first.Header().Get("ETag")
	if !strings.HasPrefix(etag, `"`) || !strings.HasSuffix(etag, `"`) || len(etag) < 10 {
		t.Fatalf("ETag = %q, want a strong entity tag", etag)
	}
	if lm := first.Header().Get("Last-Modified"); lm != "Sun, 01 Mar 2026 12:00:00 GMT" {
		t.Errorf("Last-Modified = %q, want the latest version's timestamp", lm)
	}
	reads := store.ReadCount()
	tests := []struct {
		name   string
		header []string
		want   int
	}{
		{"etag", []string{"If-None-Match", etag}, http.StatusNotModified},
		{"etag in list", []string{"If-None-Match", `"other", ` + etag}, http.StatusNotModified},
		{"weak etag", []string{"If-None-Match", "W/" + etag}, http.StatusNotModified},
		{"star", []string{"If-None-Match", "*"}, http.StatusNotModified},
		{"other etag", []string{"If-None-Match", `"nope"`}, http.StatusOK},
		{"same date", []string{"If-Modified-Since", "Sun, 01 Mar 2026 12:00:00 GMT"}, http.StatusNotModified},
		{"later date", []string{"If-Modified-Since", "Sun, 01 Mar 2026 13:00:00 GMT"}, http.StatusNotModified},
		{"earlier date", []string{"If-Modified-Since", "Sun, 01 Mar 2026 11:59:59 GMT"}, http.StatusOK},
		{"etag wins over date", []string{"If-None-Match", `"nope"`, "If-Modified-Since", "Sun, 01 Mar 2026 13:00:00 GMT"}, http.StatusOK},
		{"bad date", []string{"If-Modified-Since", "yesterday"}, http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := fdDo(s, http.MethodGet, "/resources/news?max=2", tt.header...)
			if rec.Code != tt.want {
				t.Fatalf("status = %d, want %d", rec.Code, tt.want)
			}
			if rec.Header().Get("ETag") != etag {
				t.Errorf("ETag = %q, want %q", rec.Header().Get("ETag"), etag)
			}
			if tt.want == http.StatusNotModified && rec.Body.Len() != 0 {
				t.Errorf("304 with a body: %q", rec.Body)
			}
		})
	}
	if n := store.ReadCount(); n != reads {
		t.Errorf("conditional requests read history %d times; want 0 (the 200s come from the cache)", n-reads)
	}

	// The ETag depends on the query (normalized), the type and the history.
	same := fdDo(s, http.MethodGet, "/resources/news?utm=1&max=2;x=y")
	if same.Header().Get("ETag") != etag {
		t.Errorf("unknown parameters changed the ETag: %q vs %q", same.Header().Get("ETag"), etag)
	}
	for _, other := range []string{"/resources/news?max=3", "/resources/news?max=2&type=atom", "/resources/news"} {
		if got := fdDo(s, http.MethodGet, other).Header().Get("ETag"); got == etag || got == "" {
			t.Errorf("%s: ETag %q, want one different from %q", other, got, etag)
		}
	}
	if got := fdDo(s, http.MethodGet, "/resources/news?max=2", "Accept", "application/atom+xml").Header().Get("ETag"); got == etag {
		t.Errorf("negotiated Atom has the RSS 2.0 ETag %q", got)
	}
	store.Save(&schema.Document{URL: "https://example.org/news/index.html", RSSID: "news", Timestamp: fdT0.Add(150 * time.Minute),
		Channel: schema.Channel{Title: "Town News"}, Items: []schema.Item{{Index: 1, ID: "z", Title: "New"}}})
	after := fdDo(s, http.MethodGet, "/resources/news?max=2", "If-None-Match", etag)
	if after.Code != http.StatusOK || after.Header().Get("ETag") == etag {
		t.Fatalf("after a new version: status %d ETag %q, want 200 with a new ETag", after.Code, after.Header().Get("ETag"))
	}
	if got := guids(t, after.Body.Bytes()); !slices.Equal(got, []string{"z", "c"}) {
		t.Errorf("items after a new version = %v, want [z c]", got)
	}
	if lm := after.Header().Get("Last-Modified"); lm != "Sun, 01 Mar 2026 12:30:00 GMT" {
		t.Errorf("Last-Modified = %q after the new version", lm)
	}
}

// TestCacheHeaders checks Cache-Control against the poller's next poll, and Vary.
func TestCacheHeaders(t *testing.T) {
	poller := &svcPoller{List: []ResourceStatus{
		{ID: "news", Interval: 15 * time.Minute, NextPoll: fdNow.Add(90 * time.Second)},
		{ID: "forum", Interval: time.Hour, NextPoll: fdNow.Add(-time.Minute)}, // overdue
		{ID: "other", Interval: time.Hour, NextPoll: fdNow.Add(time.Hour)},
	}}
	withPoller := newFDServer(t, fdFixture(), func(o *Options) { o.Poller = poller })
	without := newFDServer(t, fdFixture())
	tests := []struct {
		name   string
		s      *Server
		target string
		want   string
	}{
		{"until next poll", withPoller, "/resources/news?max=1", "public, max-age=90"},
		{"overdue poll", withPoller, "/resources/forum", "public, max-age=0"},
		{"list: soonest poll", withPoller, "/resources", "public, max-age=0"},
		{"no poller", without, "/resources/news", "public, max-age=60"},
		{"no poller list", without, "/resources", "public, max-age=60"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := fdDo(tt.s, http.MethodGet, tt.target)
			if got := rec.Header().Get("Cache-Control"); got != tt.want {
				t.Errorf("Cache-Control = %q, want %q", got, tt.want)
			}
			if got := rec.Header().Get("Vary"); !strings.Contains(got, "Accept") {
				t.Errorf("Vary = %q, want Accept", got)
			}
		})
	}
}

// TestHead checks that HEAD answers the headers of GET without a body.
func TestHead(t *testing.T) {
	s := newFDServer(t, fdFixture())
	for _, target := range []string{"/resources", "/resources/news", "/resources/news?index=2&type=atom", "/resources/news?max=1&type=json"} {
		t.Run(target, func(t *testing.T) {
			head := fdDo(s, http.MethodHead, target)
			get := fdDo(s, http.MethodGet, target)
			if head.Code != http.StatusOK || head.Body.Len() != 0 {
				t.Fatalf("HEAD: status %d, %d body bytes; want 200 and none", head.Code, head.Body.Len())
			}
			for _, h := range []string{"Content-Type", "ETag", "Last-Modified", "Cache-Control", "Content-Length"} {
				if head.Header().Get(h) != get.Header().Get(h) || head.Header().Get(h) == "" {
					t.Errorf("%s: HEAD %q, GET %q", h, head.Header().Get(h), get.Header().Get(h))
				}
			}
			if cl := get.Header().Get("Content-Length"); cl != fmt.Sprint(get.Body.Len()) {
				t.Errorf("Content-Length = %s, body has %d bytes", cl, get.Body.Len())
			}
			if r := fdDo(s, http.MethodHead, target, "If-None-Match", get.Header().Get("ETag")); r.Code != http.StatusNotModified {
				t.Errorf("conditional HEAD = %d, want 304", r.Code)
			}
			if r := fdDo(s, http.MethodHead, "/resources/nope"); r.Code != http.StatusNotFound || r.Body.Len() != 0 {
				t.Errorf("HEAD unknown: %d with %d bytes", r.Code, r.Body.Len())
			}
		})
	}
}

// TestNegotiation checks how type= and Accept pick the format.
func TestNegotiation(t *testing.T) {
	s := newFDServer(t, fdFixture())
	tests := []struct {
		typ, accept string
		want        string
	}{
		{"", "", "rss2"},
		{"", "*/*", "rss2"},
		{"", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", "html"}, // a browser: the feed as a page (feedpage_test.go)
		{"rss2", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", "rss2"},
		{"", "application/atom+xml", "atom"},
		{"", "application/rdf+xml", "rss1"},
		{"", "application/feed+json", "json"},
		{"", "application/json", "json"},
		{"", "application/rss+xml", "rss2"},
		{"", "application/rss+xml;q=0.5, application/atom+xml;q=0.9", "atom"},
		{"", "application/atom+xml;q=0.2, application/feed+json", "json"},
		{"", "application/*;q=0.5, application/rdf+xml", "rss1"},
		{"", "*/*;q=0.1, application/atom+xml;q=0", "rss2"},
		{"", "image/png", "rss2"},
		{"", "application/atom+xml;q=oops", "rss2"},
		{"atom", "application/feed+json", "atom"},
		{"JSON", "", "json"},
	}
	for _, tt := range tests {
		t.Run(tt.typ+"|"+tt.accept, func(t *testing.T) {
			target := "/resources/news?max=1"
			if tt.typ != "" {
				target += "&type=" + tt.typ
			}
			rec := fdDo(s, http.MethodGet, target, "Accept", tt.accept)
			if got := rec.Header().Get("Content-Type"); got != fdContentTypes[tt.want] {
				t.Errorf("Content-Type = %q, want %q", got, fdContentTypes[tt.want])
			}
		})
	}
}

// TestFeedErrors checks every client error: status, problem+json body and a
// detail that says what is allowed.
func TestFeedErrors(t *testing.T) {
	s := newFDServer(t, fdFixture())
	tests := []struct {
		target string
		status int
		detail string // a substring of the detail
		param  string
	}{
		{"/resources/nope", 404, `no resource "nope"`, ""},
		{"/resources/news?index=4", 404, "index 4 is beyond the history", ""},
		{"/resources/news?index=0", 400, "index must be a positive integer", "index"},
		{"/resources/news?index=-1", 400, "positive integer", "index"},
		{"/resources/news?index=two", 400, "positive integer", "index"},
		{"/resources/news?index=", 400, "positive integer", "index"},
		{"/resources/news?index=1.5", 400, "positive integer", "index"},
		{"/resources/news?max=0", 400, "max must be a positive integer", "max"},
		{"/resources/news?max=+3", 400, "positive integer", "max"},
		{"/resources/news?index=99999999999", 404, "beyond the history", ""},
		{"/resources/news?index=99999999999999999999999", 404, "beyond the history", ""},
		{"/resources?max=x", 400, "positive integer", "max"},
		{"/resources/news?type=rss3", 400, "type must be one of rss2, atom, rss1, json", "type"},
		{"/resources?type=", 400, "type must be one of", "type"},
		{"/resources/news?title=a&op=xor&title=b", 400, "op must be and or or", "op"},
		{"/resources/news?title=", 400, "must not be empty", "title"},
		{"/resources/news?max=2&desc", 400, "must not be empty", "desc"},
		{"/resources/news?title=%zz", 400, "percent-encoded", "title"},
		{"/resources/news?xpath=" + url.QueryEscape("contains(title,"), 400, "not a valid XPath 1.0 expression", "xpath"},
		{"/resources/news?xpath=" + url.QueryEscape("title[[1]"), 400, "not a valid XPath", "xpath"},
		{"/resources/news?xpath=", 400, "non-empty XPath", "xpath"},
	}
	for _, tt := range tests {
		t.Run(tt.target, func(t *testing.T) {
			rec := fdDo(s, http.MethodGet, tt.target)
			p := svcProblem(t, rec, tt.status)
			if !strings.Contains(p.Detail, tt.detail) {
				t.Errorf("detail = %q, want it to contain %q", p.Detail, tt.detail)
			}
			if p.Param != tt.param {
				t.Errorf("parameter = %q, want %q", p.Param, tt.param)
			}
			if p.Type != "about:blank" || p.Title != http.StatusText(tt.status) {
				t.Errorf("type/title = %q/%q", p.Type, p.Title)
			}
		})
	}
}

// TestStoreFailure checks that a failing store is a 500 whose cause is logged
// but not shown to the client: when listing resources, and when reading
// history after the validators were computed.
func TestStoreFailure(t *testing.T) {
	for _, target := range []string{"/resources", "/resources/news", "/resources/news?max=3", "/resources/news?index=1"} {
		t.Run(target, func(t *testing.T) {
			var logs strings.Builder
			store := fdFixture()
			store.Err = errors.New("disk on fire")
			s := newFDServer(t, &failHistory{fdStore: store}, func(o *Options) { o.Logger = slog.New(slog.NewTextHandler(&logs, nil)) })
			rec := fdDo(s, http.MethodGet, target)
			p := svcProblem(t, rec, http.StatusInternalServerError)
			if strings.Contains(p.Detail, "fire") {
				t.Errorf("detail leaks the cause: %q", p.Detail)
			}
			if !strings.Contains(logs.String(), "disk on fire") {
				t.Errorf("cause not logged:\n%s", logs.String())
			}
		})
	}
}

// failHistory answers Resource from the fixture but fails every other read.
type failHistory struct{ *fdStore }

func (f *failHistory) Resource(ctx context.Context, id string) (storage.ResourceInfo, error) {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	in, ok := f.Info(id)
	if !ok {
		return storage.ResourceInfo{}, storage.ErrNotFound
	}
	return in, nil
}

// TestRenderCache checks hits and misses, that a new version is a miss (the
// key changes), and that the cache stays within its byte bound.
func TestRenderCache(t *testing.T) {
	store := fdFixture()
	s := newFDServer(t, store)
	hits, misses := s.feeds.cache.hits, s.feeds.cache.misses
	get := func(target string) {
		t.Helper()
		if rec := fdDo(s, http.MethodGet, target); rec.Code != http.StatusOK {
			t.Fatalf("GET %s = %d", target, rec.Code)
		}
	}
	check := func(wantHits, wantMisses float64) {
		t.Helper()
		if h, m := testutil.ToFloat64(hits), testutil.ToFloat64(misses); h != wantHits || m != wantMisses {
			t.Errorf("hits/misses = %v/%v, want %v/%v", h, m, wantHits, wantMisses)
		}
	}
	get("/resources/news?max=2")
	check(0, 1)
	get("/resources/news?max=2")
	get("/resources/news?max=2&cb=7")
	check(2, 1)
	get("/resources/news?max=2&type=atom")
	check(2, 2)
	reads := store.ReadCount()
	get("/resources/news?max=2&type=atom")
	if store.ReadCount() != reads {
		t.Errorf("a cache hit read history")
	}
	store.Save(&schema.Document{URL: "https://example.org/news/index.html", RSSID: "news", Timestamp: fdT0.Add(3 * time.Hour),
		Channel: schema.Channel{Title: "Town News"}, Items: []schema.Item{{Index: 1, ID: "z", Title: "New"}}})
	get("/resources/news?max=2")
	check(3, 3)
	get("/resources/news?max=2")
	check(4, 3)
	if n := fdDo(s, http.MethodGet, "/resources/news?max=2", "If-None-Match", "*"); n.Code != http.StatusNotModified {
		t.Errorf("If-None-Match: * = %d", n.Code)
	}
	check(4, 3) // a 304 neither hits nor misses: nothing is rendered or read
}

// TestRenderCacheBound checks the LRU eviction by bytes.
func TestRenderCacheBound(t *testing.T) {
	c, err := newRenderCache(8*(100+cacheEntryOverhead+2), nil)
	if err != nil {
		t.Fatal(err)
	}
	body := &feedEntry{body: make([]byte, 100)}
	for i := range 8 { // exactly fills the bound
		c.put(fmt.Sprintf("k%d", i), body, "")
	}
	if c.len() != 8 {
		t.Fatalf("%d entries, want 8", c.len())
	}
	c.get("k0", nil) // k0 becomes the most recently used; k1 the least
	c.put("k8", body, "")
	if c.size > c.limit {
		t.Errorf("size %d over limit %d", c.size, c.limit)
	}
	if _, ok := c.get("k0", nil); !ok {
		t.Errorf("the most recently used entry was evicted")
	}
	if _, ok := c.get("k1", nil); ok {
		t.Errorf("an old entry survived past the bound")
	}
	c.put("huge", &feedEntry{body: make([]byte, c.limit)}, "")
	if _, ok := c.get("huge", nil); ok {
		t.Errorf("an entry over an eighth of the bound was kept")
	}
	// A page rendered again under its key replaces its entry (one per key),
	// its size counted instead of the old one's.
	n, size := c.len(), c.size
	again := &feedEntry{body: make([]byte, 60)}
	c.put("k0", again, "")
	if e, ok := c.get("k0", nil); !ok || e != again {
		t.Errorf("the entry put again under k0 is not the one answered")
	}
	if c.len() != n || c.size != size-40 {
		t.Errorf("%d entries of %d bytes after a 40-byte smaller replacement, want %d of %d", c.len(), c.size, n, size-40)
	}
	if _, ok := c.get("k0", func(e *feedEntry) bool { return e != again }); ok {
		t.Errorf("an entry its check rejects was answered")
	}
	if testutil.ToFloat64(c.evictions) == 0 {
		t.Errorf("no eviction counted")
	}
}

// TestXPath checks xpath filtering and its combination with keyword terms.
func TestXPath(t *testing.T) {
	s := newFDServer(t, fdFixture())
	tests := []struct {
		query string
		want  []string
	}{
		{"index=1&xpath=" + url.QueryEscape("contains(title,'Budget')"), []string{"a"}},
		{"index=1&xpath=" + url.QueryEscape("@index > 1"), []string{"b", "a"}},
		{"index=1&xpath=" + url.QueryEscape("@id='b' or @id='c'") + "&title=weather", []string{"b"}},
		{"max=10&xpath=" + url.QueryEscape("extensions/*[local-name()='creator']='Town Hall'"), []string{"c"}},
		{"max=1&xpath=" + url.QueryEscape("not(extensions/*)"), []string{"b"}},
		{"index=1&xpath=title", []string{"c", "b", "a"}},
		{"index=1&xpath=" + url.QueryEscape("count(extensions/*)"), []string{"c"}},
		{"index=1&xpath=" + url.QueryEscape("link") + "&xpath=" + url.QueryEscape("contains(link,'a.html')"), []string{"a"}},
		{"max=10&xpath=" + url.QueryEscape("contains(description,'week')"), []string{"b"}},
		{"max=10&xpath=" + url.QueryEscape("contains(description,'rain')"), []string{}},                                                    // "Rain all week.": XPath compares case-sensitively
		{"xpath=" + url.QueryEscape("@index > 1"), []string{fdBase + "/resources/news/versions/2", fdBase + "/resources/news/versions/1"}}, // the versions feed
		{"desc=3+items&op=or&link=versions%2F1", []string{fdBase + "/resources/news/versions/3", fdBase + "/resources/news/versions/1"}},   // the versions feed
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			rec := fdDo(s, http.MethodGet, "/resources/news?"+tt.query)
			if rec.Code != http.StatusOK {
				t.Fatalf("status %d\n%s", rec.Code, rec.Body)
			}
			got := guids(t, rec.Body.Bytes())
			if tt.want == nil {
				tt.want = []string{}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("items = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestBaseURL checks that links are absolute and built from PublicURL, or
// from the request's scheme and host when it is empty.
func TestBaseURL(t *testing.T) {
	tests := []struct {
		public, host, proto string
		want                string
	}{
		{"https://feeds.example.org/", "ignored.example", "", "https://feeds.example.org"},
		{"https://example.net/dynamo", "ignored.example", "", "https://example.net/dynamo"},
		{"", "localhost:8080", "", "http://localhost:8080"},
		{"", "feeds.local", "https", "https://feeds.local"},
	}
	for _, tt := range tests {
		t.Run(tt.public+"|"+tt.host, func(t *testing.T) {
			s := newFDServer(t, fdFixture(), func(o *Options) { o.PublicURL = tt.public })
			req := httptest.NewRequest(http.MethodGet, "/resources?type=atom", nil)
			req.Host = tt.host
			if tt.proto == "https" {
				req.TLS = &tls.ConnectionState{}
			}
			rec := httptest.NewRecorder()
			s.ServeHTTP(rec, req)
			f := parseFeed(t, rec.Body.Bytes())
			// An item links to the resource's page for people.
			if len(f.Items) == 0 || f.Items[0].Link != tt.want+"/view/news" {
				t.Fatalf("first link = %q, want %s/view/news", f.Items[0].Link, tt.want)
			}
			if !strings.Contains(rec.Body.String(), `href="`+tt.want+`/resources?type=atom" rel="self"`) {
				t.Errorf("no absolute self link:\n%s", rec.Body)
			}
		})
	}
}

// TestConcurrentFeeds serves many requests at once while versions land; run
// with -race. Every answer must be a complete feed or a 304.
func TestConcurrentFeeds(t *testing.T) {
	store := fdFixture()
	s := newFDServer(t, store, func(o *Options) { o.CacheBytes = 64 << 10 })
	targets := []string{"/resources", "/resources/news", "/resources/news?max=2", "/resources/news?index=1&title=budget", "/resources/forum?type=json"}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := range 8 {
		wg.Go(func() {
			for i := range 25 {
				target := targets[(g+i)%len(targets)] + sep(targets[(g+i)%len(targets)]) + "type=" + fdFormats[i%len(fdFormats)]
				rec := fdDo(s, http.MethodGet, target)
				if rec.Code != http.StatusOK {
					errs <- fmt.Errorf("%s: %d", target, rec.Code)
					return
				}
				if _, err := gofeed.NewParser().ParseString(rec.Body.String()); err != nil {
					errs <- fmt.Errorf("%s: %v", target, err)
					return
				}
			}
		})
	}
	for i := range 5 {
		store.Save(&schema.Document{URL: "https://example.org/news/index.html", RSSID: "news", Timestamp: fdT0.Add(3*time.Hour + time.Duration(i)*time.Minute),
			Channel: schema.Channel{Title: "Town News"}, Items: []schema.Item{{Index: 1, ID: fmt.Sprint("n", i), Title: "Budget news"}}})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestFeedMetricsRegistered checks that the cache counters and the render
// histogram are exported on Options.Registerer.
func TestFeedMetricsRegistered(t *testing.T) {
	reg := prometheus.NewRegistry()
	s := newFDServer(t, fdFixture(), func(o *Options) { o.Registerer = reg })
	fdDo(s, http.MethodGet, "/resources/news")
	fdDo(s, http.MethodGet, "/resources/news")
	want := map[string]bool{"dynamo_feed_cache_hits_total": false, "dynamo_feed_cache_misses_total": false, "dynamo_feed_render_seconds": false, "dynamo_feed_cache_bytes": false}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if _, ok := want[mf.GetName()]; ok {
			want[mf.GetName()] = true
		}
	}
	for name, found := range want {
		if !found {
			t.Errorf("metric %s not registered", name)
		}
	}
	if n, err := testutil.GatherAndCount(reg, "dynamo_feed_cache_hits_total"); err != nil || n != 1 {
		t.Errorf("hits series: %d, %v", n, err)
	}
}

// TestHugeMaxIsAPositiveInteger: a max too large for an int is still a
// positive integer (all items), not a 400.
func TestHugeMaxIsAPositiveInteger(t *testing.T) {
	s := newFDServer(t, fdFixture())
	rec := fdDo(s, http.MethodGet, "/resources/news?max=99999999999")
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d, want 200\n%s", rec.Code, rec.Body)
	}
}

// TestErrorCarriesNoValidators: a feed request that fails after its ETag is
// known (the history read fails while building) answers without the feed's
// ETag or Last-Modified, which belong to the feed only.
func TestErrorCarriesNoValidators(t *testing.T) {
	store := fdFixture()
	store.Err = errors.New("disk on fire")
	s := newFDServer(t, &failHistory{fdStore: store})
	rec := fdDo(s, http.MethodGet, "/resources/news?max=2")
	if rec.Code != http.StatusInternalServerError {
		t.Fatalf("status %d, want 500", rec.Code)
	}
	if rec.Header().Get("ETag") != "" || rec.Header().Get("Last-Modified") != "" {
		t.Errorf("error carries ETag %q / Last-Modified %q", rec.Header().Get("ETag"), rec.Header().Get("Last-Modified"))
	}
}

// TestETagStableWhileSmartBacksOff: smart's wait grows after every unchanged
// poll, but the feed announces τ, which moves only with updates; so the ETag
// (and readers' 304s) survive unchanged polls. A new τ is a new feed.
func TestETagStableWhileSmartBacksOff(t *testing.T) {
	poller := &svcPoller{List: []ResourceStatus{
		{ID: "news", Policy: "smart", Tau: 20 * time.Minute, Interval: 10 * time.Minute, NextPoll: fdNow.Add(time.Hour)},
	}}
	s := newFDServer(t, fdFixture(), func(o *Options) { o.Poller = poller })
	etag := func() string { return fdDo(s, http.MethodGet, "/resources/news?max=2").Header().Get("ETag") }
	first := etag()
	poller.Mu.Lock()
	poller.List[0].Interval = 15 * time.Minute // an unchanged poll: the wait grew
	poller.Mu.Unlock()
	if got := etag(); got != first {
		t.Errorf("ETag changed from %s to %s although only the wait grew", first, got)
	}
	poller.Mu.Lock()
	poller.List[0].Tau = 5 * time.Minute // an update: a new estimate
	poller.Mu.Unlock()
	if got := etag(); got == first {
		t.Error("ETag unchanged although the announced ttl changed")
	}
}

// TestHumanDateInFeeds: XMLData keeps a page's date as written; feeds read it
// leniently for the item date and write dc:date as W3CDTF.
func TestHumanDateInFeeds(t *testing.T) {
	f := newFDStore()
	it := fdItem(1, "d", "Dated", "https://example.org/d.html", "An item with a human date.",
		schema.Extension{URI: schema.DCNamespace, Prefix: "dc", LocalName: "date", Value: "December 08, 2005 @ 08:25 AM"})
	f.Save(&schema.Document{URL: "https://example.org/", RSSID: "h", Timestamp: fdT0,
		Channel: schema.Channel{Title: "H", Link: "https://example.org/"}, Items: []schema.Item{it}})
	s := newFDServer(t, f)
	for _, typ := range []string{"rss2", "atom", "rss1"} {
		rec := fdDo(s, http.MethodGet, "/resources/h?max=5&type="+typ)
		if rec.Code != http.StatusOK {
			t.Fatalf("%s: status %d", typ, rec.Code)
		}
		body := rec.Body.String()
		if strings.Contains(body, "@ 08:25") {
			t.Errorf("%s: the page's wording leaked into the feed:\n%s", typ, body)
		}
		feed, err := gofeed.NewParser().ParseString(body)
		if err != nil {
			t.Fatalf("%s: %v", typ, err)
		}
		if p := feed.Items[0].PublishedParsed; p == nil || !p.Equal(time.Date(2005, 12, 8, 8, 25, 0, 0, time.UTC)) {
			t.Errorf("%s: published %v, want 2005-12-08 08:25 UTC", typ, p)
		}
	}
}

// A list with nothing stored yet is dated by when the server started (as an
// empty feed whose registration time is unknown), never 1970.
func TestEmptyResourcesListDate(t *testing.T) {
	s := newSvcServer(t, Options{})
	for _, typ := range []string{"rss2", "atom", "json", "rss1"} {
		rec := svcDo(s, http.MethodGet, "/resources?type="+typ, nil)
		if rec.Code != http.StatusOK {
			t.Fatalf("%s: %d %s", typ, rec.Code, rec.Body)
		}
		if lm, want := rec.Header().Get("Last-Modified"), svcNow.UTC().Format(http.TimeFormat); lm != want {
			t.Errorf("%s: Last-Modified %q, want %q", typ, lm, want)
		}
		if strings.Contains(rec.Body.String(), "1970") {
			t.Errorf("%s: dated 1970:\n%s", typ, rec.Body)
		}
	}
}

// The list's items are the resources with a latest version (title,
// description and date come from it); one the poller knows with nothing
// stored yet is not an item.
func TestResourcesListsStored(t *testing.T) {
	store, poller := svcFixture() // forum: known to the poller, nothing stored
	s := newSvcServer(t, Options{Store: store, Poller: poller})
	rec := svcDo(s, http.MethodGet, "/resources?type=json", nil)
	if rec.Code != http.StatusOK {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	var feed struct {
		Items []struct {
			Title         string
			DatePublished time.Time `json:"date_published"`
		}
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &feed); err != nil {
		t.Fatal(err)
	}
	var titles []string
	for _, it := range feed.Items {
		titles = append(titles, it.Title)
	}
	if want := []string{"Our News & Views", "Old page"}; !slices.Equal(titles, want) {
		t.Errorf("items %q, want %q (newest first)", titles, want)
	}
	if len(feed.Items) > 0 && !feed.Items[0].DatePublished.Equal(store.Infos[0].Updated) {
		t.Errorf("first item dated %v, want its latest version's %v", feed.Items[0].DatePublished, store.Infos[0].Updated)
	}
}

// TestEmptyFeedLastModifiedFollowsPolls: an empty feed's description says
// why it is empty, and that changes when a poll fails; a reader that
// revalidates with If-Modified-Since alone must then get the new reason,
// not a 304 dated by the registration.
func TestEmptyFeedLastModifiedFollowsPolls(t *testing.T) {
	poller := &svcPoller{List: []ResourceStatus{{ID: "later", URL: "https://pages.example.org/later.html", Since: fdT0}}}
	s := newFDServer(t, &svcStore{}, func(o *Options) { o.Poller = poller })
	first := fdDo(s, "GET", "/resources/later")
	lm := first.Header().Get("Last-Modified")
	if first.Code != http.StatusOK || lm == "" {
		t.Fatalf("empty feed: %d, Last-Modified %q", first.Code, lm)
	}
	if rec := fdDo(s, "GET", "/resources/later", "If-Modified-Since", lm); rec.Code != http.StatusNotModified {
		t.Fatalf("nothing changed: %d, want 304", rec.Code)
	}
	poller.Mu.Lock()
	poller.List[0].LastPoll = fdT0.Add(time.Hour)
	poller.List[0].LastError = "GET: 503 Service Unavailable"
	poller.Mu.Unlock()
	rec := fdDo(s, "GET", "/resources/later", "If-Modified-Since", lm)
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "503 Service Unavailable") {
		t.Fatalf("after a failed poll, If-Modified-Since %s: %d, want 200 with the new reason", lm, rec.Code)
	}
	if got := rec.Header().Get("Last-Modified"); got == lm {
		t.Errorf("Last-Modified stayed %s although the feed changed", got)
	}
}

// TestHeadPagesAsGet: HEAD on the pages and the OPML list carries the
// headers GET would, compression included: a cache that stores the HEAD
// answer must know it varies by Accept-Encoding.
func TestHeadPagesAsGet(t *testing.T) {
	s := newFDServer(t, fdFixture())
	for _, tc := range []struct{ target, accept string }{
		{"/", "text/html"}, {"/view/news", "text/html"}, {"/resources/news?max=5", "text/html"},
		{"/resources.opml", ""}, {"/preview", "text/html"},
	} {
		for _, enc := range []string{"gzip", ""} {
			head := fdDo(s, http.MethodHead, tc.target, "Accept", tc.accept, "Accept-Encoding", enc)
			get := fdDo(s, http.MethodGet, tc.target, "Accept", tc.accept, "Accept-Encoding", enc)
			if head.Code != get.Code { // (net/http drops what a handler writes for HEAD)
				t.Errorf("HEAD %s: %d; GET %d", tc.target, head.Code, get.Code)
			}
			for _, h := range []string{"Content-Type", "Content-Encoding", "Vary", "ETag", "Cache-Control"} {
				if got, want := head.Header().Values(h), get.Header().Values(h); strings.Join(got, ", ") != strings.Join(want, ", ") {
					t.Errorf("HEAD %s (Accept-Encoding %q): %s %q, GET has %q", tc.target, enc, h, got, want)
				}
			}
		}
	}
}

// TestRenderCacheLatest: the entry last put for a request identity is the
// one latestFor answers, until it is evicted.
func TestRenderCacheLatest(t *testing.T) {
	c, err := newRenderCache(8*(100+cacheEntryOverhead+2), nil) // 8 entries of 2-byte keys
	if err != nil {
		t.Fatal(err)
	}
	v1, v2 := &feedEntry{body: make([]byte, 100)}, &feedEntry{body: make([]byte, 100)}
	c.put("k1", v1, "feed")
	c.put("k2", v2, "feed") // a newer version of the same feed
	c.put("k3", v1, "")     // no identity: names nothing
	if e := c.latestFor("feed"); e != v2 {
		t.Fatalf("latestFor = %p, want the last one put (%p)", e, v2)
	}
	if e := c.latestFor(""); e != nil {
		t.Fatalf("latestFor(\"\") = %p, want nil", e)
	}
	for i := range 8 { // evicts k1, k2, k3 and more
		c.put(fmt.Sprint("o", i), v1, fmt.Sprint("other", i))
	}
	if e := c.latestFor("feed"); e != nil {
		t.Errorf("latestFor answers an evicted entry")
	}
	if e := c.latestFor("other7"); e != v1 {
		t.Errorf("latestFor(other7) = %p, want its entry", e)
	}
}

// TestIndexAtTheOldest: index at the history's length is the oldest version
// (200), one more is beyond it (404; TestFeedErrors).
func TestIndexAtTheOldest(t *testing.T) {
	s := newFDServer(t, fdFixture())
	for _, target := range []string{"/resources/news?index=3", "/resources/news?index=3&max=1"} {
		if rec := fdDo(s, http.MethodGet, target); rec.Code != http.StatusOK {
			t.Errorf("%s: status %d, want 200\n%s", target, rec.Code, rec.Body)
		}
	}
	if rec := fdDo(s, http.MethodGet, "/resources/news?index=4"); rec.Code != http.StatusNotFound {
		t.Errorf("index=4: status %d, want 404", rec.Code)
	}
}
