package extractor_test

import (
	"strings"
	"testing"

	"github.com/dynamo-rss/dynamo/extractor"
	"github.com/dynamo-rss/dynamo/schema"
)

// tickerPage is a news ticker as welt.de writes it: the date and the time
// of each item in two spans.
const tickerPage = `<html><head><title>Ticker</title></head><body><ul class="ticker">
<li class="entry"><a href="/a">Budget approved</a><span class="d">03.11.2026</span> <span class="t">18:00</span></li>
<li class="entry"><a href="/b">Tram line 4</a><span class="d">04.11.2026</span> <span class="t">09:30</span></li>
</ul></body></html>`

// TestXPathFunctionArgumentsFromTheItem: every argument of concat,
// normalize-space, substring-after… is evaluated from the item, as XPath
// 1.0 says (antchfx/xpath evaluates a later path from the node a
// predicate of an earlier one moved to: the date lost its time).
func TestXPathFunctionArgumentsFromTheItem(t *testing.T) {
	tests := []struct {
		name, expr string
		want       [2]string
	}{
		{"concat", "concat(.//span[@class='d'], ' ', .//span[@class='t'])", [2]string{"03.11.2026 18:00", "04.11.2026 09:30"}},
		{"concat of strings", "concat(string(.//span[@class='d']), ' ', string(.//span[@class='t']))", [2]string{"03.11.2026 18:00", "04.11.2026 09:30"}},
		{"normalize-space", "normalize-space(concat(' ', span[@class='d'], '   ', span[@class='t'], ' '))", [2]string{"03.11.2026 18:00", "04.11.2026 09:30"}},
		{"substring-after", "substring-after(concat(a[@href], '|', span[@class='t']), '|')", [2]string{"18:00", "09:30"}},
		{"substring-before", "substring-before(concat(span[@class='t'], '|', a[@href]), '|')", [2]string{"18:00", "09:30"}},
		{"substring", "substring(concat(span[@class='d'], ' ', span[@class='t']), 4, 2)", [2]string{"11", "11"}},
		{"translate", "translate(concat(span[@class='d'][1], '-', span[@class='t']), '.:', '/h')", [2]string{"03/11/2026-18h00", "04/11/2026-09h30"}},
		{"nested quotes and brackets", `concat(.//span[@class="d" and contains(., ".")], ", ", .//span[contains(@class, 't')])`, [2]string{"03.11.2026, 18:00", "04.11.2026, 09:30"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sel, err := extractor.CompileSelectors(extractor.SelectSpec{Item: "li.entry", Title: "a", Description: "xpath:" + tt.expr})
			if err != nil {
				t.Fatalf("CompileSelectors: %v", err)
			}
			res, err := sel.Extract(strings.NewReader(tickerPage), extractor.Options{})
			if err != nil {
				t.Fatalf("Extract: %v", err)
			}
			if len(res.Document.Items) != 2 {
				t.Fatalf("%d items, want 2", len(res.Document.Items))
			}
			for i, it := range res.Document.Items {
				if it.Description != tt.want[i] {
					t.Errorf("item %d: %q, want %q", i+1, it.Description, tt.want[i])
				}
			}
		})
	}
}

// TestXPathTickerDates: the ticker's dates read with their times (they
// were all midnight).
func TestXPathTickerDates(t *testing.T) {
	sel, err := extractor.CompileSelectors(extractor.SelectSpec{Item: "li.entry", Title: "a",
		Date: "xpath:concat(.//span[@class='d'], ' ', .//span[@class='t'])"})
	if err != nil {
		t.Fatalf("CompileSelectors: %v", err)
	}
	res, err := sel.Extract(strings.NewReader(tickerPage), extractor.Options{})
	if err != nil {
		t.Fatalf("Extract: %v", err)
	}
	for i, want := range []string{"2026-11-03T18:00:00Z", "2026-11-04T09:30:00Z"} {
		got, ok := schema.ParseDate(dateOf(res.Document.Items[i]))
		if !ok || got.Format("2006-01-02T15:04:05Z07:00") != want {
			t.Errorf("item %d dated %v (%q), want %s", i+1, got, dateOf(res.Document.Items[i]), want)
		}
	}
}

func dateOf(it schema.Item) string {
	v, _ := it.Extensions.Lookup(schema.DCNamespace, "date")
	return v
}

func TestXPathCallErrors(t *testing.T) {
	for _, expr := range []string{"concat(a)", "substring-after(a, 'b', 'c')", "concat(a, , b)", "concat(a, b[)"} {
		_, err := extractor.CompileSelectors(extractor.SelectSpec{Item: "li", Title: "xpath:" + expr})
		if err == nil || !strings.Contains(err.Error(), "select.title") {
			t.Errorf("%s: error %v, want one naming select.title", expr, err)
		}
	}
	// Not a call as a whole: the library evaluates it.
	sel, err := extractor.CompileSelectors(extractor.SelectSpec{Item: "li.entry", Title: "xpath:concat(a, '') = 'Budget approved'"})
	if err != nil {
		t.Fatalf("CompileSelectors: %v", err)
	}
	res, err := sel.Extract(strings.NewReader(tickerPage), extractor.Options{})
	if err != nil {
		t.Fatalf("Extract: %v", err)
	}
	if got := res.Document.Items[0].Title; got != "true" {
		t.Errorf("comparison gave %q, want true", got)
	}
}

// TestXPathCallArguments: a call without arguments takes its context node
// (normalize-space(), string()), nested or not.
func TestXPathCallArguments(t *testing.T) {
	page := `<title>T</title><ul><li>  a   <b>b</b> </li></ul>`
	for _, expr := range []string{"normalize-space()", "normalize-space(string())", "concat(normalize-space(), '')"} {
		sel, err := extractor.CompileSelectors(extractor.SelectSpec{Item: "li", Title: "xpath:" + expr})
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		res, err := sel.Extract(strings.NewReader(page), extractor.Options{URL: "https://example.org/"})
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Document.Items[0].Title; got != "a b" {
			t.Errorf("%s: title %q, want %q", expr, got, "a b")
		}
	}
}
