package schema

import (
	"encoding/xml"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// ContentNamespace is the RSS content module; an extension content:encoded in
// this namespace carries a description's sanitized HTML.
const ContentNamespace = "http://purl.org/rss/1.0/modules/content/"

// DCNamespace is Dublin Core elements 1.1, whose dc:date an extension may carry.
const DCNamespace = "http://purl.org/dc/elements/1.1/"

// Document is one XMLData document: a resource (the annotated page) at one
// retrieval time, with its channel and its items in index order.
type Document struct {
	XMLName   xml.Name  `xml:"resource"`
	URL       string    `xml:"url,attr"`
	RSSID     string    `xml:"rssId,attr"`
	Timestamp time.Time `xml:"timestamp,attr"`
	Channel   Channel   `xml:"channel"`
	Items     []Item    `xml:"item"`
}

// Channel is the page-level metadata of a resource.
type Channel struct {
	Title       string     `xml:"title"`
	Link        string     `xml:"link"`
	Description string     `xml:"description"`
	Image       *Image     `xml:"image,omitempty"`
	Extensions  Extensions `xml:"extensions,omitempty"`
}

// Item is one annotated item of a page. Index is its position on the page
// (1-based); ID is stable across polls and identifies the item in history.
type Item struct {
	Index       int        `xml:"index,attr"`
	ID          string     `xml:"id,attr"`
	Title       string     `xml:"title"`
	Link        string     `xml:"link"`
	Description string     `xml:"description"`
	Image       *Image     `xml:"image,omitempty"`
	Extensions  Extensions `xml:"extensions,omitempty"`
}

// Image is a channel or item image.
type Image struct {
	Title string `xml:"title"`
	Link  string `xml:"link"`
	URL   string `xml:"url"`
}

// Extension is one namespaced element <Prefix:LocalName xmlns:Prefix="URI">Value</…>.
type Extension struct {
	URI       string
	Prefix    string
	LocalName string
	Value     string
}

// Extensions is the content of an <extensions> element, in document order.
type Extensions []Extension

// Lookup returns the value of the first extension with the given namespace URI
// and local name.
func (e Extensions) Lookup(uri, localName string) (string, bool) {
	for _, x := range e {
		if x.URI == uri && x.LocalName == localName {
			return x.Value, true
		}
	}
	return "", false
}

// ContentEncoded returns the sanitized HTML of a description, if the extractor kept any.
func (e Extensions) ContentEncoded() (string, bool) {
	return e.Lookup(ContentNamespace, "encoded")
}

// Published returns the publication time carried by the first date
// extension (local name "date" or "pubDate", any namespace) whose value
// [ParseDate] can read. The extractor keeps such values as the page wrote
// them; an unreadable one is text, not a time.
func (e Extensions) Published() (time.Time, bool) { return DateRules{}.Published(e) }

// MarshalXML writes each extension as a prefixed element that declares its own namespace,
// so the document stays valid whatever its parent declares.
func (e Extensions) MarshalXML(enc *xml.Encoder, start xml.StartElement) error {
	if err := enc.EncodeToken(start); err != nil {
		return err
	}
	for _, x := range e {
		el := xml.StartElement{
			Name: xml.Name{Local: x.Prefix + ":" + x.LocalName},
			Attr: []xml.Attr{{Name: xml.Name{Local: "xmlns:" + x.Prefix}, Value: x.URI}},
		}
		if err := enc.EncodeElement(x.Value, el); err != nil {
			return fmt.Errorf("extension %s:%s: %w", x.Prefix, x.LocalName, err)
		}
	}
	return enc.EncodeToken(start.End())
}

// UnmarshalXML reads extension elements back, recovering each prefix from the
// namespace declarations in scope.
func (e *Extensions) UnmarshalXML(d *xml.Decoder, start xml.StartElement) error {
	scope := map[string]string{} // namespace URI -> prefix, from declarations seen on <extensions> and its children
	declare := func(attrs []xml.Attr) {
		for _, a := range attrs {
			if a.Name.Space == "xmlns" {
				scope[a.Value] = a.Name.Local
			}
		}
	}
	declare(start.Attr)
	for {
		tok, err := d.Token()
		if err != nil {
			return fmt.Errorf("extensions: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			declare(t.Attr)
			prefix, ok := scope[t.Name.Space]
			if !ok || prefix == "" {
				prefix = fmt.Sprintf("ns%d", len(*e)+1)
			}
			var v string
			if err := d.DecodeElement(&v, &t); err != nil {
				return fmt.Errorf("extension %s: %w", t.Name.Local, err)
			}
			*e = append(*e, Extension{URI: t.Name.Space, Prefix: prefix, LocalName: t.Name.Local, Value: v})
		case xml.EndElement:
			return nil
		}
	}
}

// Unmarshal parses an XMLData document.
func Unmarshal(data []byte) (*Document, error) {
	var doc Document
	if err := xml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("unmarshal xmldata: %w", err)
	}
	doc.XMLName = xml.Name{} // Marshal names the root itself; keep round trips equal
	doc.Timestamp = doc.Timestamp.UTC()
	return &doc, nil
}

// ErrInvalid is wrapped by every error [Document.Validate] returns.
var ErrInvalid = errors.New("schema: invalid document")

// Validate checks what the XSD requires and what XML can carry: an absolute
// resource URL and link URIs, a non-empty rssId, positive and unique item
// indexes, non-empty unique item ids, well-formed extension names, and text
// that XML 1.0 allows, in every field [Marshal] writes (a field with other
// characters would come back from Marshal and [Unmarshal] changed).
//
// Validate runs on every stored version, so it builds no strings unless it
// finds a problem.
func (d *Document) Validate() error {
	var v validator
	if !plainURL(d.URL) && !absoluteURL(d.URL) {
		v.bad("resource url %q is not an absolute URL", d.URL)
	} else if !LegalXML(d.URL) {
		v.bad("resource url contains characters XML does not allow")
	}
	if d.RSSID == "" {
		v.bad("empty rssId")
	} else if !LegalXML(d.RSSID) {
		v.bad("rssId contains characters XML does not allow")
	}
	c := &d.Channel
	v.text(0, "title", c.Title)
	v.text(0, "description", c.Description)
	v.uri(0, "link", c.Link)
	v.image(0, c.Image)
	v.extensions(0, c.Extensions)
	var indexes map[int]bool // for a long page; a short one compares with the items before
	var ids map[string]bool
	if len(d.Items) > shortPage {
		indexes, ids = make(map[int]bool, len(d.Items)), make(map[string]bool, len(d.Items))
	}
	for i := range d.Items {
		it := &d.Items[i]
		item := i + 1
		var dupIndex, dupID bool
		if indexes != nil {
			dupIndex, dupID = indexes[it.Index], ids[it.ID]
			indexes[it.Index], ids[it.ID] = true, true
		} else {
			for j := range i {
				dupIndex = dupIndex || d.Items[j].Index == it.Index
				dupID = dupID || d.Items[j].ID == it.ID
			}
		}
		if it.Index <= 0 {
			v.bad("%s: index %d is not positive", where(item), it.Index)
		}
		if dupIndex {
			v.bad("%s: duplicate index %d", where(item), it.Index)
		}
		if it.ID == "" {
			v.bad("%s: empty id", where(item))
		}
		if dupID {
			v.bad("%s: duplicate id %q", where(item), it.ID)
		}
		v.text(item, "id", it.ID)
		v.text(item, "title", it.Title)
		v.text(item, "description", it.Description)
		v.uri(item, "link", it.Link)
		v.image(item, it.Image)
		v.extensions(item, it.Extensions)
	}
	return errors.Join(v.errs...)
}

// shortPage is the most items Validate checks for duplicates by comparing
// each item with those before it rather than with sets.
const shortPage = 32

// validator collects the problems [Document.Validate] finds. Its checks name
// the place of a problem by item number (0 for the channel) and field, and
// spell it out only when there is one.
type validator struct {
	errs []error
}

func (v *validator) bad(format string, args ...any) {
	v.errs = append(v.errs, fmt.Errorf("%w: "+format, append([]any{ErrInvalid}, args...)...))
}

// where names item n (1-based), or the channel for 0.
func where(item int) string {
	if item == 0 {
		return "channel"
	}
	return "item " + strconv.Itoa(item)
}

func (v *validator) text(item int, field, s string) {
	if !LegalXML(s) {
		v.bad("%s %s contains characters XML does not allow", where(item), field)
	}
}

func (v *validator) uri(item int, field, s string) {
	if !plainURL(s) && !isURI(s) {
		v.bad("%s %s %q is not a URI", where(item), field, s)
	} else if !LegalXML(s) {
		v.bad("%s %s contains characters XML does not allow", where(item), field)
	}
}

// The namespaces Namespaces in XML reserves (section 3): only the prefix
// xml may be bound to the first, and no prefix to the second.
const (
	xmlNamespace   = "http://www.w3.org/XML/1998/namespace"
	xmlnsNamespace = "http://www.w3.org/2000/xmlns/"
)

// ExtensionNameProblem says why prefix:localName in namespace uri, both
// names well formed (IsNCName), cannot name an extension element that
// survives a round trip through Marshal and Unmarshal ("" when it can): it
// misuses the reserved xml or xmlns prefix or namespace, or a name has
// characters encoding/xml cannot read back, or uri is not a URI reference,
// which a namespace name must be (libxml2 reports a namespace error for a
// space or a non-ASCII character, and the expat parser feedparser uses
// stops at a space). Validate and the extractor apply it alike.
func ExtensionNameProblem(prefix, localName, uri string) string {
	switch {
	case (prefix == "xml") != (uri == xmlNamespace) || prefix == "xmlns" || uri == xmlnsNamespace:
		return "misuses the reserved xml or xmlns prefix or namespace"
	case !decodableName(prefix) || !decodableName(localName):
		return "has a name encoding/xml cannot read back"
	case !uriReference(uri):
		return "has a namespace that is not a URI (no spaces; other characters percent-encoded)"
	}
	return ""
}

// uriReference reports whether s is a non-empty URI reference by RFC 3986's
// characters: unreserved and reserved ASCII characters, and '%' only before
// two hexadecimal digits.
func uriReference(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("-._~:/?#[]@!$&'()*+,;=", c) >= 0:
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			i += 2
		default:
			return false
		}
	}
	return true
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// decodableName reports whether encoding/xml's decoder, and so [Unmarshal],
// reads the NCName s as a name. It follows the XML 1.0 fourth edition's name
// characters, far fewer than the fifth edition's [IsNCName] allows beyond
// ASCII (no U+0132, nothing past U+FFFF, ...); in ASCII the two agree.
func decodableName(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			_, err := xml.NewDecoder(strings.NewReader("<" + s + "/>")).Token()
			return err == nil
		}
	}
	return true
}

// absoluteURL reports whether url.Parse accepts s as an absolute URL.
func absoluteURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && u.IsAbs()
}

// isURI reports whether url.Parse accepts s and s has no whitespace.
func isURI(s string) bool {
	_, err := url.Parse(s)
	return err == nil && !strings.ContainsAny(s, " \t\r\n")
}

// plainURL reports, without allocating, whether s is a URL of the common
// kind that both [absoluteURL] and [isURI] accept: http or https, a host
// of letters, digits, '.', '-', '_' and '~' with an optional numeric port,
// and after it a path, query or fragment with no space, control character or
// '%'. It returns false for anything else, which url.Parse then decides.
func plainURL(s string) bool {
	var rest string
	switch {
	case strings.HasPrefix(s, "https://"):
		rest = s[len("https://"):]
	case strings.HasPrefix(s, "http://"):
		rest = s[len("http://"):]
	default:
		return false
	}
	i := 0
	for i < len(rest) && isPlainHostByte(rest[i]) {
		i++
	}
	if i == 0 {
		return false
	}
	if i < len(rest) && rest[i] == ':' {
		i++
		digits := i
		for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
			i++
		}
		if i == digits {
			return false
		}
	}
	if i < len(rest) && rest[i] != '/' && rest[i] != '?' && rest[i] != '#' {
		return false
	}
	for ; i < len(rest); i++ {
		if c := rest[i]; c <= ' ' || c == 0x7F || c == '%' {
			return false
		}
	}
	return true
}

func isPlainHostByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '.' || c == '-' || c == '_' || c == '~'
}

func (v *validator) image(item int, im *Image) {
	if im == nil {
		return
	}
	v.text(item, "image title", im.Title)
	v.uri(item, "image url", im.URL)
	v.uri(item, "image link", im.Link)
}

func (v *validator) extensions(item int, ext Extensions) {
	for i := range ext {
		x := &ext[i]
		switch {
		case !IsNCName(x.Prefix) || !IsNCName(x.LocalName) || x.URI == "":
			v.bad("%s extension %q:%q (uri %q) is not a well-formed element name", where(item), x.Prefix, x.LocalName, x.URI)
		case !LegalXML(x.URI):
			v.bad("%s extension %s:%s namespace contains characters XML does not allow", where(item), x.Prefix, x.LocalName)
		case ExtensionNameProblem(x.Prefix, x.LocalName, x.URI) != "":
			v.bad("%s extension %q:%q (uri %q) %s", where(item), x.Prefix, x.LocalName, x.URI, ExtensionNameProblem(x.Prefix, x.LocalName, x.URI))
		}
		if !LegalXML(x.Value) {
			v.bad("%s extension %s contains characters XML does not allow", where(item), x.LocalName)
		}
	}
}

// LegalXML reports whether s is valid UTF-8 made only of characters XML 1.0 allows.
func LegalXML(s string) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for i := 0; i < len(s); {
		if i+8 <= len(s) {
			x := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
				uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
			// Skip eight printable ASCII bytes: a byte below 0x20 borrows
			// into its high bit, a byte of 0x80 or more has it set.
			if ((x-0x20*ones)|x)&highs == 0 {
				i += 8
				continue
			}
		}
		// Otherwise take the characters that start in the next eight bytes one by one.
		for end := min(i+8, len(s)); i < end; {
			c := s[i]
			switch {
			case c >= 0x20 && c < utf8.RuneSelf:
				i++
			case c < 0x20:
				if c != '\t' && c != '\n' && c != '\r' {
					return false
				}
				i++
			case c >= 0xC2 && c <= 0xDF && i+1 < len(s) && s[i+1]&0xC0 == 0x80:
				i += 2 // U+0080 to U+07FF, all allowed
			default:
				r, size := utf8.DecodeRuneInString(s[i:])
				if size == 1 || !IsXMLChar(r) { // size 1: invalid UTF-8
					return false
				}
				i += size
			}
		}
	}
	return true
}

// IsXMLChar reports whether r is a Char of the XML 1.0 grammar.
func IsXMLChar(r rune) bool {
	return r == 0x09 || r == 0x0A || r == 0x0D ||
		r >= 0x20 && r <= 0xD7FF ||
		r >= 0xE000 && r <= 0xFFFD ||
		r >= 0x10000 && r <= 0x10FFFF
}

// IsNCName reports whether s is an XML name without a colon (XML 1.0 fifth
// edition, NameStartChar and NameChar less ':'), as the prefix and local name
// of an extension element must be.
func IsNCName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD") {
			return false // invalid UTF-8, which range reads as U+FFFD, a NameStartChar
		}
		if !isNameStart(r) && (i == 0 || !isNameChar(r)) {
			return false
		}
	}
	return true
}

func isNameStart(r rune) bool {
	switch {
	case r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z':
		return true
	case r < 0xC0:
		return false
	}
	return r <= 0xD6 || r >= 0xD8 && r <= 0xF6 || r >= 0xF8 && r <= 0x2FF ||
		r >= 0x370 && r <= 0x37D || r >= 0x37F && r <= 0x1FFF || r >= 0x200C && r <= 0x200D ||
		r >= 0x2070 && r <= 0x218F || r >= 0x2C00 && r <= 0x2FEF || r >= 0x3001 && r <= 0xD7FF ||
		r >= 0xF900 && r <= 0xFDCF || r >= 0xFDF0 && r <= 0xFFFD || r >= 0x10000 && r <= 0xEFFFF
}

func isNameChar(r rune) bool {
	return r == '-' || r == '.' || r >= '0' && r <= '9' || r == 0xB7 ||
		r >= 0x300 && r <= 0x36F || r >= 0x203F && r <= 0x2040
}
