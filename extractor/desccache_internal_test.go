package extractor

import (
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/cespare/xxhash/v2"
	"golang.org/x/net/html"

	"github.com/dynamo-rss/dynamo/schema"
)

// TestDescriptionCacheAccounting: the bytes a cache counts are the bytes
// of what it holds, up to its limit exactly (a cache filled to its limit
// keeps everything), and a description costing more than an eighth of the
// limit is not cached, one costing an eighth is.
func TestDescriptionCacheAccounting(t *testing.T) {
	const entry = 200
	cost := int64(entry + descEntryOverhead)
	c := NewDescriptionCache(10 * cost)
	held := func() (n int, bytes int64) {
		for _, e := range c.items {
			bytes += int64(len(e.Value.(*descEntry).sanitized)) + descEntryOverhead
		}
		return len(c.items), bytes
	}
	for i := range 10 {
		c.put(keyOf("b", strconv.Itoa(i), nil), strings.Repeat("x", entry))
	}
	if n, b := held(); n != 10 || b != c.size || c.size != c.limit {
		t.Errorf("filled to its limit: %d entries, %d bytes held, %d counted, limit %d; want 10 entries, all counted, at the limit", n, b, c.size, c.limit)
	}
	for i := 10; i < 50; i++ {
		c.put(keyOf("b", strconv.Itoa(i), nil), strings.Repeat("x", entry))
	}
	if n, b := held(); n != 10 || b != c.size || c.size > c.limit {
		t.Errorf("past its limit: %d entries, %d bytes held, %d counted, limit %d", n, b, c.size, c.limit)
	}
	if _, ok := c.get(keyOf("b", "49", nil)); !ok {
		t.Error("the newest entry was evicted")
	}
	if _, ok := c.get(keyOf("b", "39", nil)); ok {
		t.Error("an entry older than the last ten is still held")
	}

	big := NewDescriptionCache(8 * cost)
	big.put(keyOf("b", "eighth", nil), strings.Repeat("x", entry))
	big.put(keyOf("b", "more", nil), strings.Repeat("x", entry+1))
	if _, ok := big.get(keyOf("b", "eighth", nil)); !ok {
		t.Error("a description costing an eighth of the limit was not cached")
	}
	if _, ok := big.get(keyOf("b", "more", nil)); ok {
		t.Error("a description costing more than an eighth of the limit was cached")
	}
}

// TestRegionEntryCost: a cached region counts at least the bytes it holds
// (its raw bytes, text, href, HTML and URLs) beside its bookkeeping, so the
// cache's byte bound bounds them.
func TestRegionEntryCost(t *testing.T) {
	e := &regionEntry{raw: strings.Repeat("r", 100), res: &regionResult{
		text: strings.Repeat("t", 50), href: strings.Repeat("h", 30), html: strings.Repeat("m", 70),
		urls: []string{strings.Repeat("u", 20), strings.Repeat("v", 10)},
		a:    annotation{attrs: []attr{{"index", "1"}, {"id", "x"}}},
	}}
	held := int64(100 + 50 + 30 + 70 + 20 + 10)
	if got := e.cost(); got < held+2*descEntryOverhead+2*16+2*64 {
		t.Errorf("cost %d, below the %d bytes held and their bookkeeping", got, held+2*descEntryOverhead+2*16+2*64)
	}
}

// TestRegionCache: a region is found again by its raw bytes (a hash
// collision is not a hit), and one costing more than an eighth of the
// limit is not kept; regionName reads a name that runs to the end.
func TestRegionCache(t *testing.T) {
	raw := []byte(`<!-- <item:title index="1"> -->x<!-- </item:title> -->`)
	res := &regionResult{text: "x"}
	cost := (&regionEntry{raw: string(raw), res: res}).cost()
	c := NewDescriptionCache(8 * cost)
	c.putRegion(raw, 100, res)
	if got, ok := c.getRegion(raw, 100); !ok || got != res {
		t.Errorf("a cached region not found: %v, %v", got, ok)
	}
	// The same key with other bytes: a collision, not a hit.
	e := c.regions[regionKey{xxhash.Sum64(raw), len(raw), 100}]
	e.Value.(*regionEntry).raw = strings.ToUpper(string(raw))
	if _, ok := c.getRegion(raw, 100); ok {
		t.Error("a region with other bytes under the same key was a hit")
	}
	big := []byte(string(raw) + "y") // one byte over an eighth
	c.putRegion(big, 100, res)
	if _, ok := c.getRegion(big, 100); ok {
		t.Error("a region costing more than an eighth of the limit was cached")
	}
	for body, want := range map[string]string{"<item:title": "item:title", " </item:link> ": "item:link", "<x": "x"} {
		if name, _, _ := regionName([]byte(body)); string(name) != want {
			t.Errorf("regionName(%q) = %q, want %q", body, name, want)
		}
	}
}

// TestProposedItem: a proposal's item shows a description of up to 200
// characters whole, a longer one cut to 199 and an ellipsis; its date is
// the first date or pubDate extension. Scores are rounded to hundredths.
func TestProposedItem(t *testing.T) {
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
	items := func(links ...string) []ProposedItem {
		var out []ProposedItem
		for _, l := range links {
			out = append(out, ProposedItem{Link: l})
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
