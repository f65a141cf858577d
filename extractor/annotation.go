package extractor

import (
	"bytes"
	"strconv"
	"strings"
)

// tagKind is a known annotation tag.
type tagKind uint8

const (
	tagUnknown tagKind = iota
	tagChannelTitle
	tagChannelLink
	tagChannelDescription
	tagChannelImage
	tagChannelExtension
	tagItemTitle
	tagItemLink
	tagItemDescription
	tagItemImage
	tagItemExtension
)

// tagKindOf returns the kind of a tag name "ns:local" (lower case).
func tagKindOf(name string) tagKind {
	switch name {
	case "channel:title":
		return tagChannelTitle
	case "channel:link":
		return tagChannelLink
	case "channel:description":
		return tagChannelDescription
	case "channel:image":
		return tagChannelImage
	case "channel:extension":
		return tagChannelExtension
	case "item:title":
		return tagItemTitle
	case "item:link":
		return tagItemLink
	case "item:description":
		return tagItemDescription
	case "item:image":
		return tagItemImage
	case "item:extension":
		return tagItemExtension
	}
	return tagUnknown
}

func (k tagKind) isItem() bool { return k >= tagItemTitle }

// valueKind says what a region's content is read as.
type valueKind uint8

const (
	valueNone valueKind = iota // images and unknown tags: the content is ignored
	valueText
	valueURL
	valueHTML // text, plus the HTML kept for content:encoded
)

func (k tagKind) value() valueKind {
	switch k {
	case tagChannelTitle, tagItemTitle, tagChannelExtension, tagItemExtension:
		return valueText
	case tagChannelLink, tagItemLink:
		return valueURL
	case tagChannelDescription, tagItemDescription:
		return valueHTML
	}
	return valueNone
}

// attr is one annotation attribute; name is lower case.
type attr struct{ name, value string }

// annotation is a parsed meta-tag: <ns:local attrs>, </ns:local attrs> or <ns:local attrs/>.
type annotation struct {
	name    string // "ns:local", lower case
	kind    tagKind
	closing bool
	empty   bool
	attrs   []attr
	dup     string // the first attribute given twice (the first value is kept)
}

func (a *annotation) attr(name string) (string, bool) {
	for _, x := range a.attrs {
		if x.name == name {
			return x.value, true
		}
	}
	return "", false
}

// lowerName returns b lower-cased: a constant for the tag (or attribute)
// names annotations use, so that the common case allocates nothing.
func lowerName(b []byte, tag bool) string {
	var buf [32]byte
	if len(b) > len(buf) {
		return strings.ToLower(string(b))
	}
	n := copy(buf[:], b)
	for i := range n {
		if c := buf[i]; c >= 'A' && c <= 'Z' {
			buf[i] = c + 'a' - 'A'
		}
	}
	// Static calls, so that the conversions do not escape and allocate nothing.
	var s string
	if tag {
		s = tagName(string(buf[:n]))
	} else {
		s = attrName(string(buf[:n]))
	}
	if s != "" {
		return s
	}
	return string(buf[:n])
}

// attrName returns the constant for a known attribute name, else "".
func attrName(s string) string {
	switch s {
	case "index":
		return "index"
	case "id":
		return "id"
	case "url":
		return "url"
	case "title":
		return "title"
	case "link":
		return "link"
	case "uri":
		return "uri"
	case "prefix":
		return "prefix"
	case "localname":
		return "localname"
	}
	return ""
}

// tagName returns the constant for a known tag name, else "".
func tagName(s string) string {
	switch s {
	case "channel:title":
		return "channel:title"
	case "channel:link":
		return "channel:link"
	case "channel:description":
		return "channel:description"
	case "channel:image":
		return "channel:image"
	case "channel:extension":
		return "channel:extension"
	case "item:title":
		return "item:title"
	case "item:link":
		return "item:link"
	case "item:description":
		return "item:description"
	case "item:image":
		return "item:image"
	case "item:extension":
		return "item:extension"
	}
	return ""
}

// parseAnnotation reads a comment body. It reports looks=false for an
// ordinary comment; looks=true with ok=false for a comment that starts like
// an annotation but is not exactly one well-formed tag (the reason says why).
// The attributes are appended to buf[:0], whose memory is reused; their
// values are made strings by in (nil: a new string each).
func parseAnnotation(body []byte, buf []attr, in *interner) (a annotation, looks, ok bool, reason string) {
	a.attrs = buf[:0]
	s := body
	for len(s) > 0 && isSpace(s[0]) {
		s = s[1:]
	}
	for len(s) > 0 && isSpace(s[len(s)-1]) {
		s = s[:len(s)-1]
	}
	if len(s) < 2 || s[0] != '<' {
		return a, false, false, ""
	}
	i := 1
	if s[i] == '/' {
		a.closing = true
		i++
	}
	start := i
	for i < len(s) && isNameByte(s[i]) {
		i++
	}
	name := s[start:i]
	colon := bytes.IndexByte(name, ':')
	if colon < 0 || !hasPrefixFold(name, "channel:") && !hasPrefixFold(name, "item:") ||
		colon != len("channel") && colon != len("item") {
		return a, false, false, ""
	}
	a.name = lowerName(name, true)
	// From here on the comment is meant as an annotation.
	if s[len(s)-1] != '>' {
		return a, true, false, "annotation does not end with '>'"
	}
	s = s[:len(s)-1]
	if len(s) > 0 && s[len(s)-1] == '/' {
		if a.closing {
			return a, true, false, "a closing tag cannot be empty ('/>')"
		}
		a.empty = true
		s = s[:len(s)-1]
	}
	a.kind = tagKindOf(a.name)
	for {
		j := i
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		if i == len(s) {
			return a, true, true, ""
		}
		if i == j {
			return a, true, false, "expected white space before an attribute"
		}
		start := i
		for i < len(s) && isNameByte(s[i]) {
			i++
		}
		if i == start {
			return a, true, false, "malformed attribute"
		}
		name := lowerName(s[start:i], false)
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		if i == len(s) || s[i] != '=' {
			return a, true, false, "attribute " + name + " has no value"
		}
		i++
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		if i == len(s) || s[i] != '"' && s[i] != '\'' {
			return a, true, false, "attribute " + name + " value is not quoted"
		}
		q := s[i]
		end := bytes.IndexByte(s[i+1:], q)
		if end < 0 {
			return a, true, false, "attribute " + name + " value is not closed"
		}
		value := s[i+1 : i+1+end]
		i += end + 2
		if _, dup := a.attr(name); !dup { // the first of duplicate attributes wins
			if a.attrs == nil {
				a.attrs = make([]attr, 0, 4)
			}
			a.attrs = append(a.attrs, attr{name, in.str(value)})
		} else if a.dup == "" {
			a.dup = name
		}
	}
}

// interner gives the repeated attribute values of one page's annotations
// (uri, prefix, localName, two-digit indexes, which every item repeats) one
// string each. It is bounded: long values and values past the first
// maxInterned distinct ones get a string of their own.
type interner struct{ m map[string]string }

const (
	maxInterned    = 256 // distinct values kept
	maxInternedLen = 128 // bytes of a value kept
)

// str returns b as a string, shared with an earlier equal one if any.
func (in *interner) str(b []byte) string {
	if n, ok := smallIndex(b); ok {
		// The most repeated values: strconv has a string for each, so
		// neither a lookup nor an allocation.
		return strconv.Itoa(n)
	}
	if in == nil || len(b) > maxInternedLen {
		return string(b)
	}
	if s, ok := in.m[string(b)]; ok { // no allocation for the lookup
		return s
	}
	s := string(b)
	if len(in.m) < maxInterned {
		if in.m == nil {
			in.m = make(map[string]string)
		}
		in.m[s] = s
	}
	return s
}

// smallIndex reads an index below 100 written the canonical way ("7",
// "42", not "07").
func smallIndex(b []byte) (int, bool) {
	switch {
	case len(b) == 1 && b[0] >= '0' && b[0] <= '9':
		return int(b[0] - '0'), true
	case len(b) == 2 && b[0] >= '1' && b[0] <= '9' && b[1] >= '0' && b[1] <= '9':
		return int(b[0]-'0')*10 + int(b[1]-'0'), true
	}
	return 0, false
}

func isNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == ':' || c == '-' || c == '_' || c == '.'
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'
}

// looksLikeAnnotation is a cheap test on a comment's raw bytes before parsing.
func looksLikeAnnotation(body []byte) bool {
	for i, c := range body {
		if isSpace(c) {
			continue
		}
		if c != '<' {
			return false
		}
		rest := body[i+1:]
		if len(rest) > 0 && rest[0] == '/' {
			rest = rest[1:]
		}
		return hasPrefixFold(rest, "channel:") || hasPrefixFold(rest, "item:")
	}
	return false
}

func hasPrefixFold(b []byte, prefix string) bool {
	if len(b) < len(prefix) {
		return false
	}
	for i := 0; i < len(prefix); i++ {
		c := b[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != prefix[i] {
			return false
		}
	}
	return true
}

// knownTags are the annotation tag names, for suggestions.
var knownTags = [...]string{
	"channel:title", "channel:link", "channel:description", "channel:image", "channel:extension",
	"item:title", "item:link", "item:description", "item:image", "item:extension",
}

// unknownTag is the error for an unknown channel:/item: tag, suggesting the
// closest known one (a typo such as item:titel).
func unknownTag(name string, closing bool) string {
	slash := ""
	if closing {
		slash = "/"
	}
	best, dist := "", 3 // suggest only near misses
	for _, k := range knownTags {
		if d := editDistance(name, k); d < dist {
			best, dist = k, d
		}
	}
	msg := "unknown annotation <" + slash + name + "> ignored with its region"
	if best != "" {
		msg += "; did you mean <" + slash + best + ">?"
	} else {
		msg += "; known tags are " + strings.Join(knownTags[:], ", ")
	}
	return msg
}

// editDistance is the Levenshtein distance between two short ASCII names.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// tagText writes an annotation tag as a person would, with its index when
// it has one: <item:link index="1">, </item:title index="2">.
func tagText(a annotation, closing bool) string {
	var b strings.Builder
	b.WriteByte('<')
	if closing {
		b.WriteByte('/')
	}
	b.WriteString(a.name)
	if v, ok := a.attr("index"); ok {
		b.WriteString(` index="`)
		b.WriteString(v)
		b.WriteByte('"')
	}
	b.WriteByte('>')
	return b.String()
}
