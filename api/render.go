package api

import (
	"encoding/xml"
	"fmt"
	"math"
	"mime"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/gorilla/feeds"
	"golang.org/x/text/language"

	"github.com/dynamo-rss/dynamo/schema"
)

// Namespaces the XML renderers declare.
const (
	nsAtom  = "http://www.w3.org/2005/Atom"
	nsRDF   = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
	nsRSS1  = "http://purl.org/rss/1.0/"
	nsSy    = "http://purl.org/rss/1.0/modules/syndication/"
	nsMedia = "http://search.yahoo.com/mrss/"
)

// feedModel is the neutral feed every renderer reads: built once per request
// from XMLData documents or storage results, with every URL absolute, every
// date set and every id stable, so that renderers only choose a syntax.
type feedModel struct {
	ID          string // stable URI of the feed (Atom id)
	Title       string
	Description string
	Link        string            // the page people read (alternate link)
	Self        string            // this feed's absolute URL
	Hub         string            // the WebSub hub's absolute URL; "": none
	Updated     time.Time         // never zero
	Author      string            // Atom needs a feed author when entries have none
	Image       *schema.Image     // nil: none
	Interval    time.Duration     // the poller's interval, for <ttl> and sy:*; 0: unknown
	Extensions  schema.Extensions // the channel's, dates normalized (see datedExtensions)
	Items       []feedItem
}

// feedItem is one item of a [feedModel].
type feedItem struct {
	GUID        string // RSS 2.0 guid and JSON Feed id: the item id
	ID          string // Atom id: a tag: URI built from the resource and item ids
	Title       string
	Link        string // absolute, never empty
	Description string // plain text
	ContentHTML string // sanitized HTML from content:encoded; "": none
	Date        time.Time
	Image       *schema.Image
	Extensions  schema.Extensions
}

// gorilla returns the model as a gorilla/feeds Feed, from which the RSS 2.0,
// Atom and JSON renderers start before adding what gorilla/feeds lacks.
func (m *feedModel) gorilla() *feeds.Feed {
	f := &feeds.Feed{
		Title:       m.Title,
		Link:        &feeds.Link{Href: m.Link},
		Description: m.Description,
		Updated:     m.Updated,
		Id:          m.ID,
		Items:       make([]*feeds.Item, 0, len(m.Items)),
	}
	if m.Author != "" {
		f.Author = &feeds.Author{Name: m.Author}
	}
	if m.Image != nil && m.Image.URL != "" {
		link := m.Image.Link
		if link == "" {
			link = m.Link
		}
		title := m.Image.Title
		if title == "" {
			title = m.Title
		}
		f.Image = &feeds.Image{Url: m.Image.URL, Title: title, Link: link}
	}
	for i := range m.Items {
		it := &m.Items[i]
		f.Items = append(f.Items, &feeds.Item{
			Title:       it.Title,
			Link:        &feeds.Link{Href: it.Link},
			Description: it.Description,
			Id:          it.GUID,
			IsPermaLink: "false",
			Created:     it.Date,
			Content:     it.ContentHTML,
			Enclosure:   enclosure(it.Image),
		})
	}
	return f
}

// enclosure is an item's image as gorilla/feeds' enclosure: Atom writes it
// as link rel="enclosure", JSON Feed as the item's image; RSS 2.0 adds
// media:content and its own enclosure (see renderRSS2). The type comes from
// the URL's extension ("" when unknown); the length is unknown.
func enclosure(img *schema.Image) *feeds.Enclosure {
	if img == nil || img.URL == "" {
		return nil
	}
	return &feeds.Enclosure{Url: img.URL, Type: imageType(img.URL)}
}

// imageType is the media type of an image URL by its extension, "" when
// the extension names no image type.
func imageType(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	t := mime.TypeByExtension(strings.ToLower(path.Ext(u.Path)))
	if t, _, _ = strings.Cut(t, ";"); strings.HasPrefix(t, "image/") {
		return t
	}
	return ""
}

// syndication returns the RSS syndication module's hint for an interval:
// the period and how many updates per period (at least 1).
func syndication(d time.Duration) (period string, frequency int) {
	if d <= 0 {
		return "", 0
	}
	periods := []struct {
		name string
		d    time.Duration
	}{
		{"hourly", time.Hour},
		{"daily", 24 * time.Hour},
		{"weekly", 7 * 24 * time.Hour},
		{"monthly", 30 * 24 * time.Hour},
		{"yearly", 365 * 24 * time.Hour},
	}
	for _, p := range periods {
		if d <= p.d || p.name == "yearly" {
			return p.name, max(1, int(math.Round(float64(p.d)/float64(d))))
		}
	}
	return "", 0 // unreachable
}

// ttlMinutes is <ttl>: the interval in whole minutes, rounded up.
func ttlMinutes(d time.Duration) int {
	if d <= 0 {
		return 0
	}
	return int((d + time.Minute - 1) / time.Minute)
}

// xmlExt writes one XMLData extension as a prefixed element that declares
// its own namespace, as schema.Extensions does, so it is valid wherever it lands.
type xmlExt schema.Extension

func (x xmlExt) MarshalXML(enc *xml.Encoder, _ xml.StartElement) error {
	el := xml.StartElement{
		Name: xml.Name{Local: x.Prefix + ":" + x.LocalName},
		Attr: []xml.Attr{{Name: xml.Name{Local: "xmlns:" + x.Prefix}, Value: x.URI}},
	}
	if err := enc.EncodeElement(x.Value, el); err != nil {
		return fmt.Errorf("extension %s:%s: %w", x.Prefix, x.LocalName, err)
	}
	return nil
}

// feedExtensions returns the extensions a feed item carries as foreign
// elements: content:encoded is rendered by each format itself, skip drops
// more (RSS 1.0 writes its own dc:date), names XML reserves are dropped, and
// so are extensions in the namespaces the feed formats are written in (Atom,
// RDF, RSS 1.0): those are not foreign markup but the feed's own, so a page's
// atom:id or rdf:about would replace the item's id (feedparser reads an
// atom:id in any format as the entry's id), duplicate a required element
// (a second atom:title) or make RSS 1.0 something RDF refuses.
// Dates were normalized when the item was built (see datedExtensions).
func feedExtensions(ext schema.Extensions, skip func(schema.Extension) bool) []xmlExt {
	var out []xmlExt
	for _, x := range ext {
		switch {
		case x.URI == schema.ContentNamespace && x.LocalName == "encoded":
		case x.URI == schema.ArticleNamespace: // dynamo's own mark (content: full), not the page's
		case x.Prefix == "" || x.LocalName == "" || x.URI == "":
		case strings.HasPrefix(strings.ToLower(x.Prefix), "xml"):
		case x.URI == nsAtom || x.URI == nsRDF || x.URI == nsRSS1:
		case schema.ExtensionNameProblem(x.Prefix, x.LocalName, x.URI) != "": // stored before Validate refused it
		case skip != nil && skip(x):
		default:
			out = append(out, xmlExt(x))
		}
	}
	return out
}

// feedLanguage is the channel's dc:language when it is a language tag
// (BCP 47), for Atom's xml:lang and JSON Feed's language; "" otherwise.
func feedLanguage(ext schema.Extensions) string {
	v, ok := ext.Lookup(schema.DCNamespace, "language")
	if !ok {
		return ""
	}
	tag, err := language.Parse(strings.TrimSpace(v))
	if err != nil {
		return ""
	}
	return tag.String()
}

// datedExtensions returns ext with each dc:date written as W3C-DTF, as the
// Dublin Core module asks (XMLData keeps the page's own wording), and an
// unreadable dc:date left out: a feed never emits as a date what is not one.
// ext itself is not modified.
func datedExtensions(ext schema.Extensions, parse func(string) (time.Time, bool)) schema.Extensions {
	var out schema.Extensions
	for i, x := range ext {
		if x.URI != schema.DCNamespace || x.LocalName != "date" {
			if out != nil {
				out = append(out, x)
			}
			continue
		}
		if out == nil {
			out = append(make(schema.Extensions, 0, len(ext)), ext[:i]...)
		}
		if t, ok := parse(x.Value); ok {
			x.Value = t.UTC().Format(time.RFC3339)
			out = append(out, x)
		}
	}
	if out == nil {
		return ext
	}
	return out
}

// tagURI returns a stable tag: URI (RFC 4151) under the authority of base's host.
func tagURI(base string, parts ...string) string {
	host := "localhost"
	if u, err := url.Parse(base); err == nil && u.Hostname() != "" {
		host = u.Hostname()
	}
	esc := make([]string, len(parts))
	for i, p := range parts {
		esc[i] = url.PathEscape(p)
	}
	return "tag:" + host + ",2008:" + strings.Join(esc, "/")
}
