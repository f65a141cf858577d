package api

import (
	"context"
	"encoding/json"
	"github.com/mmcdole/gofeed"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dynamo-rss/dynamo/schema"
	"github.com/dynamo-rss/dynamo/schema/schematest"
	"github.com/dynamo-rss/dynamo/storage"
)

// TestVersionPermalinks checks that every item of a resource's versions feed
// is identified and linked by its permalink in every format, that a
// permalink renders its version, and that the ids of the old versions do not
// move when a new version is stored (a reader must never see an old version
// re-appear as new).
func TestVersionPermalinks(t *testing.T) {
	db := openFixtureDB(t)
	s := newFDServer(t, db)
	before := map[string][]string{}
	for _, format := range fdFormats {
		rec := fdDo(s, http.MethodGet, "/resources/news?type="+format)
		if rec.Code != http.StatusOK {
			t.Fatalf("%s: %d %s", format, rec.Code, rec.Body)
		}
		feed := parseFeed(t, rec.Body.Bytes())
		for i, it := range feed.Items {
			want := fdBase + "/resources/news/versions/" + string(rune('3'-i))
			if it.Link != want {
				t.Errorf("%s item %d link = %q, want %q", format, i, it.Link, want)
			}
			if format != "rss1" && it.GUID != want { // gofeed has no rdf:about; the golden file shows it
				t.Errorf("%s item %d id = %q, want %q", format, i, it.GUID, want)
			}
			before[format] = append(before[format], it.Link)
		}
	}
	rss1 := fdDo(s, http.MethodGet, "/resources/news?type=rss1").Body.String()
	if !strings.Contains(rss1, `<item rdf:about="`+fdBase+`/resources/news/versions/1">`) {
		t.Errorf("RSS 1.0 rdf:about is not the permalink:\n%s", rss1)
	}

	// A permalink renders that version, as index does.
	for _, tc := range []struct{ seq, index string }{{"3", "1"}, {"2", "2"}, {"1", "3"}} {
		perm := fdDo(s, http.MethodGet, "/resources/news/versions/"+tc.seq+"?type=json")
		idx := fdDo(s, http.MethodGet, "/resources/news?index="+tc.index+"&type=json")
		if perm.Code != http.StatusOK {
			t.Fatalf("versions/%s: %d %s", tc.seq, perm.Code, perm.Body)
		}
		if g, w := guids(t, perm.Body.Bytes()), guids(t, idx.Body.Bytes()); !slices.Equal(g, w) {
			t.Errorf("versions/%s items %v, index=%s items %v", tc.seq, g, tc.index, w)
		}
		if f := parseFeed(t, perm.Body.Bytes()); f.FeedLink != fdBase+"/resources/news/versions/"+tc.seq+"?type=json" {
			t.Errorf("versions/%s self link = %q", tc.seq, f.FeedLink)
		}
	}

	// A new version: the old versions keep their ids; one new id appears.
	doc := fdFixture().Docs["news"][2] // a fresh copy: the fixture is built per call
	doc.Timestamp = doc.Timestamp.Add(time.Hour)
	doc.Items = append(doc.Items, schema.Item{Index: len(doc.Items) + 1, ID: "d", Title: "A fourth story", Link: "https://example.org/news/d.html"})
	if _, err := db.Save(context.Background(), doc); err != nil {
		t.Fatal(err)
	}
	for _, format := range fdFormats {
		feed := parseFeed(t, fdDo(s, http.MethodGet, "/resources/news?type="+format).Body.Bytes())
		var after []string
		for _, it := range feed.Items {
			after = append(after, it.Link)
		}
		if len(after) != 4 || after[0] != fdBase+"/resources/news/versions/4" || !slices.Equal(after[1:], before[format]) {
			t.Errorf("%s after a new version: %v, before %v", format, after, before[format])
		}
	}

	// Retention removes the oldest: its permalink is 410, past the latest 404.
	if _, err := db.Prune(context.Background(), "news", storage.Retention{MaxVersions: 2}, time.Now()); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path   string
		status int
	}{
		{"/resources/news/versions/1", http.StatusGone},
		{"/resources/news/versions/2", http.StatusGone},
		{"/resources/news/versions/3", http.StatusOK},
		{"/resources/news/versions/4", http.StatusOK},
		{"/resources/news/versions/5", http.StatusNotFound},
		{"/resources/news/versions/0", http.StatusNotFound},
		{"/resources/news/versions/x", http.StatusNotFound},
		{"/resources/nope/versions/1", http.StatusNotFound},
	} {
		rec := fdDo(s, http.MethodGet, tc.path)
		if rec.Code != tc.status {
			t.Errorf("GET %s = %d, want %d: %s", tc.path, rec.Code, tc.status, rec.Body)
		}
		if tc.status != http.StatusOK && !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/problem+json") {
			t.Errorf("GET %s: Content-Type %q", tc.path, rec.Header().Get("Content-Type"))
		}
		// The messages say which versions there are.
		want := map[int]string{http.StatusGone: "the oldest kept is 3", http.StatusNotFound: "its latest is 4"}[tc.status]
		if strings.HasSuffix(tc.path, "/5") && !strings.Contains(rec.Body.String(), want) {
			t.Errorf("GET %s: %s, want it to say %q", tc.path, rec.Body, want)
		}
		if tc.status == http.StatusGone && !strings.Contains(rec.Body.String(), want) {
			t.Errorf("GET %s: %s, want it to say %q", tc.path, rec.Body, want)
		}
	}
}

// TestEmptyFeed checks the feed of a resource the poller knows but that has
// no stored version: 200 in every format, no items (JSON "items": []),
// titled by its id, linked to its page, dated by its registration.
func TestEmptyFeed(t *testing.T) {
	store, poller := svcFixture()
	since := svcNow.Add(-5 * time.Hour).UTC()
	poller.List = append(poller.List, ResourceStatus{ID: "fresh", URL: "https://example.org/fresh.html", Policy: "flat", Since: since})
	s := newSvcServer(t, Options{Store: store, Poller: poller, PublicURL: "https://feeds.example.org"})
	for _, id := range []string{"fresh", "forum"} {
		for _, format := range fdFormats {
			rec := svcDo(s, http.MethodGet, "/resources/"+id+"?type="+format, nil)
			if rec.Code != http.StatusOK {
				t.Fatalf("%s %s: %d %s", id, format, rec.Code, rec.Body)
			}
			feed := parseFeed(t, rec.Body.Bytes())
			if feed.Title != id || len(feed.Items) != 0 {
				t.Errorf("%s %s: title %q, %d items", id, format, feed.Title, len(feed.Items))
			}
			if feed.UpdatedParsed != nil && feed.UpdatedParsed.Year() < 2000 {
				t.Errorf("%s %s: dated %v", id, format, feed.UpdatedParsed)
			}
			if lm, _ := http.ParseTime(rec.Header().Get("Last-Modified")); lm.Year() < 2000 {
				t.Errorf("%s %s: Last-Modified %q", id, format, rec.Header().Get("Last-Modified"))
			}
			if id == "fresh" {
				if lm, _ := http.ParseTime(rec.Header().Get("Last-Modified")); !lm.Equal(since.Truncate(time.Second)) {
					t.Errorf("fresh %s: Last-Modified %v, want the registration time %v", format, lm, since)
				}
				if feed.Link != "https://example.org/fresh.html" {
					t.Errorf("fresh %s: link %q", format, feed.Link)
				}
			}
			if format == "json" {
				var raw map[string]json.RawMessage
				if err := json.Unmarshal(rec.Body.Bytes(), &raw); err != nil {
					t.Fatal(err)
				}
				if string(raw["items"]) != "[]" {
					t.Errorf("%s json items = %s, want []", id, raw["items"])
				}
			}
			if format == "rss2" && !strings.Contains(feed.Description, "No version yet") {
				t.Errorf("%s: description %q does not say why it is empty", id, feed.Description)
			}
		}
	}
	forum := parseFeed(t, svcDo(s, http.MethodGet, "/resources/forum?type=rss2", nil).Body.Bytes())
	if !strings.Contains(forum.Description, "503") {
		t.Errorf("forum: description %q does not carry the last error", forum.Description)
	}
	// Beyond an empty history, and unknown resources, stay 404.
	svcProblem(t, svcDo(s, http.MethodGet, "/resources/fresh?index=1", nil), http.StatusNotFound)
	svcProblem(t, svcDo(s, http.MethodGet, "/resources/unknown", nil), http.StatusNotFound)
}

// TestImages checks that item and channel images reach every format that
// can hold them, as gofeed reads them: RSS 2.0 media:content and enclosure,
// Atom link rel="enclosure" and logo, JSON Feed image and icon, RSS 1.0
// channel image.
func TestImages(t *testing.T) {
	s := newFDServer(t, fdFixture())
	const itemImg, logo = "https://example.org/img/works.jpg", "https://example.org/logo.png"
	for _, target := range []string{"/resources/news?index=1", "/resources/news?max=5", "/resources/news"} {
		for _, format := range fdFormats {
			rec := fdDo(s, http.MethodGet, target+"&type="+format)
			if strings.HasSuffix(target, "/news") {
				rec = fdDo(s, http.MethodGet, target+"?type="+format)
			}
			if rec.Code != http.StatusOK {
				t.Fatalf("%s %s: %d", target, format, rec.Code)
			}
			feed := parseFeed(t, rec.Body.Bytes())
			if feed.Image == nil || feed.Image.URL != logo {
				t.Errorf("%s %s: channel image %+v, want %s", target, format, feed.Image, logo)
			}
			if strings.HasSuffix(target, "/news") {
				continue // the versions feed's items are versions
			}
			var c *gofeed.Item
			for _, it := range feed.Items {
				if it.Title == "Straße closed for works" {
					c = it
				}
			}
			if c == nil {
				t.Fatalf("%s %s: item c missing", target, format)
			}
			switch format {
			case "rss2", "json":
				if c.Image == nil || c.Image.URL != itemImg {
					t.Errorf("%s %s: item image %+v, want %s", target, format, c.Image, itemImg)
				}
			case "atom":
				if len(c.Enclosures) != 1 || c.Enclosures[0].URL != itemImg || c.Enclosures[0].Type != "image/jpeg" {
					t.Errorf("%s atom: enclosures %+v, want %s", target, c.Enclosures, itemImg)
				}
			}
			if format == "rss2" && (len(c.Enclosures) != 1 || c.Enclosures[0].Type != "image/jpeg") {
				t.Errorf("%s rss2: enclosures %+v", target, c.Enclosures)
			}
		}
	}
}

// TestUnreadableDateNotEmitted checks that a date the page wrote in a form
// nobody can read stays out of every feed (the item is dated by when it was
// first seen), while a readable one goes out as W3C-DTF.
func TestUnreadableDateNotEmitted(t *testing.T) {
	f := newFDStore()
	seen := fdT0.Add(time.Hour)
	f.Save(&schema.Document{URL: "https://example.org/p.html", RSSID: "p", Timestamp: seen,
		Channel: schema.Channel{Title: "P", Link: "https://example.org/p.html", Description: "d"},
		Items: []schema.Item{
			fdItem(1, "odd", "Odd date", "https://example.org/1", "x",
				schema.Extension{URI: schema.DCNamespace, Prefix: "dc", LocalName: "date", Value: "the day after the fair"}),
			fdItem(2, "iso", "ISO date", "https://example.org/2", "y",
				schema.Extension{URI: schema.DCNamespace, Prefix: "dc", LocalName: "date", Value: "2026-02-28 08:30"}),
		}})
	s := newFDServer(t, f)
	for _, format := range fdFormats {
		rec := fdDo(s, http.MethodGet, "/resources/p?index=1&type="+format)
		body := rec.Body.String()
		if rec.Code != http.StatusOK {
			t.Fatalf("%s: %d %s", format, rec.Code, body)
		}
		if strings.Contains(body, "the day after the fair") {
			t.Errorf("%s: the unreadable date went out:\n%s", format, body)
		}
		if format != "json" && !strings.Contains(body, "2026-02-28T08:30:00Z") {
			t.Errorf("%s: the readable date is not written as W3C-DTF:\n%s", format, body)
		}
		feed := parseFeed(t, rec.Body.Bytes())
		if d := feed.Items[0].PublishedParsed; d == nil || !d.Equal(seen) {
			t.Errorf("%s: the undated item is dated %v, want when it was seen (%v)", format, d, seen)
		}
	}
}

// TestResourceDateRules checks that feeds read a resource's dates with its
// date_format and timezone: a day-first date in the page's zone is the
// item's date, written as W3C-DTF in UTC.
func TestResourceDateRules(t *testing.T) {
	rome := schematest.Location(t, "Europe/Rome")
	f := newFDStore()
	f.Save(&schema.Document{URL: "https://example.org/p.html", RSSID: "p", Timestamp: fdT0,
		Channel: schema.Channel{Title: "P", Link: "https://example.org/p.html", Description: "d"},
		Items: []schema.Item{
			fdItem(1, "a", "Dated the Italian way", "https://example.org/1", "x",
				schema.Extension{URI: schema.DCNamespace, Prefix: "dc", LocalName: "date", Value: "21 nov. 26, ore 14:30"}),
		}})
	rules := schema.DateRules{Layout: "2 Jan. 06, ore 15:04", Location: rome}
	s := newFDServer(t, f, func(o *Options) {
		o.DateRules = func(id string) schema.DateRules {
			if id != "p" {
				t.Errorf("date rules asked for %q", id)
			}
			return rules
		}
	})
	want := time.Date(2026, 11, 21, 13, 30, 0, 0, time.UTC)
	for _, format := range fdFormats {
		rec := fdDo(s, http.MethodGet, "/resources/p?index=1&type="+format)
		feed := parseFeed(t, rec.Body.Bytes())
		if d := feed.Items[0].PublishedParsed; d == nil || !d.Equal(want) {
			t.Errorf("%s: item dated %v, want %v", format, d, want)
		}
		if format != "json" && !strings.Contains(rec.Body.String(), "2026-11-21T13:30:00Z") {
			t.Errorf("%s: dc:date not written as W3C-DTF:\n%s", format, rec.Body)
		}
	}
	// A reload that changes the rules changes the dates, so the ETag too.
	before := fdDo(s, http.MethodGet, "/resources/p?index=1&type=atom")
	rules.Location = time.UTC
	after := fdDo(s, http.MethodGet, "/resources/p?index=1&type=atom")
	if before.Body.String() == after.Body.String() || before.Header().Get("ETag") == after.Header().Get("ETag") {
		t.Errorf("new date rules: same body %v, ETag %s then %s; want new dates under a new ETag",
			before.Body.String() == after.Body.String(), before.Header().Get("ETag"), after.Header().Get("ETag"))
	}
}

// TestReaders checks the count of distinct clients per resource behind
// weight_readers: by address, per resource, forgotten after a week.
func TestReaders(t *testing.T) {
	now := fdNow
	s := newFDServer(t, fdFixture(), func(o *Options) { o.Now = func() time.Time { return now } })
	get := func(path, ip string) {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		req.RemoteAddr = ip + ":4242"
		s.ServeHTTP(httptest.NewRecorder(), req)
	}
	for _, ip := range []string{"192.0.2.1", "192.0.2.2", "192.0.2.1", "192.0.2.3"} {
		get("/resources/news?max=5", ip)
	}
	get("/resources/forum", "192.0.2.9")
	get("/resources/made-up", "192.0.2.9") // unknown ids are not counted (nor remembered)
	if n := s.Readers("made-up"); n != 0 {
		t.Errorf("an unknown id has %d readers", n)
	}
	if n := s.Readers("news"); n != 3 {
		t.Errorf("news readers = %d, want 3", n)
	}
	if n := s.Readers("forum"); n != 1 {
		t.Errorf("forum readers = %d, want 1", n)
	}
	now = now.Add(8 * 24 * time.Hour)
	if n := s.Readers("news"); n != 0 {
		t.Errorf("a week later, news readers = %d, want 0", n)
	}
}

// countingPoller counts the calls that take the poller engine's lock.
type countingPoller struct {
	svcPoller
	status atomic.Int64
}

func (p *countingPoller) Status(id string) (ResourceStatus, bool) {
	p.status.Add(1)
	return p.svcPoller.Status(id)
}

// A feed request asks the poller for the resource's status once (each call
// takes the engine's lock, which polls hold): a resource with versions, once
// for its freshness, its date rules once beside; one with no version yet,
// once, to know it and its freshness. Its page for browsers asks the same.
func TestFeedAsksThePollerOnce(t *testing.T) {
	store := newFDStore()
	store.Save(benchDoc("bench", fdT0, 0, 5))
	p := &countingPoller{svcPoller: svcPoller{List: []ResourceStatus{
		{ID: "bench", Policy: "flat", Interval: time.Hour, NextPoll: fdNow.Add(time.Minute)},
		{ID: "fresh", Policy: "flat", Interval: time.Hour, NextPoll: fdNow.Add(time.Minute)},
	}}}
	var dates atomic.Int64
	s := newFDServer(t, store, func(o *Options) {
		o.Poller = p
		o.DateRules = func(string) schema.DateRules { dates.Add(1); return schema.DateRules{} }
	})
	for _, tc := range []struct {
		target, accept string
		dates          int64
	}{
		{"/resources/bench", "", 1},
		{"/resources/bench", acceptFirefox, 1},
		{"/resources/fresh", "", 0},
		{"/resources/fresh", acceptFirefox, 0},
	} {
		for _, round := range []string{"rendered", "cached"} {
			p.status.Store(0)
			dates.Store(0)
			if rec := fdDo(s, http.MethodGet, tc.target, "Accept", tc.accept); rec.Code != http.StatusOK {
				t.Fatalf("%s: %d", tc.target, rec.Code)
			}
			if got := p.status.Load(); got != 1 {
				t.Errorf("%s (%s, Accept %q): %d Status calls, want 1", tc.target, round, tc.accept, got)
			}
			if got := dates.Load(); got != tc.dates {
				t.Errorf("%s (%s, Accept %q): %d DateRules calls, want %d", tc.target, round, tc.accept, got, tc.dates)
			}
		}
	}
}
