package ui

import (
	"github.com/dynamo-rss/dynamo/internal/humantime"
	"html/template"

	"github.com/dynamo-rss/dynamo/api"
)

// A feed opened in a browser is shown as a page (see API.md, "People and
// operators"). The api decides when (its Accept rates text/html above
// every feed type), builds the page's data from the feed model the feed
// would carry, caches the bytes and answers with its own validators; the
// page itself is rendered here.

// feedPage is the data of feed.html: the api's, with each item's HTML
// sanitized for a page of ours.
type feedPage struct {
	api.FeedPage
	Items []feedPageItem
}

// feedPageItem is one item as a reader would show it (feed.html, and the
// first items of each candidate on /new).
type feedPageItem struct {
	Title   string
	Link    string
	Date    humantime.Time
	Image   string
	Content template.HTML // sanitized content:encoded; "": none
	Text    string        // the description, when there is no content
}

// FeedPage renders the page of a feed for a browser ([api.Pages]).
func (s *Server) FeedPage(p *api.FeedPage) ([]byte, error) {
	page := feedPage{FeedPage: *p, Items: make([]feedPageItem, 0, len(p.Items))}
	for i := range p.Items {
		it := &p.Items[i]
		pi := feedPageItem{Title: it.Title, Link: it.Link, Date: it.Date, Image: it.Image, Text: it.Text}
		if it.ContentHTML != "" {
			pi.Content, pi.Text = s.people.safeHTML(it.ContentHTML), ""
		}
		page.Items = append(page.Items, pi)
	}
	return s.executePage("feed.html", page)
}
