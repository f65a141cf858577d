package extractor

import (
	"bufio"
	"bytes"
	"fmt"
	"net/url"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// What another reader of pages (the suggester, package suggest) needs to
// read a page exactly as extraction does: the same decoding, the same
// tree, the same text, the same selectors.

// MaxTreeDepth bounds the recursion over a parsed page: a walk goes no
// deeper (html.Parse keeps at most 512 open elements; this is a second
// guard).
const MaxTreeDepth = maxTreeDepth

// ParsePage decodes page as [Extract] does (opts.ContentType, a byte-order
// mark, <meta>, detection) and parses it into a tree. It also returns the
// page's URL as extraction resolves links against it (opts.URL, else
// [DefaultURL]).
func ParsePage(page []byte, opts Options) (*html.Node, *url.URL, error) {
	b := newBuilder(opts)
	in, err := b.decoder(bufio.NewReaderSize(bytes.NewReader(page), peekSize))
	if err != nil {
		return nil, nil, fmt.Errorf("read page: %w", err)
	}
	doc, err := html.Parse(in)
	if err != nil {
		return nil, nil, fmt.Errorf("read page: %w", err)
	}
	return doc, b.page, nil
}

// Text is an element's text by the value rules (hidden elements left
// out, block boundaries as white space, white space collapsed), at most
// 4 KiB of it.
func Text(n *html.Node) string {
	v := value{limit: 4096}
	nodeText(&v, n, 0)
	return v.String()
}

// CleanText is s as a one-line text value: white space collapsed and
// trimmed, characters XML does not allow removed.
func CleanText(s string) string { return clean(s) }

// IsHidden reports whether an element's content is markup or code, not
// text (script, style, noscript, iframe, noembed, noframes).
func IsHidden(a atom.Atom) bool { return isHidden(a) }

// IsBlock reports whether an element's boundaries read as white space in
// text.
func IsBlock(a atom.Atom) bool { return isBlock(a) }

// Field is one compiled field selector of a select block: CSS or
// "xpath:EXPR", with an optional trailing " @attr", or "@attr" alone.
type Field struct{ sel *selector }

// CompileField compiles a field selector as [CompileSelectors] does.
func CompileField(src string) (*Field, error) {
	s, err := compileSelector(src)
	if err != nil {
		return nil, err
	}
	return &Field{sel: s}, nil
}

// FieldMatch is what a field selector found first: an element, or a
// string (an attribute's value, or what an XPath expression computed).
type FieldMatch struct {
	Node  *html.Node // the element; nil for a string
	Value string     // the string
	IsStr bool       // Value is the match
}

// First is the field's first match with item as the context node in doc,
// as extraction takes a field's value.
func (f *Field) First(doc, item *html.Node) FieldMatch {
	m := f.sel.first(doc, item)
	return FieldMatch{Node: m.n, Value: m.s, IsStr: m.str}
}

// FindElement returns the first element a at or under n (in document
// order) that has the attribute attr ("" for any).
func FindElement(n *html.Node, a atom.Atom, attr string) *html.Node {
	return findElement(n, a, attr)
}

// WalkAll calls f on every element at or under n, in document order,
// hidden ones included (a JSON-LD block is a <script>).
func WalkAll(n *html.Node, f func(*html.Node)) { walkAll(n, f) }
