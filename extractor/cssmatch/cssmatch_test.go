package cssmatch

import (
	"strings"
	"testing"

	"github.com/andybalholm/cascadia"
	"golang.org/x/net/html"
)

// TestRunMatchesCascadia: Run from the root finds what cascadia's
// QueryAll finds, in the same order, for combinators, positions and the
// pseudo-classes evaluated by walks (the extractor's tests compare both
// on many more pages and context nodes).
func TestRunMatchesCascadia(t *testing.T) {
	page := `<html lang="en"><body><div id="m" class="a b"><h3><a href="1.html">One</a></h3><p>Text <b>bold</b></p>` +
		`<ul><li><a href=x>a</a><li><span>s</span><li><a><img></a></ul><b>` + strings.Repeat("<span>", 8) + "x" + strings.Repeat("</span>", 8) + `</b></div></body></html>`
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	for _, src := range []string{
		"a", "div a", "div > h3 > a", "h3 + p", "h3 ~ ul", "li + li", "li ~ li a", "b span span span",
		"li:nth-child(2n+1)", "li:last-child", "ul:haschild(li)", "li:not(:has(a))", "p:contains(Text)",
		"div:lang(en) b", ":has(:has(img))", "span:only-child", "i span span",
	} {
		group, err := cascadia.ParseGroup(src)
		if err != nil {
			t.Fatalf("%q: %v", src, err)
		}
		sel, err := Compile(src, group)
		if err != nil {
			t.Fatalf("Compile(%q): %v", src, err)
		}
		got, err := sel.Run(doc, 1<<20)
		if err != nil {
			t.Fatalf("%q: %v", src, err)
		}
		want := cascadia.QueryAll(doc, group)
		if len(got) != len(want) {
			t.Fatalf("%q: %d nodes, cascadia %d", src, len(got), len(want))
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("%q: node %d differs from cascadia's", src, i)
			}
		}
	}
}

// TestRunBudget: a costly selector stops at its limit with ErrCost.
func TestRunBudget(t *testing.T) {
	doc, err := html.Parse(strings.NewReader("<ul>" + strings.Repeat("<li>some text here</li>", 200) + "</ul>"))
	if err != nil {
		t.Fatal(err)
	}
	group, _ := cascadia.ParseGroup("li:contains(nothing)")
	sel, err := Compile("li:contains(nothing)", group)
	if err != nil {
		t.Fatal(err)
	}
	if !sel.Costly() {
		t.Fatal("a :contains() selector is not marked costly")
	}
	if _, err := sel.Run(doc, 10); err == nil || !strings.Contains(err.Error(), ErrCost.Error()) {
		t.Fatalf("Run with a limit of 10: %v, want ErrCost", err)
	}
	if _, err := sel.Run(doc, 1<<20); err != nil {
		t.Fatalf("Run with a large limit: %v", err)
	}
}
