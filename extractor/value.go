package extractor

import (
	"bytes"
	"encoding/binary"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html/atom"

	"github.com/dynamo-rss/dynamo/schema"
)

// pos is a 1-based line and column (in characters) of the decoded page.
type pos struct{ line, col int }

// advance moves p over raw, counting "\n", "\r\n" and a lone "\r" as one line
// break each. prevCR says whether the previous chunk ended with "\r".
func (p *pos) advance(raw []byte, prevCR bool) (endsCR bool) {
	if len(raw) == 0 {
		return prevCR
	}
	if !prevCR {
		// The common case, ASCII without "\r": one pass, no rune decoding,
		// eight bytes at a time while they are plain (no high bit, no
		// "\n", no "\r").
		lines, last, i := 0, -1, 0
		for ; i+8 <= len(raw); i += 8 {
			w := binary.LittleEndian.Uint64(raw[i:])
			if w&hiBits != 0 || hasByte(w, '\n') || hasByte(w, '\r') {
				break
			}
		}
		for ; i < len(raw); i++ {
			c := raw[i]
			if c >= utf8.RuneSelf || c == '\r' {
				break
			}
			if c == '\n' {
				lines++
				last = i
			}
		}
		if i == len(raw) {
			if lines == 0 {
				p.col += len(raw)
			} else {
				p.line += lines
				p.col = len(raw) - last
			}
			return false
		}
	}
	if !prevCR && bytes.IndexByte(raw, '\r') < 0 {
		nl := bytes.LastIndexByte(raw, '\n')
		if nl < 0 {
			p.col += utf8.RuneCount(raw)
			return false
		}
		p.line += bytes.Count(raw[:nl+1], []byte{'\n'})
		p.col = 1 + utf8.RuneCount(raw[nl+1:])
		return false
	}
	cr := prevCR
	for i := 0; i < len(raw); {
		c := raw[i]
		switch {
		case c == '\n':
			if !cr {
				p.line++
				p.col = 1
			}
			cr = false
			i++
		case c == '\r':
			p.line++
			p.col = 1
			cr = true
			i++
		default:
			cr = false
			_, size := utf8.DecodeRune(raw[i:])
			p.col++
			i += size
		}
	}
	return cr
}

const (
	loBits = 0x0101010101010101
	hiBits = 0x8080808080808080
)

// hasByte reports whether a word of ASCII bytes (no high bit set) has the
// byte c.
func hasByte(w uint64, c byte) bool {
	x := w ^ (loBits * uint64(c)) // zero bytes where w has c
	return (x-loBits)&^x&hiBits != 0
}

// value accumulates a region's text as it streams by: white space collapsed
// to single spaces, leading and trailing white space dropped, characters XML
// does not allow removed, invalid UTF-8 replaced by U+FFFD, and at most limit
// bytes kept (cut records that some were not).
type value struct {
	buf   []byte
	space bool // white space seen since the last character written
	limit int
	cut   bool
}

func (v *value) addSpace() {
	if len(v.buf) > 0 {
		v.space = true
	}
}

func (v *value) write(p []byte) {
	if v.cut {
		return
	}
	room := v.limit - len(v.buf)
	if v.space {
		room--
	}
	if len(p) > room {
		v.cut = true
		for room > 0 && !utf8.RuneStart(p[room]) {
			room--
		}
		if room <= 0 {
			return
		}
		p = p[:room]
	}
	if v.space {
		v.buf = append(v.buf, ' ')
		v.space = false
	}
	v.buf = append(v.buf, p...)
}

// addText appends decoded text (entities already replaced).
func (v *value) addText(s []byte) {
	for len(s) > 0 && !v.cut {
		// Copy the longest run of plain printable ASCII at once.
		i := 0
		for i < len(s) && s[i] > ' ' && s[i] < utf8.RuneSelf {
			i++
		}
		if i > 0 {
			v.write(s[:i])
			s = s[i:]
			continue
		}
		c := s[0]
		if c < utf8.RuneSelf {
			if isSpace(c) {
				v.addSpace()
			} // other C0 controls (vertical tab included) are not XML characters: dropped
			s = s[1:]
			continue
		}
		r, size := utf8.DecodeRune(s)
		switch {
		case r == utf8.RuneError && size == 1:
			v.write([]byte("\uFFFD"))
		case unicode.IsSpace(r):
			v.addSpace()
		case schema.IsXMLChar(r):
			v.write(s[:size])
		}
		s = s[size:]
	}
}

func (v *value) String() string { return string(v.buf) }

// clean returns s as a one-line text value: what [value] would make of it.
func clean(s string) string {
	if isClean(s) {
		return s // the common case: nothing to change, nothing to allocate
	}
	v := value{limit: len(s) + 1}
	v.addText([]byte(s))
	return v.String()
}

// isClean reports whether clean(s) == s: printable ASCII, single spaces
// between words.
func isClean(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c > ' ' && c < utf8.RuneSelf || c == ' ' && i > 0 && i < len(s)-1 && s[i-1] != ' ' {
			continue
		}
		return false
	}
	return true
}

// blank reports whether clean(s) is "", without building it.
func blank(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c > ' ' && c < utf8.RuneSelf {
			return false // a printable ASCII character is kept
		}
	}
	return clean(s) == ""
}

// legal returns s with the characters XML does not allow removed and invalid
// UTF-8 replaced, white space kept as is.
func legal(s string) string {
	if schema.LegalXML(s) {
		return s
	}
	var b strings.Builder
	for _, r := range strings.ToValidUTF8(s, "\uFFFD") {
		if schema.IsXMLChar(r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// isBlock reports whether an element's boundaries read as white space in text.
func isBlock(a atom.Atom) bool {
	switch a {
	case atom.Address, atom.Article, atom.Aside, atom.Blockquote, atom.Body, atom.Br,
		atom.Caption, atom.Center, atom.Dd, atom.Details, atom.Dialog, atom.Dir, atom.Div,
		atom.Dl, atom.Dt, atom.Fieldset, atom.Figcaption, atom.Figure, atom.Footer, atom.Form,
		atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6, atom.Head, atom.Header,
		atom.Hgroup, atom.Hr, atom.Html, atom.Li, atom.Main, atom.Menu, atom.Nav, atom.Ol,
		atom.Option, atom.P, atom.Pre, atom.Section, atom.Summary, atom.Table, atom.Tbody,
		atom.Td, atom.Tfoot, atom.Th, atom.Thead, atom.Title, atom.Tr, atom.Ul:
		return true
	}
	return false
}

// isHidden reports whether an element's raw-text content is markup or code,
// not text: it is neither a value's text nor kept in a description's HTML.
func isHidden(a atom.Atom) bool {
	switch a {
	case atom.Script, atom.Style, atom.Noscript, atom.Iframe, atom.Noembed, atom.Noframes:
		return true
	}
	return false
}

// shorten keeps a quoted page string short enough for a diagnostic.
func shorten(s string) string {
	const max = 80
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
