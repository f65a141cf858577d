package api

import (
	"bytes"
	"cmp"
	"encoding/xml"
	"net/url"
	"strconv"
	"time"

	"github.com/dynamo-rss/dynamo/schema"
)

// rss1Format is RSS 1.0 as RDF/XML, written with encoding/xml (gorilla/feeds
// has no RSS 1.0): every item has a unique rdf:about and a dc:date, HTML
// content goes in content:encoded.
var rss1Format = feedFormat{
	name:              "rss1",
	label:             "RSS 1.0",
	contentType:       "application/rdf+xml; charset=utf-8",
	contentTypeHeader: []string{"application/rdf+xml; charset=utf-8"},
	accepts:           []string{"application/rdf+xml"},
	render:            renderRSS1,
}

type rss1Doc struct {
	XMLName   xml.Name `xml:"rdf:RDF"`
	NSRDF     string   `xml:"xmlns:rdf,attr"`
	NS        string   `xml:"xmlns,attr"`
	NSDC      string   `xml:"xmlns:dc,attr"`
	NSContent string   `xml:"xmlns:content,attr"`
	NSSy      string   `xml:"xmlns:sy,attr"`
	Channel   rss1Channel
	Image     *rss1Image
	Items     []rss1Item
}

type rss1Channel struct {
	XMLName         xml.Name      `xml:"channel"`
	About           string        `xml:"rdf:about,attr"`
	Title           string        `xml:"title"`
	Link            string        `xml:"link"`
	Description     string        `xml:"description"`
	Date            string        `xml:"dc:date"`
	UpdatePeriod    string        `xml:"sy:updatePeriod,omitempty"`
	UpdateFrequency int           `xml:"sy:updateFrequency,omitempty"`
	Image           *rdfResource  `xml:"image"`
	Ext             []xmlExt      // the channel's extensions but dc:date
	Items           rss1ItemsList `xml:"items"`
}

type rdfResource struct {
	Resource string `xml:"rdf:resource,attr"`
}

type rss1ItemsList struct {
	Seq struct {
		Li []rdfResource `xml:"rdf:li"`
	} `xml:"rdf:Seq"`
}

type rss1Image struct {
	XMLName xml.Name `xml:"image"`
	About   string   `xml:"rdf:about,attr"`
	Title   string   `xml:"title"`
	Link    string   `xml:"link"`
	URL     string   `xml:"url"`
}

type rss1Item struct {
	XMLName     xml.Name `xml:"item"`
	About       string   `xml:"rdf:about,attr"`
	Title       string   `xml:"title"`
	Link        string   `xml:"link"`
	Description string   `xml:"description,omitempty"`
	Date        string   `xml:"dc:date"`
	Content     *cdata   `xml:"content:encoded"`
	Ext         []xmlExt
}

type cdata struct {
	Text string `xml:",cdata"`
}

func renderRSS1(buf *bytes.Buffer, m *feedModel) error {
	period, freq := syndication(m.Interval)
	doc := rss1Doc{
		NSRDF:     nsRDF,
		NS:        nsRSS1,
		NSDC:      schema.DCNamespace,
		NSContent: schema.ContentNamespace,
		NSSy:      nsSy,
		Channel: rss1Channel{
			About:           m.Self,
			Title:           m.Title,
			Link:            m.Link,
			Description:     cmp.Or(m.Description, m.Title), // required; a page may have none
			Date:            w3cdtf(m.Updated),
			UpdatePeriod:    period,
			UpdateFrequency: freq,
		},
		Items: make([]rss1Item, len(m.Items)),
	}
	if m.Image != nil && m.Image.URL != "" {
		doc.Channel.Image = &rdfResource{Resource: m.Image.URL}
		img := &rss1Image{About: m.Image.URL, Title: m.Image.Title, Link: m.Image.Link, URL: m.Image.URL}
		if img.Title == "" {
			img.Title = m.Title
		}
		if img.Link == "" {
			img.Link = m.Link
		}
		doc.Image = img
	}
	abouts := rss1Abouts(m)
	lis := make([]rdfResource, len(m.Items))
	isDCDate := func(x schema.Extension) bool { return x.URI == schema.DCNamespace && x.LocalName == "date" }
	doc.Channel.Ext = feedExtensions(m.Extensions, isDCDate)
	for i := range m.Items {
		it := &m.Items[i]
		lis[i] = rdfResource{Resource: abouts[i]}
		doc.Items[i] = rss1Item{
			About:       abouts[i],
			Title:       it.Title,
			Link:        it.Link,
			Description: it.Description,
			Date:        w3cdtf(it.Date),
			Ext:         feedExtensions(it.Extensions, isDCDate),
		}
		if it.ContentHTML != "" {
			doc.Items[i].Content = &cdata{Text: it.ContentHTML}
		}
	}
	doc.Channel.Items.Seq.Li = lis
	return writeXML(buf, &doc)
}

// rss1Abouts returns a URI per item, unique within the feed and distinct from
// the channel's: the item's link when no other item shares it, else the link
// with the item id as fragment (or the feed URL with it, as a last resort).
func rss1Abouts(m *feedModel) []string {
	count := make(map[string]int, len(m.Items))
	for i := range m.Items {
		count[m.Items[i].Link]++
	}
	used := make(map[string]bool, len(m.Items)+2)
	used[m.Self] = true
	if m.Image != nil {
		used[m.Image.URL] = true
	}
	out := make([]string, len(m.Items))
	for i := range m.Items {
		it := &m.Items[i]
		about := it.Link
		if count[about] > 1 || used[about] {
			about = withFragment(it.Link, it.GUID)
		}
		if used[about] {
			about = withFragment(m.Self, "item-"+it.GUID)
		}
		for n := 2; used[about]; n++ { // equal ids cannot happen, but never emit a duplicate
			about = withFragment(m.Self, "item-"+it.GUID+"-"+strconv.Itoa(n))
		}
		used[about] = true
		out[i] = about
	}
	return out
}

// withFragment replaces the fragment of link with frag.
func withFragment(link, frag string) string {
	u, err := url.Parse(link)
	if err != nil {
		return link + "#" + url.PathEscape(frag)
	}
	u.Fragment = frag
	u.RawFragment = ""
	return u.String()
}

// w3cdtf formats t as a W3C date-time (the RFC 3339 profile dc:date uses).
func w3cdtf(t time.Time) string { return t.UTC().Format(time.RFC3339) }
