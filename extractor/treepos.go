package extractor

import (
	"bytes"
	"strings"

	"golang.org/x/net/html"
)

// treePos finds where the elements of a parsed page start in its source,
// for the selector front end's diagnostics: html.Parse keeps no
// positions. Positions are handed out lazily: at(n) returns a handle (a
// pos with a negative line), and resolve turns handles into real
// positions when a diagnostic is reported, aligning the tree with the
// page's start tags once, on first need, so that a page with nothing to
// report costs no second reading.
type treePos struct {
	src     func() []byte // the page decoded to UTF-8, as html.Parse read it (nil: none)
	doc     *html.Node    // the parsed page
	nodes   []*html.Node  // the nodes of the handles: handle -(i+1) is nodes[i]
	handles map[*html.Node]int
	found   map[*html.Node]pos // nil until the first resolve
}

// at returns a handle for n's position.
func (t *treePos) at(n *html.Node) pos {
	if t == nil || n == nil {
		return pos{1, 1}
	}
	if i, ok := t.handles[n]; ok {
		return pos{line: -(i + 1), col: 0}
	}
	if t.handles == nil {
		t.handles = make(map[*html.Node]int)
	}
	t.handles[n] = len(t.nodes)
	t.nodes = append(t.nodes, n)
	return pos{line: -len(t.nodes), col: 0}
}

// resolve turns a handle into the line and column of its element's start
// tag (of the nearest ancestor that has one, for an element the parser
// made up, such as an implied <tbody>); other positions are returned as
// they are.
func (t *treePos) resolve(p pos) pos {
	if p.line >= 0 || t == nil {
		return p
	}
	i := -p.line - 1
	if i >= len(t.nodes) {
		return pos{1, 1}
	}
	if t.found == nil {
		t.align()
	}
	for n := t.nodes[i]; n != nil; n = n.Parent {
		if q, ok := t.found[n]; ok {
			return q
		}
	}
	return pos{1, 1}
}

// startTag is a start tag of the source: its name, first attribute and
// position.
type startTag struct {
	name      string
	nattr     int
	key, val  string
	at        pos
	unmatched bool
}

// alignWindow is how many start tags an element may be ahead of the
// previous match in the source (tags that made no element of their own,
// such as a second <body>).
const alignWindow = 8

// align matches the tree's elements, in document order, with the source's
// start tags, in order: by name and first attribute, allowing a few
// source tags with no element (ignored or merged by the parser). Elements
// the parser made up (html, head, body, tbody... without a tag) match
// only the next tag; an element that matches nothing has no position of
// its own.
func (t *treePos) align() {
	t.found = make(map[*html.Node]pos)
	var tags []startTag
	z := html.NewTokenizer(bytes.NewReader(t.src()))
	at, cr := pos{1, 1}, false
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			break
		}
		start := at
		cr = at.advance(z.Raw(), cr)
		if tt != html.StartTagToken && tt != html.SelfClosingTagToken {
			continue
		}
		name, more := z.TagName()
		st := startTag{name: string(name), at: start}
		if st.name == "image" {
			st.name = "img" // the parser's rename
		}
		for more {
			var k, v []byte
			k, v, more = z.TagAttr()
			if st.nattr == 0 {
				st.key, st.val = string(k), string(v)
			}
			st.nattr++
		}
		tags = append(tags, st)
	}
	next := 0
	var walk func(n *html.Node, depth int)
	walk = func(n *html.Node, depth int) {
		if depth > maxTreeDepth {
			return
		}
		if n.Type == html.ElementNode {
			window := alignWindow
			switch n.Data {
			case "html", "head", "body", "tbody", "colgroup":
				window = 1
			}
			for j := next; j < len(tags) && j < next+window; j++ {
				if tags[j].name == strings.ToLower(n.Data) && sameFirstAttr(tags[j], n) {
					t.found[n] = tags[j].at
					next = j + 1
					break
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, depth+1)
		}
	}
	walk(t.doc, 0)
}

// sameFirstAttr reports whether a start tag and an element have the same
// number of attributes and the same first one (the parser keeps them in
// source order, dropping duplicates).
func sameFirstAttr(tag startTag, n *html.Node) bool {
	if len(n.Attr) == 0 {
		return tag.nattr == 0
	}
	a := n.Attr[0]
	key := a.Key
	if a.Namespace != "" {
		key = a.Namespace + ":" + a.Key
	}
	return strings.EqualFold(tag.key, key) && tag.val == a.Val
}
