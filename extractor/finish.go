package extractor

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/idna"

	"github.com/dynamo-rss/dynamo/schema"
)

// diagList collects diagnostics up to a cap and counts the rest.
type diagList struct {
	list    []Diagnostic
	max     int
	dropped int
	// resolve turns the position handles of the selector front end into
	// positions (see treePos); nil: positions are positions.
	resolve func(pos) pos
}

func (d *diagList) add(at pos, sev Severity, msg string) {
	if len(d.list) >= d.max {
		d.dropped++
		return
	}
	if d.resolve != nil {
		at = d.resolve(at)
	}
	d.list = append(d.list, Diagnostic{Line: at.line, Col: at.col, Severity: sev, Message: msg})
}

// count is the number of diagnostics added so far, kept or not.
func (d *diagList) count() int { return len(d.list) + d.dropped }

// sorted returns the diagnostics by position (stable, so simultaneous ones
// keep their order), then one saying how many were left out, if any.
func (d *diagList) sorted() []Diagnostic {
	out := slices.Clone(d.list)
	slices.SortStableFunc(out, func(x, y Diagnostic) int {
		if x.Line != y.Line {
			return x.Line - y.Line
		}
		return x.Col - y.Col
	})
	if d.dropped > 0 {
		last := Diagnostic{Line: 1, Col: 1}
		if len(out) > 0 {
			last = out[len(out)-1]
		}
		out = append(out, Diagnostic{Line: last.Line, Col: last.Col, Severity: Warning,
			Message: fmt.Sprintf("%d more diagnostics not reported (limit %d)", d.dropped, d.max)})
	}
	return out
}

func (b *builder) result(doc *schema.Document) *Result {
	r := &Result{Document: doc, Diagnostics: b.diags.sorted(), Charset: b.charset, Dates: b.dates}
	if doc != nil {
		r.RelativeDates = RelativeDates{Channel: b.relChannel, Items: b.relItems}
	}
	return r
}

// finish closes what is open and assembles the document.
func (b *builder) finish() (*Result, error) {
	b.closeAll()
	if !b.channel.title.set {
		b.diags.max++ // always room for the reason there is no document
		b.fail(pos{1, 1}, "page is not annotated: no channel:title")
		return b.result(nil), ErrNotAnnotated
	}
	baseU := b.page
	if b.hasBase {
		if u, err := b.page.Parse(strings.TrimSpace(b.base)); err == nil && u.IsAbs() {
			baseU = u
		} else {
			b.warn(b.baseAt, fmt.Sprintf("<base href=%q> is not a usable URL; ignored", shorten(b.base)))
		}
	}
	pageLink := fixURL(b.page.String())
	docURL := DefaultURL
	if u, err := url.Parse(b.opts.URL); err == nil && u.IsAbs() && schema.LegalXML(b.opts.URL) {
		docURL = b.opts.URL
	}
	rssID := legal(b.opts.RSSID)
	if strings.TrimSpace(rssID) == "" {
		rssID = DefaultRSSID
	}
	base := newBaseURL(baseU)
	doc := &schema.Document{URL: docURL, RSSID: rssID, Timestamp: b.opts.Timestamp.UTC()}

	items := b.sortedItems()
	kept := items[:0]
	var descs []*field // the descriptions to sanitize, all at once
	if b.channel.description.html != "" {
		descs = append(descs, &b.channel.description)
	}
	for _, it := range items {
		if !it.title.set && !it.description.set {
			b.fail(it.at, fmt.Sprintf("item %d has neither title nor description: dropped", it.index))
			continue
		}
		kept = append(kept, it)
		if it.description.html != "" {
			descs = append(descs, &it.description)
		}
	}
	b.san.all(descs, base, b.opts.Descriptions)

	c := &b.channel
	doc.Channel.Title = c.title.val
	doc.Channel.Link = pageLink
	if c.link.set {
		if u, ok := b.resolve(base, c.link.val, c.link.at, what{field: "channel:link"}); ok {
			doc.Channel.Link = u
		}
	}
	doc.Channel.Description = c.description.val
	doc.Channel.Image = b.image(base, c.image, what{field: "channel:image"}, doc.Channel.Title, doc.Channel.Link)
	doc.Channel.Extensions, b.relChannel = b.extensions(c)

	ids := make(map[string]bool, len(kept))
	if len(kept) > 0 {
		doc.Items = make([]schema.Item, 0, len(kept))
	}
	for _, it := range kept {
		item := schema.Item{
			Index:       it.index,
			Title:       it.title.val,
			Link:        pageLink,
			Description: it.description.val,
		}
		hasLink := false
		if it.link.set {
			if u, ok := b.resolve(base, it.link.val, it.link.at, what{field: "item:link", index: it.index}); ok {
				item.Link, hasLink = u, true
			}
		}
		item.ID = it.id
		at := it.idAt
		if item.ID == "" {
			item.ID, at = derivedID(hasLink, item.Link, item.Title, item.Description), it.at
		}
		if ids[item.ID] {
			id := item.ID
			for n := 0; ids[item.ID]; n++ {
				item.ID = id + "-" + strconv.Itoa(it.index)
				if n > 0 {
					item.ID += "-" + strconv.Itoa(n)
				}
			}
			b.warn(at, fmt.Sprintf("duplicate item id %q: item %d gets %q", shorten(id), it.index, item.ID))
		}
		ids[item.ID] = true
		item.Image = b.image(base, it.image, what{field: "item:image", index: it.index}, item.Title, item.Link)
		var rel bool
		item.Extensions, rel = b.extensions(&it.fields)
		if rel {
			b.relItems = append(b.relItems, item.ID)
		}
		doc.Items = append(doc.Items, item)
	}
	// Every value was made valid as it was built (text by value and legal,
	// URLs by resolve, names by checkAttrs, ids unique above), so the
	// document is not validated again here: the tests and FuzzExtract check
	// Validate and the XSD on every document.
	return b.result(doc), nil
}

// what names a value in diagnostics: "channel:link", "item:image of item 3 url".
type what struct {
	field  string
	index  int    // the item; 0 for the channel
	suffix string // "url", "link" for images
}

func (w what) String() string {
	s := w.field
	if w.index > 0 {
		s += " of item " + strconv.Itoa(w.index)
	}
	if w.suffix != "" {
		s += " " + w.suffix
	}
	return s
}

// derivedID is an item id for items without an id attribute: "link-" and 16
// hex digits of the SHA-256 of the resolved link, or, for an item with no
// usable link, "text-" and 16 hex digits of the SHA-256 of title, a NUL, and
// description. 64 bits make a collision within one page negligible.
func derivedID(hasLink bool, link, title, description string) string {
	var sum [sha256.Size]byte
	prefix := "link-"
	if hasLink {
		sum = sha256.Sum256([]byte(link))
	} else {
		prefix = "text-"
		sum = sha256.Sum256([]byte(title + "\x00" + description))
	}
	return prefix + hex.EncodeToString(sum[:8])
}

// resolve makes a URL value absolute against base; only http and https
// results are kept, anything else is dropped with a warning.
func (b *builder) resolve(base *baseURL, raw string, at pos, w what) (string, bool) {
	s := strings.TrimSpace(raw)
	if out, ok := base.fast(s); ok && (base.Scheme == "http" || base.Scheme == "https") {
		return out, true // unreserved characters only: nothing to fix or check
	}
	u, err := base.Parse(s)
	if err != nil {
		b.warn(at, fmt.Sprintf("%s %q is not a URL: dropped", w, shorten(s)))
		return "", false
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		b.warn(at, fmt.Sprintf("%s %q is a %s: URL, only http and https are kept: dropped", w, shorten(s), u.Scheme))
		return "", false
	}
	if u.Host == "" {
		b.warn(at, fmt.Sprintf("%s %q has no host: dropped", w, shorten(s)))
		return "", false
	}
	if !asciiHost(u) {
		b.warn(at, fmt.Sprintf("%s %q has a host name that is not valid: dropped", w, shorten(s)))
		return "", false
	}
	out := fixURL(u.String())
	if !schema.LegalXML(out) {
		b.warn(at, fmt.Sprintf("%s %q contains characters XML does not allow: dropped", w, shorten(s)))
		return "", false
	}
	return out, true
}

// asciiHost writes an internationalized host name of u in its ASCII form
// (xn--…): url.URL.String would percent-encode it, which no resolver reads.
// It reports false, leaving u as it is, for a name IDNA refuses.
func asciiHost(u *url.URL) bool {
	if isASCII(u.Host) {
		return true
	}
	host, err := idna.Lookup.ToASCII(u.Hostname())
	if err != nil {
		return false
	}
	if port := u.Port(); port != "" {
		host = net.JoinHostPort(host, port)
	}
	u.Host = host
	return true
}

// fixURL escapes the white space url.URL.String leaves in queries.
func fixURL(s string) string {
	if !strings.ContainsAny(s, " \t\r\n") {
		return s
	}
	return strings.NewReplacer(" ", "%20", "\t", "%09", "\r", "%0D", "\n", "%0A").Replace(s)
}

// image resolves an image's url and link; the title and link default to the
// channel's (or item's) own, which RSS 2.0 requires.
func (b *builder) image(base *baseURL, im *imageSpec, w what, title, link string) *schema.Image {
	if im == nil {
		return nil
	}
	w.suffix = "url"
	u, ok := b.resolve(base, im.url, im.at, w)
	if !ok {
		return nil
	}
	out := &schema.Image{URL: u, Title: im.title, Link: link}
	if out.Title == "" {
		out.Title = title
	}
	if strings.TrimSpace(im.link) != "" {
		w.suffix = "link"
		if l, ok := b.resolve(base, im.link, im.at, w); ok {
			out.Link = l
		}
	}
	return out
}

// extensions turns extension annotations into schema extensions, reading
// dates, then adds the description's sanitized HTML as content:encoded.
// relative reports a date read relative to the poll's time.
func (b *builder) extensions(f *fields) (out schema.Extensions, relative bool) {
	if n := len(f.exts); n > 0 || f.description.sanitized != "" {
		out = make(schema.Extensions, 0, n+1)
	}
	for _, x := range f.exts {
		if x.uri == "" {
			continue // the marker left when there were too many (a real uri is never empty)
		}
		val := x.val
		if x.local == "date" || x.local == "pubDate" {
			var rel bool
			val, rel = b.date(x)
			relative = relative || rel
		}
		out = append(out, schema.Extension{URI: x.uri, Prefix: x.prefix, LocalName: x.local, Value: val})
	}
	if h := f.description.sanitized; h != "" {
		out = append(out, schema.Extension{URI: schema.ContentNamespace, Prefix: "content", LocalName: "encoded", Value: h})
	}
	return out, relative
}

// date reads a date extension and returns the value to store. A date the
// resource's rules read stays as the page wrote it (docs/annotations.md:
// v becomes the element; readers take the time with the resource's
// schema.DateRules). A date only the field's own format reads, or one
// written relative to the poll's time ("2 hours ago", read against
// Options.Timestamp in the resource's zone), is stored as the RFC 3339
// time it means, since no reader could read it again (relative reports
// the latter). Any other is kept as text, with a warning.
func (b *builder) date(x extSpec) (val string, relative bool) {
	rules := b.opts.Dates
	loc := rules.Location
	if loc == nil {
		loc = time.UTC
	}
	if x.layout != "" {
		if t, err := time.ParseInLocation(x.layout, strings.TrimSpace(x.val), loc); err == nil && t.Year() >= 1 && t.Year() <= 9999 {
			b.explainDate(x, t, fmt.Sprintf("format %q", x.layout), loc)
			return t.In(loc).Format(time.RFC3339), false
		}
	}
	if b.dateReadable(x.val) {
		if b.opts.ExplainDates {
			t, rule, _ := rules.Read(x.val, time.Time{})
			b.explainDate(x, t, rule, loc)
		}
		return x.val, false
	}
	if t, ok := schema.ParseRelative(x.val, b.opts.Timestamp, loc); ok {
		b.explainDate(x, t, schema.RuleRelative+" "+b.opts.Timestamp.In(loc).Format(time.RFC3339), loc)
		return t.Format(time.RFC3339), true
	}
	msg := fmt.Sprintf("unreadable date %q in %s:%s: kept as text, not a publication time", shorten(x.val), x.prefix, x.local)
	switch {
	case x.layout != "" && rules.Layout != "":
		msg += fmt.Sprintf(" (neither the format %q, the date_format %q nor the usual forms read it)", x.layout, rules.Layout)
	case x.layout != "":
		msg += fmt.Sprintf(" (neither the format %q nor the usual forms read it)", x.layout)
	case rules.Layout != "":
		msg += fmt.Sprintf(" (neither the date_format %q nor the usual forms read it)", rules.Layout)
	}
	b.warn(x.at, msg)
	if b.opts.ExplainDates {
		at := b.tree.resolve(x.at)
		b.dates = append(b.dates, DateReading{Line: at.line, Col: at.col, Text: x.val})
	}
	return x.val, false
}

// explainDate records how a date read, with Options.ExplainDates.
func (b *builder) explainDate(x extSpec, t time.Time, rule string, loc *time.Location) {
	if !b.opts.ExplainDates {
		return
	}
	at := b.tree.resolve(x.at)
	b.dates = append(b.dates, DateReading{Line: at.line, Col: at.col, Text: x.val, Time: t.In(loc), Rule: rule, Zone: loc.String()})
}

// dateReadable reports whether the resource's date rules read s, through
// the engine's cache when there is one.
func (b *builder) dateReadable(s string) bool {
	if c := b.opts.Descriptions; c != nil {
		return c.dateReadable(b.opts.Dates, s)
	}
	_, ok := b.opts.Dates.Parse(s)
	return ok
}
