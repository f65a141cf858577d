package api

import (
	"bytes"
	"time"

	"github.com/gorilla/feeds"
)

// atomFormat is Atom 1.0, built with gorilla/feeds and extended with a stable
// feed id, rel=self and rel=alternate links, published dates, plain-text
// summaries and item extensions.
var atomFormat = feedFormat{
	name:              "atom",
	label:             "Atom",
	contentType:       "application/atom+xml; charset=utf-8",
	contentTypeHeader: []string{"application/atom+xml; charset=utf-8"},
	accepts:           []string{"application/atom+xml"},
	render:            renderAtom,
}

type atomDoc struct {
	*feeds.AtomFeed
	Lang      string            `xml:"xml:lang,attr,omitempty"` // from the channel's dc:language
	Links     []*feeds.AtomLink // alternate and self; shadows AtomFeed.Link
	Generator string            `xml:"generator"`
	Ext       []xmlExt          // the channel's extensions
	Entries   []*atomEntry      `xml:"entry"` // shadows AtomFeed.Entries
}

type atomEntry struct {
	*feeds.AtomEntry
	Ext []xmlExt
}

func renderAtom(buf *bytes.Buffer, m *feedModel) error {
	feed := (&feeds.Atom{Feed: m.gorilla()}).AtomFeed()
	feed.Id = m.ID
	feed.Link = nil
	if m.Image != nil && m.Image.URL != "" {
		feed.Logo = m.Image.URL
	}
	doc := atomDoc{
		AtomFeed: feed,
		Links: []*feeds.AtomLink{
			{Href: m.Link, Rel: "alternate", Type: "text/html"},
			{Href: m.Self, Rel: "self", Type: "application/atom+xml"},
		},
		Lang:      feedLanguage(m.Extensions),
		Generator: "dynamo",
		Ext:       feedExtensions(m.Extensions, nil),
		Entries:   make([]*atomEntry, len(feed.Entries)),
	}
	if m.Hub != "" {
		doc.Links = append(doc.Links, &feeds.AtomLink{Href: m.Hub, Rel: "hub"})
	}
	for i, e := range feed.Entries {
		it := &m.Items[i]
		e.Id = it.ID
		e.Updated = it.Date.UTC().Format(time.RFC3339)
		e.Published = e.Updated
		if e.Summary != nil {
			e.Summary.Type = "text" // descriptions are plain text, not HTML
		}
		doc.Entries[i] = &atomEntry{AtomEntry: e, Ext: feedExtensions(it.Extensions, nil)}
	}
	feed.Entries = nil
	return writeXML(buf, &doc)
}
