package api

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"github.com/dynamo-rss/dynamo/internal/redact"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/dynamo-rss/dynamo/schema"
	"github.com/dynamo-rss/dynamo/storage"
)

// Bounds of the feeds built from storage.
const (
	// maxVersionItems bounds the items of /resources/{rssId}: the newest versions.
	maxVersionItems = 500
)

// builder builds the neutral [feedModel] of one request.
type builder struct {
	s        *Server
	base     string // absolute base URL, no trailing slash
	q        feedQuery
	format   *feedFormat
	interval time.Duration
	path     string           // the feed's own path, for its self link; "": the resource's
	seq      uint64           // > 0: the feed is the version permalink path names (its index is not in the self link)
	dates    schema.DateRules // how the resource's dates are read (its date_format and timezone)
}

// resourcePath is the path of a resource's feed.
func resourcePath(id string) string { return string(appendFeedPath(nil, id, 0)) }

// versionPath is the permalink path of a resource's version.
func versionPath(id string, seq uint64) string { return string(appendFeedPath(nil, id, seq)) }

// appendFeedPath appends the path of resource id's feed to dst: its
// version seq's permalink when seq > 0.
func appendFeedPath(dst []byte, id string, seq uint64) []byte {
	dst = append(append(dst, "/resources/"...), url.PathEscape(id)...) // id itself when nothing needs escaping
	if seq > 0 {
		dst = strconv.AppendUint(append(dst, "/versions/"...), seq, 10)
	}
	return dst
}

// self is the absolute URL of the feed being built, in normal form.
func (b *builder) self(path string) string {
	q := b.q
	if b.seq > 0 {
		q.index = 0
	}
	return b.base + path + "?" + q.canonical(b.format.name)
}

// feedID is the stable Atom id of the feed at path with this request's selection.
func (b *builder) feedID(parts ...string) string {
	q := b.q
	if b.seq > 0 { // a version permalink: named by its seq, not by the index that moves
		parts = append(parts, "versions", strconv.FormatUint(b.seq, 10))
		q.index = 0
	}
	id := tagURI(b.base, parts...)
	if cq := q.canonical(""); cq != "" {
		id += "?" + cq
	}
	return id
}

// resources builds /resources: one item per resource, most recently updated first.
func (b *builder) resources(ctx context.Context, infos []storage.ResourceInfo, updated time.Time) (*feedModel, error) {
	infos = slices.Clone(infos)
	slices.SortStableFunc(infos, func(x, y storage.ResourceInfo) int {
		if c := y.Updated.Compare(x.Updated); c != 0 {
			return c
		}
		return cmp.Compare(x.ID, y.ID)
	})
	cands := make([]schema.Item, len(infos))
	for i, in := range infos {
		title := in.Title
		if title == "" {
			title = in.ID
		}
		// The link is the resource's page for people, which a browser
		// shows (its feeds are XML there) and which offers its feeds.
		cands[i] = schema.Item{Index: i + 1, ID: in.ID, Title: title, Link: b.base + ViewHref(in.ID), Description: in.Description}
	}
	keep, err := b.q.selectItems(ctx, cands, true, b.q.max)
	if err != nil {
		return nil, err
	}
	m := &feedModel{
		ID:          b.feedID("resources"),
		Title:       "Dynamo resources",
		Description: "Feeds of the annotated web pages this Dynamo service watches",
		Link:        b.base + "/",
		Self:        b.self("/resources"),
		Hub:         b.s.opts.HubURL,
		Updated:     updated.UTC(),
		Author:      "Dynamo",
		Interval:    b.interval,
	}
	for _, i := range keep {
		c := &cands[i]
		// The id is the resource's feed, in every format: stable, and
		// apart from the link, which people follow.
		id := b.base + resourcePath(c.ID)
		m.Items = append(m.Items, feedItem{
			GUID:        id,
			ID:          id,
			Title:       c.Title,
			Link:        c.Link,
			Description: c.Description,
			Date:        infos[i].Updated.UTC(),
		})
	}
	return m, nil
}

// versions builds /resources/{rssId}: one item per stored version, newest first.
func (b *builder) versions(ctx context.Context, info storage.ResourceInfo) (*feedModel, error) {
	vs, err := b.s.opts.Store.Versions(ctx, info.ID, 0, min(max(info.Versions, 1), maxVersionItems))
	if err != nil {
		return nil, b.notFound(err, info)
	}
	if len(vs) > 0 && vs[0].Seq != info.LatestSeq {
		return nil, errHistoryMoved
	}
	entries, err := b.describeVersions(ctx, info, vs)
	if err != nil {
		return nil, err
	}
	// Keyword terms and xpath apply to the version items as the feed shows them.
	cands := make([]schema.Item, len(vs))
	for i, v := range vs {
		// The permalink is the item's link and id in every format, so a
		// version keeps its identity when newer ones arrive.
		permalink := b.base + versionPath(info.ID, v.Seq)
		cands[i] = schema.Item{
			Index:       i + 1,
			ID:          permalink,
			Title:       entries[i].title,
			Link:        permalink,
			Description: entries[i].text,
		}
	}
	keep, err := b.q.selectItems(ctx, cands, true, 0)
	if err != nil {
		return nil, err
	}
	latest, lvi, err := b.s.opts.Store.Version(ctx, info.ID, 1)
	if err != nil {
		return nil, b.notFound(err, info)
	}
	if lvi.Seq != info.LatestSeq {
		return nil, errHistoryMoved
	}
	m := b.channel(info, latest, info.Updated)
	m.Updated = info.Updated.UTC()
	for _, i := range keep {
		c := &cands[i]
		m.Items = append(m.Items, feedItem{
			GUID:        c.ID,
			ID:          c.ID,
			Title:       c.Title,
			Link:        c.Link,
			Description: c.Description,
			ContentHTML: entries[i].html,
			Date:        vs[i].Timestamp.UTC(),
		})
	}
	return m, nil
}

// version builds ?index=n (and /resources/{rssId}/versions/{seq}, whose
// index serveResource computed from seq): that version's channel and its
// items in page order. A version other than the one info's history has at
// that index means the history moved.
func (b *builder) version(ctx context.Context, info storage.ResourceInfo) (*feedModel, error) {
	doc, vi, err := b.s.opts.Store.Version(ctx, info.ID, b.q.index)
	if err != nil {
		return nil, b.notFound(err, info)
	}
	if vi.Seq != info.LatestSeq-uint64(b.q.index)+1 {
		return nil, errHistoryMoved
	}
	keep, err := b.q.selectItems(ctx, doc.Items, true, b.q.max)
	if err != nil {
		return nil, err
	}
	m := b.channel(info, doc, vi.Timestamp)
	for _, i := range keep {
		m.Items = append(m.Items, b.item(info.ID, &doc.Items[i], vi.Timestamp, m.Link))
	}
	return m, nil
}

// items builds ?max=n: items over the whole history, newest first by first
// seen, with the latest channel.
func (b *builder) items(ctx context.Context, info storage.ResourceInfo) (*feedModel, error) {
	doc, vi, err := b.s.opts.Store.Version(ctx, info.ID, 1)
	if err != nil {
		return nil, b.notFound(err, info)
	}
	if vi.Seq != info.LatestSeq {
		return nil, errHistoryMoved
	}
	limit := b.q.max
	sq := storage.ItemQuery{Max: limit, Terms: b.q.terms}
	if len(b.q.xpaths) > 0 {
		sq.Max = maxXPathItems + 1 // xpath filters after storage: fetch the evaluation budget
	}
	found, err := b.s.opts.Store.Items(ctx, info.ID, sq)
	if err != nil {
		return nil, b.notFound(err, info)
	}
	cands := make([]schema.Item, len(found))
	for i := range found {
		if found[i].Seq > info.LatestSeq {
			return nil, errHistoryMoved
		}
		cands[i] = found[i].Item
	}
	keep, err := b.q.selectItems(ctx, cands, false, limit)
	if err != nil {
		return nil, err
	}
	m := b.channel(info, doc, info.Updated)
	for _, i := range keep {
		m.Items = append(m.Items, b.item(info.ID, &cands[i], found[i].FirstSeen, m.Link))
	}
	return m, nil
}

// notFound turns a storage ErrNotFound met while building (the resource or
// version vanished since the validators were computed) into a 404.
func (b *builder) notFound(err error, info storage.ResourceInfo) error {
	if errors.Is(err, storage.ErrGone) {
		return err // 410, see ProblemOf
	}
	if errors.Is(err, storage.ErrNotFound) {
		return errNotFound(err, "resource %q or the version asked for is no longer stored", info.ID)
	}
	return fmt.Errorf("read %q: %w", info.ID, err)
}

// channel returns the feed-level part of a resource's feed, from doc's channel
// when there is a document, else from the resource's latest version.
func (b *builder) channel(info storage.ResourceInfo, doc *schema.Document, updated time.Time) *feedModel {
	path := cmp.Or(b.path, resourcePath(info.ID))
	m := &feedModel{
		ID:          b.feedID("resources", info.ID),
		Title:       info.Title,
		Description: info.Description,
		Link:        redact.URL(info.URL),
		Self:        b.self(path),
		Hub:         b.s.opts.HubURL,
		Updated:     updated.UTC(),
		Interval:    b.interval,
	}
	if doc != nil {
		m.Title, m.Description = doc.Channel.Title, redact.Text(doc.Channel.Description)
		m.Link = redact.URL(cmp.Or(doc.Channel.Link, doc.URL, info.URL))
		m.Extensions = redact.Extensions(datedExtensions(doc.Channel.Extensions, b.dates.Parse))
		if doc.Channel.Image != nil && doc.Channel.Image.URL != "" {
			m.Image = redact.Image(doc.Channel.Image)
		}
	}
	if m.Link == "" {
		m.Link = b.base + path
	}
	if m.Title == "" {
		m.Title = info.ID
	}
	m.Author = m.Title
	if m.Updated.IsZero() {
		m.Updated = info.Updated.UTC()
	}
	return m
}

// item turns a stored item into a feed item: dated by its date extension when
// it has one, else by fallback; linked to its page, else to the channel's.
func (b *builder) item(resourceID string, it *schema.Item, fallback time.Time, channelLink string) feedItem {
	date, ok := b.dates.Published(it.Extensions)
	if !ok {
		date = fallback.UTC()
	}
	// Links and text carry the page URL's credentials when it has any
	// (resolved against it): shown without them (redact.go).
	ext := redact.Extensions(datedExtensions(it.Extensions, b.dates.Parse))
	content, _ := it.Extensions.ContentEncoded()
	var img *schema.Image
	if it.Image != nil && it.Image.URL != "" {
		img = redact.Image(it.Image)
	}
	id := redact.Text(it.ID)
	return feedItem{
		GUID:        id,
		ID:          tagURI(b.base, "resources", resourceID, "items", id),
		Title:       it.Title,
		Link:        cmp.Or(redact.URL(it.Link), channelLink),
		Description: redact.Text(it.Description),
		ContentHTML: redact.Text(content),
		Date:        date,
		Image:       img,
		Extensions:  ext,
	}
}
