package extractor

import (
	"bytes"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/dynamo-rss/dynamo/schema"
)

// region is an open annotation: its tag, where it opened, and what it has
// collected so far. Text goes only to the innermost open region, so a
// region's value never includes the text of regions nested in it.
type region struct {
	a       annotation
	at      pos
	index   int  // item index; 0 for channel tags
	ignored bool // a malformed or unknown opening: the content is discarded

	text    value
	href    string // the first <a href> in a URL region
	hasHref bool
	html    []byte   // a description's raw HTML (valueHTML only)
	urls    []string // URLs of html's placeholders (see appendTag)
	htmlCut bool
	markup  bool // html holds at least one tag
	unbatch bool // html has a tag that [unbatchable] refuses
	attrBuf []attr

	// done: the region's text and HTML are already strings (a region from
	// the region cache, or one just stored in it)
	done               bool
	doneText, doneHTML string
}

// field is a singleton value (a title, a link...) with where it was given.
type field struct {
	set       bool
	val       string
	html      string   // descriptions: raw HTML when the region had markup
	urls      []string // the URLs of html's placeholders
	batch     bool     // html may be sanitized with others (see sanitizer.all)
	sanitized string   // html sanitized, set by sanitizer.all
	at        pos
}

type imageSpec struct {
	url, title, link string
	at               pos
}

type extSpec struct {
	uri, prefix, local, val string
	layout                  string // a date's own Go layout, tried first (a select field's format)
	at                      pos
}

// fields are what the channel and every item collect.
type fields struct {
	title, link, description field
	image                    *imageSpec
	exts                     []extSpec
}

type itemSpec struct {
	fields
	index int
	at    pos // the item's first annotation
	id    string
	idAt  pos
}

// builder is the state of one extraction: the open regions, what closed
// regions produced, and the diagnostics.
type builder struct {
	opts    Options
	limits  Limits
	page    *url.URL
	charset string

	at     pos  // position of the next token
	prevCR bool // the previous token ended with "\r"
	diags  diagList

	stack      []*region
	free       []*region // released regions, for reuse
	cur        *region   // the innermost open region that is not ignored
	descs      []*region // the open descriptions
	needHref   bool      // an open URL region has not met its first <a href> yet
	skipped    int       // openings refused for depth whose closing has not come yet
	hiddenNext bool      // the next text token is the raw content of a hidden element
	hiddenEnd  atom.Atom

	attrs   []tagAttr // the current tag's attributes, when they were needed
	scratch []attr    // reused by parseAnnotation
	values  interner  // annotation attribute values
	san     sanitizer // the in-line sanitizer
	rec     recording // the region being recorded (see regioncache.go)

	base    string // the first <base href>, unresolved
	hasBase bool
	baseAt  pos

	channel     fields
	items       map[int]*itemSpec
	lastItem    *itemSpec  // the item of the last lookup
	slab        []itemSpec // room for the next items
	itemsCapped bool

	tree       *treePos      // the selector front end's positions; nil for annotations
	dates      []DateReading // with Options.ExplainDates
	relChannel bool          // the channel's date was read relative to the poll's time
	relItems   []string      // the ids of the items whose date was
}

func newBuilder(opts Options) *builder {
	lim := opts.Limits.withDefaults()
	b := &builder{
		opts:   opts,
		limits: lim,
		page:   pageURL(opts.URL),
		at:     pos{1, 1},
		diags:  diagList{max: lim.MaxDiagnostics},
		items:  make(map[int]*itemSpec),
	}
	if opts.URL != "" && b.page.String() == DefaultURL && opts.URL != DefaultURL {
		b.warn(pos{1, 1}, fmt.Sprintf("page URL %q is not an absolute URL; using %s", shorten(opts.URL), DefaultURL))
	}
	return b
}

func (b *builder) warn(at pos, msg string) { b.diags.add(at, Warning, msg) }
func (b *builder) fail(at pos, msg string) { b.diags.add(at, Error, msg) }

// token handles one token of the stream. Text goes to the innermost open
// region only; tags also go to the HTML of every open description, so a
// description's HTML stays balanced around the regions nested in it.
func (b *builder) token(z *html.Tokenizer, tt html.TokenType) {
	start, startCR := b.at, b.prevCR
	raw := z.Raw()
	b.prevCR = b.at.advance(raw, b.prevCR)
	cur := b.cur
	var kind valueKind
	if cur != nil {
		kind = cur.a.kind.value()
	}

	switch tt {
	case html.TextToken:
		hidden := b.hiddenNext
		b.hiddenNext = false
		if kind == valueNone || hidden {
			return
		}
		if kind == valueHTML {
			cur.appendHTML(raw, b.limits.MaxValueBytes, false)
		}
		cur.text.addText(z.Text())
		return
	case html.CommentToken:
		b.hiddenNext = false
		body := z.Text()
		if looksLikeAnnotation(body) && !b.startRecording(raw, body, start, startCR) {
			b.comment(body, start)
		}
		return
	case html.DoctypeToken:
		b.hiddenNext = false
		return
	}

	// Start, end and self-closing tags.
	b.hiddenNext = false
	if cur == nil && len(b.descs) == 0 && b.hiddenEnd == 0 && !b.needHref {
		// Outside every region (most of a page) only a hidden element's
		// start or <base> matter: their names begin with s, n, i or b.
		if tt == html.EndTagToken {
			return
		}
		if c := raw[1] | 0x20; c != 's' && c != 'n' && c != 'i' && c != 'b' {
			return
		}
	}
	a := tagAtom(raw) // not z.TagName(), which copies the name of every tag
	if tt == html.EndTagToken {
		if b.hiddenEnd != 0 {
			if a == b.hiddenEnd {
				b.hiddenEnd = 0
			}
			return // the end of a hidden element, whose start was not kept either
		}
	} else if tt == html.StartTagToken && isHidden(a) {
		b.hiddenNext = true
		if len(b.descs) > 0 {
			b.hiddenEnd = a
		}
		return
	}
	isStart := tt != html.EndTagToken
	urlInDesc := isStart && len(b.descs) > 0 && mayHaveURL(raw)
	// A URL region's value is the href of the first <a> in it, nested
	// regions included.
	wantHref := isStart && a == atom.A && b.needHref
	if urlInDesc || wantHref || isStart && a == atom.Base && !b.hasBase {
		b.readAttrs(z)
		if href, ok := b.attr("href"); ok {
			switch {
			case a == atom.Base && !b.hasBase:
				b.base, b.hasBase, b.baseAt = href, true, start
			case wantHref:
				for _, r := range b.stack {
					if !r.ignored && r.a.kind.value() == valueURL && !r.hasHref {
						r.href, r.hasHref = href, true
					}
				}
				b.needHref = false
			}
		}
	}
	unbatch := len(b.descs) > 0 && unbatchable(a, raw)
	for _, d := range b.descs {
		d.unbatch = d.unbatch || unbatch
		if urlInDesc {
			d.appendTag(raw, b.attrs, tt == html.SelfClosingTagToken, b.limits.MaxValueBytes)
		} else {
			d.appendHTML(raw, b.limits.MaxValueBytes, true)
		}
	}
	if kind == valueNone {
		return
	}
	if isBlock(a) {
		cur.text.addSpace()
	}
}

// tagAttr is an attribute of an HTML tag, as the tokenizer returns it. The
// tokenizer documents its slices as valid only until the next call to Next,
// so b.attrs is read for the current tag only: whatever is kept is copied
// (attr, appendTag).
type tagAttr struct{ name, value []byte }

// readAttrs reads the current tag's attributes into b.attrs.
func (b *builder) readAttrs(z *html.Tokenizer) {
	b.attrs = b.attrs[:0]
	for {
		k, v, more := z.TagAttr()
		if k == nil && !more {
			return
		}
		b.attrs = append(b.attrs, tagAttr{k, v})
		if !more {
			return
		}
	}
}

func (b *builder) attr(name string) (string, bool) {
	for _, a := range b.attrs {
		if string(a.name) == name {
			return string(a.value), true
		}
	}
	return "", false
}

// tagAtom returns the atom of a tag token's name, read from its raw text
// ("<name" or "</name") the way the tokenizer reads it, lower-cased in a
// small array so nothing is allocated; names no atom has give 0.
func tagAtom(raw []byte) atom.Atom {
	i := 1
	if len(raw) > 1 && raw[1] == '/' {
		i = 2
	}
	var buf [16]byte
	n := 0
	for ; i < len(raw); i++ {
		c := raw[i]
		if c == '>' || c == '/' || isSpace(c) {
			break
		}
		if n == len(buf) {
			return 0
		}
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[n] = c
		n++
	}
	return atom.Lookup(buf[:n])
}

// restack recomputes, after a push or pop, the innermost region that takes
// text (none inside a refused region), the open descriptions and whether an
// open URL region still waits for its <a href>.
func (b *builder) restack() {
	b.cur = nil
	b.descs = b.descs[:0]
	b.needHref = false
	for _, r := range b.stack {
		if r.ignored {
			// A refused region loses its text, and is still a region
			// nested in the ones around it: they do not get its text.
			b.cur = nil
			continue
		}
		b.cur = r
		switch r.a.kind.value() {
		case valueHTML:
			b.descs = append(b.descs, r)
		case valueURL:
			b.needHref = b.needHref || !r.hasHref
		}
	}
}

// appendHTML keeps a token of a description's HTML, whole or not at all.
func (r *region) appendHTML(raw []byte, limit int, tag bool) {
	if r.htmlCut {
		return
	}
	if len(r.html)+len(raw) > limit {
		r.htmlCut = true
		return
	}
	if bytes.IndexByte(raw, 0) >= 0 {
		// NUL is no XML character, and it marks URL placeholders (see appendTag).
		raw = bytes.ReplaceAll(raw, []byte{0}, nil)
	}
	r.html = append(r.html, raw...)
	r.markup = r.markup || tag
}

// appendTag keeps a start tag of a description whose URL attributes must be
// made absolute. The base is known only at the end of the page, so the tag
// is written normalized, with each href, src and cite value replaced by a
// placeholder NUL, index, NUL; [resolvePlaceholders] puts the resolved URLs in.
func (r *region) appendTag(raw []byte, attrs []tagAttr, selfClosing bool, limit int) {
	if r.htmlCut {
		return
	}
	n := len(r.html)
	r.html = append(r.html, '<')
	name := raw[1:]
	for i, c := range name {
		if c == '>' || c == '/' || isSpace(c) {
			name = name[:i]
			break
		}
	}
	for _, c := range name {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != 0 {
			r.html = append(r.html, c)
		}
	}
	for _, a := range attrs {
		if bytes.IndexByte(a.name, 0) >= 0 {
			continue
		}
		r.html = append(r.html, ' ')
		r.html = append(r.html, a.name...)
		r.html = append(r.html, '=', '"')
		switch string(a.name) {
		case "href", "src", "cite":
			r.html = append(r.html, 0)
			r.html = strconv.AppendInt(r.html, int64(len(r.urls)), 10)
			r.html = append(r.html, 0)
			r.urls = append(r.urls, string(a.value))
		default:
			r.html = appendEscaped(r.html, a.value)
		}
		r.html = append(r.html, '"')
	}
	if selfClosing {
		r.html = append(r.html, '/')
	}
	r.html = append(r.html, '>')
	if len(r.html) > limit {
		r.html = r.html[:n]
		r.htmlCut = true
		return
	}
	r.markup = true
}

// appendEscaped appends v escaped as html.EscapeString escapes, NULs dropped.
func appendEscaped(dst, v []byte) []byte {
	for _, c := range v {
		switch c {
		case 0:
		case '&':
			dst = append(dst, "&amp;"...)
		case '\'':
			dst = append(dst, "&#39;"...)
		case '<':
			dst = append(dst, "&lt;"...)
		case '>':
			dst = append(dst, "&gt;"...)
		case '"':
			dst = append(dst, "&#34;"...)
		case '\r':
			dst = append(dst, "&#13;"...)
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

// comment handles a comment that starts like an annotation.
func (b *builder) comment(body []byte, at pos) {
	a, _, ok, reason := parseAnnotation(body, b.scratch, &b.values)
	if cap(a.attrs) > cap(b.scratch) {
		b.scratch = a.attrs[:0]
	}
	if !ok {
		// The region it meant to open or close is lost: an error.
		b.fail(at, fmt.Sprintf("annotation %q does not parse: %s; expected a tag such as <!-- <item:title index=\"1\"> -->; it is ignored", shorten(strings.TrimSpace(string(body))), reason))
		return
	}
	if a.dup != "" {
		b.warn(at, fmt.Sprintf("<%s%s> gives the attribute %s twice; the first value is kept", closingSlash(a.closing), a.name, a.dup))
	}
	if a.closing {
		b.close(a, at)
		return
	}
	b.open(a, at)
}

func closingSlash(closing bool) string {
	if closing {
		return "/"
	}
	return ""
}

// open starts a region (or handles an empty tag at once).
func (b *builder) open(a annotation, at pos) {
	if len(b.stack) >= b.limits.MaxDepth {
		if b.skipped == 0 {
			b.fail(at, fmt.Sprintf("<%s> nested deeper than %d open regions: it and the annotations inside it are ignored", a.name, b.limits.MaxDepth))
		}
		if !a.empty {
			b.skipped++
		}
		return
	}
	r := b.newRegion()
	r.a, r.at = a, at
	if a.attrs != nil { // a copy: b.scratch is reused by the next annotation
		r.a.attrs = append(r.attrBuf[:0], a.attrs...)
		r.attrBuf = r.a.attrs
	}
	r.text.limit = b.limits.MaxValueBytes
	if a.kind == tagUnknown {
		b.fail(at, unknownTag(a.name, false))
		r.ignored = true
	} else if msg := b.checkAttrs(r); msg != "" {
		b.fail(at, fmt.Sprintf("<%s> ignored: %s", a.name, msg))
		r.ignored = true
	}
	if a.empty {
		b.commit(r)
		b.release(r)
		return
	}
	b.stack = append(b.stack, r)
	b.restack()
}

// newRegion returns a cleared region, reusing a released one and its
// buffers: regions come and go by the thousand on a page.
func (b *builder) newRegion() *region {
	if n := len(b.free); n > 0 {
		r := b.free[n-1]
		b.free = b.free[:n-1]
		return r
	}
	return &region{}
}

// release clears a committed region for reuse, keeping its buffers.
func (b *builder) release(r *region) {
	text, html, attrs := r.text.buf[:0], r.html[:0], r.attrBuf[:0]
	*r = region{}
	r.text.buf, r.html, r.attrBuf = text, html, attrs
	b.free = append(b.free, r)
}

// checkAttrs validates the required attributes of an opening tag and reads
// the index; it returns what is wrong, if anything.
func (b *builder) checkAttrs(r *region) string {
	k := r.a.kind
	if k.isItem() {
		s, ok := r.a.attr("index")
		if !ok {
			return "missing required attribute index"
		}
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			return fmt.Sprintf("index %q is not a positive integer", shorten(s))
		}
		r.index = n
	}
	var required []string
	switch k {
	case tagChannelImage, tagItemImage:
		required = []string{"url"}
	case tagChannelExtension, tagItemExtension:
		required = []string{"uri", "prefix", "localname"}
	}
	for _, name := range required {
		v, ok := r.a.attr(name)
		if !ok {
			return "missing required attribute " + name
		}
		if blank(v) {
			return "empty required attribute " + name
		}
	}
	if k == tagChannelExtension || k == tagItemExtension {
		for _, name := range []string{"prefix", "localname"} {
			v, _ := r.a.attr(name)
			if !schema.IsNCName(strings.TrimSpace(v)) {
				return fmt.Sprintf("%s %q is not an XML name without a colon", name, shorten(v))
			}
		}
		if p, _ := r.a.attr("prefix"); strings.EqualFold(strings.TrimSpace(p), "xml") || strings.EqualFold(strings.TrimSpace(p), "xmlns") {
			return fmt.Sprintf("prefix %q is reserved by XML", p)
		}
		p, _ := r.a.attr("prefix")
		l, _ := r.a.attr("localname")
		u, _ := r.a.attr("uri")
		if problem := schema.ExtensionNameProblem(strings.TrimSpace(p), strings.TrimSpace(l), clean(u)); problem != "" {
			return fmt.Sprintf("extension %q:%q (uri %q) %s", shorten(p), shorten(l), shorten(u), problem)
		}
	}
	return ""
}

// close ends the innermost open region with the same tag name; regions
// opened inside it and still open are closed with it.
func (b *builder) close(a annotation, at pos) {
	if b.skipped > 0 {
		// Regions refused for depth are nested inside all open ones, so
		// their closings come first.
		b.skipped--
		return
	}
	i := len(b.stack) - 1
	for i >= 0 && b.stack[i].a.name != a.name {
		i--
	}
	if i < 0 {
		switch {
		case a.kind == tagUnknown:
			b.fail(at, unknownTag(a.name, true))
		case len(b.stack) > 0:
			// A region is open and this does not close it: the closing
			// does not match the innermost region (an error), and the
			// region it meant to close was never opened.
			inner := b.stack[len(b.stack)-1]
			b.fail(at, fmt.Sprintf("closing %s at %d:%d does not match %s opened at %d:%d, and no <%s> is open; ignored",
				tagText(a, true), at.line, at.col, tagText(inner.a, false), inner.at.line, inner.at.col, a.name))
		default:
			b.warn(at, fmt.Sprintf("closing </%s> has no open region; ignored", a.name))
		}
		return
	}
	if i != len(b.stack)-1 {
		inner := b.stack[len(b.stack)-1]
		b.fail(at, fmt.Sprintf("closing %s at %d:%d does not match %s opened at %d:%d; both are closed here",
			tagText(a, true), at.line, at.col, tagText(inner.a, false), inner.at.line, inner.at.col))
	}
	r := b.stack[i]
	if s, ok := a.attr("index"); ok && r.a.kind.isItem() && !r.ignored {
		if n, err := strconv.Atoi(strings.TrimSpace(s)); err != nil || n != r.index {
			b.fail(at, fmt.Sprintf("closing %s at %d:%d does not match %s opened at %d:%d",
				tagText(a, true), at.line, at.col, tagText(r.a, false), r.at.line, r.at.col))
		}
	}
	if b.rec.store && i == 0 && len(b.stack) == 1 {
		b.storeRegion(r)
	}
	for j := len(b.stack) - 1; j >= i; j-- {
		b.commit(b.stack[j])
		b.release(b.stack[j])
		b.stack[j] = nil
	}
	b.stack = b.stack[:i]
	b.restack()
}

// closeAll closes the regions still open at the end of the page.
func (b *builder) closeAll() {
	for j := len(b.stack) - 1; j >= 0; j-- {
		r := b.stack[j]
		b.fail(r.at, fmt.Sprintf("unclosed %s opened at %d:%d: expected </%s>; it is closed at the end of the page", tagText(r.a, false), r.at.line, r.at.col, r.a.name))
		b.commit(r)
		b.release(r)
		b.stack[j] = nil
	}
	b.stack = b.stack[:0]
	b.restack()
}

// commit stores what a closed region produced.
func (b *builder) commit(r *region) {
	if r.ignored {
		return
	}
	k := r.a.kind
	f := &b.channel
	var it *itemSpec
	if k.isItem() {
		if it = b.item(r.index, r.at); it == nil {
			return
		}
		f = &it.fields
		if id, ok := r.a.attr("id"); ok {
			switch id = clean(id); {
			case id == "":
				b.warn(r.at, fmt.Sprintf("empty id on <%s> ignored", r.a.name))
			case it.id == "":
				it.id, it.idAt = id, r.at
			case it.id != id:
				b.warn(r.at, fmt.Sprintf("item %d already has id %q (at %d:%d); %q ignored",
					it.index, it.id, it.idAt.line, it.idAt.col, shorten(id)))
			}
		}
	}
	if r.text.cut || r.htmlCut {
		b.fail(r.at, fmt.Sprintf("<%s> value longer than %d bytes: cut", r.a.name, b.limits.MaxValueBytes))
	}
	text := func() string {
		if r.done {
			return r.doneText
		}
		return r.text.String()
	}
	switch k {
	case tagChannelTitle, tagItemTitle:
		b.set(r, &f.title, text(), "")
	case tagChannelLink, tagItemLink:
		v := r.href
		if !r.hasHref {
			v = text()
		}
		b.set(r, &f.link, v, "")
	case tagChannelDescription, tagItemDescription:
		h := ""
		switch {
		case r.done:
			h = r.doneHTML
		case r.markup:
			h = string(r.html)
		}
		if b.set(r, &f.description, text(), h) {
			f.description.urls = r.urls
			f.description.batch = !r.unbatch
		}
	case tagChannelImage, tagItemImage:
		if f.image != nil {
			b.warn(r.at, fmt.Sprintf("%s given twice (first at %d:%d): the first wins", b.what(r), f.image.at.line, f.image.at.col))
			return
		}
		u, _ := r.a.attr("url")
		title, _ := r.a.attr("title")
		link, _ := r.a.attr("link")
		f.image = &imageSpec{url: u, title: clean(title), link: link, at: r.at}
	case tagChannelExtension, tagItemExtension:
		uri, _ := r.a.attr("uri")
		prefix, _ := r.a.attr("prefix")
		local, _ := r.a.attr("localname")
		if len(f.exts) >= b.limits.MaxExtensions {
			if len(f.exts) == b.limits.MaxExtensions {
				b.fail(r.at, fmt.Sprintf("more than %d extensions in %s: this and further ones are ignored", b.limits.MaxExtensions, b.owner(r)))
				f.exts = append(f.exts, extSpec{}) // a marker: reported once, skipped by builder.extensions
			}
			return
		}
		f.exts = append(f.exts, extSpec{
			uri: clean(uri), prefix: strings.TrimSpace(prefix), local: strings.TrimSpace(local),
			val: text(), at: r.at,
		})
	}
}

// owner names what a region belongs to: "the channel" or "item 3".
func (b *builder) owner(r *region) string {
	if r.a.kind.isItem() {
		return fmt.Sprintf("item %d", r.index)
	}
	return "the channel"
}

// what names a region's field in messages: "channel:title" or "item:title of item 3".
func (b *builder) what(r *region) string {
	if r.a.kind.isItem() {
		return fmt.Sprintf("%s of item %d", r.a.name, r.index)
	}
	return r.a.name
}

// set fills a singleton field: the first non-empty value wins. It reports
// whether the value was taken.
func (b *builder) set(r *region, f *field, v, html string) bool {
	if v == "" && html == "" {
		b.warn(r.at, fmt.Sprintf("%s is empty; ignored", b.what(r)))
		return false
	}
	if f.set {
		b.warn(r.at, fmt.Sprintf("%s given twice (first at %d:%d): the first wins", b.what(r), f.at.line, f.at.col))
		return false
	}
	*f = field{set: true, val: v, html: html, at: r.at}
	return true
}

// item returns the item of an index, creating it unless there are too many.
func (b *builder) item(index int, at pos) *itemSpec {
	if it := b.lastItem; it != nil && it.index == index {
		return it // annotations of an item usually come together
	}
	if it, ok := b.items[index]; ok {
		b.lastItem = it
		return it
	}
	if len(b.items) >= b.limits.MaxItems {
		if !b.itemsCapped {
			b.itemsCapped = true
			b.fail(at, fmt.Sprintf("more than %d items: item %d and any further new item are ignored", b.limits.MaxItems, index))
		}
		return nil
	}
	if len(b.slab) == 0 {
		b.slab = make([]itemSpec, min(max(len(b.items), 8), 256)) // a few allocations for many items
	}
	it := &b.slab[0]
	b.slab = b.slab[1:]
	*it = itemSpec{index: index, at: at}
	b.items[index] = it
	b.lastItem = it
	return it
}

// sortedItems returns the items in index order.
func (b *builder) sortedItems() []*itemSpec {
	out := make([]*itemSpec, 0, len(b.items))
	for _, it := range b.items {
		out = append(out, it)
	}
	slices.SortFunc(out, func(x, y *itemSpec) int { return x.index - y.index })
	return out
}
