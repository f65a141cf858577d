package api

import (
	"bytes"
	"cmp"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"github.com/dynamo-rss/dynamo/internal/redact"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/dynamo-rss/dynamo/storage"
)

// opmlContentType is the media type of GET /resources.opml: OPML has no
// registered type; text/x-opml is the one readers' import dialogs know.
const opmlContentType = "text/x-opml; charset=utf-8"

// opmlDoc is an OPML 2.0 subscription list (http://opml.org/spec2.opml).
type opmlDoc struct {
	XMLName xml.Name      `xml:"opml"`
	Version string        `xml:"version,attr"`
	Head    opmlHead      `xml:"head"`
	Body    []opmlOutline `xml:"body>outline"`
}

type opmlHead struct {
	Title       string `xml:"title"`
	DateCreated string `xml:"dateCreated"`
	Docs        string `xml:"docs"`
}

// opmlOutline is one subscription: type="rss" with the items feed's
// absolute URL in xmlUrl and the channel's link in htmlUrl.
type opmlOutline struct {
	Type        string `xml:"type,attr"`
	Text        string `xml:"text,attr"`
	Title       string `xml:"title,attr"`
	XMLURL      string `xml:"xmlUrl,attr"`
	HTMLURL     string `xml:"htmlUrl,attr,omitempty"`
	Description string `xml:"description,attr,omitempty"`
	Version     string `xml:"version,attr"`
}

// getOPML serves GET /resources.opml: every resource's items feed (RSS 2.0,
// the default format), declared or stored, for import into a reader, with
// its channel's link as htmlUrl.
func (s *Server) getOPML(c echo.Context) error {
	ctx := c.Request().Context()
	now := s.now()
	var stored []storage.ResourceInfo
	if s.opts.Store != nil {
		var err error
		if stored, err = s.opts.Store.Resources(ctx); err != nil {
			// The configured resources are still worth listing.
			s.log.LogAttrs(ctx, slog.LevelError, "list stored resources", slog.Any("error", err))
		}
	}
	base := s.baseURL(c)
	doc := opmlDoc{
		Version: "2.0",
		Head: opmlHead{
			Title:       "dynamo feeds",
			DateCreated: now.UTC().Format(time.RFC1123Z),
			Docs:        "http://opml.org/spec2.opml",
		},
	}
	var statuses []ResourceStatus
	if s.opts.Poller != nil {
		statuses = s.opts.Poller.Statuses()
	}
	for _, r := range ListResources(statuses, stored) {
		var info storage.ResourceInfo
		if r.Info != nil {
			info = *r.Info
		}
		title := cmp.Or(info.Title, r.ID)
		doc.Body = append(doc.Body, opmlOutline{
			Type:        "rss",
			Text:        title,
			Title:       title,
			XMLURL:      base + s.ItemsPath(r.ID),
			HTMLURL:     cmp.Or(absoluteURL(redact.URL(s.channelLink(ctx, &r))), base+ViewHref(r.ID)),
			Description: info.Description,
			Version:     "RSS2",
		})
	}
	var buf bytes.Buffer
	buf.WriteString(xml.Header)
	enc := xml.NewEncoder(&buf)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("encode opml: %w", err)
	}
	buf.WriteByte('\n')
	h := c.Response().Header()
	h.Set(echo.HeaderCacheControl, "no-cache")
	h.Set(echo.HeaderContentDisposition, `inline; filename="dynamo.opml"`)
	return c.Blob(http.StatusOK, opmlContentType, buf.Bytes())
}

// absoluteURL returns raw when it is an absolute http(s) URL, else "".
func absoluteURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return ""
	}
	return raw
}

// channelLink is the link of a resource's channel in its latest version,
// else its page URL: what a reader's "open the site" should open. It reads
// the latest version (the catalog does not keep the link); a version that
// cannot be read falls back to the page URL.
func (s *Server) channelLink(ctx context.Context, r *Listed) string {
	if r.Info == nil || s.opts.Store == nil {
		return r.URL()
	}
	doc, _, err := s.opts.Store.Version(ctx, r.ID, 1)
	if err != nil {
		if !errors.Is(err, storage.ErrNotFound) {
			s.log.LogAttrs(ctx, slog.LevelWarn, "read latest version for opml", slog.String("resource", r.ID), slog.Any("error", err))
		}
		return r.URL()
	}
	if absoluteURL(doc.Channel.Link) != "" {
		return doc.Channel.Link
	}
	return cmp.Or(absoluteURL(doc.URL), r.URL())
}
