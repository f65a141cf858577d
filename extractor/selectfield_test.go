package extractor_test

import (
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/goccy/go-yaml"

	"github.com/dynamo-rss/dynamo/config"
	"github.com/dynamo-rss/dynamo/extractor"
	"github.com/dynamo-rss/dynamo/schema"
)

// mappingPage has values a page does not give cleanly: dates inside text,
// titles in one of two places, descriptions in two paragraphs, dates in
// a layout of their own.
const mappingPage = `<html><head><title>Press</title></head>
<body>
<div class="post">
  <h2>Budget approved</h2>
  <span class="meta">Posted 2026-11-26 by the press office</span>
  <p class="lead">The council</p> <p class="more">voted yes.</p>
  <table><tr><td>a</td><td>b</td><td>03/11/26</td></tr></table>
</div>
<div class="post">
  <h2> </h2><a class="headline" href="/tram">Tram line 4</a>
  <span class="meta">Updated by the press office</span>
  <p class="lead">Works start</p>
  <table><tr><td>a</td><td>b</td><td>04/11/26</td></tr></table>
</div>
</body></html>`

func TestFieldMappings(t *testing.T) {
	sel, err := config.ParseSelect([]byte(`
item: div.post
title: {select: ["h2", "a.headline"]}
description: {select: ["p.lead", "p.more"], join: " "}
date: {select: "span.meta", pattern: 'Posted (\d{4}-\d{2}-\d{2})'}
id: {select: "td:nth-child(3)", format: "02/01/06"}
`))
	if err == nil || !strings.Contains(err.Error(), "select.id.format") {
		t.Fatalf("a format on id: err %v, want one naming select.id.format", err)
	}
	sel, err = config.ParseSelect([]byte(`
item: div.post
title: {select: ["h2", "a.headline"]}
description: {select: ["p.lead", "p.more"], join: " "}
date: {select: "span.meta", pattern: 'Posted (\d{4}-\d{2}-\d{2})'}
`))
	if err != nil {
		t.Fatalf("ParseSelect: %v", err)
	}
	res, err := sel.Extract(strings.NewReader(mappingPage), extractor.Options{URL: "https://example.org/press/"})
	if err != nil {
		t.Fatalf("Extract: %v", err)
	}
	items := res.Document.Items
	if len(items) != 2 {
		t.Fatalf("%d items, want 2", len(items))
	}
	if items[0].Title != "Budget approved" || items[1].Title != "Tram line 4" {
		t.Errorf("titles %q, %q: want the h2, else the headline", items[0].Title, items[1].Title)
	}
	if items[0].Description != "The council voted yes." || items[1].Description != "Works start" {
		t.Errorf("descriptions %q, %q: want both paragraphs joined", items[0].Description, items[1].Description)
	}
	if got := dateOf(items[0]); got != "2026-11-26" {
		t.Errorf("date %q, want the pattern's group", got)
	}
	if got := dateOf(items[1]); got != "" {
		t.Errorf("date %q where the pattern does not match, want none", got)
	}
	var diag string
	for _, d := range res.Diagnostics {
		if strings.Contains(d.Message, "pattern") {
			diag = d.String()
		}
	}
	if want := `11:3: warning: select.date.pattern "Posted (\\d{4}-\\d{2}-\\d{2})" matched nothing in "Updated by the press office": the field is empty`; diag != want {
		t.Errorf("diagnostic %q, want %q", diag, want)
	}
}

func TestFieldFormat(t *testing.T) {
	rome, err := time.LoadLocation("Europe/Rome")
	if err != nil {
		t.Skipf("no zone data: %v", err)
	}
	sel, err := config.ParseSelect([]byte(`{"item": "div.post", "title": "p.lead", "date": {"select": "td:nth-child(3)", "format": "02/01/06"}}`))
	if err != nil {
		t.Fatalf("ParseSelect: %v", err)
	}
	res, err := sel.Extract(strings.NewReader(mappingPage), extractor.Options{Dates: schema.DateRules{Location: rome}, ExplainDates: true})
	if err != nil {
		t.Fatalf("Extract: %v", err)
	}
	for i, want := range []string{"2026-11-03T00:00:00+01:00", "2026-11-04T00:00:00+01:00"} {
		if got := dateOf(res.Document.Items[i]); got != want {
			t.Errorf("item %d date %q, want %q (day-first by the field's format, in the resource's zone)", i+1, got, want)
		}
	}
	if len(res.Dates) != 2 {
		t.Fatalf("%d date readings, want 2", len(res.Dates))
	}
	if got, want := res.Dates[0].String(), `7:34: info: date "03/11/26" reads as 2026-11-03T00:00:00+01:00 (format "02/01/06", Europe/Rome)`; got != want {
		t.Errorf("reading %q, want %q", got, want)
	}
}

// TestSelectorDiagnosticPositions: a selector's diagnostics are at the
// element concerned in the page, not at 1:1.
func TestSelectorDiagnosticPositions(t *testing.T) {
	sel, err := extractor.CompileSelectors(extractor.SelectSpec{Item: "div.post", Title: "h2", Image: "img @src", Date: "span.meta"})
	if err != nil {
		t.Fatal(err)
	}
	// A page that can be read again is, for the positions; another is kept as it is read.
	for _, r := range []io.Reader{strings.NewReader(mappingPage), struct{ io.Reader }{strings.NewReader(mappingPage)}} {
		res, err := sel.Extract(r, extractor.Options{})
		if err != nil {
			t.Fatalf("Extract: %v", err)
		}
		checkDiagnostics(t, res.Diagnostics, []string{
			`3:1: warning: select.image "img @src" matched nothing in 2 of 2 items (item 1, 2)`,
			`5:3: warning: unreadable date "Posted 2026-11-26 by the press office" in dc:date: kept as text, not a publication time`,
			`9:1: error: item 2 has neither title nor description: dropped`,
		})
	}
}

func checkDiagnostics(t *testing.T, diags []extractor.Diagnostic, want []string) {
	t.Helper()
	var got []string
	for _, d := range diags {
		got = append(got, d.String())
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("diagnostics:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestFieldMappingErrors(t *testing.T) {
	tests := []struct{ block, field string }{
		{`{item: li, date: {select: "span", pattern: "Posted (\\d+"}}`, "select.date.pattern"},
		{`{item: li, date: {select: "span", format: "dd/mm/yyyy"}}`, "select.date.format"},
		{`{item: li, title: {select: ["h2", "h3 >"]}}`, "select.title.select[1]"},
		{`{item: li, title: {select: []}}`, "select.title.select"},
		{`{item: li, title: {selec: "h2"}}`, "selec"},
		{`{item: li, title: {select: "h3 >"}}`, "select.title.select: "}, // one selector: not select[0]
		{`{item: li, title: {select: [` + strings.Repeat(`"h2", `, 16) + `"h3"]}}`, "select.title.select: 17 selectors, at most 16"},
	}
	for _, tt := range tests {
		_, err := config.ParseSelect([]byte(tt.block))
		if err == nil || !strings.Contains(err.Error(), tt.field) {
			t.Errorf("%s: error %v, want one naming %s", tt.block, err, tt.field)
		}
	}
	// 16 selectors, the most a field takes, are fine.
	if _, err := config.ParseSelect([]byte(`{item: li, title: {select: [` + strings.Repeat(`"h2", `, 15) + `"h3"]}}`)); err != nil {
		t.Errorf("16 selectors: %v", err)
	}
	// In a configuration file, the field is named with its resource.
	_, err := config.Parse([]byte("resources:\n  - id: a\n    url: https://example.org/\n  - id: b\n    url: https://example.org/b\n" +
		"    select: {item: li, date: {select: span, pattern: \"(\"}}\n"))
	if err == nil || !strings.Contains(err.Error(), "resources[1].select.date.pattern") {
		t.Errorf("config error %v, want one naming resources[1].select.date.pattern", err)
	}
}

// TestFieldMappingsRoundTrip: a block with mappings is written (JSON, as a
// registration is stored) and read back alike.
func TestFieldMappingsRoundTrip(t *testing.T) {
	// A body that starts as JSON is read as JSON, as an admin PUT is.
	r, err := config.DecodeResource([]byte(`{"url": "https://example.org/", "select": {"item": "li", "title": {"select": ["h2", "a"], "join": " - "}, "date": {"select": "span", "pattern": "x(\\d+)", "format": "02/01/06"}, "channel": {"title": {"select": "h1"}}}}`))
	if err != nil {
		t.Fatalf("DecodeResource: %v", err)
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	back, err := config.DecodeStoredResource(b)
	if err != nil {
		t.Fatalf("DecodeStoredResource: %v\n%s", err, b)
	}
	if !back.Select.Equal(r.Select) || back.Select.Mapped["title"].Join == nil || *back.Select.Mapped["title"].Join != " - " ||
		back.Select.Mapped["channel.title"].Select[0] != "h1" {
		t.Fatalf("round trip:\n%+v\n%+v\n%s", r.Select, back.Select, b)
	}
	var viaJSON config.ResourceEntry
	if err := json.Unmarshal(b, &viaJSON); err != nil || !viaJSON.Select.Equal(r.Select) {
		t.Fatalf("encoding/json: %v %+v", err, viaJSON.Select)
	}
	if !strings.Contains(string(b), `"title":{"select":["h2","a"],"join":" - "}`) {
		t.Errorf("JSON %s", b)
	}
}

// TestSelectSpecWireFields: a select block is read and written through
// the wire form of selectfield.go, which names every field; a field added
// to SelectSpec must be added there too, or configurations would lose it
// without a word.
func TestSelectSpecWireFields(t *testing.T) {
	known := map[string]bool{"From": true, "Item": true, "Title": true, "Link": true, "Description": true, "Date": true,
		"Image": true, "ID": true, "Channel": true, "Mapped": true}
	typ := reflect.TypeFor[extractor.SelectSpec]()
	for i := range typ.NumField() {
		if f := typ.Field(i); !known[f.Name] {
			t.Errorf("SelectSpec.%s is not read from YAML and JSON: add it to selectWire (extractor/selectfield.go) and to this test", f.Name)
		}
	}
	spec := extractor.SelectSpec{Item: "li", Title: "a", Link: "b", Description: "c", Date: "d", Image: "e", ID: "f",
		Channel: extractor.ChannelSelectSpec{Title: "g", Link: "h", Description: "i", Image: "j"}}
	b, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	var back extractor.SelectSpec
	if err := json.Unmarshal(b, &back); err != nil || !back.Equal(spec) {
		t.Fatalf("round trip %+v %v\n%s", back, err, b)
	}
	// from: schema.org, through YAML as the configuration reads it and JSON.
	from := extractor.SelectSpec{From: extractor.SchemaOrg, Channel: extractor.ChannelSelectSpec{Title: "h1"}}
	y, err := yaml.Marshal(from)
	if err != nil {
		t.Fatal(err)
	}
	var fromYAML extractor.SelectSpec
	if err := yaml.Unmarshal(y, &fromYAML); err != nil || !fromYAML.Equal(from) || strings.Contains(string(y), "item") {
		t.Fatalf("YAML round trip of from: %+v %v\n%s", fromYAML, err, y)
	}
	if fromYAML.Equal(extractor.SelectSpec{Channel: from.Channel}) {
		t.Error("Equal ignores From")
	}
}

// TestDateFormatYearRange: a date read by a field's format is stored as
// RFC 3339 for every year RFC 3339 writes, 0001 to 9999 included; a year 0
// is kept as the page wrote it, with a warning.
func TestDateFormatYearRange(t *testing.T) {
	sel, err := config.ParseSelect([]byte(`{item: li, title: b, date: {select: span, format: "2006-01-02"}}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ page, want string }{
		{"0001-01-01", "0001-01-01T00:00:00Z"},
		{"9999-12-31", "9999-12-31T00:00:00Z"},
		{"2026-11-27", "2026-11-27T00:00:00Z"},
		{"0000-01-01", "0000-01-01"},
	} {
		src := "<ul><li><b>T</b><span>" + tc.page + "</span></li></ul>"
		res, err := sel.Extract(strings.NewReader(src), extractor.Options{URL: "https://example.org/"})
		if err != nil {
			t.Fatalf("%s: %v", tc.page, err)
		}
		if got := dateOf(res.Document.Items[0]); got != tc.want {
			t.Errorf("date %s read by its format: %q, want %q", tc.page, got, tc.want)
		}
	}
}

// TestJoinedFieldPosition: a diagnostic about a joined value points at the
// element of its first part.
func TestJoinedFieldPosition(t *testing.T) {
	sel, err := config.ParseSelect([]byte(`{item: li, title: {select: ["h2", "p"], join: " "}}`))
	if err != nil {
		t.Fatal(err)
	}
	page := "<title>T</title><ul>\n<li>\n  <h2>A long enough title</h2>\n  <p>and more words</p>\n</li>\n</ul>"
	res, err := sel.Extract(strings.NewReader(page), extractor.Options{URL: "https://example.org/", Limits: extractor.Limits{MaxValueBytes: 10}})
	if err != nil {
		t.Fatal(err)
	}
	got := diagStrings(res.Diagnostics)
	if len(got) == 0 || !strings.HasPrefix(got[0], "3:3: error: a selected value is longer than 10 bytes") {
		t.Errorf("diagnostics %q, want the cut at the h2's 3:3", got)
	}
}

// TestSelectLinkElement: a link selector that selects an element takes the
// href of the first <a> in it (itself included), else its text.
func TestSelectLinkElement(t *testing.T) {
	page := `<title>T</title><ul>
<li><b>One</b><span>see <a name=x>no href</a> <a href="/p">here</a> <a href="/q">there</a></span></li>
<li><b>Two</b><span>/r</span></li>
<li><b>Three</b><a class=s href="/s">s</a></li>
</ul>`
	for _, tc := range []struct{ link, want string }{
		{"span", "https://example.org/p,https://example.org/r,"},
		{"span, a.s", "https://example.org/p,https://example.org/r,https://example.org/s"},
	} {
		sel, err := extractor.CompileSelectors(extractor.SelectSpec{Item: "li", Title: "b", Link: tc.link})
		if err != nil {
			t.Fatal(err)
		}
		res, err := sel.Extract(strings.NewReader(page), extractor.Options{URL: "https://example.org/"})
		if err != nil {
			t.Fatal(err)
		}
		var links []string
		for _, it := range res.Document.Items {
			if it.Link == "https://example.org/" { // the page's URL: no link of its own
				it.Link = ""
			}
			links = append(links, it.Link)
		}
		if got := strings.Join(links, ","); got != tc.want {
			t.Errorf("link %q: %s, want %s", tc.link, got, tc.want)
		}
	}
}

// TestXPathNumberText: a number an xpath selector gives is written as
// XPath's string() writes it: integers without a fraction or an exponent.
func TestXPathNumberText(t *testing.T) {
	page := `<title>T</title><ul><li><b>x</b><i>1234567</i></li><li><b>y</b><i>2.5</i></li></ul>`
	res := selectPage(t, extractor.SelectSpec{Item: "li", Title: "b", Description: "xpath:number(i) * 2"}, page)
	if got := res.Document.Items[0].Description + " " + res.Document.Items[1].Description; got != "2469134 5" {
		t.Errorf("descriptions %q, want %q", got, "2469134 5")
	}
}

// TestXPathItemContext: an item's xpath selectors are evaluated with the
// item in its page, so axes that leave the item, and absolute paths, reach
// the page around it.
func TestXPathItemContext(t *testing.T) {
	page := `<title>T</title><div><h2>First</h2><p class=i>one</p><h2>Second</h2><p class=i>two</p></div>`
	res := selectPage(t, extractor.SelectSpec{Item: "p.i", Title: "xpath:preceding-sibling::h2[1]", Description: "xpath:concat(., ' in ', //title)"}, page)
	var got []string
	for _, it := range res.Document.Items {
		got = append(got, it.Title+"/"+it.Description)
	}
	if strings.Join(got, ",") != "First/one in T,Second/two in T" {
		t.Errorf("items %q, want First/one in T, Second/two in T", got)
	}
}

// TestSelectTextBlocks: an element's text has white space where block
// elements (a line break among them) begin and end, as a reader sees it.
func TestSelectTextBlocks(t *testing.T) {
	page := `<title>T</title><div class=i><div class=t><p>one</p><p>two</p>three<br><b>four</b></div></div>`
	res := selectPage(t, extractor.SelectSpec{Item: "div.i", Title: "div.t"}, page)
	if got := res.Document.Items[0].Title; got != "one two three four" {
		t.Errorf("title %q, want %q", got, "one two three four")
	}
}

// TestSelectDescriptionOnlyMarkup: a selected description with no text but
// markup (an image) is kept as the item's HTML; an empty one gives none.
func TestSelectDescriptionOnlyMarkup(t *testing.T) {
	page := `<title>T</title><ul><li><b>One</b><div class=d><img src="/a.png" alt=""></div></li><li><b>Two</b><div class=d> </div></li></ul>`
	res := selectPage(t, extractor.SelectSpec{Item: "li", Title: "b", Description: "div.d"}, page)
	items := res.Document.Items
	if html, _ := items[0].Extensions.Lookup(schema.ContentNamespace, "encoded"); html != `<img src="https://example.org/a.png" alt="">` {
		t.Errorf("an image alone: HTML %q, want the image", html)
	}
	if html, ok := items[1].Extensions.Lookup(schema.ContentNamespace, "encoded"); ok {
		t.Errorf("an empty description: HTML %q, want none", html)
	}
}

// TestDescriptionURLsResolved: every URL in a description's HTML, the
// first included, is made absolute, whether the description is sanitized
// alone or batched with others.
func TestDescriptionURLsResolved(t *testing.T) {
	sel, err := extractor.CompileSelectors(extractor.SelectSpec{Item: "li", Title: "b", Description: "div.d"})
	if err != nil {
		t.Fatal(err)
	}
	item := `<li><b>%d</b><div class=d>see <a href="/x%d">x</a> and <img src="y%d.png" alt=""></div></li>`
	for _, n := range []int{1, 3} { // one description alone; three batched
		var b strings.Builder
		b.WriteString("<title>T</title><ul>")
		for i := range n {
			fmt.Fprintf(&b, item, i, i, i)
		}
		b.WriteString("</ul>")
		res, err := sel.Extract(strings.NewReader(b.String()), extractor.Options{URL: "https://example.org/dir/"})
		if err != nil {
			t.Fatal(err)
		}
		for i, it := range res.Document.Items {
			got, _ := it.Extensions.Lookup(schema.ContentNamespace, "encoded")
			want := fmt.Sprintf(`see <a href="https://example.org/x%d" rel="nofollow">x</a> and <img src="https://example.org/dir/y%d.png" alt="">`, i, i)
			if got != want {
				t.Errorf("%d items, item %d: %q, want %q", n, i, got, want)
			}
		}
	}
}

// TestSelectPositions: a selector's diagnostic points at its element's own
// start tag when the element has attributes, and a page ending in elements
// the parser made up (a table's implied rows) still gets positions.
func TestSelectPositions(t *testing.T) {
	for _, tc := range []struct {
		name, page string
		spec       extractor.SelectSpec
		want       string
	}{
		{"attributes", "<title>T</title>\n<ul>\n<li class=\"a\" id=\"one\">\n  <div class=\"d\" data-x=\"1\">A description far too long</div></li></ul>",
			extractor.SelectSpec{Item: "li", Title: "div.d"}, "4:3: error: a selected value is longer than 10 bytes"},
		{"implied rows at the end", "<title>T</title>\n<table>\n<td class=c><i>x</i>",
			extractor.SelectSpec{Item: "td", Title: "b", Description: "i"}, `3:1: warning: select.title "b" matched nothing in 1 of 1 items`},
		// Start tags the parser drops (a <body> inside the body) between an
		// element and its own: found across 7 of them, the alignment window
		// less one; past it, the element is not matched to a tag, and its
		// diagnostic has the item's position.
		{"7 dropped tags before an element", "<title>T</title>\n<ul>\n<li>" + strings.Repeat("<body>", 7) + "\n<div class=\"d\">A description far too long</div></li></ul>",
			extractor.SelectSpec{Item: "li", Title: "div.d"}, "4:1: error: a selected value is longer than 10 bytes"},
		{"8 dropped tags before an element", "<title>T</title>\n<ul>\n<li>" + strings.Repeat("<body>", 8) + "\n<div class=\"d\">A description far too long</div></li></ul>",
			extractor.SelectSpec{Item: "li", Title: "div.d"}, "3:1: error: a selected value is longer than 10 bytes"}, // the item's
	} {
		sel, err := extractor.CompileSelectors(tc.spec)
		if err != nil {
			t.Fatal(err)
		}
		res, _ := sel.Extract(strings.NewReader(tc.page), extractor.Options{URL: "https://example.org/", Limits: extractor.Limits{MaxValueBytes: 10}})
		if got := diagStrings(res.Diagnostics); len(got) == 0 || !strings.HasPrefix(got[0], tc.want) {
			t.Errorf("%s: diagnostics %q, want %q first", tc.name, got, tc.want)
		}
	}
}

// selectPage extracts page with the selectors of spec, at
// https://example.org/, and fails the test on any error.
func selectPage(t *testing.T, spec extractor.SelectSpec, page string) *extractor.Result {
	t.Helper()
	sel, err := extractor.CompileSelectors(spec)
	if err != nil {
		t.Fatal(err)
	}
	res, err := sel.Extract(strings.NewReader(page), extractor.Options{URL: "https://example.org/"})
	if err != nil {
		t.Fatal(err)
	}
	return res
}
