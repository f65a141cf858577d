package api

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"github.com/dynamo-rss/dynamo/internal/humantime"
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
	return prefersHTMLRanges(parseAccept(buf[:0], accept))
}

// prefersHTMLRanges is prefersHTML for a parsed Accept header.
func prefersHTMLRanges(ranges []acceptRange) bool {
	html := quality(ranges, "text/html")
	if html <= 0 {
		return false
	}
	for _, f := range feedFormats { // application/xml and text/xml are RSS 2.0's
		for _, mt := range f.accepts {
			if quality(ranges, mt) >= html {
				return false
			}
		}
	}
	return true
}

// negotiateFeed picks a feed request's format, type= (explicit) when it
// names one, else by Accept (negotiateRanges), and reports whether it asks
// for the feed as a page (wantsFeedPage), reading Accept once: both are
// decided before the render cache is looked up, on every request.
func negotiateFeed(explicit string, req *http.Request) (format *feedFormat, page bool) {
	if f, ok := formatByName(explicit); ok {
		return f, false // type= is there: never a page
	}
	var buf [8]acceptRange
	ranges := parseAccept(buf[:0], headerValue(req.Header, echo.HeaderAccept))
	return negotiateRanges(ranges), prefersHTMLRanges(ranges) && !hasTypeParam(req.URL.RawQuery)
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

// serveFeedPage answers a feed request from a browser with the feed as a
// page. It has validators of its own (the feed's, marked as HTML), and
// varies by Accept like the feed. The ETag is weak: the page shows times
// relative to now ("3h ago"), so its bytes change while the feed it shows
// does not (RFC 9110 §8.8.1), and a weak tag may name both the identity and
// the gzip coding. The page is kept in the render cache and compressed here,
// like the feed; serveCachedPage is its shortcut.
//
// The page's one clock-dependent text is the feed's age ("updated 3m20s
// ago", Time's Relative). A cached page keeps the age it was rendered
// with and answers only while the clock gives the same text (pageCurrent);
// when it reads otherwise the lookup is a miss, and the page is rendered
// again and replaces its entry under the same key. The text counts
// seconds under an hour, minutes under a day, then hours (appendRelative),
// so a page read without pause is rendered per key and coding about once a
// second while its feed is under an hour old, once a minute under a day,
// then once an hour, whatever its traffic: under 2 ms for a page of 40
// items (BenchmarkFeedPageRender), against a few microseconds for a hit.
func (s *Server) serveFeedPage(c echo.Context, key []byte, fr feedRequest) error {
	req := c.Request()
	gz := acceptsGzip(headerValue(req.Header, echo.HeaderAcceptEncoding))
	var buf [320]byte
	pk := makePageKeys(buf[:0], key, req, gz)
	if s.pageNotModified(req, &fr, &pk) {
		s.setPageValidators(c.Response().Header(), &fr, s.newPageEntry(pk.etag(), nil, &fr, time.Time{}, ""))
		return c.NoContent(http.StatusNotModified)
	}
	e, err := s.pageBody(c, string(pk.cache), gz, &fr)
	if err != nil {
		return err
	}
	s.writePage(c, &fr, e, gz)
	return nil
}

// serveCachedPage is serveCached for a browser's page: it answers from the
// render cache when it can (a 304 or the cached page) and reports whether
// it did; when not, it has written nothing and counted nothing.
func (s *Server) serveCachedPage(c echo.Context, key []byte, fr *feedRequest) bool {
	req := c.Request()
	gz := acceptsGzip(headerValue(req.Header, echo.HeaderAcceptEncoding))
	var buf [320]byte
	pk := makePageKeys(buf[:0], key, req, gz)
	if s.pageNotModified(req, fr, &pk) {
		e := s.feeds.cache.peek(pk.cache) // a 304 neither hits nor misses
		if e == nil {
			return false
		}
		s.setPageValidators(c.Response().Header(), fr, e)
		_ = c.NoContent(http.StatusNotModified) // client gone: nothing left to do
		return true
	}
	now := s.now()
	e := s.feeds.cache.hit(pk.cache, func(e *feedEntry) bool { return pageCurrent(e, now) })
	if e == nil {
		return false
	}
	s.writePage(c, fr, e, gz)
	return true
}

// pageKeys are what a feed's page is known by, made in place from the
// feed's key: its entity tag, and its render cache key in a caller's buffer.
type pageKeys struct {
	// opaque is the ETag without its W/: `"`, the hex of the first half of
	// the SHA-256 of "feed page", NUL and the feed's key, and `-html"`.
	opaque [pageTagLen]byte
	// cache is opaque, then what the page shows beyond the feed (its links
	// in each format are the request's path and query with type= set: a
	// query the feed ignores, or a path escaped differently, shows other
	// links) and the coding: 'i' identity, 'g' gzip; NUL-separated.
	cache []byte
}

// pageTagLen is the length of a page's ETag without its W/.
const pageTagLen = 1 + 32 + len(`-html"`)

func makePageKeys(dst, key []byte, req *http.Request, gz bool) pageKeys {
	var in [320]byte
	sum := sha256.Sum256(append(append(in[:0], "feed page\x00"...), key...))
	var k pageKeys
	k.opaque[0] = '"'
	hex.Encode(k.opaque[1:33], sum[:16])
	copy(k.opaque[33:], `-html"`)
	dst = append(append(dst, k.opaque[:]...), 0)
	dst = append(append(dst, req.URL.EscapedPath()...), 0)
	dst = append(append(dst, req.URL.RawQuery...), 0)
	coding := byte('i')
	if gz {
		coding = 'g'
	}
	k.cache = append(dst, coding)
	return k
}

// etag is the page's ETag.
func (k *pageKeys) etag() string { return "W/" + string(k.opaque[:]) }

// pageNotModified reports whether the request's validators match the page
// (weak comparison: W/ is not part of the match).
func (s *Server) pageNotModified(req *http.Request, fr *feedRequest, k *pageKeys) bool {
	return notModifiedBy(req, s.now, fr.lastMod.UTC().Truncate(time.Second), func(tag string) bool {
		return tag == string(k.opaque[:])
	})
}

// Header values of every page answer (capacity = length, so an Add
// elsewhere copies them).
var (
	htmlContentType = []string{echo.MIMETextHTMLCharsetUTF8}[:1:1]
	pageCSP         = []string{PageSecurityPolicy}[:1:1]
	noReferrer      = []string{"no-referrer"}[:1:1]
)

// setPageValidators sets the headers a page's 200 and 304 share: a feed's
// (no Link: a page is not what WebSub subscribes to) and the pages' own
// policies, on the 304 too, since a cache updates the stored page's headers
// with the 304's (RFC 9111 §4.3.4), and every answer starts with the
// sandbox policy of documents (secureHeaders).
func (s *Server) setPageValidators(h http.Header, fr *feedRequest, e *feedEntry) {
	s.setFeedValidators(h, fr, e)
	h["Content-Security-Policy"] = pageCSP
	h["Referrer-Policy"] = noReferrer
}

// newPageEntry makes a page's entry: body (nil: the header values of a
// 304), whose age counts from ageFrom (zero: it shows none) and reads age.
func (s *Server) newPageEntry(etag string, body []byte, fr *feedRequest, ageFrom time.Time, age string) *feedEntry {
	lastMod := fr.lastMod.UTC().Truncate(time.Second)
	return &feedEntry{
		body:        body,
		etag:        []string{etag},
		length:      []string{strconv.Itoa(len(body))},
		lastMod:     lastMod,
		lastModText: []string{lastMod.Format(http.TimeFormat)},
		ageFrom:     ageFrom,
		age:         age,
	}
}

// pageCurrent reports whether the cached page e is the page rendered at now:
// its age reads the same (or it shows none). It allocates nothing.
func pageCurrent(e *feedEntry, now time.Time) bool {
	if e.ageFrom.IsZero() {
		return true
	}
	var buf [32]byte
	return string(humantime.AppendRelative(buf[:0], humantime.RelativeSeconds(e.ageFrom, now))) == e.age
}

// writePage answers 200 with the page e (gzip-compressed when gz).
func (s *Server) writePage(c echo.Context, fr *feedRequest, e *feedEntry, gz bool) {
	h := c.Response().Header()
	s.setPageValidators(h, fr, e)
	h[echo.HeaderContentType] = htmlContentType
	if gz {
		h[echo.HeaderContentEncoding] = gzipEncoding
	}
	h[echo.HeaderContentLength] = e.length
	c.Response().WriteHeader(http.StatusOK)
	if c.Request().Method == http.MethodHead {
		return
	}
	_, _ = c.Response().Write(e.body) // client gone: nothing left to do
}

// pageBody returns the page (gzip-compressed when gz) cached under key, when
// its age is current, or renders it once however many requests ask for it at
// the same time, replacing the entry.
func (s *Server) pageBody(c echo.Context, key string, gz bool, fr *feedRequest) (*feedEntry, error) {
	now := s.now()
	if e, ok := s.feeds.cache.get(key, func(e *feedEntry) bool { return pageCurrent(e, now) }); ok {
		return e, nil
	}
	v, err, _ := s.feeds.renders.Do(key, func() (any, error) {
		if gz {
			plain, err := s.pageBody(c, key[:len(key)-1]+"i", false, fr)
			if err != nil {
				return nil, err
			}
			body, err := gzipBody(plain.body)
			if err != nil {
				return nil, err
			}
			e := s.newPageEntry(plain.etag[0], body, fr, plain.ageFrom, plain.age)
			s.feeds.cache.put(key, e, "")
			return e, nil
		}
		// The shared render must not die with the first caller's request
		// while others wait for it; it keeps that context's values and has
		// its own bound.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(c.Request().Context()), renderTimeout)
		defer cancel()
		start := time.Now()
		m, err := fr.build(ctx)
		if err != nil {
			return nil, err
		}
		page := s.feedPageData(c, m, s.now())
		body, err := s.opts.Pages.FeedPage(&page)
		if err != nil {
			return nil, err
		}
		// m.Updated zero: the page shows no age (page.Updated.Set is false).
		e := s.newPageEntry("W/"+key[:pageTagLen], body, fr, m.Updated, page.Updated.Relative)
		s.feeds.seconds.WithLabelValues("html").Observe(time.Since(start).Seconds())
		s.feeds.cache.put(key, e, "")
		return e, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*feedEntry), nil
}

// feedPageData is the page of the feed m, its times relative to now.
func (s *Server) feedPageData(c echo.Context, m *feedModel, now time.Time) FeedPage {
	page := FeedPage{
		Title:       cmp.Or(m.Title, "feed"),
		Description: m.Description,
		Link:        m.Link,
		Updated:     humantime.New(m.Updated, now),
		Links:       s.formatLinks(c),
		Hub:         s.opts.HubURL,
	}
	if id := c.Param("rssId"); id != "" {
		if unescaped, err := url.PathUnescape(id); err == nil {
			page.View = ViewHref(unescaped)
			page.History = s.HistoryLinks(unescaped)
			// Subscribe links point at what a reader wants, the items feed:
			// this one when it is one (?max=, perhaps filtered), else the
			// resource's (a version or the history is a page snapshot).
			if q, err := parseFeedQuery(c.Request().URL.RawQuery); err != nil || q.max == 0 || q.index > 0 || c.Param("seq") != "" {
				page.Links = s.FeedLinks(unescaped)
			}
		}
	}
	for i := range m.Items {
		it := &m.Items[i]
		pi := FeedPageItem{Title: cmp.Or(it.Title, it.GUID), Link: it.Link, Date: humantime.New(it.Date, now)}
		if it.Image != nil {
			pi.Image = it.Image.URL
		}
		if it.ContentHTML != "" {
			pi.ContentHTML = it.ContentHTML // sanitized by the page that shows it
		} else {
			pi.Text = it.Description
		}
		page.Items = append(page.Items, pi)
	}
	return page
}

// formatLinks returns the request's feed URL in each format: its path and
// query, with type= set.
func (s *Server) formatLinks(c echo.Context) []Link {
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
	links := make([]Link, 0, len(feedFormats))
	for _, f := range feedFormats {
		mediaType, _, _ := strings.Cut(f.contentType, ";")
		links = append(links, Link{
			SubscribeFormat: SubscribeFormat{Type: f.name, Label: f.label, MIME: mediaType},
			Href:            base + "type=" + url.QueryEscape(f.name),
		})
	}
	return links
}
