package api

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"time"

	"github.com/gorilla/feeds"

	"github.com/dynamo-rss/dynamo/schema"
)

// rss2Format is RSS 2.0, built with gorilla/feeds and extended with the
// atom:link rel=self, <ttl>, the syndication module and item extensions.
var rss2Format = feedFormat{
	name:              "rss2",
	label:             "RSS 2.0",
	contentType:       "application/rss+xml; charset=utf-8",
	contentTypeHeader: []string{"application/rss+xml; charset=utf-8"},
	accepts:           []string{"application/rss+xml", "application/xml", "text/xml"},
	render:            renderRSS2,
}

type rss2Doc struct {
	XMLName   xml.Name `xml:"rss"`
	Version   string   `xml:"version,attr"`
	NSContent string   `xml:"xmlns:content,attr"`
	NSAtom    string   `xml:"xmlns:atom,attr"`
	NSDC      string   `xml:"xmlns:dc,attr"`
	NSSy      string   `xml:"xmlns:sy,attr"`
	NSMedia   string   `xml:"xmlns:media,attr"`
	Channel   rss2Channel
}

type rss2Channel struct {
	XMLName xml.Name `xml:"channel"`
	*feeds.RssFeed
	Links           []atomLink  `xml:"atom:link"` // rel=self, and rel=hub (WebSub) when there is a hub
	UpdatePeriod    string      `xml:"sy:updatePeriod,omitempty"`
	UpdateFrequency int         `xml:"sy:updateFrequency,omitempty"`
	Ext             []xmlExt    // the channel's extensions
	Items           []*rss2Item `xml:"item"` // shadows RssFeed.Items
}

type atomLink struct {
	Href string `xml:"href,attr"`
	Rel  string `xml:"rel,attr"`
	Type string `xml:"type,attr,omitempty"`
}

type rss2Item struct {
	*feeds.RssItem
	Media *mediaContent `xml:"media:content"`
	Ext   []xmlExt
}

// mediaContent is Media RSS's media:content: an item's image, which RSS 2.0
// itself can only carry as an enclosure with a length nobody knows.
type mediaContent struct {
	URL    string `xml:"url,attr"`
	Medium string `xml:"medium,attr"`
	Type   string `xml:"type,attr,omitempty"`
}

func renderRSS2(buf *bytes.Buffer, m *feedModel) error {
	ch := (&feeds.Rss{Feed: m.gorilla()}).RssFeed()
	ch.ManagingEditor = "" // gorilla/feeds writes the author as an e-mail address; we have none
	ch.Ttl = ttlMinutes(m.Interval)
	ch.Generator = "dynamo"
	if ch.Description == "" { // required; a page may have none (ANNOTATIONS.md: missing → empty)
		ch.Description = m.Title
	}
	period, freq := syndication(m.Interval)
	doc := rss2Doc{
		Version:   "2.0",
		NSContent: schema.ContentNamespace,
		NSAtom:    nsAtom,
		NSDC:      schema.DCNamespace,
		NSSy:      nsSy,
		NSMedia:   nsMedia,
		Channel: rss2Channel{
			RssFeed:         ch,
			Links:           atomLinks(m, "application/rss+xml"),
			UpdatePeriod:    period,
			UpdateFrequency: freq,
			Ext:             feedExtensions(m.Extensions, nil),
			Items:           make([]*rss2Item, len(ch.Items)),
		},
	}
	for i, it := range ch.Items {
		// Every item is dated, also at 0001-01-01T00:00:00Z, which
		// gorilla/feeds takes for no date (Go's zero time).
		it.PubDate = m.Items[i].Date.Format(time.RFC1123Z)
		item := &rss2Item{RssItem: it, Ext: feedExtensions(m.Items[i].Extensions, nil)}
		if img := m.Items[i].Image; img != nil && img.URL != "" {
			typ := imageType(img.URL)
			item.Media = &mediaContent{URL: img.URL, Medium: "image", Type: typ}
			if typ != "" { // an enclosure needs its type; its length is unknown (0, as is usual)
				it.Enclosure = &feeds.RssEnclosure{Url: img.URL, Type: typ, Length: "0"}
			}
		}
		doc.Channel.Items[i] = item
	}
	ch.Items = nil
	return writeXML(buf, &doc)
}

// atomLinks are a feed's atom:link elements: rel=self (typed), then the
// WebSub hub (rel=hub) when there is one.
func atomLinks(m *feedModel, selfType string) []atomLink {
	links := []atomLink{{Href: m.Self, Rel: "self", Type: selfType}}
	if m.Hub != "" {
		links = append(links, atomLink{Href: m.Hub, Rel: "hub"})
	}
	return links
}

// writeXML writes the XML declaration and v, indented.
func writeXML(buf *bytes.Buffer, v any) error {
	buf.WriteString(xml.Header)
	enc := xml.NewEncoder(buf)
	enc.Indent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("encode xml: %w", err)
	}
	if err := enc.Close(); err != nil {
		return fmt.Errorf("encode xml: %w", err)
	}
	buf.WriteByte('\n')
	return nil
}
