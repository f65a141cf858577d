package extractor

import (
	"bytes"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"

	"github.com/microcosm-cc/bluemonday"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// feedPolicy is the bluemonday policy for description HTML: an explicit
// allow list of the elements and attributes feed readers render, nothing
// else. No script, style, event handler, style attribute or form element;
// URLs (href, src, cite) must parse and be http, https or mailto; links get
// rel="nofollow". It uses no regular expression, so it is much cheaper than
// bluemonday's UGC policy. An <a> whose attributes were all refused (a
// javascript: link) is kept bare rather than dropped with its closing tag:
// harmless, and it leaves bluemonday with no state that outlives the
// description (see [unbatchable]). An <img> left without attributes is
// dropped. Building the policy is done once; a built Policy is never
// modified and is safe for concurrent use.
var feedPolicy = sync.OnceValue(func() *bluemonday.Policy {
	p := bluemonday.NewPolicy()
	p.AllowStandardURLs() // parseable URLs, no relative URLs, http, https, mailto
	p.AllowURLSchemes("http", "https", "mailto")
	p.RequireNoFollowOnLinks(true)
	p.AllowElements(
		"p", "br", "b", "i", "em", "strong", "u", "s", "sub", "sup", "small", "code", "pre",
		"blockquote", "q", "ul", "ol", "li", "dl", "dt", "dd", "h1", "h2", "h3", "h4", "h5", "h6",
		"table", "thead", "tbody", "tr", "td", "th", "span", "div", "hr")
	p.AllowAttrs("href", "title").OnElements("a")
	p.AllowAttrs("src", "alt", "title", "width", "height").OnElements("img")
	p.AllowAttrs("cite").OnElements("blockquote", "q")
	p.AllowNoAttrs().OnElements("a")
	return p
})

// unbatchable reports whether a tag, wherever it appears in a description,
// could leave bluemonday (or its tokenizer) in a state that outlives the
// description: the raw-text elements, whose content the tokenizer reads up to
// their end tag, and the elements whose content bluemonday skips until their
// end tag. A description with any of them is sanitized on its own. So is
// one with an </img> end tag: an <img> dropped for want of attributes leaves
// "img" on bluemonday's stack of closing tags to skip, which only an </img>
// would find.
func unbatchable(a atom.Atom, raw []byte) bool {
	switch a {
	case atom.Img:
		return len(raw) > 1 && raw[1] == '/'
	case atom.Script, atom.Style, atom.Textarea, atom.Title, atom.Xmp, atom.Iframe, atom.Noembed,
		atom.Noframes, atom.Noscript, atom.Plaintext, atom.Frame, atom.Frameset, atom.Object:
		return true
	case 0:
		// Names without an atom: bluemonday's default skip list also has "nostyle".
		name := raw[1:]
		if len(name) > 0 && name[0] == '/' {
			name = name[1:]
		}
		return len(name) >= len("nostyle") && hasPrefixFold(name, "nostyle") &&
			(len(name) == len("nostyle") || name[len("nostyle")] == '>' || name[len("nostyle")] == '/' || isSpace(name[len("nostyle")]))
	}
	return false
}

// sanitizer sanitizes descriptions; its buffers are reused.
type sanitizer struct {
	in   []byte // the batch's input: resolved descriptions and separators
	ends []int  // where each batched description ends in in
}

// all sets each description's content:encoded value: URL
// placeholders replaced by the URLs resolved against base, sanitized by
// bluemonday (which sees absolute URLs, so its scheme policy applies to what
// readers will follow), stripped of characters XML does not allow.
//
// A description that bluemonday would give back unchanged (see
// [passesUnchanged]) does not go through it.
//
// Sanitizing is one bluemonday call for all the batchable descriptions of the
// page, joined by a separator: bluemonday writes each token as it reads it,
// and a batchable description (see [unbatchable]) ends with the tokenizer in
// its data state and bluemonday with no pending state, so the output is the
// descriptions' outputs joined by the separator. The separator is a text
// with a random token that is checked not to occur in the input; it starts
// and ends with a space so that it cannot extend a character reference or a
// tag. If the output does not have exactly the expected separators, each
// description is sanitized on its own.
func (s *sanitizer) all(fs []*field, base *baseURL, cache *DescriptionCache) {
	var batch []*field
	var keys []descKey
	baseStr := ""
	if cache != nil {
		baseStr = base.String()
		defer func() {
			for i, f := range batch {
				cache.put(keys[i], f.sanitized)
			}
		}()
	}
	for _, f := range fs {
		if len(f.urls) == 0 && passesUnchanged(f.html) {
			f.sanitized = strings.TrimSpace(legal(f.html))
			continue
		}
		var k descKey
		if cache != nil {
			// Looked up before resolving: a hit costs a hash, no string.
			k = keyOf(baseStr, f.html, f.urls)
			if v, ok := cache.get(k); ok {
				f.sanitized = v
				continue
			}
		}
		if !f.batch {
			f.sanitized = one(resolvePlaceholders(f.html, f.urls, base))
			if cache != nil {
				cache.put(k, f.sanitized)
			}
			continue
		}
		if cache != nil {
			keys = append(keys, k)
		}
		batch = append(batch, f)
	}
	switch len(batch) {
	case 0:
		return
	case 1:
		batch[0].sanitized = one(resolvePlaceholders(batch[0].html, batch[0].urls, base))
		return
	}
	token := "dynamo" + strconv.FormatUint(rand.Uint64(), 36)
	sep := " " + token + " "
	n := (len(batch) - 1) * len(sep)
	for _, f := range batch {
		n += len(f.html) + len(f.urls)*len(base.prefix) // about what resolving adds
	}
	in, ends := s.in[:0], s.ends[:0]
	if cap(in) < n {
		in = make([]byte, 0, n)
	}
	for i, f := range batch {
		if i > 0 {
			in = append(in, sep...)
		}
		in = appendResolved(in, f.html, f.urls, base)
		ends = append(ends, len(in))
	}
	s.in, s.ends = in, ends
	alone := func() {
		start := 0
		for i, f := range batch {
			f.sanitized = one(string(in[start:ends[i]]))
			start = ends[i] + len(sep)
		}
	}
	if bytes.Count(in, []byte(token)) != len(batch)-1 { // practically never
		alone()
		return
	}
	var out strings.Builder // bluemonday writes strings; the values are cut from one
	out.Grow(len(in) + len(in)/4)
	if err := feedPolicy().SanitizeReaderToWriter(bytes.NewReader(in), &out); err != nil {
		alone()
		return
	}
	rest := out.String()
	for i, f := range batch {
		piece := rest
		if i < len(batch)-1 {
			j := strings.Index(rest, sep)
			if j < 0 {
				alone()
				return
			}
			piece, rest = rest[:j], rest[j+len(sep):]
		} else if strings.Contains(rest, sep) {
			alone()
			return
		}
		f.sanitized = strings.TrimSpace(legal(piece))
	}
}

// one sanitizes one description's resolved HTML on its own.
func one(resolved string) string {
	var out strings.Builder
	out.Grow(len(resolved) + len(resolved)/4)
	if err := feedPolicy().SanitizeReaderToWriter(strings.NewReader(resolved), &out); err != nil {
		// Reading a strings.Reader and writing a strings.Builder do not
		// fail; were it to happen, keep no HTML rather than half-sanitized
		// HTML.
		return ""
	}
	return strings.TrimSpace(legal(out.String()))
}

// passesUnchanged reports whether bluemonday, with [feedPolicy], gives h
// back byte for byte: h is text without a character the tokenizer decodes
// or bluemonday escapes (&, <, >, ", ', CR, NUL), and tags of the form
// <name>, </name> or <name/> whose name is one of [bareElements]. The
// tokenizer reads such an h as text and tags, all in its data state; for
// text bluemonday writes the escaped decoded text, here the same bytes; for
// such a tag it writes the tag back as the tokenizer read it, without
// attributes, since the policy allows these elements with none; and none of
// them changes its state. FuzzSanitizeFastPath holds this against
// bluemonday for any input.
func passesUnchanged(h string) bool {
	for i := 0; i < len(h); i++ {
		switch h[i] {
		case '&', '>', '"', '\'', '\r', 0:
			return false
		case '<':
			n := bareTagLen(h[i:])
			if n == 0 {
				return false
			}
			i += n - 1
		}
	}
	return true
}

// bareTagLen returns the length of the tag that starts s when it is <name>,
// </name> or <name/> with name one of [bareElements], else 0.
func bareTagLen(s string) int {
	i, end := 1, false
	if i < len(s) && s[i] == '/' {
		i, end = 2, true
	}
	j := i
	for j < len(s) && (s[j] >= 'a' && s[j] <= 'z' || s[j] >= '1' && s[j] <= '6') {
		j++
	}
	if !bareElements(s[i:j]) {
		return 0
	}
	switch {
	case j < len(s) && s[j] == '>':
		return j + 1
	case !end && j+1 < len(s) && s[j] == '/' && s[j+1] == '>':
		return j + 2
	}
	return 0
}

// bareElements reports whether name (lower case) is one of the elements
// [feedPolicy] allows without attributes (bluemonday's default list of
// such elements, and a): written without attributes, bluemonday writes
// them back as they are.
func bareElements(name string) bool {
	switch name {
	case "p", "br", "b", "i", "em", "strong", "u", "s", "sub", "sup", "small", "code", "pre",
		"blockquote", "q", "ul", "ol", "li", "dl", "dt", "dd", "h1", "h2", "h3", "h4", "h5", "h6",
		"table", "thead", "tbody", "tr", "td", "th", "span", "div", "hr", "a":
		return true
	}
	return false
}

// resolvePlaceholders replaces each NUL index NUL written by
// [region.appendTag] with its URL made absolute and escaped for an attribute.
// The collected HTML has no other NUL (appendHTML drops them).
func resolvePlaceholders(raw string, urls []string, base *baseURL) string {
	if len(urls) == 0 {
		return raw
	}
	return string(appendResolved(make([]byte, 0, len(raw)+32*len(urls)), raw, urls, base))
}

// appendResolved appends raw to dst as [resolvePlaceholders] writes it.
func appendResolved(dst []byte, raw string, urls []string, base *baseURL) []byte {
	for {
		i := strings.IndexByte(raw, 0)
		if i < 0 {
			return append(dst, raw...)
		}
		j := strings.IndexByte(raw[i+1:], 0)
		if j < 0 { // cannot happen: placeholders come in pairs
			return append(dst, raw[:i]...)
		}
		dst = append(dst, raw[:i]...)
		if n, err := strconv.Atoi(raw[i+1 : i+1+j]); err == nil && n >= 0 && n < len(urls) {
			u := strings.TrimSpace(urls[n])
			if base.plain && plainPath(u) {
				// resolveRef's fast path, without building the string, and
				// nothing to escape.
				dst = append(dst, base.prefix...)
				dst = append(dst, u...)
			} else {
				if abs, ok := resolveRef(base, u); ok {
					u = abs
				}
				if strings.ContainsAny(u, "&'<>\"\r") {
					u = html.EscapeString(u)
				}
				dst = append(dst, u...)
			}
		}
		raw = raw[i+j+2:]
	}
}

// mayHaveURL reports whether a raw start tag may carry an href, src or cite
// attribute (a cheap, case-insensitive test that allows false positives).
func mayHaveURL(raw []byte) bool {
	for i := 0; i+3 <= len(raw); i++ {
		var w [3]byte
		for k := range w {
			w[k] = raw[i+k] | 0x20
		}
		switch string(w[:]) {
		case "hre", "src", "cit":
			return true
		}
	}
	return false
}

// SanitizeHTML sanitizes HTML from elsewhere than a page's annotations (an
// article's main text, say) exactly as every description is: the same
// allow list, links nofollow, no script, style or event handler. Its URLs
// must already be absolute: relative ones are dropped. Safe for concurrent use.
func SanitizeHTML(h string) string { return one(h) }
