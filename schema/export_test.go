package schema

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"
)

// MarshalReference is the encoding/xml serializer [Marshal] must match byte for byte.
var MarshalReference = marshalReference

// PlainURL, AbsoluteURL and IsURI are Validate's URL checks: PlainURL is the
// fast one, which must imply the others.
var PlainURL, AbsoluteURL, IsURI = plainURL, absoluteURL, isURI

// ValidateReference is Validate as it was before it was made cheap: every
// problem it reports, Validate must report too.
func ValidateReference(d *Document) error {
	return d.validateReference()
}

// LegalXMLReference is LegalXML as it was, rune by rune.
var LegalXMLReference = legalXMLReference

func (d *Document) validateReference() error {
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
		if !legalXMLReference(s) {
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
func legalXMLReference(s string) bool {
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
