package suggest

// Where a page can be pointed at: the elements that could start an item,
// and the elements of a browser's DOM paired with the page's.

import (
	"bytes"
	"strconv"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/dynamo-rss/dynamo/extractor"
)

// Starts returns the elements that could start an item (the ones for
// which [Like] may give a list), in page order: the items of the
// candidate lists and their parts (a heading's run of siblings), and
// the elements inside them with text of their own or a picture. At most
// [MaxStarts]: the items of the best lists first.
func Starts(page []byte, opts extractor.Options) []int {
	pt, err := newPointer(page, opts)
	if err != nil {
		return nil
	}
	pt.rank()
	root := make([]bool, len(pt.nodes))
	roots := 0
	for _, g := range pt.groups {
		for i := range g.linked {
			for _, p := range itemParts(pt.sg, g, i) {
				if k := pt.num[p]; !root[k] && roots < MaxStarts/2 {
					root[k] = true
					roots++
				}
			}
		}
	}
	inside := make([]bool, len(pt.nodes))
	var out []int
	extra := MaxStarts - roots
	for i, n := range pt.nodes {
		if p, ok := pt.num[n.Parent]; ok && inside[p] {
			inside[i] = true
		}
		if root[i] {
			inside[i] = true
			out = append(out, i)
			continue
		}
		if inside[i] && extra > 0 && !extractor.IsHidden(n.DataAtom) && (n.DataAtom == atom.Img || ownText(n)) {
			out = append(out, i)
			extra--
		}
	}
	return out
}

// ownText reports whether n has text of its own (not only its children's).
func ownText(n *html.Node) bool {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.TextNode && strings.TrimSpace(c.Data) != "" {
			return true
		}
	}
	return false
}

// Marks maps the elements of page to the marks a browser put on the same
// elements: marked is the page's DOM as the browser serialized it, with
// data-dynamo-box="i" on its elements. It returns, for each element
// number of page, the mark of its element in marked, -1 when there is
// none or the two trees differ there past telling. The trees are walked
// side by side, elements matched by tag in sibling order; an element
// only one side has (a script's, a re-serialization's) is skipped when
// the next few siblings realign, else both are given up. Linear in the
// pages.
func Marks(page []byte, opts extractor.Options, marked []byte) []int {
	opts.Select = nil
	doc, _, err := extractor.ParsePage(page, opts)
	if err != nil {
		return nil
	}
	nodes, num, _ := numberElements(doc)
	out := make([]int, len(nodes))
	for i := range out {
		out[i] = -1
	}
	mdoc, err := html.Parse(bytes.NewReader(marked))
	if err != nil {
		return out
	}
	type pair struct{ a, b *html.Node }
	stack := []pair{{doc, mdoc}}
	for len(stack) > 0 {
		p := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if p.a.Type == html.ElementNode {
			out[num[p.a]] = markOf(p.b)
		}
		as, bs := elementChildren(p.a), elementChildren(p.b)
		i, j := 0, 0
		for i < len(as) && j < len(bs) {
			if as[i].Data == bs[j].Data {
				stack = append(stack, pair{as[i], bs[j]})
				i++
				j++
				continue
			}
			// Realign: the fewest siblings skipped on one side, extra
			// elements of the browser's first.
			skipB, skipA := -1, -1
			for k := 1; k <= markWindow; k++ {
				if skipB < 0 && j+k < len(bs) && bs[j+k].Data == as[i].Data {
					skipB = k
				}
				if skipA < 0 && i+k < len(as) && as[i+k].Data == bs[j].Data {
					skipA = k
				}
			}
			switch {
			case skipB > 0 && (skipA < 0 || skipB <= skipA):
				j += skipB
			case skipA > 0:
				i += skipA
			default:
				i++
				j++
			}
		}
	}
	return out
}

func elementChildren(n *html.Node) []*html.Node {
	var out []*html.Node
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode {
			out = append(out, c)
		}
	}
	return out
}

// markOf is an element's data-dynamo-box number, -1 when it has none.
func markOf(n *html.Node) int {
	v := attrMatch(n, "data-dynamo-box")
	if !v.found() {
		return -1
	}
	i, err := strconv.Atoi(strings.TrimSpace(v.s))
	if err != nil || i < 0 {
		return -1
	}
	return i
}
