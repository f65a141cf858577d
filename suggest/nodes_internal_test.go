package suggest

import (
	"net/url"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/dynamo-rss/dynamo/extractor"
)

// parseFragment parses body as a page's body and returns its first
// element.
func parseFragment(t *testing.T, body string) *html.Node {
	t.Helper()
	doc, err := html.Parse(strings.NewReader("<html><body>" + body + "</body></html>"))
	if err != nil {
		t.Fatal(err)
	}
	var first *html.Node
	walkElements(doc, func(e *html.Node) {
		if first == nil && e.Data != "html" && e.Data != "head" && e.Data != "body" {
			first = e
		}
	})
	if first == nil {
		t.Fatalf("no element in %q", body)
	}
	return first
}

func testSuggester(t *testing.T) *suggester {
	t.Helper()
	page, err := url.Parse("https://news.example/list/")
	if err != nil {
		t.Fatal(err)
	}
	return newSuggester(nil, page, extractor.Options{})
}

// TestLinkKind: which links read as an article's, a site section's or
// another site's, at each bound of the path rules.
func TestLinkKind(t *testing.T) {
	sg := testSuggester(t)
	for _, tc := range []struct {
		href string
		want linkKind
	}{
		{"https://other.example/2024/budget-approved", linkForeign},
		{"https://NEWS.example/a-long-article-title-here", linkArticle}, // the host in any case
		{"https://news.example:8443/x", linkForeign},                    // another port is another site
		{"https://video.news.example/the-clip-of-the-day", linkArticle}, // a subdomain of the site
		{"https://news.other.example/the-clip-of-the-day", linkForeign},
		{"/search?q=budget", linkArticle}, // a query
		{"/n/7", linkArticle},             // a digit
		{"/", linkSection},
		{"", linkSection},
		{"%zz", linkSection}, // unparseable
		{"/sport/", linkSection},
		{"/abcdefghijklmno", linkSection},   // one segment of 15
		{"/abcdefghijklmnop", linkArticle},  // of 16
		{"/abcdefghijklmnop/", linkSection}, // a folder
		{"/sport/abcdefghijk", linkSection}, // two segments, the last of 11
		{"/sport/abcdefghijkl", linkArticle},
		{"/a/b/c", linkArticle}, // three segments
	} {
		if got := sg.linkKind(tc.href); got != tc.want {
			t.Errorf("linkKind(%q) = %d, want %d", tc.href, got, tc.want)
		}
	}
}

// TestBoilerplate: navigation words and page numbers, trimmed of arrows
// and bars, in any case; item titles are not.
func TestBoilerplate(t *testing.T) {
	for s, want := range map[string]bool{
		"Home": true, " » Next ": true, "| Impressum |": true, "12": true, "Read more ›": true,
		"Next steps for the budget": false, "12 angry men": false, "": false,
	} {
		if got := boilerplate(s); got != want {
			t.Errorf("boilerplate(%q) = %v, want %v", s, got, want)
		}
	}
}

// TestNavAncestor: an element inside page furniture names it: a <nav>,
// <header>, <aside>, <footer> or <menu>, or an id, class or role word of
// navigation between any of the separators; a wrapper that holds the
// page's content (a <main>, an <h1>, three <article>s) is none whatever
// its class.
func TestNavAncestor(t *testing.T) {
	for _, tc := range []struct {
		body, want string
	}{
		{`<nav><ul><li><a id="x" href="/a">A</a></li></ul></nav>`, "<nav>"},
		{`<aside><p><a id="x" href="/a">A</a></p></aside>`, "<aside>"},
		{`<div class="site-footer"><a id="x" href="/a">A</a></div>`, `<div class="site-footer">`},
		{`<div class="top_menu"><a id="x" href="/a">A</a></div>`, `<div class="top_menu">`},
		{"<div class=\"big\tsidebar\"><a id=\"x\" href=\"/a\">A</a></div>", "<div class=\"big\\tsidebar\">"},
		{"<div class=\"x\nwidget\"><a id=\"x\" href=\"/a\">A</a></div>", "<div class=\"x\\nwidget\">"},
		{`<div role="navigation"><a id="x" href="/a">A</a></div>`, `<div role="navigation">`},
		{`<div role="contentinfo"><a id="x" href="/a">A</a></div>`, `<div role="contentinfo">`},
		{`<div id="Menu"><a id="x" href="/a">A</a></div>`, `<div id="Menu">`},
		{`<div title="menu"><a id="x" href="/a">A</a></div>`, ""},
		{`<div class="navigator"><a id="x" href="/a">A</a></div>`, ""},
		{`<div class="nav"><main><a id="x" href="/a">A</a></main></div>`, ""},
		{`<div class="nav"><h1>News</h1><a id="x" href="/a">A</a></div>`, ""},
		{`<div class="nav"><article></article><article></article><article><a id="x" href="/a">A</a></article></div>`, ""},
		{`<div class="nav"><article></article><article><a id="x" href="/a">A</a></article></div>`, `<div class="nav">`},
		{`<div class="list"><a id="x" href="/a">A</a></div>`, ""},
	} {
		root := parseFragment(t, tc.body)
		var link *html.Node
		walkElements(root, func(e *html.Node) {
			if attrMatch(e, "id").s == "x" {
				link = e
			}
		})
		if got := testSuggester(t).navAncestor(link); got != tc.want {
			t.Errorf("%s: navAncestor %q, want %q", tc.body, got, tc.want)
		}
	}
}

// TestShortText: an element's text counts when it has at most limit
// characters (runes), and the walk gives up on a text four times longer.
func TestShortText(t *testing.T) {
	for _, tc := range []struct {
		body  string
		limit int
		want  string
		ok    bool
	}{
		{`<span>12 May 2024</span>`, 11, "12 May 2024", true},
		{`<span>12 May 2024</span>`, 10, "12 May 2024", false},
		{`<span>Mär 2024</span>`, 8, "Mär 2024", true},
		{`<span><b>12</b> <i>May</i><script>x()</script></span>`, 6, "12 May", true},
		{`<span>` + strings.Repeat("a", 41) + `</span>`, 10, "", false},
		{`<span>` + strings.Repeat("a", 40) + `</span>`, 10, strings.Repeat("a", 40), false}, // read whole, too long
		{`<span>` + strings.Repeat("a", 38) + `<b>b</b></span>`, 10, strings.Repeat("a", 38) + " b", false},
		{`<span>` + strings.Repeat("a", 39) + `<b>b</b></span>`, 10, "", false}, // 41 with the space between
	} {
		got, ok := shortText(parseFragment(t, tc.body), tc.limit)
		if got != tc.want || ok != tc.ok {
			t.Errorf("shortText(%s, %d) = %q, %v; want %q, %v", tc.body, tc.limit, got, ok, tc.want, tc.ok)
		}
	}
}

// TestCSSIdent: what a selector may hold unescaped.
func TestCSSIdent(t *testing.T) {
	for s, want := range map[string]bool{
		"teaser": true, "post_title-2": true, "-x": true, "_a": true, "Z9": true, "a0": true, "az": true, "aZ": true, "A": true, "x-": true,
		"a@": false, "a`": false, "a{": false, "a[": false, "a/": false, "a:": false,
		"": false, "9a": false, "-": false, "-9": false, "a.b": false, "a:b": false, "é": false, "a b": false,
	} {
		if got := cssIdent(s); got != want {
			t.Errorf("cssIdent(%q) = %v, want %v", s, got, want)
		}
	}
}

// TestDescriptors: the relative selectors that may name an element, and
// the XPath of each.
func TestDescriptors(t *testing.T) {
	cell := parseFragment(t, `<table><tr><td>a</td><td class="when x">b</td></tr></table>`)
	var td *html.Node
	walkElements(cell, func(e *html.Node) {
		if attrMatch(e, "class").s == "when x" {
			td = e
		}
	})
	got := strings.Join(descriptors(td), " | ")
	if want := "td.when | td:nth-child(2) | td"; got != want {
		t.Errorf("descriptors of the second cell: %q, want %q", got, want)
	}
	if got := strings.Join(descriptors(parseFragment(t, `<span class="9lives">x</span>`)), " | "); got != "span" {
		t.Errorf("descriptors of a class that is no identifier: %q", got)
	}
	for k, want := range map[string]string{
		"td:nth-child(2)": "./td[2]",
		"td.when":         "(.//td[contains(concat(' ', normalize-space(@class), ' '), ' when ')])[1]",
		"time":            "(.//time)[1]",
	} {
		if got := descriptorXPath(k); got != want {
			t.Errorf("descriptorXPath(%q) = %q, want %q", k, got, want)
		}
	}
}

// TestReadsAsDate: a short text is a date when the rules read it, whole or
// after its first word, brackets and bars aside; none without a digit.
func TestReadsAsDate(t *testing.T) {
	sg := testSuggester(t)
	for s, want := range map[string]bool{
		"2024-05-12": true, "(12 May 2024)": true, "| 2024-05-12 |": true, "on 2024-05-12": true,
		"May": false, "": false, "room 12": false, "posted on 2024-05-12": false,
	} {
		if got := sg.readsAsDate(s); got != want {
			t.Errorf("readsAsDate(%q) = %v, want %v", s, got, want)
		}
	}
}

// TestDateSelector: the selector of the items' dates: <time datetime> in
// half of them or more; else a custom element with a datetime, the one
// most items have; else the first descriptor (in page order) of a short
// text that reads as a date in half of them or more.
func TestDateSelector(t *testing.T) {
	items := func(bodies ...string) []*html.Node {
		root := parseFragment(t, "<ul><li>"+strings.Join(bodies, "</li><li>")+"</li></ul>")
		var out []*html.Node
		walkElements(root, func(e *html.Node) {
			if e.Data == "li" {
				out = append(out, e)
			}
		})
		return out
	}
	sg := testSuggester(t)
	for _, tc := range []struct {
		name  string
		items []*html.Node
		want  string
	}{
		{"time in half", items(`<time datetime="2024-05-01">May 1</time>`, `<time datetime="2024-05-02">May 2</time>`, `x`, `y`), "time @datetime"},
		{"time in fewer than half", items(`<time datetime="2024-05-01">May 1</time>`, `x`, `y`, `z`), ""},
		{"the custom element most items have", items(
			`<local-time datetime="2024-05-01">1</local-time><relative-time datetime="2024-05-01">1</relative-time>`,
			`<relative-time datetime="2024-05-02">2</relative-time>`,
			`<local-time datetime="2024-05-03">3</local-time><relative-time datetime="2024-05-03">3</relative-time>`,
			`<relative-time datetime="2024-05-04">4</relative-time>`), "relative-time @datetime"},
		{"the first seen of two", items(
			`<span class="a">2024-05-01</span>`, `<em class="b">2024-05-02</em>`,
			`<em class="b">2024-05-03</em>`, `<span class="a">2024-05-04</span>`), "span.a"},
		{"after a word", items(`<span class="d">on 2024-05-01</span>`, `<span class="d">on 2024-05-02</span>`), "xpath:translate(normalize-space((.//span[contains(concat(' ', normalize-space(@class), ' '), ' d ')])[1]), '()[]', '')"},
		{"two custom elements in every item: the first by name", items(
			`<relative-time datetime="2024-05-01">1</relative-time><local-time datetime="2024-05-01">1</local-time>`,
			`<relative-time datetime="2024-05-02">2</relative-time><local-time datetime="2024-05-02">2</local-time>`), "local-time @datetime"},
		{"a custom element's blank datetime", items(
			`<relative-time datetime=" ">1</relative-time>`, `<relative-time datetime="">2</relative-time>`), ""},
		// A known element with a datetime attribute is no custom element:
		// its text is read as any other's.
		{"a span with a datetime", items(
			`<span class="when" datetime="2024-05-01">someday</span>`, `<span class="when" datetime="2024-05-02">another day</span>`), ""},
	} {
		// The custom elements are counted in a map: ask often enough that
		// its order cannot decide.
		for range 20 {
			if got := sg.dateSelector(tc.items); got != tc.want {
				t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
				break
			}
		}
	}
}

// TestStableSelector: an element without id or class is named by an
// attribute that names it, whose value can be quoted simply: present, not
// empty, without a quote, backslash or line break, under 40 bytes.
func TestStableSelector(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`<div role="feed">x</div>`, `div[role="feed"]`},
		{`<div role="" aria-label="News">x</div>`, `div[aria-label="News"]`},
		{`<div role='a"b' aria-label="News">x</div>`, `div[aria-label="News"]`},
		{`<div role="a\b" aria-label="News">x</div>`, `div[aria-label="News"]`},
		{"<div role=\"a\nb\" aria-label=\"News\">x</div>", `div[aria-label="News"]`},
		{`<table summary="` + strings.Repeat("s", 39) + `">x</table>`, `table[summary="` + strings.Repeat("s", 39) + `"]`},
		{`<table summary="` + strings.Repeat("s", 40) + `" width="600">x</table>`, `table[width="600"]`},
		{`<div>x</div>`, ""},
	} {
		n := parseFragment(t, tc.in)
		if got := stableSelector(n); got != tc.want {
			t.Errorf("stableSelector(%s) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestStripLabel: a label that 4 in 5 titles or more start with, as an
// element of its own ending in a colon (at most 20 characters, no
// apostrophe), is left out of the title selector; text before the
// element, fewer titles, a longer label or a selector that cannot be
// wrapped keep the title as it is.
func TestStripLabel(t *testing.T) {
	titles := func(bodies ...string) []*html.Node {
		root := parseFragment(t, "<div><h2>"+strings.Join(bodies, "</h2><h2>")+"</h2></div>")
		var out []*html.Node
		walkElements(root, func(e *html.Node) {
			if e.Data == "h2" {
				out = append(out, e)
			}
		})
		return out
	}
	rep := func(n int, s string, rest ...string) []string {
		out := make([]string, 0, n+len(rest))
		for range n {
			out = append(out, s)
		}
		return append(out, rest...)
	}
	const wrapped = "xpath:normalize-space(substring-after((.//h2)[1], '%s'))"
	label20 := strings.Repeat("x", 19) + ":"
	label21 := strings.Repeat("x", 20) + ":"
	for _, tc := range []struct {
		name, title string
		titles      []*html.Node
		want        string
	}{
		{"4 in 5", "h2", titles(rep(4, "<span>Update:</span> Roads", "Plain")...), strings.ReplaceAll(wrapped, "%s", "Update:")},
		{"3 in 5", "h2", titles(rep(3, "<span>Update:</span> Roads", "Plain", "Other")...), "h2"},
		{"text before it", "h2", titles(rep(5, "News <span>Update:</span> Roads")...), "h2"},
		{"blank text before it", "h2", titles(rep(5, "  <span>Update:</span> Roads")...), strings.ReplaceAll(wrapped, "%s", "Update:")},
		{"20 characters", "h2", titles(rep(5, "<b>"+label20+"</b> Roads")...), strings.ReplaceAll(wrapped, "%s", label20)},
		{"21 characters", "h2", titles(rep(5, "<b>"+label21+"</b> Roads")...), "h2"},
		{"an apostrophe", "h2", titles(rep(5, "<b>Editor's:</b> Roads")...), "h2"},
		{"no colon", "h2", titles(rep(5, "<b>Update</b> Roads")...), "h2"},
		{"an XPath title", "xpath:(.//h2)[1]", titles(rep(5, "<i>New:</i> Roads")...), strings.ReplaceAll(wrapped, "%s", "New:")},
		{"a compound selector", "div > h2", titles(rep(5, "<i>New:</i> Roads")...), "div > h2"},
	} {
		if got := stripLabel(tc.title, tc.titles); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestFirstIs: a selector is taken when its first match is the element
// wanted in 4 items of 5 or more (the same element or the same text; with
// href, the same link).
func TestFirstIs(t *testing.T) {
	for _, tc := range []struct {
		name  string
		items []string
		want  bool
	}{
		{"5 of 5", []string{`<b>1</b>`, `<b>2</b>`, `<b>3</b>`, `<b>4</b>`, `<b>5</b>`}, true},
		{"4 of 5", []string{`<b>1</b>`, `<b>2</b>`, `<b>3</b>`, `<b>4</b>`, `<i>5</i>`}, true},
		{"3 of 5", []string{`<b>1</b>`, `<b>2</b>`, `<b>3</b>`, `<i>4</i>`, `<i>5</i>`}, false},
		{"another element first", []string{`<b>0</b><b>1</b>`, `<b>0</b><b>2</b>`, `<b>0</b><b>3</b>`, `<b>0</b><b>4</b>`, `<b>0</b><b>5</b>`}, false},
	} {
		root := parseFragment(t, "<ul><li>"+strings.Join(tc.items, "</li><li>")+"</li></ul>")
		doc := root
		for doc.Parent != nil {
			doc = doc.Parent
		}
		var items, wanted []*html.Node
		walkElements(root, func(e *html.Node) {
			if e.Data == "li" {
				items = append(items, e)
				var last *html.Node // the last element of the item is the one wanted
				for c := e.FirstChild; c != nil; c = c.NextSibling {
					if c.Type == html.ElementNode {
						last = c
					}
				}
				wanted = append(wanted, last)
			}
		})
		sg := testSuggester(t)
		sg.doc = doc
		if got := sg.firstIs("b", items, wanted, false); got != tc.want {
			t.Errorf("%s: firstIs = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestCardTitle: in a link that wraps a whole card (80 characters or more,
// with block elements, a <br> not being one) the title is its first
// element of 8 characters or more, under 80 % of the card's text, with no
// block inside; otherwise the link itself.
func TestCardTitle(t *testing.T) {
	long := strings.Repeat("word ", 16) // 80 characters with the spaces, 79 trimmed
	for _, tc := range []struct {
		name, card, want string
	}{
		{"a card", `<a href="/s"><div><h3>Council approves the budget</h3><p>` + long + `</p></div></a>`, "h3"},
		{"a short kicker first", `<a href="/s"><div><span>Town</span><h3>Council approves the budget</h3><p>` + long + `</p></div></a>`, "h3"},
		{"8 characters", `<a href="/s"><div><h3>Council!</h3><p>` + long + `</p></div></a>`, "h3"},
		{"7 characters", `<a href="/s"><div><h3>Council</h3><p>` + long + `</p></div></a>`, "a"},
		{"79 characters", `<a href="/s"><div><h3>Council!</h3><p>` + strings.Repeat("w", 70) + `</p></div></a>`, "a"},
		{"80 characters", `<a href="/s"><div><h3>Council!</h3><p>` + strings.Repeat("w", 71) + `</p></div></a>`, "h3"},
		{"no block", `<a href="/s"><span>Council approves the budget</span><span>` + long + `</span></a>`, "a"},
		{"only a <br>", `<a href="/s"><span>Council approves the budget</span><br><span>` + long + `</span></a>`, "a"},
		{"80 % of the text", `<a href="/s"><div><h3>` + strings.Repeat("h", 80) + `</h3><p>` + strings.Repeat("p", 19) + `</p></div></a>`, "p"},
		{"under 80 % of the text", `<a href="/s"><div><h3>` + strings.Repeat("h", 79) + `</h3><p>` + strings.Repeat("p", 20) + `</p></div></a>`, "h3"},
		{"a heading in a div", `<a href="/s"><div><div class="head"><h3>Council approves</h3></div><p>` + long + `</p></div></a>`, "h3"},
		{"the text in one element", `<a href="/s"><div><p>` + long + long + `</p></div></a>`, "a"},
	} {
		a := parseFragment(t, tc.card)
		if got := cardTitle(a); got.Data != tc.want {
			t.Errorf("%s: <%s> %q, want <%s>", tc.name, got.Data, textOf(got), tc.want)
		}
	}
}

// TestStableClass: a class that can name a list: an identifier of two
// characters or more, no digit, none of the per-item prefixes and states.
func TestStableClass(t *testing.T) {
	for c, want := range map[string]bool{
		"teaser": true, "ab": true, "news-item": true,
		"a": false, "x2": false, "category-news": false, "post-12": false, "is-open": false, "active": false,
		"Current": false, "odd": false, "9a": false, "a.b": false,
	} {
		if got := stableClass(c); got != want {
			t.Errorf("stableClass(%q) = %v, want %v", c, got, want)
		}
	}
}
