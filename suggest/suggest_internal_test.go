package suggest

import (
	"net/url"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/dynamo-rss/dynamo/schema"
)

// TestItem: a proposal's item shows a description of up to 200
// characters whole, a longer one cut to 199 and an ellipsis; its date is
// the first date or pubDate extension. Scores are rounded to hundredths.
func TestItem(t *testing.T) {
	for _, n := range []int{199, 200, 201} {
		d := strings.Repeat("é", n)
		got := proposedItem(schema.Item{Description: d}).Description
		want := d
		if n > 200 {
			want = strings.Repeat("é", 199) + "…"
		}
		if got != want {
			t.Errorf("a description of %d characters shown as %d characters, want %d", n, len([]rune(got)), len([]rune(want)))
		}
	}
	it := schema.Item{Extensions: schema.Extensions{
		{URI: "http://example.org/x", Prefix: "x", LocalName: "other", Value: "no"},
		{URI: schema.DCNamespace, Prefix: "dc", LocalName: "date", Value: "2026-11-27"},
		{URI: "http://example.org/x", Prefix: "x", LocalName: "pubDate", Value: "later"},
	}}
	if got := proposedItem(it).Date; got != "2026-11-27" {
		t.Errorf("date %q, want the first date extension's", got)
	}
	it.Extensions[1].LocalName = "pubDate"
	if got := proposedItem(it).Date; got != "2026-11-27" {
		t.Errorf("date %q, want the first pubDate extension's", got)
	}
	for f, want := range map[float64]float64{0: 0, 1.234: 1.23, 1.236: 1.24, 0.994: 0.99, 0.996: 1, 12: 12} {
		if got := round2(f); got != want {
			t.Errorf("round2(%v) = %v, want %v", f, got, want)
		}
	}
}

// TestPageFeeds: the feeds a page names with rel="alternate", on <link>
// and <a>, resolved against its <base>, each once; not stylesheets, not
// JSON that is not a feed, not empty or non-web links.
func TestPageFeeds(t *testing.T) {
	src := `<html><head><base href="https://cdn.example/feeds/">
<link rel="alternate" type="application/rss+xml" href="rss.xml" title=" News ">
<link rel="Alternate" type="application/atom+xml; charset=utf-8" href="/atom">
<link rel="alternate stylesheet" type="text/css" href="s.css">
<link rel="alternate" type="application/json" href="data.json">
<link rel="alternate" type="application/rss+xml" href="">
<link rel="alternate" type="application/rss+xml" href="javascript:alert(1)">
<link rel="alternate" type="application/rss+xml" href="https://cdn.example/feeds/rss.xml">
<meta rel="alternate" type="application/rss+xml" href="meta.xml">
</head><body><a rel="alternate" type="application/feed+json" href="feed.json">JSON Feed</a></body></html>`
	doc, err := html.Parse(strings.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	page, _ := url.Parse("https://www.example/news/")
	var got []string
	for _, f := range pageFeeds(doc, page) {
		got = append(got, f.URL+" "+f.Type+" "+f.Title)
	}
	want := []string{
		"https://cdn.example/feeds/rss.xml application/rss+xml News",
		"https://cdn.example/atom application/atom+xml ",
		"https://cdn.example/feeds/feed.json application/feed+json ",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("feeds:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Without a <base>, the page's own URL.
	doc, _ = html.Parse(strings.NewReader(`<link rel="alternate" type="application/rss+xml" href="rss.xml">`))
	if fs := pageFeeds(doc, page); len(fs) != 1 || fs[0].URL != "https://www.example/news/rss.xml" {
		t.Errorf("without a base: %+v", fs)
	}
}

// TestDistinctProposals: two proposals are one when they have as many
// items with the same links in the same order.
func TestDistinctProposals(t *testing.T) {
	items := func(links ...string) []Item {
		var out []Item
		for _, l := range links {
			out = append(out, Item{Link: l})
		}
		return out
	}
	kept := []Proposal{{Count: 2, Items: items("a", "b")}}
	for _, tc := range []struct {
		p    Proposal
		want bool
	}{
		{Proposal{Count: 2, Items: items("a", "b")}, false},
		{Proposal{Count: 3, Items: items("a", "b")}, true},
		{Proposal{Count: 2, Items: items("a", "c")}, true},
		{Proposal{Count: 2, Items: items("a")}, true},
		{Proposal{Count: 2, Items: items("a", "b", "c")}, true},
	} {
		if got := distinctFrom(tc.p, kept); got != tc.want {
			t.Errorf("%+v: distinct %v, want %v", tc.p, got, tc.want)
		}
	}
}
