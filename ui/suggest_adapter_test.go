package ui

import (
	"github.com/dynamo-rss/dynamo/api"
	"strconv"
	"strings"
	"testing"
)

// TestPageFeeds: the feeds a page names in its head: feed types only,
// relative hrefs made absolute against the page or its <base>, each once.
func TestPageFeeds(t *testing.T) {
	cases := []struct {
		name, page, url string
		want            []string
	}{
		{"rss, atom and json", `<head><link rel="alternate" type="application/rss+xml" href="/feed.xml">
<link rel="Alternate Feed" type="application/atom+xml; charset=utf-8" href="atom.xml"><link rel="alternate" type="application/feed+json" href="https://cdn.example.net/f.json"></head>`,
			"https://example.org/news/", []string{"https://example.org/feed.xml", "https://example.org/news/atom.xml", "https://cdn.example.net/f.json"}},
		{"base href", `<head><base href="https://static.example.org/x/"><link rel="alternate" type="application/rss+xml" href="rss"></head>`,
			"https://example.org/", []string{"https://static.example.org/x/rss"}},
		{"not feeds", `<head><link rel="alternate" hreflang="de" href="/de/"><link rel="alternate" type="text/html" href="/m/"><link rel="stylesheet" type="application/rss+xml" href="/s"></head>`,
			"https://example.org/", nil},
		{"once each, in the body too, no javascript:", `<head><link rel="alternate" type="application/rss+xml" href="/f"><link rel="alternate" type="application/rss+xml" href="/f">
<link rel="alternate" type="application/rss+xml" href="javascript:alert(1)"></head><body><link rel="alternate" type="application/rss+xml" href="/late"></body>`,
			"https://example.org/", []string{"https://example.org/f", "https://example.org/late"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			offer, err := suggestOffer(api.Page{Body: []byte(tc.page), URL: tc.url})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range offer.Feeds {
				got = append(got, f.URL)
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("feeds %q, want %q", got, tc.want)
			}
		})
	}
}

// TestSuggestOffer: the adapter gives at most maxProposals blocks, each a
// YAML mapping that the configuration reads back.
func TestSuggestOffer(t *testing.T) {
	offer, err := suggestOffer(api.Page{Body: []byte(listPage), URL: "https://example.org/list.html", ContentType: "text/html; charset=utf-8"})
	if err != nil {
		t.Fatal(err)
	}
	if len(offer.Proposals) == 0 || len(offer.Proposals) > maxProposals {
		t.Fatalf("%d proposals", len(offer.Proposals))
	}
	for i, p := range offer.Proposals {
		if _, err := selectBlock(p.Block); err != nil || p.Reason == "" {
			t.Errorf("proposal %d: block %q (%v), reason %q", i+1, p.Block, err, p.Reason)
		}
		// One count everywhere: the reason states the items the block yields.
		if p.Count < 1 || !strings.HasPrefix(strings.TrimPrefix(p.Reason, "best: "), strconv.Itoa(p.Count)+" items") {
			t.Errorf("proposal %d: count %d, reason %q", i+1, p.Count, p.Reason)
		}
		if p.Where != "" && !strings.Contains(p.Reason, p.Where) {
			t.Errorf("proposal %d: where %q, not in the reason %q", i+1, p.Where, p.Reason)
		}
	}
	if !strings.HasPrefix(offer.Proposals[0].Block, "item: article.notice\n") {
		t.Errorf("best block %q, want the notices", offer.Proposals[0].Block)
	}
	if len(offer.Feeds) != 1 || offer.Feeds[0].URL != "https://example.org/feed.xml" || offer.Feeds[0].Title != "Town hall (RSS)" {
		t.Errorf("feeds %+v", offer.Feeds)
	}
}
