package api

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
)

// A feed opened in a browser is shown as a page (see API.md, "People and
// operators"): browsers send Accept headers that rate text/html above
// everything else, whereas feed readers ask for feed types, generic XML or
// */* (their headers are in feedpage_test.go). The page shows the same
// feed model the feed would carry, so a person sees exactly the reader's items.

// wantsFeedPage reports whether req asks for a feed as a page: no type= in
// the query, and an Accept that rates text/html strictly above every feed
// media type, application/xml and text/xml.
func wantsFeedPage(req *http.Request) bool {
	// Accept first: readers' (or none) settle it without reading the query.
	return prefersHTML(headerValue(req.Header, echo.HeaderAccept)) && !hasTypeParam(req.URL.RawQuery)
}

// prefersHTML reports whether an Accept header rates text/html strictly
// higher than each media type a feed is served as (application/xml and
// text/xml included, through RSS 2.0's list). Ties go to the feed: */*
// alone, or text/html listed beside the feed types at the same quality
// (Miniflux), gets the feed.
func prefersHTML(accept string) bool {
	var buf [8]acceptRange
	ranges := parseAccept(buf[:0], accept)
	html := quality(ranges, "text/html")
	if html <= 0 {
		return false
	}
	for _, f := range feedFormats {
		for _, mt := range f.accepts {
			if quality(ranges, mt) >= html {
				return false
			}
		}
	}
	return quality(ranges, "application/xml") < html
}

// hasTypeParam reports whether a raw query names type=, split as
// parseFeedQuery splits it.
func hasTypeParam(raw string) bool {
	for part := range strings.FieldsFuncSeq(raw, func(r rune) bool { return r == '&' || r == ';' }) {
		k, _, _ := strings.Cut(part, "=")
		if key, err := url.QueryUnescape(k); err == nil && key == "type" {
			return true
		}
	}
	return false
}

// feedPage is the data of feed.html.
type feedPage struct {
	Title       string
	Description string
	Link        string // the page people read
	View        string // the resource's page for people; "": not a resource's feed
	Updated     homeTime
	Links       []homeLink // this feed in each format
	Hub         string     // the WebSub hub; "": none
	Items       []feedPageItem
}

// feedPageItem is one item as a reader would show it.
type feedPageItem struct {
	Title   string
	Link    string
	Date    homeTime
	Image   string
	Content template.HTML // sanitized content:encoded; "": none
	Text    string        // the description, when there is no content
}

// serveFeedPage answers a feed request from a browser with the feed as a
// page. It has validators of its own (the feed's, marked as HTML), and
// varies by Accept like the feed. The ETag is weak: the page shows times
// relative to now ("3h ago"), so its bytes change while the feed it shows
// does not (RFC 9110 §8.8.1), and a weak tag may name both the identity and
// the gzip coding, so the gzip middleware compresses the page.
func (s *Server) serveFeedPage(c echo.Context, key []byte, fr feedRequest) error {
	req := c.Request()
	sum := sha256.Sum256(append([]byte("feed page\x00"), key...))
	opaque := `"` + hex.EncodeToString(sum[:16]) + `-html"`
	etag := "W/" + opaque
	lastMod := fr.lastMod.UTC().Truncate(time.Second)
	h := c.Response().Header()
	validators := func() {
		h.Add(echo.HeaderVary, echo.HeaderAccept)
		h.Set("ETag", etag)
		h.Set(echo.HeaderLastModified, lastMod.Format(http.TimeFormat))
		h.Set("Cache-Control", "public, max-age="+strconv.FormatInt(int64(fr.maxAge/time.Second), 10))
	}
	if notModified(req, s.now(), lastMod, opaque) { // weak comparison: W/ is not part of the match
		validators()
		return c.NoContent(http.StatusNotModified)
	}
	ctx, cancel := context.WithTimeout(req.Context(), renderTimeout)
	defer cancel()
	m, err := fr.build(ctx)
	if err != nil {
		return err
	}
	now := s.now()
	page := feedPage{
		Title:       cmp.Or(m.Title, "feed"),
		Description: m.Description,
		Link:        m.Link,
		Updated:     s.homeTime(m.Updated, now),
		Links:       s.formatLinks(c),
		Hub:         s.opts.HubURL,
	}
	if id := c.Param("rssId"); id != "" {
		if unescaped, err := url.PathUnescape(id); err == nil {
			page.View = s.viewHref(unescaped)
		}
	}
	for i := range m.Items {
		it := &m.Items[i]
		pi := feedPageItem{Title: cmp.Or(it.Title, it.GUID), Link: it.Link, Date: s.homeTime(it.Date, now)}
		if it.Image != nil {
			pi.Image = it.Image.URL
		}
		if it.ContentHTML != "" {
			pi.Content = s.people.safeHTML(it.ContentHTML)
		} else {
			pi.Text = it.Description
		}
		page.Items = append(page.Items, pi)
	}
	validators()
	return s.renderPage(c, http.StatusOK, "feed.html", page)
}

// formatLinks returns the request's feed URL in each format: its path and
// query, with type= set.
func (s *Server) formatLinks(c echo.Context) []homeLink {
	req := c.Request()
	var keep []string
	for part := range strings.FieldsFuncSeq(req.URL.RawQuery, func(r rune) bool { return r == '&' || r == ';' }) {
		k, _, _ := strings.Cut(part, "=")
		if key, err := url.QueryUnescape(k); err == nil && key == "type" {
			continue
		}
		keep = append(keep, part)
	}
	base := s.baseURL(c) + req.URL.EscapedPath() + "?"
	if len(keep) > 0 {
		base += strings.Join(keep, "&") + "&"
	}
	links := make([]homeLink, 0, len(feedFormats))
	for _, f := range feedFormats {
		mediaType, _, _ := strings.Cut(f.contentType, ";")
		links = append(links, homeLink{
			subscribeFormat: subscribeFormat{Type: f.name, Label: f.label, MIME: mediaType},
			Href:            base + "type=" + url.QueryEscape(f.name),
		})
	}
	return links
}
