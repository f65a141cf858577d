package suggest_test

import (
	"os"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/dynamo-rss/dynamo/extractor"
	"github.com/dynamo-rss/dynamo/suggest"
)

// pointFloor is the fewest corpus pages (of all folders) where pointing
// at the first wanted title gives the wanted list: the figure reached,
// so that a change that loses a page fails.
const pointFloor = 48

// TestPointCorpus points, on every recorded page, at the element of the
// first wanted item's title (the innermost element whose text holds it,
// the first a person can see)
// and checks that Like gives the wanted list: titles with recall and
// precision of at least 0.8, as TestSuggestCorpus judges proposals.
func TestPointCorpus(t *testing.T) {
	dir := corpusDir()
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("the recorded pages are not here (%v)", err)
	}
	right, total := 0, 0
	for _, folder := range corpusFolders {
		if _, err := os.Stat(dir + "/" + folder.name); err != nil {
			continue
		}
		for _, c := range corpusPages(t, dir, folder.name, nil) {
			if len(c.titles) == 0 {
				continue
			}
			page, err := os.ReadFile(c.html)
			if err != nil {
				t.Fatal(err)
			}
			opts := extractor.Options{URL: c.url, ContentType: c.ctype}
			total++
			el := titleElement(t, page, opts, c.titles[0])
			if el < 0 {
				t.Logf("%s/%s: no element holds %q", folder.name, c.name, c.titles[0])
				continue
			}
			p, err := suggest.Like(page, opts, el)
			if err != nil {
				t.Logf("%s/%s: Like(%d): %v", folder.name, c.name, el, err)
				continue
			}
			recall, precision := titleMatch(c.titles, corpusTitles(t, page, opts, p))
			if recall >= 0.8 && precision >= 0.8 {
				right++
				continue
			}
			t.Logf("%s/%s: element %d: %d items, recall %.2f, precision %.2f, %+v (%s)", folder.name, c.name, el, p.Count, recall, precision, p.Select, p.Reason)
		}
	}
	t.Logf("pointing at the first title gives the wanted list on %d of %d pages", right, total)
	if right < pointFloor {
		t.Errorf("%d pages right, fewer than %d", right, pointFloor)
	}
}

// titleElement is the number of the innermost element whose text holds
// title (white space collapsed, case folded), -1 when none does.
func titleElement(t *testing.T, page []byte, opts extractor.Options, title string) int {
	t.Helper()
	doc, _, err := extractor.ParsePage(page, opts)
	if err != nil {
		t.Fatal(err)
	}
	norm := func(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }
	want := norm(title)
	num := map[*html.Node]int{}
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			num[n] = len(num)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	holds := func(n *html.Node) bool {
		if n.Type != html.ElementNode || extractor.IsHidden(n.DataAtom) {
			return false
		}
		for _, a := range n.Attr {
			// What a person cannot see, and so cannot point at.
			if a.Key == "hidden" || a.Key == "aria-hidden" && a.Val == "true" || a.Key == "class" && slices.ContainsFunc(strings.Fields(a.Val), func(c string) bool { return c == "d-none" || c == "hidden" }) {
				return false
			}
		}
		return strings.Contains(norm(extractor.Text(n)), want)
	}
	n := doc
	for found := true; found; {
		found = false
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if holds(c) {
				n, found = c, true
				break
			}
		}
	}
	if n == doc {
		return -1
	}
	return num[n]
}
