package suggest

import (
	"fmt"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// boxesPage parses a page of four topic boxes and returns its suggester
// and the boxes. Each box is a linked h2 and cards of a title link and a
// summary; box(i) writes box i's inner HTML.
func boxesPage(t *testing.T, box func(i int) string) (*suggester, []*html.Node) {
	t.Helper()
	var b strings.Builder
	b.WriteString(`<main class="boxes">`)
	for i := range 4 {
		fmt.Fprintf(&b, `<div class="box">%s</div>`, box(i))
	}
	b.WriteString(`</main>`)
	root := parseFragment(t, b.String())
	doc := root
	for doc.Parent != nil {
		doc = doc.Parent
	}
	sg := testSuggester(t)
	sg.doc = doc
	var boxes []*html.Node
	walkElements(root, func(e *html.Node) {
		if attrMatch(e, "class").s == "box" {
			boxes = append(boxes, e)
		}
	})
	return sg, boxes
}

// card is a card of box i: its title in a heading (h3) or in a plain
// paragraph (p), with a summary.
func card(i, j int, tag string) string {
	return fmt.Sprintf(`<div class="card"><%s><a href="/topics/%d/story-number-%d-of-the-box">Story %d of box %d, a title of some length</a></%s><p>Summary of the story, a sentence or two.</p></div>`,
		tag, i, j, j, i, tag)
}

// TestScoreBlocks: an item whose headings link to three pages or more (a
// box's linked heading and two headed cards) is a block of items, not an
// item: the reason says "each holds several headings" and the quality is
// halved when all items are such blocks; with two heading links (the
// second card's title not in a heading) it is an item.
func TestScoreBlocks(t *testing.T) {
	quality := map[int]float64{}
	for _, tc := range []struct {
		headLinks int
		second    string // the tag of the second card's title
		block     bool
	}{
		{3, "h3", true},
		{2, "p", false},
	} {
		sg, boxes := boxesPage(t, func(i int) string {
			return fmt.Sprintf(`<h2><a href="/topics/%d/">Topic %d</a></h2>`, i, i) + card(i, 1, "h3") + card(i, 2, tc.second)
		})
		g := &group{members: boxes}
		if !sg.score(g) {
			t.Fatalf("%d heading links: the boxes are no group", tc.headLinks)
		}
		for _, f := range g.facts {
			if f.headLinks != tc.headLinks {
				t.Fatalf("%d heading links: a box counts %d", tc.headLinks, f.headLinks)
			}
		}
		if got := strings.Contains(g.why, "each holds several headings"); got != tc.block {
			t.Errorf("%d heading links: reason %q, want blocks %v", tc.headLinks, g.why, tc.block)
		}
		quality[tc.headLinks] = g.quality
	}
	// The two pages differ in nothing else a score reads: the same texts,
	// links and shapes (the second card's title in a <p> or an <h3>).
	if quality[2] <= 0 || quality[3] != quality[2]/2 {
		t.Errorf("quality of blocks %v, of items %v: want exactly half", quality[3], quality[2])
	}
}

// TestBlocksSeveralItems: a group whose members each hold two items or
// more of a list twice as long (a section of two cards) is lowered to a
// tenth and says "each holds several items"; members that hold one item
// each of such a list (the other items elsewhere) are not.
func TestBlocksSeveralItems(t *testing.T) {
	for _, tc := range []struct {
		name    string
		inBox   int // cards in each box
		outside int // cards after the boxes
		lowered bool
	}{
		{"two cards in each box", 2, 0, true},
		{"three cards in each box", 3, 0, true},
		{"one card in each box, four elsewhere", 1, 4, false},
	} {
		var b strings.Builder
		b.WriteString(`<main>`)
		for i := range 4 {
			fmt.Fprintf(&b, `<section class="box"><h2><a href="/topics/%d/">Topic %d</a></h2>`, i, i)
			for j := range tc.inBox {
				b.WriteString(card(i, j, "h3"))
			}
			b.WriteString(`</section>`)
		}
		b.WriteString(`<section class="more">`)
		for j := range tc.outside {
			b.WriteString(card(9, j, "h3"))
		}
		b.WriteString(`</section></main>`)
		root := parseFragment(t, b.String())
		doc := root
		for doc.Parent != nil {
			doc = doc.Parent
		}
		sg := testSuggester(t)
		sg.doc = doc
		var boxes, cards []*html.Node
		walkElements(root, func(e *html.Node) {
			switch attrMatch(e, "class").s {
			case "box":
				boxes = append(boxes, e)
			case "card":
				cards = append(cards, e)
			}
		})
		sections, items := &group{members: boxes}, &group{members: cards}
		if !sg.score(sections) || !sg.score(items) {
			t.Fatalf("%s: the boxes or the cards are no group", tc.name)
		}
		before := sections.score
		sg.blocks([]*group{sections, items})
		if got := strings.Contains(sections.why, "each holds several items"); got != tc.lowered {
			t.Errorf("%s: reason %q, want lowered %v", tc.name, sections.why, tc.lowered)
		}
		want := before
		if tc.lowered {
			want = before * 0.1
		}
		if sections.score != want {
			t.Errorf("%s: score %v, want %v (before blocks: %v)", tc.name, sections.score, want, before)
		}
		if items.score <= 0 || strings.Contains(items.why, "several items") {
			t.Errorf("%s: the cards are lowered: %v %q", tc.name, items.score, items.why)
		}
	}
}
