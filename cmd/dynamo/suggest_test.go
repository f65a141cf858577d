package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/dynamo-rss/dynamo/suggest"
)

const suggestFeedPage = `<html><head><title>Harbour news</title>
<link rel="alternate" type="application/rss+xml" title="Harbour news" href="/news/feed.xml"></head>
<body><nav><a href="/">Home</a> <a href="/about/">About</a></nav><main>
<article><h2><a href="/news/2026/11/ferry-timetable">Winter ferry timetable published</a></h2><time datetime="2026-11-25">25 Nov</time></article>
<article><h2><a href="/news/2026/11/quay-works">Works on the north quay start on Monday</a></h2><time datetime="2026-11-24">24 Nov</time></article>
<article><h2><a href="/news/2026/11/lighthouse">The lighthouse opens for visits at weekends</a></h2><time datetime="2026-11-20">20 Nov</time></article>
<ul><li><a href="mailto:office@harbour.example">Write to the harbour office</a></li></ul>
</main></body></html>`

// TestSuggestCommandFeedsAndJSON: suggest names the page's own feed, and
// --json gives the same proposals as data.
func TestSuggestCommandFeedsAndJSON(t *testing.T) {
	out, stderr, code := runExtractCmd(t, suggestFeedPage, "suggest", "--url", "https://harbour.example/news/", "-")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	if !strings.Contains(out, "# The page has its own feed \"Harbour news\": https://harbour.example/news/feed.xml (application/rss+xml)") ||
		!strings.Contains(out, "\nselect:\n  item: \"article\"\n  title: \"h2 a\"\n") {
		t.Fatalf("suggest prints\n%s", out)
	}
	out, stderr, code = runExtractCmd(t, suggestFeedPage, "suggest", "--json", "--url", "https://harbour.example/news/", "-")
	if code != 0 {
		t.Fatalf("--json: exit %d, stderr %q", code, stderr)
	}
	var got suggest.Suggestions
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("--json prints no JSON: %v\n%s", err, out)
	}
	if len(got.Feeds) != 1 || got.Feeds[0].URL != "https://harbour.example/news/feed.xml" {
		t.Fatalf("feeds %+v", got.Feeds)
	}
	if len(got.Proposals) == 0 || got.Proposals[0].Kind != suggest.KindSelectors || got.Proposals[0].Count != 3 ||
		got.Proposals[0].Items[0].Title != "Winter ferry timetable published" || got.Proposals[0].Items[0].Date != "2026-11-25" {
		t.Fatalf("proposals %+v", got.Proposals)
	}
	// The JSON carries where the list sits and one count, the one the
	// reason states (and the text output too).
	if p := got.Proposals[0]; p.Where != "in the main content" || !strings.Contains(p.Reason, "3 items in the main content") ||
		!strings.Contains(out, `"where": "in the main content"`) || !strings.Contains(out, `"count": 3`) {
		t.Fatalf("where %q, reason %q", p.Where, p.Reason)
	}
	// A page with only its feed: that is an answer, not a failure.
	_, stderr, code = runExtractCmd(t, `<html><head><link rel="alternate" type="application/atom+xml" href="/atom.xml"></head><body><p>Hello</p></body></html>`, "suggest", "-")
	if code != 0 {
		t.Fatalf("a page with its own feed: exit %d, stderr %q", code, stderr)
	}
}
