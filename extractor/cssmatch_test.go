package extractor

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/andybalholm/cascadia"
	"golang.org/x/net/html"
)

// cssDiffSelectors are compared with cascadia on every page of
// TestCSSMatchesCascadia.
var cssDiffSelectors = []string{
	"*", "a", "div a", "div > a", "h3 + p", "h3 ~ p", "li + li", "li ~ li", "b span span span",
	"body > * > *", "div div", "div > div > a", "ul li a", "li:first-child", "li:last-child",
	"li:nth-child(2n+1)", "li:nth-child(odd) a", "li:nth-last-child(2)", "p:nth-of-type(2)",
	"*:nth-last-of-type(-n+2)", ":only-child", "span:only-of-type", "li:nth-child(0n+3)",
	"tr:has(a[href])", "div:has(> a)", ":has(a) :has(b)", "div:haschild(p)", "li:not(:first-child)",
	"a:not([href^='http'])", ":not(div span)", "div:not(:has(img))", "a:has(img) ~ p",
	":has(:has(:has(a)))", "div:has(h3 + p)", "p:not(h3 ~ p)", "[class~=n] h3 a", "#m .n",
	".a.b > .n:first-child", "a[href$='.html']", "[data-id] *", "h3, p, h3 a", "a, a, div a",
	"p:contains(text)", ":contains('One')", "div:matches(T.x)", "*:containsOwn(two)",
	":matchesOwn(^T)", "div:lang(en) a", "input:enabled", ":disabled", ":root > body",
	":empty", "html /* comment */ a", "a\\:b", "*|* p", "p:first-of-type:last-of-type",
	"div > p ~ time", "h3+p", "h3>a", "li:nth-child(-n+3) + li", "span span span span",
	"ul > li:nth-of-type(even) ~ li a", "[x!=y]", ":haschild(:haschild(a))",
	"div :not(a)", ":not(:not(p))", "li:has(~ li)", "td:nth-child(3)", ":link", ":checked",
	":input", "a:hover", "b span + span ~ span", "dt + dd", "dl > dt ~ dd:nth-of-type(2)",
}

// cssDiffPages are small pages for the comparison, beside the repository's
// test pages.
func cssDiffPages(t testing.TB) map[string]string {
	pages := map[string]string{
		"spans": "<b>" + strings.Repeat("<span>", 12) + "x" + strings.Repeat("</span>", 12) + "</b>",
		"fuzz":  `<html lang="en"><head><title>T</title></head><body><div id="m" class="a b"><div class="n" data-id="x1"><h3><a href="1.html">One</a></h3><p>Text <b>bold</b></p><time datetime="2026-11-21">d</time></div><div class="n"><h3>Two</h3><img src="i.png"><p>two</p><p>three</p><a href="javascript:alert(1)">j</a></div></div></body></html>`,
		"list":  "<ul>" + strings.Repeat("<li><a href=x>a</a> <!-- c --> text<li><span>s</span><li><a><img></a>", 5) + "</ul><dl><dt>a<dd>b<dt>c<dd>d<dd>e</dl>",
		"forms": `<form><fieldset disabled><legend><input></legend><input checked type=checkbox><button>b</button></fieldset><select><option>o</select><textarea></textarea><a href=x>l</a></form><p lang="en-GB"><i><b></b></i></p>`,
		"table": `<table><tr><td>1<td><a href=1>a</a><td>x</tr><tr><td>2<td>b<td><a href=2><img></a></tr></table>`,
		"deep":  strings.Repeat("<div><p>t</p>", 30) + strings.Repeat("</div>", 30),
	}
	for _, glob := range []string{"../suggest/testdata/pages/*.html", "testdata/schemaorg/*.html"} {
		files, _ := filepath.Glob(glob)
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			pages[f] = string(b)
		}
	}
	return pages
}

// checkSameAsCascadia compares the evaluation of src with cascadia's on the
// tree of doc, from the root and from several context nodes.
func checkSameAsCascadia(t testing.TB, doc *html.Node, src, page string) {
	t.Helper()
	group, err := cascadia.ParseGroup(src)
	if err != nil {
		return
	}
	sel, err := compileSelector(src)
	if err != nil {
		t.Fatalf("%q: cascadia compiles it, compileSelector says %v", src, err)
	}
	if sel.css == nil {
		return // an attribute form: not CSS alone
	}
	var ctxs []*html.Node
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if len(ctxs) < 40 {
			ctxs = append(ctxs, n)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	ec := newEvalCache()
	for i, ctx := range ctxs {
		want := cascadia.QueryAll(ctx, group)
		var got []*html.Node
		if err := sel.cssEach(ec, ctx, false, func(n *html.Node) bool { got = append(got, n); return true }); err != nil {
			t.Fatalf("%q: %v", src, err)
		}
		if !sameNodes(got, want) {
			t.Fatalf("%q from context %d (%s): got %s, cascadia %s\npage %.300q", src, i, describe(ctx), describeAll(got), describeAll(want), page)
		}
		var first *html.Node
		_ = sel.cssEach(nil, ctx, true, func(n *html.Node) bool { first = n; return false })
		var wantFirst *html.Node
		for _, n := range want {
			if n.Type == html.ElementNode {
				wantFirst = n
				break
			}
		}
		if first != wantFirst {
			t.Fatalf("%q from context %d: first %s, cascadia %s", src, i, describe(first), describe(wantFirst))
		}
	}
}

func sameNodes(a, b []*html.Node) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func describe(n *html.Node) string {
	if n == nil {
		return "nil"
	}
	return fmt.Sprintf("%d:%q", n.Type, n.Data)
}

func describeAll(ns []*html.Node) string {
	var s []string
	for _, n := range ns {
		s = append(s, describe(n))
	}
	return fmt.Sprintf("%d %v", len(ns), s)
}

// TestCSSMatchesCascadia: the linear evaluation finds what cascadia's
// QueryAll finds (same nodes, same order), from the root and from inner
// context nodes, for many selectors on the repository's test pages.
func TestCSSMatchesCascadia(t *testing.T) {
	for name, page := range cssDiffPages(t) {
		doc, err := html.Parse(strings.NewReader(page))
		if err != nil {
			t.Fatal(err)
		}
		t.Run(filepath.Base(name), func(t *testing.T) {
			for _, src := range cssDiffSelectors {
				checkSameAsCascadia(t, doc, src, page)
			}
		})
	}
}

// FuzzCSSMatchesCascadia compares both evaluations on small pages and
// selectors, where cascadia's backtracking is cheap.
func FuzzCSSMatchesCascadia(f *testing.F) {
	for _, s := range cssDiffSelectors {
		f.Add(cssDiffPages(f)["fuzz"], s)
		f.Add(cssDiffPages(f)["list"], s)
	}
	f.Fuzz(func(t *testing.T, page, src string) {
		if len(page) > 2000 || len(src) > 80 || strings.Count(src, "(") > 4 {
			return
		}
		doc, err := html.Parse(strings.NewReader(page))
		if err != nil {
			return
		}
		if _, err := cascadia.ParseGroup(src); err != nil {
			return
		}
		if _, err := compileSelector(src); err != nil && !strings.Contains(err.Error(), "more than") {
			if s := strings.TrimSpace(src); s != "" && !strings.HasPrefix(s, "xpath:") && !strings.HasPrefix(s, "@") {
				t.Fatalf("%q: %v", src, err)
			}
		}
		checkSameAsCascadia(t, doc, src, page)
	})
}
