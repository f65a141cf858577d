package api

import (
	"encoding/xml"
	"errors"
	"net/http"
	"testing"

	"github.com/dynamo-rss/dynamo/schema"
)

// TestOPMLCatalogDown: when the store cannot list its catalog, the OPML
// still lists the configured resources, each with its page URL as htmlUrl,
// and asks the store nothing more: a resource the catalog did not list as
// stored has no version to read, so a store that is down is not asked once
// per resource (nor is a warning logged for each).
func TestOPMLCatalogDown(t *testing.T) {
	store := fdFixture()
	store.Err = errors.New("disk on fire")
	p := &svcPoller{List: []ResourceStatus{
		{ID: "news", URL: "https://example.org/news/index.html", Policy: "flat"},
		{ID: "forum", URL: "https://example.org/forum/", Policy: "flat"},
	}}
	s := newFDServer(t, store, func(o *Options) { o.Poller = p })
	rec := fdDo(s, http.MethodGet, "/resources.opml")
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /resources.opml = %d\n%s", rec.Code, rec.Body)
	}
	var doc struct {
		Outline []struct {
			Text    string `xml:"text,attr"`
			HTMLURL string `xml:"htmlUrl,attr"`
		} `xml:"body>outline"`
	}
	if err := xml.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
		t.Fatalf("parse OPML: %v\n%s", err, rec.Body)
	}
	want := map[string]string{"news": "https://example.org/news/index.html", "forum": "https://example.org/forum/"}
	if len(doc.Outline) != len(want) {
		t.Fatalf("%d outlines, want %d:\n%s", len(doc.Outline), len(want), rec.Body)
	}
	for _, o := range doc.Outline {
		if want[o.Text] != o.HTMLURL {
			t.Errorf("%s: htmlUrl %q, want the page %q", o.Text, o.HTMLURL, want[o.Text])
		}
	}
	if n := store.ReadCount(); n != 0 {
		t.Errorf("%d version reads on a store whose catalog is down, want 0", n)
	}
}

// TestOPMLHTMLURLOnlyHTTP: htmlUrl, which a reader opens as the site, is
// the channel's link only when it is an http(s) URL with a host: a page
// whose annotations give a javascript: or ftp: link with a host, or an
// http link without one, gets its page URL instead.
func TestOPMLHTMLURLOnlyHTTP(t *testing.T) {
	for _, link := range []string{"javascript://example.org/%0Aalert(1)", "ftp://example.org/pub/", "http:///news/", "https:news"} {
		store := newFDStore()
		store.Save(&schema.Document{URL: "https://example.org/news.html", RSSID: "news", Timestamp: fdT0,
			Channel: schema.Channel{Title: "News", Link: link}, Items: []schema.Item{fdItem(1, "a", "A", "https://example.org/a", "")}})
		s := newFDServer(t, store)
		rec := fdDo(s, http.MethodGet, "/resources.opml")
		var doc struct {
			Outline []struct {
				HTMLURL string `xml:"htmlUrl,attr"`
			} `xml:"body>outline"`
		}
		if err := xml.Unmarshal(rec.Body.Bytes(), &doc); err != nil || len(doc.Outline) != 1 {
			t.Fatalf("%s: parse OPML: %v\n%s", link, err, rec.Body)
		}
		if got := doc.Outline[0].HTMLURL; got != "https://example.org/news.html" {
			t.Errorf("channel link %s: htmlUrl %q, want the page URL", link, got)
		}
	}
}
