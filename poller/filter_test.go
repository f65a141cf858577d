package poller

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestFilterResource: a resource's filter keeps and drops items after
// extraction and before versioning, for annotations, selectors and
// schema.org alike: the items filtered out are not stored, and a change of
// the filter alone (the page's bytes the same) makes the next poll's
// version reflect it.
func TestFilterResource(t *testing.T) {
	titles := []string{"Gemeinderat tagt", "ANZEIGE: Sofa", "Neues im Anzeigenblatt", "Budget 2027"}
	var notices, ld strings.Builder
	notices.WriteString("<html><head><title>Town hall</title></head><body>")
	ld.WriteString(`<html><head><title>Town hall</title><script type="application/ld+json">{"@context": "https://schema.org", "@type": "ItemList", "itemListElement": [`)
	for i, s := range titles {
		fmt.Fprintf(&notices, `<div class="notice"><h3>%s</h3><a href="/n/%d">more</a></div>`, s, i)
		if i > 0 {
			ld.WriteString(",")
		}
		fmt.Fprintf(&ld, `{"@type": "ListItem", "position": %d, "item": {"@type": "NewsArticle", "headline": %q, "url": "/n/%d"}}`, i+1, s, i)
	}
	notices.WriteString("</body></html>")
	ld.WriteString(`]}</script></head><body></body></html>`)
	fronts := []struct {
		name, page, sel string
	}{
		{"annotations", page("Town hall", titles...), ""},
		{"selectors", notices.String(), `select: {item: "div.notice", title: "h3", link: "a @href"}, `},
		{"schema.org", ld.String(), `select: {from: schema.org}, `},
	}
	for _, fr := range fronts {
		t.Run(fr.name, func(t *testing.T) {
			o := newOrigin(t)
			o.set(fr.page)
			clk := newFakeClock(t0)
			ms := newMemStore()
			def := func(filter string) string {
				return baseYAML(fmt.Sprintf("resources:\n  - {id: town, url: %q, %s%s}\n", o.url("/town.html"), fr.sel, filter))
			}
			e := newTestEngine(t, testConfig(t, def(`filter: {exclude: [Anzeige]}`)), ms, clk)
			latest := func() []string {
				ms.mu.Lock()
				defer ms.mu.Unlock()
				vs := ms.versions["town"]
				var out []string
				for _, it := range vs[len(vs)-1].Items {
					out = append(out, it.Title)
				}
				return out
			}
			steps := []struct {
				filter   string // "": the filter stays
				outcome  string
				versions int
				want     []string
			}{
				{"", OutcomeChanged, 1, []string{"Gemeinderat tagt", "Neues im Anzeigenblatt", "Budget 2027"}},
				{"", OutcomeUnchanged, 1, nil},
				{`filter: {include: [Gemeinderat, "re:(?i)budget"], exclude: [Anzeige]}`, OutcomeChanged, 2, []string{"Gemeinderat tagt", "Budget 2027"}},
				{"-", OutcomeChanged, 3, titles}, // the filter taken off: every item again
			}
			for i, s := range steps {
				switch s.filter {
				case "":
				case "-":
					if err := e.Apply(t.Context(), testConfig(t, def(""))); err != nil {
						t.Fatal(err)
					}
				default:
					if err := e.Apply(t.Context(), testConfig(t, def(s.filter))); err != nil {
						t.Fatal(err)
					}
				}
				st := pollAtNext(t, e, clk, "town")
				if st.LastOutcome != s.outcome {
					t.Fatalf("poll %d: outcome %q (%s), want %q", i+1, st.LastOutcome, st.LastError, s.outcome)
				}
				if v, _ := ms.count("town"); v != s.versions {
					t.Fatalf("poll %d: %d versions, want %d", i+1, v, s.versions)
				}
				if s.want != nil && !slices.Equal(latest(), s.want) {
					t.Fatalf("poll %d: stored items %q, want %q", i+1, latest(), s.want)
				}
			}
		})
	}
}
