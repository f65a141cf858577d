package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/gorilla/feeds"
)

// jsonFormat is JSON Feed 1.1, built with gorilla/feeds: feed_url is the self
// link, content_html comes from content:encoded, content_text otherwise.
var jsonFormat = feedFormat{
	name:              "json",
	label:             "JSON Feed",
	contentType:       "application/feed+json; charset=utf-8",
	contentTypeHeader: []string{"application/feed+json; charset=utf-8"},
	accepts:           []string{"application/feed+json", "application/json"},
	render:            renderJSON,
}

// jsonDoc is a JSON Feed whose items are always present: gorilla/feeds
// omits an empty "items", which JSON Feed requires.
type jsonDoc struct {
	*feeds.JSONFeed
	Items []*feeds.JSONItem `json:"items"` // shadows JSONFeed.Items
}

func renderJSON(buf *bytes.Buffer, m *feedModel) error {
	feed := (&feeds.JSON{Feed: m.gorilla()}).JSONFeed()
	feed.FeedUrl = m.Self
	if m.Hub != "" { // JSON Feed 1.1 "hubs": real-time notifications
		feed.Hubs = []*feeds.JSONHub{{Type: "WebSub", Url: m.Hub}}
	}
	feed.HomePageUrl = m.Link
	feed.Language = feedLanguage(m.Extensions)
	feed.Author = nil // deprecated in JSON Feed 1.1; authors carries it
	if m.Image != nil && m.Image.URL != "" {
		feed.Icon = m.Image.URL
	}
	for i, it := range feed.Items {
		src := &m.Items[i]
		it.ModifiedDate = nil
		// Every item is dated, also at Go's zero time, which gorilla/feeds
		// leaves out; in whole seconds, as in every format (time.Time's
		// JSON would carry the nanoseconds of a time read from a clock).
		date := src.Date.UTC().Truncate(time.Second)
		it.PublishedDate = &date
		if src.ContentHTML == "" {
			it.Summary = ""
			it.ContentText = src.Description
			if it.ContentText == "" { // JSON Feed requires content_html or content_text
				it.ContentText = src.Title
			}
		}
		if src.Image != nil && src.Image.URL != "" {
			it.Image = src.Image.URL
		}
	}
	enc := json.NewEncoder(buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	doc := jsonDoc{JSONFeed: feed, Items: feed.Items}
	if doc.Items == nil {
		doc.Items = []*feeds.JSONItem{}
	}
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("encode json feed: %w", err)
	}
	return nil
}
