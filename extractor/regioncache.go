package extractor

import (
	"bytes"

	"github.com/cespare/xxhash/v2"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Region cache: most polls of a changed page change one item or two, and
// the others come back byte for byte. A top-level region (an annotation
// opened with no other region open, up to its closing) whose raw bytes were
// extracted before, with the same value limit and without a diagnostic,
// gives the same region again; the [DescriptionCache] (when
// [Options.Descriptions] is set) remembers what such regions gave, so that
// a region seen before costs its tokenizing, a hash and a lookup instead of
// the annotation parsing, value collection and string building.
//
// How (see builder.read): when an annotation comment opens a region with
// the builder in its resting state (no region open, none refused for depth,
// no hidden element pending), the builder records the raw bytes of the
// following tokens without handling them, until the closing comment of the
// same tag. Nothing in between is handled: a region seen before is then
// committed from the cache, with the position moved by its recorded extent.
// Otherwise the recorded bytes are replayed through a fresh tokenizer into
// the ordinary handling, which on a clean close stores the region. Any other
// annotation comment (a nested region) or a <base> tag inside stops the
// recording and replays at once, so cached regions never contain either.
//
// Why the replay is exact: the recording starts at a comment token, which
// the tokenizer reads only in its data state and which leaves no pending
// state (no raw-text element), so a new tokenizer reading the same bytes
// from the same point yields the same tokens; and each token ends where its
// own bytes end (the last one is the closing comment's "-->"), so ending
// the replay's input there changes none of them. Why the cache is exact:
// the handling of a region's tokens from the resting state depends only on
// those bytes and on the value limit (both in the key, the bytes compared in
// full, not trusted to the hash), and leaves the builder in the resting
// state again; its position moves by the region's extent, which is
// recorded. What depends on the rest of the page (the item the region joins,
// a field given twice, the item count) is done by commit, which runs on
// every use. Regions that gave a diagnostic, were cut or ignored are not
// stored, so a cached region has no diagnostic to repeat.

// maxSpan caps the bytes a recording holds before it gives up and replays:
// large regions are rare and gain little.
const maxSpan = 16 << 10

// regionKey identifies a region's raw bytes under a value limit.
type regionKey struct {
	hash  uint64
	n     int
	limit int
}

// regionResult is what a region gave: everything commit reads. It is
// shared by the extractions that use it and never modified.
type regionResult struct {
	a       annotation // its attrs are shared too
	index   int
	text    string
	href    string
	hasHref bool
	html    string // set when markup
	urls    []string
	markup  bool
	unbatch bool
	lines   int // line breaks in the region's bytes
	col     int // the column after it when lines > 0, else the columns it spans
}

type regionEntry struct {
	key regionKey
	raw string
	res *regionResult
}

func (e *regionEntry) cost() int64 {
	n := len(e.raw) + len(e.res.text) + len(e.res.href) + len(e.res.html) + 64*len(e.res.a.attrs)
	for _, u := range e.res.urls {
		n += len(u) + 16
	}
	return int64(n) + 2*descEntryOverhead
}

// getRegion returns what the region of these raw bytes gave, if cached.
func (c *DescriptionCache) getRegion(raw []byte, limit int) (*regionResult, bool) {
	k := regionKey{xxhash.Sum64(raw), len(raw), limit}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.regions[k]
	if !ok {
		return nil, false
	}
	ent := e.Value.(*regionEntry)
	if ent.raw != string(raw) { // a hash collision: not the same region
		return nil, false
	}
	c.ll.MoveToFront(e)
	return ent.res, true
}

// putRegion remembers what the region of these raw bytes gave.
func (c *DescriptionCache) putRegion(raw []byte, limit int, res *regionResult) {
	ent := &regionEntry{key: regionKey{xxhash.Sum64(raw), len(raw), limit}, raw: string(raw), res: res}
	cost := ent.cost()
	if cost > c.limit/8 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.regions[ent.key]; ok {
		c.ll.MoveToFront(e)
		return
	}
	c.regions[ent.key] = c.ll.PushFront(ent)
	c.size += cost
	c.evict()
}

// recording is a region being recorded (see the comment above).
type recording struct {
	active    bool
	replaying bool   // tokens come from a replay: do not record
	buf       []byte // the raw bytes, from the opening comment on
	name      []byte // the opening tag's name, as written
	at        pos    // where the opening comment starts
	prevCR    bool
	// set while the replay handles the last recorded token of a complete
	// region: close stores the region if it is clean
	store bool
	diags int // diagnostics before the region
}

// regionName reads the tag of an annotation comment's body without
// parsing its attributes: its name as written, whether it closes, whether
// it is an empty tag (ends with "/>").
func regionName(body []byte) (name []byte, closing, empty bool) {
	s := bytes.TrimSpace(body)
	if len(s) < 2 || s[0] != '<' {
		return nil, false, false
	}
	empty = bytes.HasSuffix(s, []byte("/>"))
	i := 1
	if s[1] == '/' {
		closing = true
		i++
	}
	start := i
	for i < len(s) && isNameByte(s[i]) {
		i++
	}
	return s[start:i], closing, empty
}

// startRecording begins recording at an annotation comment if it opens a
// region from the resting state; it reports whether it did. start and
// startCR are the position and line-break state before the comment.
func (b *builder) startRecording(raw, body []byte, start pos, startCR bool) bool {
	if b.opts.Descriptions == nil || b.rec.replaying || len(b.stack) > 0 || b.skipped > 0 || b.hiddenEnd != 0 {
		return false
	}
	name, closing, empty := regionName(body)
	if closing || empty || len(name) == 0 {
		return false
	}
	r := &b.rec
	r.active = true
	r.buf = append(r.buf[:0], raw...)
	r.name = append(r.name[:0], name...)
	r.at, r.prevCR = start, startCR
	b.at, b.prevCR = start, startCR // moved by the region's extent once it is known
	return true
}

// record takes a token while recording.
func (b *builder) record(z *html.Tokenizer, tt html.TokenType) {
	r := &b.rec
	raw := z.Raw()
	r.buf = append(r.buf, raw...)
	switch tt {
	case html.CommentToken:
		body := z.Text()
		if !looksLikeAnnotation(body) {
			break
		}
		if name, closing, _ := regionName(body); closing && bytes.EqualFold(name, r.name) {
			b.endRecording()
			return
		}
		b.replay(false) // a nested region, or a closing of another: handled in full
		return
	case html.StartTagToken, html.SelfClosingTagToken:
		if len(raw) > 1 && raw[1]|0x20 == 'b' && tagAtom(raw) == atom.Base {
			b.replay(false)
			return
		}
	}
	if len(r.buf) > maxSpan {
		b.replay(false)
	}
}

// endRecording ends a complete region: from the cache, else replayed.
func (b *builder) endRecording() {
	r := &b.rec
	res, ok := b.opts.Descriptions.getRegion(r.buf, b.limits.MaxValueBytes)
	if !ok {
		b.replay(true)
		return
	}
	r.active = false
	reg := b.newRegion()
	reg.a, reg.at, reg.index = res.a, r.at, res.index
	reg.href, reg.hasHref = res.href, res.hasHref
	reg.urls, reg.markup, reg.unbatch = res.urls, res.markup, res.unbatch
	reg.done, reg.doneText, reg.doneHTML = true, res.text, res.html
	b.commit(reg)
	b.release(reg)
	if res.lines > 0 {
		b.at = pos{b.at.line + res.lines, res.col}
	} else {
		b.at.col += res.col
	}
	b.prevCR = false // the region ends with the closing comment's '>'
}

// replay handles the recorded tokens in full, through a new tokenizer over
// the recorded bytes; with store, the region is stored if it closes cleanly.
func (b *builder) replay(store bool) {
	r := &b.rec
	r.active = false
	r.replaying = true
	defer func() { r.replaying, r.store = false, false }()
	b.at, b.prevCR = r.at, r.prevCR
	z := html.NewTokenizer(bytes.NewReader(r.buf))
	z.SetMaxBuf(b.limits.MaxTokenBytes)
	// A region is stored only if replaying it adds no diagnostic: counted
	// from before its opening comment, which may warn (an attribute given
	// twice) and still open the region.
	n, before := 0, b.diags.count()
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			return // EOF: every recorded token was read before, so none is too large
		}
		n += len(z.Raw())
		if store && n == len(r.buf) {
			r.store, r.diags = true, before
		}
		b.token(z, tt)
	}
}

// storeRegion is called by close, before the commit, for a region that
// closes with the builder about to be resting again: if the region is the
// recorded one and clean, what it gave is cached, and commit uses the same
// strings.
func (b *builder) storeRegion(reg *region) {
	r := &b.rec
	if !r.store || reg.ignored || reg.text.cut || reg.htmlCut || b.diags.count() != r.diags || b.hiddenEnd != 0 || b.skipped > 0 {
		return
	}
	r.store = false
	res := &regionResult{
		a: reg.a, index: reg.index, text: reg.text.String(),
		href: reg.href, hasHref: reg.hasHref, urls: reg.urls, markup: reg.markup, unbatch: reg.unbatch,
	}
	res.a.attrs = append([]attr(nil), reg.a.attrs...) // reg's own are reused
	if reg.markup {
		res.html = string(reg.html)
	}
	if b.at.line > r.at.line {
		res.lines, res.col = b.at.line-r.at.line, b.at.col
	} else {
		res.col = b.at.col - r.at.col
	}
	reg.done, reg.doneText, reg.doneHTML = true, res.text, res.html
	b.opts.Descriptions.putRegion(r.buf, b.limits.MaxValueBytes, res)
}
