package extractor

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// ErrNoItems is returned by a selector extraction whose item selector
// matched nothing (or whose every item was dropped): no document, never an
// empty one that would erase a resource's history. The message names the
// selector.
var ErrNoItems = errors.New("extractor: the item selector matched nothing")

// dcNamespace is Dublin Core's, where a selected date goes (dc:date).
const dcNamespace = "http://purl.org/dc/elements/1.1/"

// Extract extracts the page with these selectors: [Extract] with
// opts.Select set to s.
func (s *Selectors) Extract(r io.Reader, opts Options) (*Result, error) {
	opts.Select = s
	return Extract(r, opts)
}

// extractSelect is the selector front end (opts.Select is set): it parses
// the page into a tree, fills the builder's fields from what the selectors
// match, and hands them to the same back end as annotations
// ([builder.finish]: URLs, sanitizing, identity, the document).
func extractSelect(r io.Reader, opts Options) (*Result, error) {
	b := newBuilder(opts)
	// The decoded page is read again for the positions of diagnostics
	// (treePos), only when one needs a position: a page that can be read
	// again (the poller's bytes.Reader) is, decoded anew; another is kept
	// as it is decoded.
	again, start := r.(io.ReadSeeker)
	var from int64
	if start {
		var err error
		if from, err = again.Seek(0, io.SeekCurrent); err != nil {
			start = false
		}
	}
	in, err := b.decoder(bufio.NewReaderSize(r, peekSize))
	if err != nil {
		return b.result(nil), fmt.Errorf("read page: %w", err)
	}
	var kept bytes.Buffer
	if !start {
		in = io.TeeReader(in, &kept)
	}
	doc, err := html.Parse(in)
	if err != nil {
		return b.result(nil), fmt.Errorf("read page: %w", err)
	}
	b.tree = &treePos{doc: doc, src: func() []byte {
		if !start {
			return kept.Bytes()
		}
		if _, err := again.Seek(from, io.SeekStart); err != nil {
			return nil // no positions: diagnostics at 1:1
		}
		dec, err := newBuilder(opts).decoder(bufio.NewReaderSize(again, peekSize)) // its own warnings were given
		if err != nil {
			return nil
		}
		page, err := io.ReadAll(dec)
		if err != nil {
			return nil
		}
		return page
	}}
	b.diags.resolve = b.tree.resolve
	if err := b.selectFields(opts.Select, doc); err != nil {
		return b.result(nil), err
	}
	res, err := b.finish()
	if err != nil {
		return res, err
	}
	if len(res.Document.Items) == 0 { // every item was dropped
		b.diags.max++
		b.fail(pos{1, 1}, "no item is left (each had neither title nor description): no document")
		return b.result(nil), fmt.Errorf("%w: every item of %s was dropped", ErrNoItems, opts.Select.source())
	}
	return res, nil
}

// selAt is where the diagnostics that concern the select block rather
// than a place in the page are reported.
var selAt = pos{1, 1}

// misses counts, per field, the items where a selector found no value.
type misses struct {
	n     int
	items []int // the first few
	at    pos   // the first item's (or for the channel, the page's)
}

// selectFields fills b.channel and b.items from the selectors: the
// intermediate form the annotation front end fills from regions.
func (b *builder) selectFields(s *Selectors, doc *html.Node) error {
	if n := findElement(doc, atom.Base, "href"); n != nil {
		b.base, b.hasBase, b.baseAt = attrMatch(n, "href").s, true, b.tree.at(n)
	}
	var miss [numSel]misses
	q := &fieldQuery{ec: newEvalCache(), miss: &miss}
	c := &b.channel
	if m := b.query(s, selChannelTitle, doc, doc, q); m.found() {
		b.textField(&c.title, m)
	}
	if !c.title.set {
		if t := findElement(doc, atom.Title, ""); t != nil {
			b.textField(&c.title, match{n: t})
		}
	}
	if !c.title.set {
		c.title = field{set: true, val: b.page.String(), at: selAt}
		b.warn(selAt, "the page has no <title> and no channel.title selector: the channel title is the page URL")
	}
	if m := b.query(s, selChannelLink, doc, doc, q); m.found() {
		b.urlField(&c.link, m)
	}
	if m := b.query(s, selChannelDescription, doc, doc, q); m.found() {
		b.descriptionField(&c.description, m)
	}
	if m := b.query(s, selChannelImage, doc, doc, q); m.found() {
		c.image = b.imageOf(m)
	}

	if s.from != "" {
		return b.schemaOrgItems(doc) // the third front end: schemaorg.go
	}
	nodes, err := s.item.elements(q.ec, doc, doc)
	if err != nil {
		b.diags.max++
		b.fail(selAt, fmt.Sprintf("select.item %q: %v: no document", shorten(s.spec.Item), err))
		return fmt.Errorf("%w: %q: %w", ErrNoItems, s.spec.Item, err)
	}
	if len(nodes) == 0 {
		b.diags.max++ // always room for the reason there is no document
		b.fail(selAt, fmt.Sprintf("select.item %q matched nothing on the page: no document", shorten(s.spec.Item)))
		return fmt.Errorf("%w: %q", ErrNoItems, s.spec.Item)
	}
	for i, n := range nodes {
		index := i + 1
		if index > b.limits.MaxItems {
			b.fail(selAt, fmt.Sprintf("select.item matched %d elements, more than %d: the rest are ignored", len(nodes), b.limits.MaxItems))
			break
		}
		it := &itemSpec{index: index, at: b.tree.at(n)}
		b.items[index] = it
		f := &it.fields
		if m := b.query(s, selTitle, doc, n, q, index); m.found() {
			b.textField(&f.title, m)
		}
		if m := b.query(s, selDescription, doc, n, q, index); m.found() {
			b.descriptionField(&f.description, m)
		}
		if s.fields[selTitle] == nil && s.fields[selDescription] == nil {
			b.textField(&f.title, match{n: n}) // no title or description selector: the item's text
		}
		if s.fields[selLink] != nil {
			if m := b.query(s, selLink, doc, n, q, index); m.found() {
				b.urlField(&f.link, m)
			}
		} else if a := findElement(n, atom.A, "href"); a != nil {
			f.link = field{set: true, val: attrMatch(a, "href").s, at: b.tree.at(a)} // no link selector: the item's first link
		}
		if m := b.query(s, selDate, doc, n, q, index); m.found() {
			var v value
			v.limit = b.limits.MaxValueBytes
			b.text(&v, m)
			if d := v.String(); d != "" {
				f.exts = append(f.exts, extSpec{uri: dcNamespace, prefix: "dc", local: "date", val: d,
					layout: s.fields[selDate].layout, at: b.tree.at(m.node())})
			}
		}
		if m := b.query(s, selImage, doc, n, q, index); m.found() {
			f.image = b.imageOf(m)
		}
		if m := b.query(s, selID, doc, n, q, index); m.found() {
			var v value
			v.limit = b.limits.MaxValueBytes
			b.text(&v, m)
			it.id = v.String()
		}
	}
	for k, m := range miss {
		if m.n == 0 {
			continue
		}
		where := "on the page"
		if k < int(selChannelTitle) {
			var list []string
			for _, i := range m.items {
				list = append(list, strconv.Itoa(i))
			}
			more := ""
			if m.n > len(m.items) {
				more = ", …"
			}
			where = fmt.Sprintf("in %d of %d items (item %s%s)", m.n, len(b.items), strings.Join(list, ", "), more)
		}
		b.warn(m.at, fmt.Sprintf("select.%s %q matched nothing %s", selNames[k], shorten(s.fields[k].src()), where))
	}
	return nil
}

// fieldQuery is what the field queries of one extraction share: what the
// selectors computed on the page, the misses counted per field, the
// fields whose selector cost too much (reported once).
type fieldQuery struct {
	ec     *evalCache
	miss   *[numSel]misses
	costly [numSel]bool
}

// query runs field k (if set) under ctx; a miss is counted (index is
// the item's, none for the channel). A selector that costs too much on
// the page leaves the field empty, with one error.
func (b *builder) query(s *Selectors, k fieldKind, doc, ctx *html.Node, q *fieldQuery, index ...int) match {
	f := s.fields[k]
	if f == nil || q.costly[k] {
		return match{}
	}
	miss := q.miss
	m, unmatched, err := b.fieldValue(f, doc, ctx, q.ec)
	if err != nil {
		q.costly[k] = true
		b.fail(selAt, fmt.Sprintf("select.%s %q: %v: the field is left empty", selNames[k], shorten(f.src()), err))
		return match{}
	}
	if m.found() && (m.n != nil || !blank(m.s)) {
		return m
	}
	if unmatched.found() {
		b.warn(b.tree.at(unmatched.node()), fmt.Sprintf("select.%s.pattern %q matched nothing in %q: the field is empty",
			selNames[k], shorten(f.pattern.String()), shorten(b.matchText(unmatched))))
		return match{}
	}
	ms := &miss[k]
	if ms.n == 0 {
		ms.at = b.tree.at(ctx)
	}
	ms.n++
	if len(index) > 0 && len(ms.items) < 5 {
		ms.items = append(ms.items, index[0])
	}
	return match{}
}

// fieldValue runs a field's selectors under ctx: the first that yields a
// value (with one selector, its first match, as before field mappings),
// or with join every value of every selector, joined; the pattern, if
// any, applied to each. unmatched is a value the pattern did not match,
// when no other value was found.
func (b *builder) fieldValue(f *fieldSel, doc, ctx *html.Node, ec *evalCache) (m, unmatched match, err error) {
	if f.join != nil {
		var parts []string
		var first *html.Node
		for _, sel := range f.sels {
			all, err := sel.all(ec, doc, ctx)
			if err != nil {
				return match{}, match{}, err
			}
			for _, m := range all {
				t, ok := b.patterned(f, m)
				if !ok && !unmatched.found() {
					unmatched = m
				}
				if t != "" {
					parts = append(parts, t)
					if first == nil {
						first = m.node()
					}
				}
			}
		}
		if len(parts) == 0 {
			return match{}, unmatched, nil
		}
		return match{s: strings.Join(parts, *f.join), str: true, el: first}, match{}, nil
	}
	for _, sel := range f.sels {
		m, err := sel.firstIn(ec, doc, ctx)
		if err != nil {
			return match{}, match{}, err
		}
		if !m.found() || m.n == nil && blank(m.s) {
			continue
		}
		if f.pattern == nil && (len(f.sels) == 1 || b.matchText(m) != "") {
			return m, match{}, nil
		}
		if f.pattern == nil {
			continue
		}
		t, ok := b.patterned(f, m)
		if t != "" {
			return match{s: t, str: true, el: m.node()}, match{}, nil
		}
		if !ok && !unmatched.found() {
			unmatched = m
		}
	}
	return match{}, unmatched, nil
}

// patterned returns a match's text with the field's pattern applied: its
// first group, else its whole match; ok is false when the pattern did not
// match a text that was there.
func (b *builder) patterned(f *fieldSel, m match) (string, bool) {
	t := b.matchText(m)
	if f.pattern == nil || t == "" {
		return t, true
	}
	sub := f.pattern.FindStringSubmatch(t)
	switch {
	case sub == nil:
		return "", false
	case len(sub) > 1:
		return clean(sub[1]), true
	}
	return clean(sub[0]), true
}

// matchText is a match's text, as a title's.
func (b *builder) matchText(m match) string {
	v := value{limit: b.limits.MaxValueBytes}
	b.text(&v, m)
	return v.String()
}

// text reads a match as text (ANNOTATIONS.md's text rules, by [value]).
func (b *builder) text(v *value, m match) {
	if m.str {
		v.addText([]byte(m.s))
		return
	}
	nodeText(v, m.n, 0)
}

// textField sets a title-like field from a match.
func (b *builder) textField(f *field, m match) {
	v := value{limit: b.limits.MaxValueBytes}
	b.text(&v, m)
	if v.cut {
		b.fail(b.tree.at(m.node()), fmt.Sprintf("a selected value is longer than %d bytes: cut", b.limits.MaxValueBytes))
	}
	if s := v.String(); s != "" {
		*f = field{set: true, val: s, at: b.tree.at(m.node())}
	}
}

// urlField sets a link field: an attribute's value, or, for an element,
// the href of the first <a> in it (itself included), else its text: the
// URL rule of annotations. finish resolves it.
func (b *builder) urlField(f *field, m match) {
	if m.n != nil {
		if a := findElement(m.n, atom.A, "href"); a != nil {
			*f = field{set: true, val: attrMatch(a, "href").s, at: b.tree.at(a)}
			return
		}
	}
	b.textField(f, m)
}

// imageOf reads an image: an attribute's value, or for an element the src
// of the first <img> in it (itself included), else its text.
func (b *builder) imageOf(m match) *imageSpec {
	if m.n != nil {
		if img := findElement(m.n, atom.Img, "src"); img != nil {
			return &imageSpec{url: attrMatch(img, "src").s, at: b.tree.at(img)}
		}
	}
	var f field
	b.textField(&f, m)
	if !f.set {
		return nil
	}
	return &imageSpec{url: f.val, at: f.at}
}

// descriptionField sets a description: its text, and for an element with
// markup its inner HTML, written as the annotation front end writes a
// region's (URL placeholders, hidden elements and comments left out), for
// finish to resolve and sanitize into content:encoded.
func (b *builder) descriptionField(f *field, m match) {
	if m.str {
		b.textField(f, m)
		return
	}
	v := value{limit: b.limits.MaxValueBytes}
	nodeText(&v, m.n, 0)
	var r region
	for c := m.n.FirstChild; c != nil; c = c.NextSibling {
		nodeHTML(&r, c, b.limits.MaxValueBytes, 0)
	}
	if v.cut || r.htmlCut {
		b.fail(b.tree.at(m.n), fmt.Sprintf("a selected description is longer than %d bytes: cut", b.limits.MaxValueBytes))
	}
	h := ""
	if r.markup {
		h = string(r.html)
	}
	if v.String() == "" && h == "" {
		return
	}
	*f = field{set: true, val: v.String(), html: h, urls: r.urls, batch: !r.unbatch, at: b.tree.at(m.n)}
}

// maxTreeDepth bounds the recursion over a parsed page (html.Parse keeps
// at most 512 open elements; this is a second guard).
const maxTreeDepth = 1024

// nodeText adds the text of n to v as the tokenizer front end would: text
// nodes; script, style and the other hidden elements skipped; block
// boundaries as white space.
func nodeText(v *value, n *html.Node, depth int) {
	if depth > maxTreeDepth {
		return
	}
	switch n.Type {
	case html.TextNode:
		v.addText([]byte(n.Data))
		return
	case html.ElementNode:
		if isHidden(n.DataAtom) {
			return
		}
	case html.DocumentNode:
	default:
		return
	}
	block := n.Type == html.ElementNode && isBlock(n.DataAtom)
	if block {
		v.addSpace()
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		nodeText(v, c, depth+1)
	}
	if block {
		v.addSpace()
	}
}

// nodeHTML writes n into a description's HTML with the region methods the
// annotation front end uses: start tags with URL placeholders, text
// escaped, hidden elements and comments left out.
func nodeHTML(r *region, n *html.Node, limit, depth int) {
	if depth > maxTreeDepth {
		return
	}
	switch n.Type {
	case html.TextNode:
		r.appendHTML(appendEscaped(nil, []byte(n.Data)), limit, false)
		return
	case html.ElementNode:
	default:
		return
	}
	if isHidden(n.DataAtom) {
		return
	}
	start := []byte("<" + n.Data)
	r.unbatch = r.unbatch || unbatchable(n.DataAtom, start)
	attrs := make([]tagAttr, 0, len(n.Attr))
	for _, a := range n.Attr {
		if a.Namespace == "" {
			attrs = append(attrs, tagAttr{[]byte(a.Key), []byte(a.Val)})
		}
	}
	r.appendTag(start, attrs, false, limit)
	if isVoid(n.DataAtom) {
		return
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		nodeHTML(r, c, limit, depth+1)
	}
	end := []byte("</" + n.Data + ">")
	r.unbatch = r.unbatch || unbatchable(n.DataAtom, end)
	r.appendHTML(end, limit, true)
}

// isVoid reports the elements that have no end tag.
func isVoid(a atom.Atom) bool {
	switch a {
	case atom.Area, atom.Base, atom.Br, atom.Col, atom.Embed, atom.Hr, atom.Img, atom.Input,
		atom.Link, atom.Meta, atom.Source, atom.Track, atom.Wbr:
		return true
	}
	return false
}

// findElement returns the first element a at or under n (in document
// order) that has the attribute attr ("" for any).
func findElement(n *html.Node, a atom.Atom, attr string) *html.Node {
	var found *html.Node
	var walk func(*html.Node, int) bool
	walk = func(n *html.Node, depth int) bool {
		if depth > maxTreeDepth {
			return true
		}
		if n.Type == html.ElementNode && n.DataAtom == a && (attr == "" || attrMatch(n, attr).found()) {
			found = n
			return false
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if !walk(c, depth+1) {
				return false
			}
		}
		return true
	}
	walk(n, 0)
	return found
}
