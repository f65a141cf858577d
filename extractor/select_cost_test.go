package extractor_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dynamo-rss/dynamo/extractor"
	"github.com/dynamo-rss/dynamo/internal/costtest"
)

// extractWith extracts page with block, the error returned (nil, or one
// wrapping ErrNoItems).
func extractWith(t *testing.T, spec extractor.SelectSpec, page string) (*extractor.Result, error) {
	t.Helper()
	sel, err := extractor.CompileSelectors(spec)
	if err != nil {
		t.Fatalf("%+v: %v", spec, err)
	}
	res, err := sel.Extract(strings.NewReader(page), extractor.Options{URL: "https://example.org/", RSSID: "cost"})
	if err != nil && !errors.Is(err, extractor.ErrNoItems) {
		t.Fatalf("%+v: %v", spec, err)
	}
	return res, err
}

// costWithin fails when extracting page with spec costs more than factor
// times extracting a flat page of the same size with a plain block,
// measured in the same run.
func costWithin(t *testing.T, spec extractor.SelectSpec, page string, factor int) *extractor.Result {
	t.Helper()
	flat := costtest.FlatPage(max(len(page), 2000))
	return costAgainst(t, spec, page, extractor.SelectSpec{Item: "li", Title: "a", Link: "a @href"}, flat, factor)
}

// costAgainst fails when extracting page with spec costs more than factor
// times extracting refPage with ref, measured in the same run.
func costAgainst(t *testing.T, spec extractor.SelectSpec, page string, ref extractor.SelectSpec, refPage string, factor int) *extractor.Result {
	t.Helper()
	refCost := best(5, func() { extractWith(t, ref, refPage) })
	var res *extractor.Result
	d := best(3, func() { res, _ = extractWith(t, spec, page) })
	t.Logf("%d-byte page: %v; reference %+v on a %d-byte page: %v", len(page), d, ref, len(refPage), refCost)
	if d > time.Duration(factor)*refCost {
		t.Fatalf("%+v on a %d-byte page took %v, more than %d× the reference %+v on a %d-byte page (%v)", spec, len(page), d, factor, ref, len(refPage), refCost)
	}
	return res
}

// nestedSpans is <b> around depth nested <span>s.
func nestedSpans(depth int) string {
	return "<html><head><title>T</title></head><body><b>" + strings.Repeat("<span>", depth) + "x" + strings.Repeat("</span>", depth) + "</b></body></html>"
}

// TestSelectorCombinatorsLinear: descendant combinators on deeply nested
// elements cost what a flat page of the same size costs, within a factor,
// as item and as field selectors (cascadia's backtracking took 6.5 s for
// the 60-deep page and 7 compound selectors), and find what they should.
func TestSelectorCombinatorsLinear(t *testing.T) {
	for _, c := range []struct {
		depth, spans int
	}{{60, 6}, {60, 10}, {500, 6}, {500, 30}} {
		t.Run(fmt.Sprintf("depth %d, %d spans", c.depth, c.spans), func(t *testing.T) {
			page := nestedSpans(c.depth)
			chain := "b" + strings.Repeat(" span", c.spans)
			// As items, every span deep enough is one, and each item's text
			// is its whole subtree: the reference is the same page's spans
			// found by one compound (no combinator), which builds as many
			// nested items, not a flat page's.
			res := costAgainst(t, extractor.SelectSpec{Item: chain}, page, extractor.SelectSpec{Item: "span"}, page, 20)
			if got, want := len(res.Document.Items), min(c.depth-c.spans+1, extractor.DefaultMaxItems); got != want {
				t.Fatalf("%d items, want %d", got, want)
			}
			costWithin(t, extractor.SelectSpec{Item: "b", Title: chain[2:] + " @class", Description: chain[2:]}, page, 20)
			// A chain whose first compound matches nothing: cascadia tries
			// every choice of ancestors before failing.
			miss := "i" + chain[1:]
			costWithin(t, extractor.SelectSpec{Item: "b", Title: miss, Description: "span " + miss}, page, 20)
			costWithin(t, extractor.SelectSpec{Item: miss}, page, 20)
		})
	}
}

// TestSelectorPseudoClassesLinear: :has() nested, :not() of a chain and
// :nth-child() on a long list cost what a flat page costs, within a factor.
func TestSelectorPseudoClassesLinear(t *testing.T) {
	deep := nestedSpans(500)
	var list strings.Builder
	list.WriteString("<html><body><ul>")
	for range 20000 {
		list.WriteString("<li>x</li>")
	}
	list.WriteString("</ul></body></html>")
	for _, c := range []struct {
		name string
		spec extractor.SelectSpec
		page string
	}{
		{"has nested", extractor.SelectSpec{Item: "b:has(:has(:has(span))), span:has(:has(:has(:has(b))))"}, deep},
		{"has nested, field", extractor.SelectSpec{Item: "b", Title: "span:has(:has(:has(span))) @id", Description: ":has(span span span span span span span) span"}, deep},
		{"not of a chain", extractor.SelectSpec{Item: "span:not(b span span span span span span span)"}, deep},
		{"has of a chain", extractor.SelectSpec{Item: "b:has(span span span span span span)"}, deep},
		{"nth-child", extractor.SelectSpec{Item: "li:nth-child(2n+1)", Title: "li:nth-child(1)"}, list.String()},
		{"nth-last-of-type", extractor.SelectSpec{Item: "li:nth-last-of-type(3n)"}, list.String()},
	} {
		t.Run(c.name, func(t *testing.T) { costWithin(t, c.spec, c.page, 20) })
	}
}

// TestXPathBudget: nested predicates with descendant axes on a 1 MB page
// are stopped by the budget (an item selector: no document and an error
// naming it; a field: left empty, one error), in a time within a factor of
// a flat page's (the budget is 64 navigator moves per node, each move of
// github.com/antchfx/xpath costing about what parsing a node costs); the
// documented following-sibling::dd[1] form stays within the budget on a
// long list.
func TestXPathBudget(t *testing.T) {
	var page strings.Builder
	page.WriteString("<html><head><title>T</title></head><body>")
	for page.Len() < 1<<20 {
		page.WriteString(strings.Repeat("<div>", 20) + "<b>x</b>" + strings.Repeat("</div>", 20))
	}
	page.WriteString("</body></html>")
	for _, c := range []struct {
		name string
		spec extractor.SelectSpec
	}{
		{"item", extractor.SelectSpec{Item: "xpath://*[count(.//*[count(.//*[.//b]) > 1]) > 1]"}},
		{"field", extractor.SelectSpec{Item: "body", Title: "xpath:string(//*[.//*[.//*[.//b]]][last()])"}},
		{"call", extractor.SelectSpec{Item: "body", Title: "xpath:concat(//*[.//*[.//*[.//b]]][last()], '!')"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := costWithin(t, c.spec, page.String(), 40)
			found := false
			for _, d := range res.Diagnostics {
				found = found || d.Severity == extractor.Error && strings.Contains(d.Message, "costs too much on this page")
			}
			if !found {
				t.Fatalf("no diagnostic says the selector costs too much: %+v", res.Diagnostics)
			}
		})
	}
	var dl strings.Builder
	dl.WriteString("<html><head><title>T</title></head><body><dl class=news>")
	for i := range 3000 {
		fmt.Fprintf(&dl, "<dt><a href=/%d>t%d</a></dt><dd>d%d</dd>", i, i, i)
	}
	dl.WriteString("</dl></body></html>")
	res, err := extractWith(t, extractor.SelectSpec{Item: "dl.news > dt", Title: "a", Description: "xpath:following-sibling::dd[1]"}, dl.String())
	if err != nil || len(res.Document.Items) != 3000 || res.Document.Items[2999].Description != "d2999" {
		t.Fatalf("following-sibling::dd[1]: %v, %+v", err, res.Diagnostics)
	}
}

// BenchmarkExtractSelectChain is BenchmarkExtractSelect with selectors that
// have combinators (a walk of the page per selector, package cssmatch), beside
// its single compounds (cascadia's matcher per node).
func BenchmarkExtractSelectChain(b *testing.B) {
	data := legacyPage(1000)
	sel, err := extractor.CompileSelectors(extractor.SelectSpec{
		Item: "table td.news", Title: "td > b", Link: "td a @href", Description: "td font", Date: "td span.date",
	})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		res, err := sel.Extract(strings.NewReader(string(data)), extractor.Options{URL: page, RSSID: "bench"})
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Document.Items) != 1000 {
			b.Fatalf("%d items", len(res.Document.Items))
		}
	}
}

// best is the least time of n runs of f.
func best(n int, f func()) time.Duration {
	d, _ := costtest.Best(n, f)
	return d
}
