package schema

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// Marshal returns the document as indented XML with an XML declaration and a
// trailing newline, the timestamp in UTC.
//
// The bytes are exactly those of encoding/xml with Indent("", "  ") (kept as
// marshalReference, which the tests compare against), written directly for
// the fixed XMLData shape: every stored version goes through here, and the
// reflective encoder cost five times as much. Like encoding/xml, text and
// attribute values are escaped the same way (quotes, apostrophes, tabs, line
// breaks and carriage returns as character references), characters outside
// XML's Char range and invalid UTF-8 become U+FFFD, and extension prefixes and
// local names are written as given: [Document.Validate] is what rejects
// names that are not NCNames. The one error encoding/xml can return here, a
// timestamp whose year is outside [0, 9999], comes from the reference path.
func Marshal(doc *Document) ([]byte, error) {
	return AppendMarshal(make([]byte, 0, marshalSize(doc)), doc)
}

// AppendMarshal appends what [Marshal] returns to b, for a caller that
// reuses its buffer. On error it returns b as it was.
func AppendMarshal(b []byte, doc *Document) ([]byte, error) {
	orig := b
	b = append(b, xml.Header+`<resource url="`...)
	b = appendEscaped(b, doc.URL)
	b = append(b, `" rssId="`...)
	b = appendEscaped(b, doc.RSSID)
	b = append(b, `" timestamp="`...)
	b, err := doc.Timestamp.UTC().AppendText(b)
	if err != nil { // b is nil
		if _, refErr := marshalReference(doc); refErr != nil {
			err = refErr // encoding/xml's own error text
		} else {
			err = fmt.Errorf("marshal xmldata: %w", err)
		}
		return orig, err
	}
	b = append(b, "\">\n  <channel>"...)
	c := &doc.Channel
	b = appendFields(b, c.Title, c.Link, c.Description, c.Image, c.Extensions)
	b = append(b, "\n  </channel>"...)
	for i := range doc.Items {
		it := &doc.Items[i]
		b = append(b, "\n  <item index=\""...)
		b = strconv.AppendInt(b, int64(it.Index), 10)
		b = append(b, `" id="`...)
		b = appendEscaped(b, it.ID)
		b = append(b, `">`...)
		b = appendFields(b, it.Title, it.Link, it.Description, it.Image, it.Extensions)
		b = append(b, "\n  </item>"...)
	}
	return append(b, "\n</resource>\n"...), nil
}

// Indentation of the elements inside <channel> and <item> (depth 2), and of
// those inside their <image> and <extensions> (depth 3).
const (
	in2 = "\n    "
	in3 = "\n      "
)

// appendFields writes the elements a channel and an item share.
func appendFields(b []byte, title, link, description string, im *Image, ext Extensions) []byte {
	b = appendElement(b, in2+"<title>", title, "</title>")
	b = appendElement(b, in2+"<link>", link, "</link>")
	b = appendElement(b, in2+"<description>", description, "</description>")
	if im != nil {
		b = appendElement(b, in2+"<image>"+in3+"<title>", im.Title, "</title>")
		b = appendElement(b, in3+"<link>", im.Link, "</link>")
		b = appendElement(b, in3+"<url>", im.URL, "</url>"+in2+"</image>")
	}
	if len(ext) > 0 {
		b = append(b, in2+"<extensions>"...)
		for i := range ext {
			x := &ext[i]
			b = append(b, in3+"<"...)
			b = append(b, x.Prefix...)
			b = append(b, ':')
			b = append(b, x.LocalName...)
			b = append(b, " xmlns:"...)
			b = append(b, x.Prefix...)
			b = append(b, `="`...)
			b = appendEscaped(b, x.URI)
			b = append(b, `">`...)
			b = appendEscaped(b, x.Value)
			b = append(b, "</"...)
			b = append(b, x.Prefix...)
			b = append(b, ':')
			b = append(b, x.LocalName...)
			b = append(b, '>')
		}
		b = append(b, in2+"</extensions>"...)
	}
	return b
}

// appendElement writes start, the escaped value and end.
func appendElement(b []byte, start, value, end string) []byte {
	b = append(b, start...)
	b = appendEscaped(b, value)
	return append(b, end...)
}

// marshalSize is a close upper estimate of Marshal's output for a document
// with little to escape, so that Marshal allocates once.
func marshalSize(doc *Document) int {
	fields := func(title, link, description string, im *Image, ext Extensions) int {
		n := 2*len("\n    <description>") + len(title) + len(link) + len(description) + 80
		if im != nil {
			n += 120 + len(im.Title) + len(im.Link) + len(im.URL)
		}
		if len(ext) > 0 {
			n += 50
			for i := range ext {
				x := &ext[i]
				n += 3*len(x.Prefix) + 2*len(x.LocalName) + len(x.URI) + len(x.Value) + 24
			}
		}
		return n
	}
	c := &doc.Channel
	n := 200 + len(doc.URL) + len(doc.RSSID) + fields(c.Title, c.Link, c.Description, c.Image, c.Extensions)
	for i := range doc.Items {
		it := &doc.Items[i]
		n += 60 + len(it.ID) + fields(it.Title, it.Link, it.Description, it.Image, it.Extensions)
	}
	return n + n/8 // room for some escaping
}

// escapes maps an ASCII byte to what encoding/xml writes for it in text and
// attribute values; "" means the byte is written as is.
var escapes = func() (t [utf8.RuneSelf]string) {
	for c := range 0x20 {
		t[c] = "\uFFFD" // not an XML Char
	}
	t['\t'], t['\n'], t['\r'] = "&#x9;", "&#xA;", "&#xD;"
	t['"'], t['\''], t['&'], t['<'], t['>'] = "&#34;", "&#39;", "&amp;", "&lt;", "&gt;"
	return t
}()

// appendEscaped appends s escaped as encoding/xml's EscapeString does: the
// markup characters, quotes, tab, newline and carriage return as references,
// and U+FFFD for each byte of invalid UTF-8 and each rune outside XML's Char
// range (in valid UTF-8 above ASCII only U+FFFE and U+FFFF are: Go's decoder
// already rejects surrogates and runes past U+10FFFF).
func appendEscaped(b []byte, s string) []byte {
	last := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			i++
			if esc := escapes[c]; esc != "" {
				b = append(b, s[last:i-1]...)
				b = append(b, esc...)
				last = i
			}
			continue
		}
		r, w := utf8.DecodeRuneInString(s[i:])
		i += w
		if w == 1 || r == 0xFFFE || r == 0xFFFF {
			b = append(b, s[last:i-w]...)
			b = append(b, "\uFFFD"...)
			last = i
		}
	}
	return append(b, s[last:]...)
}

// marshalReference is Marshal through encoding/xml: the definition of its
// output, which the tests hold Marshal to byte for byte, and the source of
// the error for a timestamp encoding/xml cannot write.
func marshalReference(doc *Document) ([]byte, error) {
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
