package extractor_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dynamo-rss/dynamo/extractor"
	"github.com/dynamo-rss/dynamo/schema"
)

// schemaItems summarizes a document's items as "title | link | date |
// image | description" lines.
func schemaItems(d *schema.Document) string {
	var b strings.Builder
	for _, it := range d.Items {
		date, content := "", ""
		for _, x := range it.Extensions {
			switch x.LocalName {
			case "date":
				date = x.Value
			case "encoded":
				content = x.Value
			}
		}
		img := ""
		if it.Image != nil {
			img = it.Image.URL
		}
		fmt.Fprintf(&b, "%s | %s | %s | %s | %s", it.Title, it.Link, date, img, it.Description)
		if content != "" {
			fmt.Fprintf(&b, " | %s", content)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// TestSchemaOrgFrontEnd: select {from: schema.org} takes the items a page
// publishes as JSON-LD (ItemList with ListItem item or url, @graph, top-
// level arrays, several item types) or microdata, through the same value
// rules as selectors (URLs resolved, entities decoded, descriptions'
// HTML sanitized into content:encoded, images from strings, ImageObjects
// and lists).
func TestSchemaOrgFrontEnd(t *testing.T) {
	tests := []struct {
		page  string
		items string
		warn  string // a diagnostic that must be there
	}{
		{"itemlist-jsonld", `Reading club: "The Sea" | https://library.example/events/reading-club | 2026-12-03T18:00:00+01:00 | https://library.example/img/sea.jpg | We read The Sea together. | We read <b>The Sea</b> together.
Repair café | https://library.example/events/repair-cafe |  |  | 
Film night | https://library.example/events/film-night |  |  | 
`, ""},
		{"graph-jsonld", `Bridge reopens after repairs | https://gazette.example/2026/11/bridge | 2026-11-25T09:30:00Z | https://gazette.example/img/bridge.jpg | 
Notes from the council | https://gazette.example/blog/council | 2026-11-24 |  | What was decided, and what was not.
Night editor | https://gazette.example/jobs/night-editor | 2026-11-20 |  | 
`, "JSON-LD block 3 is not JSON"},
		{"microdata", `Pruning in winter | https://library.example/posts/pruning | 2026-11-20 | https://library.example/img/pruning.jpg | Why now is the time. | <p>Why <em>now</em> is the time.</p>
Cider, step by step | https://library.example/posts/cider | 2026-11-12 | https://library.example/img/cider.jpg | 
`, ""},
		{"microdata-itemlist", `Ridge trail | https://library.example/trails/ridge |  |  | 
Lake loop | https://library.example/trails/lake |  |  | 
Falls path | https://library.example/trails/falls |  |  | 
`, ""},
	}
	sel, err := extractor.CompileSelectors(extractor.SelectSpec{From: "schema.org"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.page, func(t *testing.T) {
			page, err := os.ReadFile(filepath.Join("testdata", "schemaorg", tt.page+".html"))
			if err != nil {
				t.Fatal(err)
			}
			res, err := sel.Extract(bytes.NewReader(page), extractor.Options{URL: "https://library.example/events/", RSSID: "s", Timestamp: goldenTime})
			if err != nil {
				t.Fatalf("extract: %v (%v)", err, res.Diagnostics)
			}
			if got := schemaItems(res.Document); got != tt.items {
				t.Fatalf("items\n%s\nwant\n%s", got, tt.items)
			}
			checkDocument(t, res.Document, false)
			lint := string(lintText("p", res.Diagnostics))
			if tt.warn != "" && !strings.Contains(lint, tt.warn) {
				t.Fatalf("diagnostics %q, want one with %q", lint, tt.warn)
			}
		})
	}
	t.Run("no items", func(t *testing.T) {
		res, err := sel.Extract(strings.NewReader(`<html><title>t</title><script type="application/ld+json">{"@type":"WebSite","name":"x"}</script><p>no items</p>`), extractor.Options{})
		if !errors.Is(err, extractor.ErrNoItems) || res == nil || res.Document != nil {
			t.Fatalf("err %v, want ErrNoItems and no document", err)
		}
		if lint := string(lintText("p", res.Diagnostics)); !strings.Contains(lint, "no schema.org items") {
			t.Fatalf("diagnostics %q", lint)
		}
	})
}

// TestSchemaOrgSpecErrors: from takes only schema.org, and item selectors
// make no sense beside it; channel selectors do.
func TestSchemaOrgSpecErrors(t *testing.T) {
	tests := []struct {
		spec  extractor.SelectSpec
		field string // "" for valid
	}{
		{extractor.SelectSpec{From: "schema.org"}, ""},
		{extractor.SelectSpec{From: "schema.org", Channel: extractor.ChannelSelectSpec{Title: "h1"}}, ""},
		{extractor.SelectSpec{From: "opengraph"}, "from"},
		{extractor.SelectSpec{From: "schema.org", Item: "li"}, "item"},
		{extractor.SelectSpec{From: "schema.org", Title: "h2"}, "title"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%+v", tt.spec), func(t *testing.T) {
			_, err := extractor.CompileSelectors(tt.spec)
			var se *extractor.SelectorError
			switch {
			case tt.field == "" && err != nil:
				t.Fatalf("err %v, want none", err)
			case tt.field != "" && (!errors.As(err, &se) || se.Field != tt.field):
				t.Fatalf("err %v, want a SelectorError on %s", err, tt.field)
			}
		})
	}
}

// FuzzSchemaOrg: whatever a page's JSON-LD and microdata, the schema.org
// front end does not panic, and gives a valid document or ErrNoItems.
func FuzzSchemaOrg(f *testing.F) {
	pages, _ := filepath.Glob(filepath.Join("testdata", "schemaorg", "*.html"))
	for _, p := range pages {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte(`<script type="application/ld+json">[[[{"@type":["ItemList"],"itemListElement":[1,"x",{"@type":"ListItem","item":[]}]}]]]</script>`))
	f.Add([]byte(`<div itemscope itemtype="https://schema.org/ItemList"><div itemprop="itemListElement" itemscope><a itemprop=url href=//x>y</a></div></div>`))
	sel, err := extractor.CompileSelectors(extractor.SelectSpec{From: extractor.SchemaOrg})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, page []byte) {
		checkSelectRun(t, sel, page, "")
	})
}
