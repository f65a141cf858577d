package ui

import (
	"github.com/dynamo-rss/dynamo/api"
	"github.com/dynamo-rss/dynamo/internal/apitest"
	"net/http"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// TestSubscribeLinksAreTheItemsFeed checks every page's subscribe links and
// <link rel="alternate">: the resource's items feed ?max=feeds.subscribe_max
// in each format, with the versions feed beside it as the history.
func TestSubscribeLinksAreTheItemsFeed(t *testing.T) {
	db := apitest.OpenFixtureDB(t)
	s := newFDServer(t, db, func(o *api.Options) { o.SubscribeMax = 20 })
	items := func(id string) []string {
		var out []string
		for _, f := range feedFormats {
			out = append(out, fdBase+"/resources/"+id+"?max=20&type="+f.name)
		}
		return out
	}
	history := func(id string) []string {
		var out []string
		for _, f := range feedFormats {
			out = append(out, fdBase+"/resources/"+id+"?type="+f.name)
		}
		return out
	}
	hrefs := func(nodes []*html.Node) []string {
		var out []string
		for _, n := range nodes {
			out = append(out, htmlAttr(n, "href"))
		}
		return out
	}
	tests := []struct {
		name, target, accept string
		subscribe, history   []string
		alternates           []string // nil: not checked
	}{
		// The view has one address to copy (the field) and the other formats beside it.
		{"view", "/view/news", "", items("news")[1:], history("news"), items("news")},
		{"versions feed page", "/resources/news", apitest.AcceptFirefox, items("news"), history("news"), items("news")},
		{"version page", "/resources/news/versions/2", apitest.AcceptFirefox, items("news"), history("news"), items("news")},
		{"index page", "/resources/news?index=1", apitest.AcceptFirefox, items("news"), history("news"), items("news")},
		// An items feed opened in a browser is itself what to subscribe to.
		{"items feed page", "/resources/news?max=3&title=a", apitest.AcceptFirefox, []string{
			fdBase + "/resources/news?max=3&title=a&type=rss2", fdBase + "/resources/news?max=3&title=a&type=atom",
			fdBase + "/resources/news?max=3&title=a&type=rss1", fdBase + "/resources/news?max=3&title=a&type=json",
		}, history("news"), nil},
		{"all resources page", "/resources", apitest.AcceptFirefox, []string{
			fdBase + "/resources?type=rss2", fdBase + "/resources?type=atom", fdBase + "/resources?type=rss1", fdBase + "/resources?type=json",
		}, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := fdDo(s, http.MethodGet, tt.target, "Accept", tt.accept)
			if rec.Code != http.StatusOK {
				t.Fatalf("GET %s = %d\n%s", tt.target, rec.Code, rec.Body)
			}
			doc := apitest.ParseHTML(t, rec.Body.String())
			if got := hrefs(apitest.FindAll(doc, "a", "class", "feed")); !slices.Equal(got, tt.subscribe) {
				t.Errorf("subscribe links %q, want %q", got, tt.subscribe)
			}
			if got := hrefs(apitest.FindAll(doc, "a", "class", "history")); !slices.Equal(got, tt.history) {
				t.Errorf("history links %q, want %q", got, tt.history)
			}
			if tt.history != nil && !strings.Contains(rec.Body.String(), "History of changes") {
				t.Error("the versions feed is not labelled as the history of changes")
			}
			if tt.alternates != nil {
				if got := hrefs(apitest.FindAll(doc, "link", "rel", "alternate")); !slices.Equal(got, tt.alternates) {
					t.Errorf("<link rel=alternate> %q, want %q", got, tt.alternates)
				}
			}
		})
	}
	// On /, each resource's card and the page's autodiscovery.
	doc := apitest.ParseHTML(t, fdDo(s, http.MethodGet, "/").Body.String())
	for _, id := range []string{"forum", "news"} {
		card := apitest.FindAll(doc, "section", "data-rssid", id)
		if len(card) != 1 {
			t.Fatalf("%d cards of %s on /", len(card), id)
		}
		if got := hrefs(apitest.FindAll(card[0], "a", "class", "feed")); !slices.Equal(got, items(id)) {
			t.Errorf("/ %s: subscribe links %q, want %q", id, got, items(id))
		}
		if got := hrefs(apitest.FindAll(card[0], "a", "class", "history")); !slices.Equal(got, history(id)) {
			t.Errorf("/ %s: history links %q, want %q", id, got, history(id))
		}
	}
	alts := hrefs(apitest.FindAll(doc, "link", "rel", "alternate"))
	for _, id := range []string{"forum", "news"} {
		for _, want := range items(id) {
			if !slices.Contains(alts, want) {
				t.Errorf("/ has no <link rel=alternate> %s", want)
			}
		}
	}
	// OPML points at the items feed too.
	body := fdDo(s, http.MethodGet, "/resources.opml").Body.String()
	if !strings.Contains(body, `xmlUrl="`+fdBase+`/resources/news?max=20"`) {
		t.Errorf("OPML xmlUrl is not the items feed:\n%s", body)
	}
}
