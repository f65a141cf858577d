package api

import (
	"encoding/xml"
	"errors"
	"net/http"
	"testing"
)

// TestOPMLCatalogDown: when the store cannot list its catalog, the OPML
// still lists the configured resources, each with its page URL as htmlUrl,
// and asks the store nothing more: a resource the catalog did not list as
// stored has no version to read, so a store that is down is not asked once
// per resource (nor is a warning logged for each).
func TestOPMLCatalogDown(t *testing.T) {
	store := fdFixture()
	store.err = errors.New("disk on fire")
	p := &svcPoller{statuses: []ResourceStatus{
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
	if n := store.readCount(); n != 0 {
		t.Errorf("%d version reads on a store whose catalog is down, want 0", n)
	}
}
