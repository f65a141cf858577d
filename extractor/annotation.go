package extractor

import (
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

// tagNames maps "ns:local" (lower case) to its kind.
var tagNames = map[string]tagKind{
	"channel:title":       tagChannelTitle,
	"channel:link":        tagChannelLink,
	"channel:description": tagChannelDescription,
	"channel:image":       tagChannelImage,
	"channel:extension":   tagChannelExtension,
	"item:title":          tagItemTitle,
	"item:link":           tagItemLink,
	"item:description":    tagItemDescription,
	"item:image":          tagItemImage,
	"item:extension":      tagItemExtension,
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
}

func (a *annotation) attr(name string) (string, bool) {
	for _, x := range a.attrs {
		if x.name == name {
			return x.value, true
		}
	}
	return "", false
}

// parseAnnotation reads a comment body. It reports looks=false for an
// ordinary comment; looks=true with ok=false for a comment that starts like
// an annotation but is not exactly one well-formed tag (the reason says why).
func parseAnnotation(body string) (a annotation, looks, ok bool, reason string) {
	s := strings.Trim(body, " \t\n\f\r")
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
	a.name = strings.ToLower(s[start:i])
	ns, _, found := strings.Cut(a.name, ":")
	if !found || ns != "channel" && ns != "item" {
		return a, false, false, ""
	}
	// From here on the comment is meant as an annotation.
	if !strings.HasSuffix(s, ">") {
		return a, true, false, "annotation does not end with '>'"
	}
	s = s[:len(s)-1]
	if strings.HasSuffix(s, "/") {
		if a.closing {
			return a, true, false, "a closing tag cannot be empty ('/>')"
		}
		a.empty = true
		s = s[:len(s)-1]
	}
	a.kind = tagNames[a.name]
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
		name := strings.ToLower(s[start:i])
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
		end := strings.IndexByte(s[i+1:], q)
		if end < 0 {
			return a, true, false, "attribute " + name + " value is not closed"
		}
		value := s[i+1 : i+1+end]
		i += end + 2
		if _, dup := a.attr(name); !dup { // the first of duplicate attributes wins
			a.attrs = append(a.attrs, attr{name, value})
		}
	}
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
