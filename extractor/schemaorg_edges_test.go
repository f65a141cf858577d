package extractor_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/dynamo-rss/dynamo/extractor"
)

// ld wraps JSON-LD in a page.
func ld(json string) string {
	return `<html><title>t</title><script type="application/ld+json">` + json + `</script>`
}

// TestSchemaOrgChoices: which items the schema.org front end takes when a
// page offers several sets, at the ties and bounds.
func TestSchemaOrgChoices(t *testing.T) {
	sel, err := extractor.CompileSelectors(extractor.SelectSpec{From: "schema.org"})
	if err != nil {
		t.Fatal(err)
	}
	const md = `<div itemscope itemtype="https://schema.org/Article"><h2 itemprop="headline">MD</h2><a itemprop="url" href="/md">m</a></div>`
	for _, tc := range []struct {
		name, page string
		limits     extractor.Limits
		want       string // titles and links, in order
		diag       string
	}{
		{"JSON-LD and microdata tied: JSON-LD", ld(`{"@type":"Article","headline":"LD","url":"https://e.example/ld"}`) + md,
			extractor.Limits{}, "LD https://e.example/ld", ""},
		{"more microdata: microdata", ld(`{"@type":"Article","headline":"LD","url":"https://e.example/ld"}`) + md + strings.ReplaceAll(strings.ReplaceAll(md, "MD", "MD2"), "/md", "/md2"),
			extractor.Limits{}, "MD https://e.example/md; MD2 https://e.example/md2", ""},
		{"an ItemList tied with things: the list", ld(`{"@graph":[
			{"@type":"ItemList","itemListElement":[{"@type":"ListItem","name":"L1","url":"https://e.example/l1"},{"@type":"ListItem","name":"L2","url":"https://e.example/l2"}]},
			{"@type":"Article","headline":"T1","url":"https://e.example/t1"},{"@type":"Article","headline":"T2","url":"https://e.example/t2"}]}`),
			extractor.Limits{}, "L1 https://e.example/l1; L2 https://e.example/l2", ""},
		{"microdata ItemList tied with things: the list", `<html><title>t</title>
			<ol itemscope itemtype="https://schema.org/ItemList">
			<li itemprop="itemListElement" itemscope itemtype="https://schema.org/ListItem"><a itemprop="url" href="/l1"><span itemprop="name">L1</span></a></li></ol>` + md,
			extractor.Limits{}, "L1 https://e.example/l1", ""},
		// URLs alone are list elements (counted against the things, then
		// dropped for want of a title); a blank one is none.
		{"list elements as URLs", ld(`{"@graph":[{"@type":"ItemList","itemListElement":["https://e.example/a","https://e.example/b","  ",{"@type":"ListItem","name":"B","url":"https://e.example/c"}]},
			{"@type":"Article","headline":"T1","url":"https://e.example/t1"},{"@type":"Article","headline":"T2","url":"https://e.example/t2"},{"@type":"Article","headline":"T3","url":"https://e.example/t3"}]}`),
			extractor.Limits{}, "B https://e.example/c", ""},
		{"a blank list element is none", ld(`{"@graph":[{"@type":"ItemList","itemListElement":[" ","",{"@type":"ListItem","name":"B","url":"https://e.example/c"}]},
			{"@type":"Article","headline":"T1","url":"https://e.example/t1"},{"@type":"Article","headline":"T2","url":"https://e.example/t2"}]}`),
			extractor.Limits{}, "T1 https://e.example/t1; T2 https://e.example/t2", ""},
		{"the same link twice: once; no link: each kept", ld(`[{"@type":"Article","headline":"A","url":"https://e.example/a"},{"@type":"Article","headline":"A again","url":"https://e.example/a"},
			{"@type":"Article","headline":"N1"},{"@type":"Article","headline":"N2"}]`),
			extractor.Limits{}, "A https://e.example/a; N1 https://e.example/p; N2 https://e.example/p", ""},
		{"exactly MaxItems", ld(`[{"@type":"Article","headline":"A","url":"https://e.example/a"},{"@type":"Article","headline":"B","url":"https://e.example/b"}]`),
			extractor.Limits{MaxItems: 2}, "A https://e.example/a; B https://e.example/b", ""},
		{"one past MaxItems", ld(`[{"@type":"Article","headline":"A","url":"https://e.example/a"},{"@type":"Article","headline":"B","url":"https://e.example/b"},{"@type":"Article","headline":"C","url":"https://e.example/c"}]`),
			extractor.Limits{MaxItems: 2}, "A https://e.example/a; B https://e.example/b", "the page has 3 schema.org items, more than 2"},
		{"a microdata image given as an ImageObject", `<html><title>t</title><div itemscope itemtype="https://schema.org/Article"><h2 itemprop="headline">I</h2>
			<div itemprop="image" itemscope itemtype="https://schema.org/ImageObject"><meta itemprop="url" content="/i.png"></div></div>`,
			extractor.Limits{}, "I https://e.example/p image https://e.example/i.png", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := sel.Extract(strings.NewReader(tc.page), extractor.Options{URL: "https://e.example/p", Limits: tc.limits})
			if err != nil {
				t.Fatalf("%v %q", err, lintText("p", res.Diagnostics))
			}
			var got []string
			for _, it := range res.Document.Items {
				s := it.Title + " " + it.Link
				if it.Image != nil {
					s += " image " + it.Image.URL
				}
				got = append(got, s)
			}
			if strings.Join(got, "; ") != tc.want {
				t.Errorf("items %q, want %q", strings.Join(got, "; "), tc.want)
			}
			lint := string(lintText("p", res.Diagnostics))
			if tc.diag != "" && !strings.Contains(lint, tc.diag) || tc.diag == "" && strings.Contains(lint, "more than") {
				t.Errorf("diagnostics %q, want %q", lint, tc.diag)
			}
		})
	}
}

// TestSchemaOrgNoDocument: the reason there is no document is reported
// even when the diagnostics are full, and the error names the front end.
func TestSchemaOrgNoDocument(t *testing.T) {
	sel, err := extractor.CompileSelectors(extractor.SelectSpec{From: "schema.org"})
	if err != nil {
		t.Fatal(err)
	}
	opts := extractor.Options{URL: "https://e.example/p", ContentType: "text/html; charset", Limits: extractor.Limits{MaxDiagnostics: 1}}
	res, err := sel.Extract(strings.NewReader(ld(`{"@type":"WebSite","name":"x"}`)), opts)
	if !errors.Is(err, extractor.ErrNoItems) || !strings.Contains(string(lintText("p", res.Diagnostics)), "the page has no schema.org items") {
		t.Errorf("no items, diagnostics full: %v, %q", err, lintText("p", res.Diagnostics))
	}
	// Items with neither title nor description are dropped.
	res, err = sel.Extract(strings.NewReader(ld(`{"@type":"ItemList","itemListElement":["https://e.example/a"]}`)), extractor.Options{URL: "https://e.example/p"})
	if !errors.Is(err, extractor.ErrNoItems) || !strings.Contains(err.Error(), "every item of from: schema.org was dropped") {
		t.Errorf("every item dropped: %v", err)
	}
}
