package poller

import (
	"fmt"
	"strings"
	"testing"
)

// TestSelectResource: a resource with select is extracted with its
// selectors (the page has no annotations); an item selector that matches
// nothing is a poll error that says so, and stores nothing.
func TestSelectResource(t *testing.T) {
	o := newOrigin(t)
	clk := newFakeClock(t0)
	ms := newMemStore()
	cfg := testConfig(t, baseYAML(fmt.Sprintf(
		"resources:\n  - {id: town, url: %q, select: {item: \"div.notice\", title: \"h3\", link: \"a @href\"}}\n", o.url("/town.html"))))
	e := newTestEngine(t, cfg, ms, clk)
	notices := func(titles ...string) string {
		var b strings.Builder
		b.WriteString("<html><head><title>Town hall</title></head><body>")
		for i, s := range titles {
			fmt.Fprintf(&b, `<div class="notice"><h3>%s</h3><a href="/n/%d">more</a></div>`, s, i)
		}
		return b.String() + "</body></html>"
	}
	steps := []struct {
		body, outcome, errText string
		want                   int
	}{
		{notices("Budget", "Library"), OutcomeChanged, "", 1},
		{notices("Budget", "Library"), OutcomeUnchanged, "", 1},
		{notices("Roads", "Budget", "Library"), OutcomeChanged, "", 2},
		{"<html><body><p>redesigned</p></body></html>", OutcomeError, `item selector matched nothing: "div.notice"`, 2},
	}
	for i, s := range steps {
		o.set(s.body)
		st := pollAtNext(t, e, clk, "town")
		if st.LastOutcome != s.outcome || !strings.Contains(st.LastError, s.errText) {
			t.Fatalf("poll %d: outcome %q (%s), want %q (%s)", i+1, st.LastOutcome, st.LastError, s.outcome, s.errText)
		}
		if v, _ := ms.count("town"); v != s.want {
			t.Fatalf("poll %d: %d versions, want %d", i+1, v, s.want)
		}
	}
	ms.mu.Lock()
	vs := ms.versions["town"]
	doc := vs[len(vs)-1]
	ms.mu.Unlock()
	if doc == nil || len(doc.Items) != 3 || doc.Items[0].Title != "Roads" || doc.Channel.Title != "Town hall" {
		t.Fatalf("latest document %+v", doc)
	}
}
