package api

// What the api hands the pages for people (package ui) besides the
// services: the links to a resource's feeds.

import (
	"cmp"
	"net/url"
	"strconv"
	"strings"
)

// SubscribeFormat is one subscribe link format, from the feed formats.
type SubscribeFormat struct {
	Type  string // the type= value
	Label string
	MIME  string // its media type, for <link rel="alternate">
}

// Link is a subscribe link of a resource, or of the feed of all resources.
type Link struct {
	SubscribeFormat
	Href string
}

// defaultSubscribeMax is the N of the items feed ?max=N that subscribe
// links point at when Options.SubscribeMax is 0 (feeds.subscribe_max).
const defaultSubscribeMax = 50

// ViewHref is the link to a resource's page for people, /view/{rssId}.
func ViewHref(id string) string { return "/view/" + url.PathEscape(id) }

// ResourcePath is the path of a resource's versions feed.
func ResourcePath(id string) string { return resourcePath(id) }

// VersionPath is the path of a version's permalink.
func VersionPath(id string, seq uint64) string { return versionPath(id, seq) }

// FeedHref is the link to a feed in a format, absolute when a public URL is
// configured: id empty, the feed of all resources; else the resource's items
// feed (?max=N, what a reader wants: the page's articles) or, with history,
// its versions feed (the history of changes). typ "": the default format.
func (s *Server) FeedHref(id, typ string, history bool) string {
	p := "/resources"
	switch {
	case id != "" && !history:
		p = s.ItemsPath(id)
	case id != "":
		p = resourcePath(id)
	}
	if typ != "" {
		sep := "?"
		if strings.Contains(p, "?") {
			sep = "&"
		}
		p += sep + "type=" + url.QueryEscape(typ)
	}
	return strings.TrimSuffix(s.opts.PublicURL, "/") + p
}

// ItemsPath is the path and query of a resource's items feed that subscribe
// links point at: ?max=feeds.subscribe_max.
func (s *Server) ItemsPath(id string) string {
	return resourcePath(id) + "?max=" + strconv.Itoa(cmp.Or(s.opts.SubscribeMax, defaultSubscribeMax))
}

// FeedLinks are the subscribe links of a resource in each format: its items
// feed (id empty: the feed of all resources).
func (s *Server) FeedLinks(id string) []Link { return s.formatHrefs(id, false) }

// HistoryLinks are the links to a resource's versions feed, the history of
// its changes, in each format.
func (s *Server) HistoryLinks(id string) []Link { return s.formatHrefs(id, true) }

func (s *Server) formatHrefs(id string, history bool) []Link {
	links := make([]Link, 0, len(feedFormats))
	for _, f := range feedFormats { // RSS 2.0 first: the default
		mediaType, _, _ := strings.Cut(f.contentType, ";")
		sf := SubscribeFormat{Type: f.name, Label: f.label, MIME: mediaType}
		links = append(links, Link{SubscribeFormat: sf, Href: s.FeedHref(id, f.name, history)})
	}
	return links
}
