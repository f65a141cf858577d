package ui

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/dynamo-rss/dynamo/api"
	"github.com/dynamo-rss/dynamo/internal/apitest"
)

// jargon is what a person should not meet on / and /view outside the
// details of the estimate: the poller's own names.
var jargon = []string{"Policy", "policy", "Interval", "Weight", "diagnostics", "τ", "α", "smart", "flat", "Polls / changes / errors", "Last outcome"}

// visibleText is the text of n without the <details> of the estimate and
// without the chart (whose legend names τ for those who read charts).
func visibleText(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && (n.Data == "svg" || n.Data == "details" && strings.Contains(htmlAttr(n, "class"), "estimate") || n.Data == "style" || n.Data == "head") {
			return
		}
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
			b.WriteString(" ")
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return strings.Join(strings.Fields(b.String()), " ")
}

// TestHomeInPlainWords checks that / says how often each page is checked
// in words, counts with plurals and names no policy, interval, τ or α.
func TestHomeInPlainWords(t *testing.T) {
	store, poller := apitest.SvcFixture()
	poller.List[0].Diagnostics = []string{"select.date: matched nothing"}
	poller.List[1].Diagnostics = []string{"select.date: matched nothing", "select.image: matched nothing"}
	poller.List = append(poller.List, api.ResourceStatus{ID: "shared", URL: "https://example.org/shared.html", Policy: "budget", Interval: 3 * time.Hour, Polls: 1, Changes: 1})
	s := newSvcServer(t, api.Options{Store: store, Poller: poller, PublicURL: "https://feeds.example.org/"})
	rec := svcDo(s, http.MethodGet, "/", nil)
	if rec.Code != http.StatusOK {
		t.Fatalf("GET / = %d: %s", rec.Code, rec.Body)
	}
	doc := apitest.ParseHTML(t, rec.Body.String())
	text := map[string]string{}
	for _, sec := range apitest.FindAll(doc, "section", "data-rssid", "") {
		text[htmlAttr(sec, "data-rssid")] = visibleText(sec)
	}
	for id, wants := range map[string][]string{
		"news":   {"How often to check every 15 minutes", "7 versions, latest 3m ago", "9 checks", "7 changed", "0 failed", "1 problem reading the page"},
		"forum":  {"How often to check automatically, as often as the page changes (now every 42 minutes)", "3 checks", "3 failed", "2 problems reading the page", "0 versions"},
		"shared": {"How often to check from the shared daily budget (now every 3 hours)", "1 check,", "1 changed"},
		"old":    {"2 versions, latest 2d ago"},
	} {
		for _, w := range wants {
			if !strings.Contains(text[id], w) {
				t.Errorf("/ %s: %q not in %q", id, w, text[id])
			}
		}
	}
	all := visibleText(doc)
	for _, j := range jargon {
		if strings.Contains(all, j) {
			t.Errorf("/ says %q: %s", j, all)
		}
	}
	if strings.Contains(text["old"], "How often") {
		t.Errorf("old: says how often although not configured: %q", text["old"])
	}
}

// TestViewInPlainWords checks /view: how often in words, τ and α only
// inside a details disclosure, plurals, and one subscribe URL to copy
// (the items feed in RSS 2.0) with the other formats beside it.
func TestViewInPlainWords(t *testing.T) {
	db := apitest.OpenFixtureDB(t)
	p := &histPoller{
		SvcPoller: apitest.SvcPoller{List: []api.ResourceStatus{{ID: "news", URL: "https://example.org/news/index.html", Policy: "smart", Tau: 3 * time.Hour, Interval: time.Hour,
			Alpha: 0.5, LastPoll: fdNow.Add(-10 * time.Minute), NextPoll: fdNow.Add(50 * time.Minute), LastOutcome: "changed", Polls: 1, Changes: 1,
			Diagnostics: []string{"select.date: matched nothing"}}}},
		history: map[string][]api.PollRecord{"news": testHistory(30, fdNow)},
	}
	s := newFDServer(t, db, func(o *api.Options) { o.Poller = p; o.SubscribeMax = 20 })
	rec := fdDo(s, http.MethodGet, "/view/news")
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /view/news = %d\n%s", rec.Code, rec.Body)
	}
	doc := apitest.ParseHTML(t, rec.Body.String())
	main := apitest.FindAll(doc, "main")[0]
	text := visibleText(main)
	for _, w := range []string{"How often to check automatically, as often as the page changes (now every hour)", "1 check,", "1 changed", "1 problem reading the page", "3 versions", "1 item", "2 items"} {
		if !strings.Contains(text, w) {
			t.Errorf("/view: %q not in %q", w, text)
		}
	}
	if strings.Contains(text, " 1 items") {
		t.Errorf("/view says “1 items”: %s", text)
	}
	for _, j := range jargon {
		if strings.Contains(text, j) {
			t.Errorf("/view says %q outside the estimate's details: %s", j, text)
		}
	}
	details := apitest.FindAll(main, "details", "class", "estimate")
	if len(details) != 1 {
		t.Fatalf("%d details of the estimate, want 1", len(details))
	}
	dt := apitest.Text(details[0])
	summary := apitest.FindAll(details[0], "summary")
	if len(summary) != 1 || !strings.HasPrefix(apitest.Text(summary[0]), "How dynamo estimates") {
		t.Errorf("the estimate's details have no summary “How dynamo estimates…”: %q", dt)
	}
	for _, w := range []string{"τ", "3h", "α", "0.5"} {
		if !strings.Contains(dt, w) {
			t.Errorf("the estimate's details lack %q: %q", w, dt)
		}
	}

	// One field with the items feed in RSS 2.0, readonly, absolute.
	inputs := apitest.FindAll(main, "input", "id", "subscribe-url")
	if len(inputs) != 1 {
		t.Fatalf("%d subscribe fields, want 1", len(inputs))
	}
	in := inputs[0]
	if htmlAttr(in, "type") != "url" || !slices.ContainsFunc(in.Attr, func(a html.Attribute) bool { return a.Key == "readonly" }) {
		t.Errorf("subscribe field is not a readonly url input: %v", in.Attr)
	}
	if got, want := htmlAttr(in, "value"), fdBase+"/resources/news?max=20"; got != want {
		t.Errorf("subscribe field %q, want %q", got, want)
	}
	if len(apitest.FindAll(main, "label", "for", "subscribe-url")) != 1 {
		t.Error("the subscribe field has no label")
	}
	// The other formats beside it, smaller; the history labelled.
	var others []string
	for _, a := range apitest.FindAll(main, "a", "class", "feed") {
		others = append(others, htmlAttr(a, "data-format"))
	}
	if want := []string{"atom", "rss1", "json"}; !slices.Equal(others, want) {
		t.Errorf("other formats %q, want %q", others, want)
	}
	if !strings.Contains(text, "History of changes") {
		t.Error("the versions feed is not labelled as the history of changes")
	}
}
