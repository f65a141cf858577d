package api

// What the api hands the pages for people (package ui) besides the
// services: the links to a resource's feeds, times as people read them,
// and the data of a feed shown to a browser as a page (feedpage.go).

import (
	"cmp"
	"net/url"
	"strconv"
	"strings"
	"time"
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

// Time is a moment shown both absolutely and relatively to now.
type Time struct {
	Set      bool
	ISO      string // datetime attribute
	Absolute string
	Relative string // "3m ago", "in 2m"
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

// NewTime is t as the pages show it, relative to now; the zero time is
// not Set.
func NewTime(t, now time.Time) Time {
	if t.IsZero() {
		return Time{}
	}
	t = t.UTC()
	rel := string(appendRelative(nil, relativeSeconds(t, now)))
	return Time{Set: true, ISO: t.Format(time.RFC3339), Absolute: t.Format("2006-01-02 15:04:05 UTC"), Relative: rel}
}

// relativeSeconds is how far t is from now, as Time's Relative reads
// it: rounded to the second.
func relativeSeconds(t, now time.Time) time.Duration { return t.Sub(now).Round(time.Second) }

// appendRelative appends Time's Relative for a time d (whole seconds)
// from now: "now", "in 2m", "4m10s ago", "2h5m ago", "3d4h ago". Past an
// hour it shows no seconds, past a day no minutes (the absolute time is
// beside it): nobody reads the seconds of a time hours away, and a cached
// feed page, which is rendered again when its age reads otherwise
// (pageCurrent), then changes once a minute or an hour, not every second.
// It allocates nothing when dst has room.
func appendRelative(dst []byte, d time.Duration) []byte {
	switch {
	case d > 0:
		return appendHumanDuration(append(dst, "in "...), coarse(d))
	case d < 0:
		return append(appendHumanDuration(dst, coarse(-d)), " ago"...)
	}
	return append(dst, "now"...)
}

// coarse truncates a positive d to its two largest units of days, hours,
// minutes and seconds (2d3h, 1h30m, 4m10s).
func coarse(d time.Duration) time.Duration {
	switch {
	case d >= 24*time.Hour:
		return d.Truncate(time.Hour)
	case d >= time.Hour:
		return d.Truncate(time.Minute)
	}
	return d
}

// HumanDuration prints a duration the way people read it: 1h30m, 45s, 2d3h.
func HumanDuration(d time.Duration) string { return string(appendHumanDuration(nil, d)) }

// appendHumanDuration appends HumanDuration(d) to dst.
func appendHumanDuration(dst []byte, d time.Duration) []byte {
	if d <= 0 {
		return append(dst, "0s"...)
	}
	if d < time.Second {
		return append(dst, d.Round(time.Millisecond).String()...)
	}
	d = d.Round(time.Second)
	days := d / (24 * time.Hour)
	d -= days * 24 * time.Hour
	h, m, sec := d/time.Hour, (d%time.Hour)/time.Minute, (d%time.Minute)/time.Second
	for _, p := range [...]struct {
		n    time.Duration
		unit byte
	}{{days, 'd'}, {h, 'h'}, {m, 'm'}, {sec, 's'}} {
		if p.n > 0 {
			dst = append(strconv.AppendInt(dst, int64(p.n), 10), p.unit)
		}
	}
	return dst
}
