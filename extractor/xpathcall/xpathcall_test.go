package xpathcall

import (
	"strings"
	"testing"

	"github.com/antchfx/htmlquery"
	"github.com/antchfx/xpath"
	"golang.org/x/net/html"
)

// TestEvalFromTheContext: each path argument of a call is evaluated from
// the context node on a navigator of its own, so a later path does not
// start where an earlier one's predicate moved.
func TestEvalFromTheContext(t *testing.T) {
	doc, err := html.Parse(strings.NewReader(`<ul><li><span class="d">03.11.2026</span> <span class="t">18:00</span></li></ul>`))
	if err != nil {
		t.Fatal(err)
	}
	li := htmlquery.FindOne(doc, "//li")
	c, ok, err := Parse(`concat(.//span[@class='d'], ' ', .//span[@class='t'])`)
	if err != nil || !ok {
		t.Fatalf("Parse: %v, %v", ok, err)
	}
	navs := 0
	got := c.Eval(li, func() xpath.NodeNavigator {
		navs++
		return positioned(doc, li)
	})
	if got != "03.11.2026 18:00" || navs != 2 {
		t.Fatalf("Eval = %q with %d navigators, want the date and time from 2", got, navs)
	}
	for expr, want := range map[string]bool{"concat(a, b)": true, "a/b": false, "count(a)": false} {
		if _, ok, err := Parse(expr); ok != want || err != nil {
			t.Errorf("Parse(%q): ok %v (%v), want %v", expr, ok, err, want)
		}
	}
	if _, _, err := Parse("concat(a)"); err == nil {
		t.Error("concat with one argument: no error")
	}
	if Number(3) != "3" || Number(2.5) != "2.5" {
		t.Errorf("Number: %q %q", Number(3), Number(2.5))
	}
}

// positioned is a navigator on doc's tree, positioned on n.
func positioned(doc, n *html.Node) xpath.NodeNavigator {
	nav := htmlquery.CreateXPathNavigator(doc)
	var walk func() bool
	walk = func() bool {
		if nav.Current() == n {
			return true
		}
		if nav.MoveToChild() {
			for {
				if walk() {
					return true
				}
				if !nav.MoveToNext() {
					break
				}
			}
			nav.MoveToParent()
		}
		return false
	}
	walk()
	return nav
}
