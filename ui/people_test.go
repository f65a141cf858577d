package ui

import (
	"context"
	"encoding/xml"
	"fmt"
	"github.com/dynamo-rss/dynamo/api"
	"github.com/dynamo-rss/dynamo/internal/apitest"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mmcdole/gofeed"
)

// histPoller is a apitest.SvcPoller that also keeps a poll history (api.PollHistory).
type histPoller struct {
	apitest.SvcPoller
	history map[string][]api.PollRecord
}

func (p *histPoller) History(_ context.Context, id string) ([]api.PollRecord, bool) {
	h, ok := p.history[id]
	return slices.Clone(h), ok
}

var _ api.PollHistory = (*histPoller)(nil)

// testHistory makes n polls of every two hours up to end: every fifth
// changed, every seventh failed, τ growing.
func testHistory(n int, end time.Time) []api.PollRecord {
	h := make([]api.PollRecord, n)
	versions := 0
	for i := range h {
		o := "unchanged"
		switch {
		case i%5 == 0:
			o = "changed"
			versions++
		case i%7 == 0:
			o = "error"
		case i%3 == 0:
			o = "not-modified"
		}
		h[i] = api.PollRecord{Time: end.Add(time.Duration(i-n) * 2 * time.Hour), Outcome: o, Wait: time.Duration(30+i%4*20) * time.Minute, Tau: time.Duration(1+i/20) * time.Hour, Versions: versions}
	}
	return h
}

// TestFeedPageAccept checks who gets the page and who the feed: the Accept
// headers real feed readers send (looked up in their sources) get the feed,
// exactly as before; browsers get the page; both vary by Accept.
func TestFeedPageAccept(t *testing.T) {
	s := newFDServer(t, apitest.FDFixture())
	tests := []struct {
		name, accept, query string
		want                string // a key of apitest.FeedContentTypes
	}{
		// feedparser 6.0: feedparser/http.py ACCEPT_HEADER.
		{"feedparser", "application/atom+xml,application/rdf+xml,application/rss+xml,application/x-netcdf,application/xml;q=0.9,text/xml;q=0.2,*/*;q=0.1", "", "rss2"}, // a tie among feed types goes to RSS 2.0
		// gofeed: Parser.ParseURL sets only User-Agent; Go's client sends no Accept.
		{"gofeed", "", "", "rss2"},
		// Miniflux 2: internal/reader/fetcher/request_builder.go defaultAcceptHeader
		// (text/html at the same quality as the feed types: a tie goes to the feed).
		{"miniflux", "application/xml, application/atom+xml, application/rss+xml, application/rdf+xml, application/feed+json, text/html, */*;q=0.9", "", "rss2"},
		// SimplePie (FreshRSS, WordPress): SimplePie's File/Locator Accept.
		{"simplepie/freshrss", "application/atom+xml, application/rss+xml, application/rdf+xml;q=0.9, application/xml;q=0.8, text/xml;q=0.8, text/html;q=0.7, unknown/unknown;q=0.1, application/unknown;q=0.1, */*;q=0.1", "", "rss2"},
		// newsboat (libcurl): curl's default, checked by TestFeedReadersNewsboat.
		{"newsboat", "*/*", "", "rss2"},
		{"json reader", "application/feed+json, application/json;q=0.9", "", "json"},
		{"curl", "*/*", "", "rss2"},
		{"html only at a lower quality", "application/rss+xml, text/html;q=0.5", "", "rss2"},
		{"html and xml tied", "text/html, application/xml", "", "rss2"},
		{"chrome", apitest.AcceptChrome, "", "html"},
		{"firefox", apitest.AcceptFirefox, "", "html"},
		{"safari", apitest.AcceptSafari, "", "html"},
		{"html only", "text/html", "", "html"},
		{"browser asking for a type", apitest.AcceptChrome, "type=atom", "atom"},
		{"browser asking for rss2", apitest.AcceptFirefox, "type=rss2", "rss2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			target := "/resources/news"
			if tt.query != "" {
				target += "?" + tt.query
			}
			rec := fdDo(s, http.MethodGet, target, "Accept", tt.accept)
			if rec.Code != http.StatusOK {
				t.Fatalf("GET %s = %d\n%s", target, rec.Code, rec.Body)
			}
			if got := rec.Header().Get("Content-Type"); got != apitest.FeedContentTypes[tt.want] {
				t.Errorf("Accept %q: Content-Type = %q, want %q", tt.accept, got, apitest.FeedContentTypes[tt.want])
			}
			if vary := strings.Join(rec.Header().Values("Vary"), ","); !strings.Contains(vary, "Accept") {
				t.Errorf("Vary = %q, want Accept in it", vary)
			}
			if tt.want != "html" {
				apitest.ParseFeed(t, rec.Body.Bytes())
			}
		})
	}
}

// TestFeedPageShowsTheFeed checks that the page of a feed shows exactly the
// feed's items, links to each format and to the resource's view, and
// revalidates with its own ETag.
func TestFeedPageShowsTheFeed(t *testing.T) {
	db := apitest.OpenFixtureDB(t)
	s := newFDServer(t, db)
	for _, target := range []string{"/resources/news", "/resources/news?max=2", "/resources/news?index=1", "/resources/news/versions/2", "/resources"} {
		t.Run(target, func(t *testing.T) {
			feedRec := fdDo(s, http.MethodGet, target)
			feed := apitest.ParseFeed(t, feedRec.Body.Bytes())
			rec := fdDo(s, http.MethodGet, target, "Accept", apitest.AcceptFirefox)
			if rec.Code != http.StatusOK {
				t.Fatalf("GET %s = %d\n%s", target, rec.Code, rec.Body)
			}
			apitest.CheckPageHeaders(t, rec.Header())
			doc := apitest.ParseHTML(t, rec.Body.String())
			var titles []string
			for _, li := range apitest.FindAll(doc, "li", "class", "item") {
				titles = append(titles, apitest.Text(apitest.FindAll(li, "h3")[0]))
			}
			var want []string
			for _, it := range feed.Items {
				want = append(want, it.Title)
			}
			if !slices.Equal(titles, want) {
				t.Errorf("page items %q, feed items %q", titles, want)
			}
			alts := apitest.FindAll(doc, "link", "rel", "alternate")
			if len(alts) != len(feedFormats) {
				t.Fatalf("%d <link rel=alternate>, want %d", len(alts), len(feedFormats))
			}
			for i, f := range feedFormats {
				href, _ := apitest.Attr(alts[i], "href")
				typ, _ := apitest.Attr(alts[i], "type")
				if !strings.HasPrefix(href, fdBase+"/resources") || !strings.Contains(href, "type="+f.name) || !strings.HasPrefix(f.contentType, typ) {
					t.Errorf("alternate %d: %s %s, want the %s feed", i, typ, href, f.name)
				}
				// Each subscribe link serves that format to a browser too.
				rel := strings.TrimPrefix(href, fdBase)
				if got := fdDo(s, http.MethodGet, rel, "Accept", apitest.AcceptChrome).Header().Get("Content-Type"); got != f.contentType {
					t.Errorf("GET %s from a browser: %s, want %s", rel, got, f.contentType)
				}
			}
			if strings.HasPrefix(target, "/resources/news") && len(apitest.FindAll(doc, "a", "href", "/view/news")) == 0 {
				t.Error("no link to /view/news")
			}
			etag := rec.Header().Get("ETag")
			if etag == "" || etag == feedRec.Header().Get("ETag") {
				t.Fatalf("page ETag %q, feed ETag %q: want one of its own", etag, feedRec.Header().Get("ETag"))
			}
			if got := fdDo(s, http.MethodGet, target, "Accept", apitest.AcceptFirefox, "If-None-Match", etag).Code; got != http.StatusNotModified {
				t.Errorf("revalidation = %d, want 304", got)
			}
		})
	}
	// The item's HTML content is shown, sanitized, never its scripts.
	rec := fdDo(s, http.MethodGet, "/resources/news?max=5", "Accept", apitest.AcceptChrome)
	if body := rec.Body.String(); !strings.Contains(body, "<b>closed</b>") {
		t.Errorf("content:encoded not shown as HTML:\n%s", body)
	}
}

// TestViewPage checks /view/{rssId} on a real store whose origin added and
// changed items: state, the chart, versions newest first with permalinks, and
// the diffs.
func TestViewPage(t *testing.T) {
	db := apitest.OpenFixtureDB(t)
	p := &histPoller{
		SvcPoller: apitest.SvcPoller{List: []api.ResourceStatus{{ID: "news", URL: "https://example.org/news/index.html", Policy: "smart", Tau: 3 * time.Hour, Interval: time.Hour,
			LastPoll: fdNow.Add(-10 * time.Minute), NextPoll: fdNow.Add(50 * time.Minute), LastOutcome: "error", LastError: "fetch: connection refused", Polls: 40, Changes: 3, Errors: 2}}},
		history: map[string][]api.PollRecord{"news": testHistory(300, fdNow)},
	}
	s := newFDServer(t, db, func(o *api.Options) { o.Poller = p })
	rec := fdDo(s, http.MethodGet, "/view/news")
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /view/news = %d\n%s", rec.Code, rec.Body)
	}
	apitest.CheckPageHeaders(t, rec.Header())
	body := rec.Body.String()
	doc := apitest.ParseHTML(t, body)

	if svgs := apitest.FindAll(doc, "svg", "class", "chart"); len(svgs) != 1 {
		t.Fatalf("%d chart SVGs, want 1", len(svgs))
	}
	for _, want := range []string{"changed poll", "unchanged poll", "error poll", "estimate τ", "versions stored", "connection refused", "3h"} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	// One address to copy (RSS 2.0) and the other formats beside it.
	if n := len(apitest.FindAll(doc, "input", "id", "subscribe-url")); n != 1 {
		t.Errorf("%d subscribe fields, want 1", n)
	}
	if n := len(apitest.FindAll(doc, "a", "class", "feed")); n != len(feedFormats)-1 {
		t.Errorf("%d links to the other formats, want %d", n, len(feedFormats)-1)
	}

	versions := apitest.FindAll(doc, "article", "class", "card version")
	if len(versions) != 3 {
		t.Fatalf("%d versions shown, want 3", len(versions))
	}
	wantIDs := []string{"v3", "v2", "v1"}
	for i, v := range versions {
		if id, _ := apitest.Attr(v, "id"); id != wantIDs[i] {
			t.Errorf("version %d is %s, want %s (newest first)", i, id, wantIDs[i])
		}
		seq := strings.TrimPrefix(wantIDs[i], "v")
		if len(apitest.FindAll(v, "a", "href", "/resources/news/versions/"+seq)) != 1 {
			t.Errorf("version %s lacks its permalink", seq)
		}
	}
	// Version 3 added c and changed b's title; version 2 added b.
	v3 := versions[0]
	added := apitest.FindAll(v3, "li", "class", "added")
	if len(added) != 1 || !apitest.HasAttrs(added[0], "data-item", "c") {
		t.Errorf("version 3 added %d items, want c", len(added))
	}
	changed := apitest.FindAll(v3, "li", "class", "changed")
	if len(changed) != 1 || !apitest.HasAttrs(changed[0], "data-item", "b") {
		t.Fatalf("version 3 changed %d items, want b", len(changed))
	}
	field := apitest.FindAll(changed[0], "li", "data-field", "title")
	if len(field) != 1 || apitest.Text(apitest.FindAll(field[0], "del")[0]) != "Weather: rain" || apitest.Text(apitest.FindAll(field[0], "ins")[0]) != "Weather: sun at last" {
		t.Errorf("b's title change not shown as del/ins: %s", apitest.Text(changed[0]))
	}
	if n := len(apitest.FindAll(versions[1], "li", "class", "added")); n != 1 {
		t.Errorf("version 2 added %d items, want 1", n)
	}
	if !strings.Contains(apitest.Text(versions[2]), "first version") {
		t.Errorf("version 1 not marked as the first: %s", apitest.Text(versions[2]))
	}

	if head := fdDo(s, http.MethodHead, "/view/news"); head.Code != http.StatusOK || head.Body.Len() != 0 && head.Body.Len() != rec.Body.Len() {
		t.Errorf("HEAD /view/news = %d", head.Code)
	}
	// Unknown: 404; known to the poller but not stored: the page, no versions.
	if got := fdDo(s, http.MethodGet, "/view/nope").Code; got != http.StatusNotFound {
		t.Errorf("GET /view/nope = %d, want 404", got)
	}
	p.List = append(p.List, api.ResourceStatus{ID: "fresh", URL: "https://example.org/fresh.html", Policy: "flat"})
	rec = fdDo(s, http.MethodGet, "/view/fresh")
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "No version stored yet") || !strings.Contains(rec.Body.String(), `class="chart"`) {
		t.Errorf("GET /view/fresh = %d, want the page with an empty chart and no versions:\n%s", rec.Code, rec.Body)
	}
}

// TestViewPaging checks that a long history is paged, each page comparing
// its last version with the one on the next page.
func TestViewPaging(t *testing.T) {
	store := apitest.NewFDStore()
	const n = 25
	for i := range n {
		items := []schemaItem{{"x", "steady"}, {fmt.Sprintf("i%d", i), fmt.Sprintf("Item %d", i)}}
		store.Save(testDoc("long", apitest.FDT0.Add(time.Duration(i)*time.Hour), items))
	}
	s := newFDServer(t, store)
	seqRe := regexp.MustCompile(`<article class="card version" id="v(\d+)"`)
	for _, tt := range []struct {
		query      string
		first, cnt int
	}{{"", 25, 10}, {"?page=2", 15, 10}, {"?page=3", 5, 5}, {"?page=99", 5, 5}, {"?page=x", 25, 10}} {
		rec := fdDo(s, http.MethodGet, "/view/long"+tt.query)
		m := seqRe.FindAllStringSubmatch(rec.Body.String(), -1)
		if len(m) != tt.cnt || m[0][1] != fmt.Sprint(tt.first) {
			t.Errorf("%s: %d versions from %v, want %d from %d", tt.query, len(m), m, tt.cnt, tt.first)
		}
	}
	body := fdDo(s, http.MethodGet, "/view/long?page=2").Body.String()
	for _, want := range []string{`href="/view/long?page=1#versions"`, `href="/view/long?page=3#versions"`, "page 2 of 3"} {
		if !strings.Contains(body, want) {
			t.Errorf("page 2 lacks %s", want)
		}
	}
	// Version 15 (last of page 2) is compared with 14 (on page 3).
	if strings.Contains(body, `id="v16"`) || !strings.Contains(body, `id="v6"`) || strings.Count(body, `class="removed"`) != 10 {
		t.Errorf("every version of page 2 should remove the previous one's item (%d removed)", strings.Count(body, `class="removed"`))
	}
}

// TestOPML parses /resources.opml back: OPML 2.0, one rss outline per
// resource with absolute feed and page URLs, and each feed URL serves a feed.
func TestOPML(t *testing.T) {
	db := apitest.OpenFixtureDB(t)
	p := &apitest.SvcPoller{List: []api.ResourceStatus{{ID: "pending", URL: "https://example.org/pending.html", Policy: "flat"}}}
	s := newFDServer(t, db, func(o *api.Options) { o.Poller = p })
	rec := fdDo(s, http.MethodGet, "/resources.opml")
	if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/x-opml") {
		t.Fatalf("GET /resources.opml = %d %s", rec.Code, rec.Header().Get("Content-Type"))
	}
	var doc struct {
		Version string `xml:"version,attr"`
		Title   string `xml:"head>title"`
		Outline []struct {
			Type    string `xml:"type,attr"`
			Text    string `xml:"text,attr"`
			Title   string `xml:"title,attr"`
			XMLURL  string `xml:"xmlUrl,attr"`
			HTMLURL string `xml:"htmlUrl,attr"`
		} `xml:"body>outline"`
	}
	if err := xml.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
		t.Fatalf("parse OPML: %v\n%s", err, rec.Body)
	}
	if doc.Version != "2.0" || doc.Title == "" {
		t.Errorf("opml version %q title %q", doc.Version, doc.Title)
	}
	// htmlUrl is the channel's link (news: its /news/, not the page index.html
	// it was read from); without a version, the page.
	want := map[string]string{"forum": "https://example.org/forum/", "news": "https://example.org/news/", "pending": "https://example.org/pending.html"}
	if len(doc.Outline) != len(want) {
		t.Fatalf("%d outlines, want %d:\n%s", len(doc.Outline), len(want), rec.Body)
	}
	for _, o := range doc.Outline {
		id, ok := strings.CutSuffix(strings.TrimPrefix(o.XMLURL, fdBase+"/resources/"), "?max=50")
		if !ok {
			t.Errorf("xmlUrl %s is not the items feed ?max=50", o.XMLURL)
		}
		if o.Type != "rss" || o.Text == "" || o.Title == "" || want[id] != o.HTMLURL {
			t.Errorf("outline %+v", o)
		}
		feedRec := fdDo(s, http.MethodGet, strings.TrimPrefix(o.XMLURL, fdBase))
		if _, err := gofeed.NewParser().ParseString(feedRec.Body.String()); err != nil {
			t.Errorf("%s: %d, not a feed: %v", o.XMLURL, feedRec.Code, err)
		}
	}
}

// TestHomePagedAndFiltered checks / with many resources: one page of them,
// each linked to its view with a sparkline, ?q= filtering, ?page= paging.
func TestHomePagedAndFiltered(t *testing.T) {
	s := newHomeBench(t, 120, 20)
	rec := fdDo(s, http.MethodGet, "/")
	apitest.CheckPageHeaders(t, rec.Header())
	doc := apitest.ParseHTML(t, rec.Body.String())
	cards := apitest.FindAll(doc, "section", "data-rssid", "")
	if len(cards) != homePerPage {
		t.Fatalf("%d resources on page 1, want %d", len(cards), homePerPage)
	}
	first := cards[0]
	if id, _ := apitest.Attr(first, "data-rssid"); id != "res00000" || len(apitest.FindAll(first, "a", "href", "/view/res00000")) == 0 {
		t.Errorf("first card %s lacks its view link", id)
	}
	if len(apitest.FindAll(first, "svg", "class", "spark")) != 1 {
		t.Error("first card lacks its sparkline")
	}
	if !strings.Contains(rec.Body.String(), `href="/?page=2"`) || !strings.Contains(rec.Body.String(), "120 resources") {
		t.Error("no pager or count on /")
	}
	last := apitest.ParseHTML(t, fdDo(s, http.MethodGet, "/?page=3").Body.String())
	if n := len(apitest.FindAll(last, "section", "data-rssid", "")); n != 20 {
		t.Errorf("page 3 has %d resources, want 20", n)
	}
	// Every word must match, in id, title or URL, case-insensitively.
	filtered := apitest.ParseHTML(t, fdDo(s, http.MethodGet, "/?q=RES0011+title").Body.String())
	var ids []string
	for _, c := range apitest.FindAll(filtered, "section", "data-rssid", "") {
		id, _ := apitest.Attr(c, "data-rssid")
		ids = append(ids, id)
	}
	if want := []string{"res00110", "res00111", "res00112", "res00113", "res00114", "res00115", "res00116", "res00117", "res00118", "res00119"}; !slices.Equal(ids, want) {
		t.Errorf("?q=RES0011 title: %v, want %v", ids, want)
	}
	if body := fdDo(s, http.MethodGet, "/?q=nothing-matches").Body.String(); !strings.Contains(body, "No resource matches") {
		t.Error("an empty filter result says nothing")
	}
}
