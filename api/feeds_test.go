package api

import (
	"github.com/dynamo-rss/dynamo/internal/apitest"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

const fdBase = "https://feeds.example.org"

// fdNow is the test clock: an hour after the last stored version.
var fdNow = fdT0.Add(3 * time.Hour)

// newFDServer builds a Server over store with a fixed clock, a public URL and
// its own metrics registry.
func newFDServer(t testing.TB, store Store, mod ...func(*Options)) *Server {
	t.Helper()
	opts := Options{
		Store:      store,
		PublicURL:  fdBase + "/",
		Now:        func() time.Time { return fdNow },
		Registerer: prometheus.NewRegistry(),
		Pages:      stubPages{},
	}
	for _, m := range mod {
		m(&opts)
	}
	s, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return s
}

// fdDo sends a GET (or another method) with header pairs and returns the answer.
func fdDo(s *Server, method, target string, header ...string) *httptest.ResponseRecorder {
	return apitest.Do(s, method, target, nil, header...)
}

var fdContentTypes = apitest.FeedContentTypes

var fdFormats = []string{"rss1", "rss2", "atom", "json"}

type fdWantItem struct {
	title string
	link  string // a path (our own feeds: "/resources/…", type= is added) or an absolute URL
	guid  string // RSS 2.0 guid and JSON id; Atom id is derived as tag:…
	atom  string // the Atom id's path after the tag authority
	date  time.Time
}

// fdForms is every request form over the fixture, with the items it answers.
func fdForms() []struct {
	name, target string
	title        string
	items        []fdWantItem
} {
	t := func(h, m int) time.Time { return fdT0.Add(time.Duration(h)*time.Hour + time.Duration(m)*time.Minute) }
	cDate := time.Date(2026, 2, 28, 8, 30, 0, 0, time.UTC)
	a := fdWantItem{"Budget vote tonight", "https://example.org/news/a.html", "a", "resources/news/items/a", time.Time{}}
	b := fdWantItem{"Weather: sun at last", "https://example.org/news/", "b", "resources/news/items/b", time.Time{}}
	c := fdWantItem{"Straße closed for works", "https://example.org/news/", "c", "resources/news/items/c", cDate}
	at := func(w fdWantItem, d time.Time) fdWantItem {
		if w.date.IsZero() {
			w.date = d
		}
		return w
	}
	bOld := b
	bOld.title = "Weather: rain"
	return []struct {
		name, target string
		title        string
		items        []fdWantItem
	}{
		{"resources", "/resources", "Dynamo resources", []fdWantItem{
			{"Town News", fdBase + "/view/news", fdBase + "/resources/news", fdBase + "/resources/news", t(2, 0)},
			{"Forum", fdBase + "/view/forum", fdBase + "/resources/forum", fdBase + "/resources/forum", t(0, -30)},
		}},
		{"versions", "/resources/news", "Town News", []fdWantItem{
			{"1 new: Straße closed for works · 1 changed: Weather: sun at last", fdBase + "/resources/news/versions/3", fdBase + "/resources/news/versions/3", fdBase + "/resources/news/versions/3", t(2, 0)},
			{"1 new: Weather: rain", fdBase + "/resources/news/versions/2", fdBase + "/resources/news/versions/2", fdBase + "/resources/news/versions/2", t(1, 0)},
			{"1 item: Budget vote tonight", fdBase + "/resources/news/versions/1", fdBase + "/resources/news/versions/1", fdBase + "/resources/news/versions/1", t(0, 0)},
		}},
		{"index newest", "/resources/news?index=1", "Town News", []fdWantItem{at(c, t(2, 0)), at(b, t(2, 0)), at(a, t(2, 0))}},
		{"index older", "/resources/news?index=2", "Town News", []fdWantItem{at(bOld, t(1, 0)), at(a, t(1, 0))}},
		{"max", "/resources/news?max=2", "Town News", []fdWantItem{at(c, t(2, 0)), at(b, t(1, 0))}},
		{"max beyond", "/resources/news?max=10", "Town News", []fdWantItem{at(c, t(2, 0)), at(b, t(1, 0)), at(a, t(0, 0))}},
		{"index and max", "/resources/news?index=1&max=2", "Town News", []fdWantItem{at(c, t(2, 0)), at(b, t(2, 0))}},
		{"keyword over history", "/resources/news?max=5&title=budget", "Town News", []fdWantItem{at(a, t(0, 0))}},
		{"keyword in version", "/resources/news?index=1&desc=budget", "Town News", []fdWantItem{at(c, t(2, 0)), at(a, t(2, 0))}},
		{"xpath", "/resources/news?index=1&xpath=" + url.QueryEscape("extensions/*[local-name()='date']"), "Town News", []fdWantItem{at(c, t(2, 0))}},
		{"single resource", "/resources/forum?max=1", "Forum", []fdWantItem{
			{"Welcome", "https://example.org/forum/1", "f", "resources/forum/items/f", t(0, -30)},
		}},
	}
}

// TestFeedForms checks every request form in every format as a feed reader
// sees it: titles, links, guids/ids, dates and order.
func TestFeedForms(t *testing.T) {
	s := newFDServer(t, fdFixture())
	for _, form := range fdForms() {
		for _, format := range fdFormats {
			t.Run(form.name+"/"+format, func(t *testing.T) {
				target := form.target + sep(form.target) + "type=" + format
				rec := fdDo(s, http.MethodGet, target)
				if rec.Code != http.StatusOK {
					t.Fatalf("GET %s = %d\n%s", target, rec.Code, rec.Body)
				}
				if ct := rec.Header().Get("Content-Type"); ct != fdContentTypes[format] {
					t.Errorf("Content-Type = %q, want %q", ct, fdContentTypes[format])
				}
				feed := parseFeed(t, rec.Body.Bytes())
				if feed.Title != form.title {
					t.Errorf("feed title = %q, want %q", feed.Title, form.title)
				}
				if len(feed.Items) != len(form.items) {
					t.Fatalf("%d items, want %d:\n%s", len(feed.Items), len(form.items), rec.Body)
				}
				for i, w := range form.items {
					got := feed.Items[i]
					if got.Title != w.title {
						t.Errorf("item %d title = %q, want %q", i, got.Title, w.title)
					}
					wantLink := w.link
					if strings.HasPrefix(wantLink, "/") {
						wantLink = fdBase + wantLink + sep(wantLink) + "type=" + format
					}
					if got.Link != wantLink {
						t.Errorf("item %d link = %q, want %q", i, got.Link, wantLink)
					}
					switch format {
					case "rss2", "json":
						if got.GUID != w.guid {
							t.Errorf("item %d guid = %q, want %q", i, got.GUID, w.guid)
						}
					case "atom":
						want := w.atom
						if !strings.HasPrefix(want, "https:") {
							want = "tag:feeds.example.org,2008:" + want
						}
						if got.GUID != want {
							t.Errorf("item %d id = %q, want %q", i, got.GUID, want)
						}
					}
					if got.PublishedParsed == nil || !got.PublishedParsed.Equal(w.date) {
						t.Errorf("item %d date = %v, want %v", i, got.PublishedParsed, w.date)
					}
				}
			})
		}
	}
}

func sep(target string) string {
	if strings.Contains(target, "?") {
		return "&"
	}
	return "?"
}

// TestFeedDetails checks what each format carries beyond items: self links,
// the channel, content:encoded, extensions, <ttl> and sy:* hints.
func TestFeedDetails(t *testing.T) {
	poller := &svcPoller{List: []ResourceStatus{{ID: "news", Interval: 15 * time.Minute, NextPoll: fdNow.Add(10 * time.Minute)}}}
	s := newFDServer(t, fdFixture(), func(o *Options) { o.Poller = poller })
	self := fdBase + "/resources/news?index=1&amp;type="
	tests := []struct {
		format string
		want   []string
	}{
		{"rss2", []string{
			`<atom:link href="` + self + `rss2" rel="self" type="application/rss+xml"></atom:link>`,
			`<guid isPermaLink="false">c</guid>`,
			`<content:encoded><![CDATA[<p>Main street <b>closed</b>.</p>]]></content:encoded>`,
			`<dc:creator xmlns:dc="http://purl.org/dc/elements/1.1/">Town Hall</dc:creator>`,
			`<ttl>15</ttl>`, `<sy:updatePeriod>hourly</sy:updatePeriod>`, `<sy:updateFrequency>4</sy:updateFrequency>`,
			`<url>https://example.org/logo.png</url>`,
		}},
		{"atom", []string{
			`<id>tag:feeds.example.org,2008:resources/news?index=1</id>`,
			`<link href="` + self + `atom" rel="self" type="application/atom+xml"></link>`,
			`<link href="https://example.org/news/" rel="alternate" type="text/html"></link>`,
			`<updated>2026-03-01T12:00:00Z</updated>`,
			`<summary type="text">The council votes the budget.</summary>`,
			`<content type="html">&lt;p&gt;Main street &lt;b&gt;closed&lt;/b&gt;.&lt;/p&gt;</content>`,
			`<author>`,
		}},
		{"rss1", []string{
			`<channel rdf:about="` + self + `rss1">`,
			`<rdf:li rdf:resource="https://example.org/news/a.html"></rdf:li>`,
			`<item rdf:about="https://example.org/news/#c">`,
			`<item rdf:about="https://example.org/news/#b">`,
			`<dc:date>2026-02-28T08:30:00Z</dc:date>`,
			`<image rdf:about="https://example.org/logo.png">`,
			`<sy:updatePeriod>hourly</sy:updatePeriod>`,
		}},
		{"json", []string{
			`"version": "https://jsonfeed.org/version/1.1"`,
			`"feed_url": "` + fdBase + `/resources/news?index=1&type=json"`,
			`"content_html": "<p>Main street <b>closed</b>.</p>"`,
			`"content_text": "Rain all week."`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.format, func(t *testing.T) {
			rec := fdDo(s, http.MethodGet, "/resources/news?index=1&type="+tt.format)
			if rec.Code != http.StatusOK {
				t.Fatalf("status %d\n%s", rec.Code, rec.Body)
			}
			body := rec.Body.String()
			for _, w := range tt.want {
				if !strings.Contains(body, w) {
					t.Errorf("feed lacks %s\n%s", w, body)
				}
			}
			if tt.format == "rss1" && strings.Count(body, "<dc:date>") != 4 { // channel + 3 items, the item's own dc:date not repeated
				t.Errorf("want 4 dc:date elements:\n%s", body)
			}
		})
	}
}
