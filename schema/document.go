package schema

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"net/url"
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

// Marshal returns the document as indented XML with an XML declaration.
func Marshal(doc *Document) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(xml.Header)
	enc := xml.NewEncoder(&b)
	enc.Indent("", "  ")
	d := *doc
	d.Timestamp = d.Timestamp.UTC()
	if err := enc.Encode(&d); err != nil {
		return nil, fmt.Errorf("marshal xmldata: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("marshal xmldata: %w", err)
	}
	b.WriteByte('\n')
	return b.Bytes(), nil
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
// that XML 1.0 allows.
func (d *Document) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrInvalid}, args...)...))
	}
	if u, err := url.Parse(d.URL); err != nil || !u.IsAbs() {
		bad("resource url %q is not an absolute URL", d.URL)
	}
	if d.RSSID == "" {
		bad("empty rssId")
	}
	checkText := func(where, s string) {
		if !LegalXML(s) {
			bad("%s contains characters XML does not allow", where)
		}
	}
	checkExt := func(where string, ext Extensions) {
		for _, x := range ext {
			if !IsNCName(x.Prefix) || !IsNCName(x.LocalName) || x.URI == "" {
				bad("%s extension %q:%q (uri %q) is not a well-formed element name", where, x.Prefix, x.LocalName, x.URI)
			}
			checkText(where+" extension "+x.LocalName, x.Value)
		}
	}
	checkURI := func(where, s string) {
		if _, err := url.Parse(s); err != nil || strings.ContainsAny(s, " \t\r\n") {
			bad("%s %q is not a URI", where, s)
		}
	}
	checkImage := func(where string, im *Image) {
		if im == nil {
			return
		}
		checkText(where+" image title", im.Title)
		checkURI(where+" image url", im.URL)
		checkURI(where+" image link", im.Link)
	}
	c := d.Channel
	checkText("channel title", c.Title)
	checkText("channel description", c.Description)
	checkURI("channel link", c.Link)
	checkImage("channel", c.Image)
	checkExt("channel", c.Extensions)
	ids := make(map[string]bool, len(d.Items))
	indexes := make(map[int]bool, len(d.Items))
	for i, it := range d.Items {
		where := fmt.Sprintf("item %d", i+1)
		if it.Index <= 0 {
			bad("%s: index %d is not positive", where, it.Index)
		}
		if indexes[it.Index] {
			bad("%s: duplicate index %d", where, it.Index)
		}
		indexes[it.Index] = true
		if it.ID == "" {
			bad("%s: empty id", where)
		}
		if ids[it.ID] {
			bad("%s: duplicate id %q", where, it.ID)
		}
		ids[it.ID] = true
		checkText(where+" id", it.ID)
		checkText(where+" title", it.Title)
		checkText(where+" description", it.Description)
		checkURI(where+" link", it.Link)
		checkImage(where, it.Image)
		checkExt(where, it.Extensions)
	}
	return errors.Join(errs...)
}

// LegalXML reports whether s is valid UTF-8 made only of characters XML 1.0 allows.
func LegalXML(s string) bool {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				return false
			}
		}
		if !IsXMLChar(r) {
			return false
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
