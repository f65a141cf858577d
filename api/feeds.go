package api

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/singleflight"

	"github.com/dynamo-rss/dynamo/schema"
	"github.com/dynamo-rss/dynamo/storage"
)

// defaultMaxAge is the Cache-Control max-age when no poller says when the
// next poll is.
const defaultMaxAge = 60 * time.Second

// renderTimeout bounds building and rendering one feed.
const renderTimeout = 30 * time.Second

// feedEngine holds what the feed handlers share across requests: the render
// cache, the render-time metric and the collapsing of concurrent renders of
// one key. Safe for concurrent use.
type feedEngine struct {
	cache   *renderCache
	renders singleflight.Group
	seconds *prometheus.HistogramVec
}

func newFeedEngine(opts Options) (*feedEngine, error) {
	cache, err := newRenderCache(opts.CacheBytes, opts.Registerer)
	if err != nil {
		return nil, err
	}
	fe := &feedEngine{
		cache: cache,
		seconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "dynamo_feed_render_seconds",
			Help:    "Time to build and render a feed that was not in the render cache, by format (html: a feed's page for browsers).",
			Buckets: prometheus.ExponentialBuckets(0.0001, 4, 10),
		}, []string{"format"}),
	}
	if opts.Registerer != nil {
		if err := opts.Registerer.Register(fe.seconds); err != nil {
			return nil, fmt.Errorf("register render metrics: %w", err)
		}
	}
	return fe, nil
}

// feedRequest is what a handler settled before anything is rendered. The
// feed's key (every input of the rendering: hashed into the ETag and the
// cache key) goes beside it, so that it may live in the handler's frame.
type feedRequest struct {
	lastMod time.Time // the latest version's timestamp
	maxAge  time.Duration
	format  *feedFormat
	page    bool // a browser's: the feed as a page (wantsFeedPage; feedpage.go)
	// What a feed that is not in the render cache needs (serveCached needs
	// neither):
	self  string // the feed's absolute URL, as its self link says
	build func(ctx context.Context) (*feedModel, error)
	// ident names the feed whatever the store holds (feedIdent): the
	// render cache keeps under it the feed last rendered, which answers
	// while the store cannot be reached (serveUnreachable).
	ident string
}

// feedIdent is a feed's request identity: the base URL, the feed's path,
// its canonical query and its format, without what the store says of the
// resource (its latest version), which the cache key holds.
func feedIdent(base, path string, q *feedQuery, format *feedFormat) string {
	b := make([]byte, 0, len(base)+len(path)+64)
	b = append(append(append(append(b, base...), 0), path...), 0)
	b = append(q.appendCanonical(b, q.format), 0)
	return string(append(b, format.name...))
}

// identFor is fr's identity for the representation in one content coding.
func (fr *feedRequest) identFor(gz bool) string {
	if fr.ident == "" || !gz {
		return fr.ident
	}
	return fr.ident + "\x00gzip"
}

// outageMaxAge is the Cache-Control max-age of a feed answered while the
// store cannot be reached: readers come back soon for the current one.
const outageMaxAge = 30 * time.Second

// serveUnreachable answers a feed request that failed with cause because
// the store could not be reached (storage.ErrUnavailable): with the feed
// last rendered for the same request identity when the render cache has it
// (its ETag and Last-Modified, so a reader's conditional request gets its
// 304), else with cause, which answers 503 with Retry-After. A browser's
// page is not answered this way: its age would be wrong.
func (s *Server) serveUnreachable(c echo.Context, fr *feedRequest, cause error) error {
	if fr.page || fr.ident == "" {
		return cause
	}
	req := c.Request()
	gz := acceptsGzip(req.Header.Get(echo.HeaderAcceptEncoding))
	e := s.feeds.cache.latestFor(fr.identFor(gz))
	if e == nil && gz {
		gz = false
		e = s.feeds.cache.latestFor(fr.identFor(false))
	}
	if e == nil {
		return cause
	}
	s.log.WarnContext(req.Context(), "feed answered from the render cache: store unreachable",
		slog.String("path", req.URL.Path), slog.Any("error", cause))
	fr.lastMod, fr.maxAge = e.lastMod, outageMaxAge
	identity := strings.TrimSuffix(e.etag[0], `-gzip"`)
	if gz {
		identity += `"`
	}
	if notModifiedBy(req, s.now, e.lastMod, func(tag string) bool { return tag == identity || tag == gzipTag(identity) }) {
		s.setFeedValidators(c.Response().Header(), fr, e)
		return c.NoContent(http.StatusNotModified)
	}
	return s.writeFeed(c, fr, e, gz)
}

// getResources serves GET /resources: one item per resource.
func (s *Server) getResources(c echo.Context) error {
	req := c.Request()
	ctx := req.Context()
	q, err := parseFeedQuery(req.URL.RawQuery)
	if err != nil {
		return err
	}
	format, page := negotiateFeed(q.format, req)
	page = page && s.opts.Pages != nil // no pages mounted: a browser gets the feed
	base := s.baseURL(c)
	infos, err := s.opts.Store.Resources(ctx)
	if err != nil {
		err = fmt.Errorf("list resources: %w", err)
		if errors.Is(err, storage.ErrUnavailable) {
			return s.serveUnreachable(c, &feedRequest{format: format, page: page, ident: feedIdent(base, "/resources", &q, format)}, err)
		}
		return err
	}
	maxAge, interval := s.listFreshness()
	key := fmt.Appendf(nil, "resources\x00%s\x00%s\x00%s\x00%d", base, format.name, q.canonical(q.format), ttlMinutes(interval))
	var lastMod time.Time
	for _, in := range infos {
		key = fmt.Appendf(key, "\x00%s\x00%d\x00%d\x00%d", in.ID, in.LatestSeq, in.Versions, in.Updated.UnixNano())
		if in.Updated.After(lastMod) {
			lastMod = in.Updated
		}
	}
	if lastMod.IsZero() {
		lastMod = s.started // nothing stored yet: dated like an empty feed, never 1970
	}
	b := &builder{s: s, base: base, q: q, format: format, interval: interval}
	fr := feedRequest{
		lastMod: lastMod,
		maxAge:  maxAge,
		format:  format,
		page:    page,
		self:    b.self("/resources"),
		build: func(ctx context.Context) (*feedModel, error) {
			return b.resources(ctx, infos, lastMod)
		},
		ident: feedIdent(base, "/resources", &q, format),
	}
	err = s.serveFeed(c, key, fr)
	if errors.Is(err, storage.ErrUnavailable) {
		return s.serveUnreachable(c, &fr, err)
	}
	return err
}

// getResource serves GET /resources/{rssId} in all its forms.
func (s *Server) getResource(c echo.Context) error {
	return s.serveResource(c, 0)
}

// getVersion serves GET /resources/{rssId}/versions/{seq}: the version whose
// sequence number is seq, as ?index= renders it (a permalink: seq never
// moves, whereas index 1 is always the newest). Past the history → 404; a
// seq retention removed → 410.
func (s *Server) getVersion(c echo.Context) error {
	seq, err := strconv.ParseUint(c.Param("seq"), 10, 64)
	if err != nil || seq == 0 {
		return errNotFound(nil, "%q is not a version number; versions are numbered 1, 2, 3… in the order they were stored", c.Param("seq"))
	}
	return s.serveResource(c, seq)
}

// maxHistoryMoves bounds how often a resource's feed is computed again
// because a version was stored (or pruned) while it was being built.
const maxHistoryMoves = 5

// errHistoryMoved is returned by a resource's build when the history changed
// between the catalog read that decided the ETag and the reads that built
// the body: the body may not be the one the ETag names, so it is neither
// cached nor sent, and serveResource starts over.
var errHistoryMoved = errors.New("the resource's history changed while its feed was built")

// serveResource serves a resource's feeds: its versions, a version (by
// ?index= or, when seq > 0, by its sequence number), or its items. The ETag
// is decided from one catalog read and the body from later history reads;
// a version stored in between makes it start over (errHistoryMoved), so
// that a strong ETag never names two different bodies.
func (s *Server) serveResource(c echo.Context, seq uint64) error {
	var err error
	for range maxHistoryMoves {
		if err = s.serveResourceOnce(c, seq); !errors.Is(err, errHistoryMoved) {
			return err
		}
	}
	c.Response().Header().Set("Retry-After", "1") // the 503 errHistoryMoved maps to
	return err
}

// serveResourceOnce is one attempt of serveResource.
func (s *Server) serveResourceOnce(c echo.Context, seq uint64) error {
	req := c.Request()
	ctx := req.Context()
	id, err := url.PathUnescape(c.Param("rssId"))
	if err != nil {
		return errNotFound(nil, "the resource id %q is not correctly percent-encoded", c.Param("rssId"))
	}
	q, err := parseFeedQuery(req.URL.RawQuery)
	if err != nil {
		return err
	}
	if seq > 0 {
		q.index = 0 // the path names the version
	}
	format, page := negotiateFeed(q.format, req)
	page = page && s.opts.Pages != nil // no pages mounted: a browser gets the feed
	info, err := s.opts.Store.Resource(ctx, id)
	switch {
	case errors.Is(err, storage.ErrGone):
		return &Problem{Status: http.StatusGone, Detail: fmt.Sprintf("the resource %q was deleted; its feeds are gone for good", id), Err: err}
	case errors.Is(err, storage.ErrNotFound):
		st, known := s.knownResource(id)
		switch {
		case known && seq == 0 && q.index == 0:
			s.readers.Saw(id, c.RealIP())
			return s.serveEmpty(c, q, format, page, st)
		case known:
			return errNotFound(err, "%q has no stored version yet", id)
		}
		return errNotFound(err, "there is no resource %q; GET /resources lists the resources", id)
	case errors.Is(err, storage.ErrUnavailable):
		path := string(appendFeedPath(nil, id, seq))
		return s.serveUnreachable(c, &feedRequest{format: format, page: page, ident: feedIdent(s.baseURL(c), path, &q, format)}, fmt.Errorf("read resource %q: %w", id, err))
	case err != nil:
		return fmt.Errorf("read resource %q: %w", id, err)
	}
	// Readers are counted for resources that exist only: ids a client makes
	// up must not grow the count's memory.
	s.readers.Saw(id, c.RealIP())
	if seq > 0 {
		idx, err := seqIndex(info, seq)
		if err != nil {
			return err
		}
		q.index = idx
	}
	if q.index > info.Versions {
		return errNotFound(storage.ErrNotFound, "index %d is beyond the history of %q, which has %d versions (index 1 is the newest)", q.index, id, info.Versions)
	}
	maxAge, interval := s.resourceFreshness(id)
	dates := s.dateRules(id)
	// The key is "resource", the base URL, the format, the canonical query,
	// the id, the feed's path, the latest seq, the version count and the
	// <ttl>, NUL-separated, then the date rules when the resource has some
	// (a reload may change how the stored dates read). It is built in this
	// frame's buffer: a feed in the render cache is answered without it
	// reaching the heap.
	var buf [256]byte
	key := append(buf[:0], "resource\x00"...)
	key = s.appendBaseURL(key, c)
	key = append(append(append(key, 0), format.name...), 0)
	key = append(q.appendCanonical(key, q.format), 0)
	key = append(append(key, id...), 0)
	key = append(appendFeedPath(key, id, seq), 0)
	key = append(strconv.AppendUint(key, info.LatestSeq, 10), 0)
	key = append(strconv.AppendInt(key, int64(info.Versions), 10), 0)
	key = strconv.AppendInt(key, int64(ttlMinutes(interval)), 10)
	if dates != (schema.DateRules{}) {
		key = append(append(key, 0), dates.Layout...)
		key = append(append(key, 0), dates.Location.String()...)
	}
	fr := feedRequest{lastMod: info.Updated, maxAge: maxAge, format: format, page: page}
	if s.serveCached(c, key, &fr) {
		return nil
	}
	path := string(appendFeedPath(nil, id, seq))
	base := s.baseURL(c)
	rf := &resourceFeed{
		b:    builder{s: s, base: base, q: q, format: format, interval: interval, path: path, seq: seq, dates: dates},
		info: info,
	}
	fr.self = rf.b.self(path)
	fr.build = rf.build
	qi := q // the identity names the version by its path, as the request did
	if seq > 0 {
		qi.index = 0
	}
	fr.ident = feedIdent(base, path, &qi, format)
	err = s.serveFeed(c, key, fr)
	if errors.Is(err, storage.ErrUnavailable) {
		return s.serveUnreachable(c, &fr, err)
	}
	return err
}

// resourceFeed builds a resource's feed: the versions, a version or the
// items, as its query asks.
type resourceFeed struct {
	b    builder
	info storage.ResourceInfo // the catalog read that decided the ETag
}

func (rf *resourceFeed) build(ctx context.Context) (*feedModel, error) {
	b, info := &rf.b, rf.info
	var m *feedModel
	var err error
	switch {
	case b.q.index > 0: // also a version's permalink
		m, err = b.version(ctx, info)
	case b.q.max > 0:
		m, err = b.items(ctx, info)
	default:
		m, err = b.versions(ctx, info)
	}
	if b.s.historyMoved(ctx, info) {
		return nil, errHistoryMoved
	}
	return m, err
}

// historyMoved reports whether resource info.ID has stored or pruned a
// version since info was read. Saves raise LatestSeq and prunes lower
// Versions, so equal values mean the reads made in between saw info's
// history. A failed read counts as moved: the next attempt reports it. The
// builders also compare the sequence numbers they read with info's, which
// catches a save even while the catalog still answers the previous info
// (Badger's info cache is invalidated just after the commit).
func (s *Server) historyMoved(ctx context.Context, info storage.ResourceInfo) bool {
	now, err := s.opts.Store.Resource(ctx, info.ID)
	return err != nil || now.LatestSeq != info.LatestSeq || now.Versions != info.Versions
}

// seqIndex turns a version's sequence number into its index (1 = newest).
// Retention removes the oldest versions, so the kept ones are the newest
// info.Versions sequence numbers; a seq below them was removed (410), one
// past the latest never existed (404).
func seqIndex(info storage.ResourceInfo, seq uint64) (int, error) {
	switch {
	case seq > info.LatestSeq:
		return 0, errNotFound(storage.ErrNotFound, "%q has no version %d yet; its latest is %d", info.ID, seq, info.LatestSeq)
	case info.LatestSeq-seq >= uint64(info.Versions):
		return 0, errGone(fmt.Sprintf("version %d of %q was removed by the retention policy; the oldest kept is %d", seq, info.ID, info.LatestSeq-uint64(info.Versions)+1))
	}
	return int(info.LatestSeq-seq) + 1, nil
}

// dateRules are the date rules of resource id (Options.DateRules; zero:
// the lenient defaults).
func (s *Server) dateRules(id string) schema.DateRules {
	if s.opts.DateRules == nil {
		return schema.DateRules{}
	}
	return s.opts.DateRules(id)
}

// knownResource reports whether the poller knows id (declared or
// registered), with its status.
func (s *Server) knownResource(id string) (ResourceStatus, bool) {
	if s.opts.Poller == nil {
		return ResourceStatus{}, false
	}
	return s.opts.Poller.Status(id)
}

// serveEmpty answers the feed of a known resource that has no stored
// version yet: 200 with no items, titled by its id, linked to its page,
// saying why it is empty and dated by when it was registered.
func (s *Server) serveEmpty(c echo.Context, q feedQuery, format *feedFormat, page bool, st ResourceStatus) error {
	maxAge, interval := s.statusFreshness(st) // st is the poller's answer: not asked again
	base := s.baseURL(c)
	since := st.Since
	if since.IsZero() {
		since = s.started
	}
	why := emptyReason(st)
	key := fmt.Appendf(nil, "empty\x00%s\x00%s\x00%s\x00%s\x00%s\x00%d\x00%s\x00%d",
		base, format.name, q.canonical(q.format), st.ID, st.URL, since.UnixNano(), why, ttlMinutes(interval))
	b := &builder{s: s, base: base, q: q, format: format, interval: interval, path: resourcePath(st.ID)}
	// The reason changes only with a poll: dated by the last one, a reader
	// revalidating with If-Modified-Since alone sees a new reason.
	lastMod := since
	if st.LastPoll.After(lastMod) {
		lastMod = st.LastPoll
	}
	return s.serveFeed(c, key, feedRequest{
		lastMod: lastMod,
		maxAge:  maxAge,
		format:  format,
		page:    page,
		self:    b.self(resourcePath(st.ID)),
		build: func(context.Context) (*feedModel, error) {
			m := b.channel(storage.ResourceInfo{ID: st.ID, URL: st.URL, Description: why}, nil, since)
			return m, nil
		},
	})
}

// emptyReason is the description of an empty feed: why it has no items.
func emptyReason(st ResourceStatus) string {
	switch {
	case st.LastPoll.IsZero():
		return "No version yet: the page has not been polled yet."
	case st.LastError != "":
		return "No version yet: the last poll failed: " + st.LastError
	default:
		return "No version yet: the page has not yielded an annotated document."
	}
}

// serveFeed sets the validators, answers 304 when the client's copy is
// current, and otherwise writes the rendered feed from the cache or fresh.
//
// Feeds are compressed here rather than by the gzip middleware (which skips
// /resources): the gzip representation gets its own strong ETag (the identity
// one with "-gzip" appended), as RFC 9110 §8.8.3 requires of validators that
// differ by content coding, and the render cache keeps it compressed, so a
// cached feed costs no compression per request.
//
// A feed's whole answer is made here; serveCached is the shortcut of the
// hottest handler, taken before it makes what a render needs.
func (s *Server) serveFeed(c echo.Context, key []byte, fr feedRequest) error {
	req := c.Request()
	if fr.page { // a browser: the same feed as a page (feedpage.go)
		return s.serveFeedPage(c, key, fr)
	}
	tags := makeFeedTags(key)
	gz := acceptsGzip(req.Header.Get(echo.HeaderAcceptEncoding))
	// The validators go on a 304 or a 200 only: an error while building the
	// feed (a bad xpath, a failing store) must not carry the feed's ETag.
	if s.feedNotModified(req, &fr, &tags) {
		s.setFeedValidators(c.Response().Header(), &fr, s.newFeedEntry(string(tags.tag(gz)), nil, &fr))
		return c.NoContent(http.StatusNotModified)
	}
	e, err := s.feedBody(req.Context(), string(tags.identity[:]), gz, fr)
	if err != nil {
		return err
	}
	return s.writeFeed(c, &fr, e, gz)
}

// serveCached answers a feed request from the render cache when it can (a
// 304 or the cached feed, with the header values made with it), as serveFeed
// would, and reports whether it did; when not (a feed not in the cache), it
// has written nothing and counted nothing, and serveFeed answers. A browser's
// page is answered the same way (serveCachedPage). A handler calls it before
// making what a render needs.
func (s *Server) serveCached(c echo.Context, key []byte, fr *feedRequest) bool {
	if fr.page {
		return s.serveCachedPage(c, key, fr)
	}
	req := c.Request()
	tags := makeFeedTags(key)
	gz := acceptsGzip(headerValue(req.Header, echo.HeaderAcceptEncoding))
	if s.feedNotModified(req, fr, &tags) {
		e := s.feeds.cache.peek(tags.tag(gz)) // a 304 neither hits nor misses
		if e == nil {
			return false
		}
		s.setFeedValidators(c.Response().Header(), fr, e)
		_ = c.NoContent(http.StatusNotModified) // client gone: nothing left to do
		return true
	}
	e := s.feeds.cache.hit(tags.tag(gz), nil)
	if e == nil {
		return false
	}
	_ = s.writeFeed(c, fr, e, gz) // client gone: nothing left to do
	return true
}

// feedNotModified reports whether the request's validators match the feed
// tagged tags: either representation's tag proves the client holds the
// current feed.
func (s *Server) feedNotModified(req *http.Request, fr *feedRequest, tags *feedTags) bool {
	return notModifiedBy(req, s.now, fr.lastMod.UTC().Truncate(time.Second), func(tag string) bool {
		return tag == string(tags.identity[:]) || tag == string(tags.gzip[:])
	})
}

// writeFeed answers 200 with the feed e (gzip-compressed when gz).
func (s *Server) writeFeed(c echo.Context, fr *feedRequest, e *feedEntry, gz bool) error {
	h := c.Response().Header()
	s.setFeedValidators(h, fr, e)
	h[echo.HeaderContentType] = fr.format.contentTypeHeader
	if gz {
		h[echo.HeaderContentEncoding] = gzipEncoding
	}
	h[echo.HeaderContentLength] = e.length
	c.Response().WriteHeader(http.StatusOK)
	if c.Request().Method == http.MethodHead {
		return nil
	}
	_, _ = c.Response().Write(e.body) // client gone: nothing left to do
	return nil
}

// setFeedValidators sets the headers a feed's 200 and 304 share: ETag,
// Last-Modified, Cache-Control, Vary and, with a hub, Link.
func (s *Server) setFeedValidators(h http.Header, fr *feedRequest, e *feedEntry) {
	h[headerETag] = e.etag
	h[echo.HeaderLastModified] = e.lastModified(fr.lastMod)
	h[headerCacheControl] = e.cacheControl(fr.maxAge)
	if len(h[echo.HeaderVary]) == 0 {
		h[echo.HeaderVary] = varyFeed // shared, full: an Add elsewhere copies it
	} else {
		h.Add(echo.HeaderVary, echo.HeaderAccept)
		h.Add(echo.HeaderVary, echo.HeaderAcceptEncoding)
	}
	if len(e.link) > 0 { // WebSub discovery (§4)
		if len(h[headerLink]) == 0 {
			h[headerLink] = e.link
		} else {
			h[headerLink] = append(h[headerLink], e.link...)
		}
	}
}

// Canonical header names, for assigning to a header map.
const (
	headerETag         = "Etag" // http.CanonicalHeaderKey("ETag")
	headerCacheControl = "Cache-Control"
	headerLink         = "Link"
	headerIfNoneMatch  = "If-None-Match"
)

// Header values every feed response shares: assigned, not Set, to spare a
// slice per response (a cached feed's answer allocates almost nothing). Their
// capacity equals their length, so an Add elsewhere copies instead of
// writing into them.
var (
	varyFeed     = []string{echo.HeaderAccept, echo.HeaderAcceptEncoding}[:2:2]
	gzipEncoding = []string{"gzip"}[:1:1]
)

// feedTags are the ETags of a feed, made in place from its key: the identity
// one, `"` and the hex of the first half of the key's SHA-256 and `"`, and
// the gzip one, gzipTag of it.
type feedTags struct {
	identity [34]byte
	gzip     [39]byte
}

func makeFeedTags(key []byte) feedTags {
	sum := sha256.Sum256(key)
	var t feedTags
	t.identity[0] = '"'
	hex.Encode(t.identity[1:33], sum[:16])
	t.identity[33] = '"'
	copy(t.gzip[:], t.identity[:33])
	copy(t.gzip[33:], `-gzip"`)
	return t
}

// tag is the ETag of the representation served: gzip's when gz. It is also
// the render cache's key of that representation.
func (t *feedTags) tag(gz bool) []byte {
	if gz {
		return t.gzip[:]
	}
	return t.identity[:]
}

// feedEntry is a rendered feed in one content coding, with the header values
// of its answers, made once: a cached feed's answer assigns them instead of
// formatting them. Its values are shared by every answer and never written
// (capacity = length, so an Add copies them).
type feedEntry struct {
	body   []byte
	etag   []string // ETag
	length []string // Content-Length
	// Last-Modified, formatted from lastMod: a function of the key, as the
	// latest version's timestamp is of its seq; lastModified checks it.
	lastMod     time.Time
	lastModText []string
	link        []string // Link: the hub and self (WebSub discovery); nil without a hub
	// maxAge is the last Cache-Control the entry answered with: max-age
	// counts down to the next poll, so it moves at most once a second.
	maxAge atomic.Pointer[maxAgeHeader]
	// On a feed's page for browsers (feedpage.go; link is then unset): the
	// time its age counts from, zero when it shows none, and the age it was
	// rendered with (Time's Relative), for pageCurrent.
	ageFrom time.Time
	age     string
}

type maxAgeHeader struct {
	seconds int64
	value   []string
}

// newFeedEntry makes the entry of body, tagged tag, for fr (body nil: the
// header values of a 304).
func (s *Server) newFeedEntry(tag string, body []byte, fr *feedRequest) *feedEntry {
	lastMod := fr.lastMod.UTC().Truncate(time.Second)
	e := &feedEntry{
		body:        body,
		etag:        []string{tag},
		length:      []string{strconv.Itoa(len(body))},
		lastMod:     lastMod,
		lastModText: []string{lastMod.Format(http.TimeFormat)},
	}
	if s.opts.HubURL != "" {
		e.link = []string{"<" + s.opts.HubURL + `>; rel="hub"`, "<" + fr.self + `>; rel="self"`}
	}
	return e
}

// lastModified is the Last-Modified of a feed whose latest version is dated
// t.
func (e *feedEntry) lastModified(t time.Time) []string {
	t = t.UTC().Truncate(time.Second)
	if t.Equal(e.lastMod) {
		return e.lastModText
	}
	return []string{t.Format(http.TimeFormat)}
}

// cacheControl is the Cache-Control of an answer fresh for maxAge.
func (e *feedEntry) cacheControl(maxAge time.Duration) []string {
	secs := int64(maxAge / time.Second)
	if h := e.maxAge.Load(); h != nil && h.seconds == secs {
		return h.value
	}
	h := &maxAgeHeader{seconds: secs, value: []string{"public, max-age=" + strconv.FormatInt(secs, 10)}}
	e.maxAge.Store(h)
	return h.value
}

// gzipTag is the ETag of the gzip representation of the feed tagged etag.
func gzipTag(etag string) string { return strings.TrimSuffix(etag, `"`) + `-gzip"` }

// acceptsGzip reports whether an Accept-Encoding header gives gzip a
// non-zero quality: its own (gzip or x-gzip), else that of "*" (RFC 9110
// §12.5.3: the explicit coding takes precedence, wherever each stands).
func acceptsGzip(header string) bool {
	star := -1.0
	for part := range strings.SplitSeq(header, ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		coding = strings.ToLower(strings.TrimSpace(coding))
		if coding != "gzip" && coding != "x-gzip" && coding != "*" {
			continue
		}
		q := 1.0
		for p := range strings.SplitSeq(params, ";") {
			if k, v, ok := strings.Cut(strings.TrimSpace(p), "="); ok && strings.EqualFold(strings.TrimSpace(k), "q") {
				if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
					q = f
				}
			}
		}
		if coding != "*" {
			return q > 0
		}
		star = q
	}
	return star > 0
}

// feedBody returns the rendered feed (gzip-compressed when gz) from the
// cache, or renders it once however many requests ask for it at the same
// time. etag is the identity representation's tag.
func (s *Server) feedBody(ctx context.Context, etag string, gz bool, fr feedRequest) (*feedEntry, error) {
	key := etag
	if gz {
		key = gzipTag(etag)
	}
	if e, ok := s.feeds.cache.get(key, nil); ok {
		return e, nil
	}
	if gz {
		v, err, _ := s.feeds.renders.Do(key, func() (any, error) {
			plain, err := s.feedBody(ctx, etag, false, fr)
			if err != nil {
				return nil, err
			}
			body, err := gzipBody(plain.body)
			if err != nil {
				return nil, err
			}
			e := s.newFeedEntry(key, body, &fr)
			s.feeds.cache.put(key, e, fr.identFor(true))
			return e, nil
		})
		if err != nil {
			return nil, err
		}
		return v.(*feedEntry), nil
	}
	v, err, _ := s.feeds.renders.Do(key, func() (any, error) {
		// The shared render must not die with the first caller's request
		// while others wait for it; it keeps that context's values and has
		// its own bound.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), renderTimeout)
		defer cancel()
		start := time.Now()
		m, err := fr.build(ctx)
		if err != nil {
			return nil, err
		}
		var buf bytes.Buffer
		if err := fr.format.render(&buf, m); err != nil {
			return nil, fmt.Errorf("render %s: %w", fr.format.name, err)
		}
		e := s.newFeedEntry(key, buf.Bytes(), &fr)
		s.feeds.seconds.WithLabelValues(fr.format.name).Observe(time.Since(start).Seconds())
		s.feeds.cache.put(key, e, fr.identFor(false))
		return e, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*feedEntry), nil
}

// gzipBody is the gzip representation of a rendered feed or page, as the
// render cache keeps it.
func gzipBody(plain []byte) ([]byte, error) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(plain); err != nil {
		return nil, fmt.Errorf("gzip: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("gzip: %w", err)
	}
	return buf.Bytes(), nil
}

// notModifiedBy evaluates If-None-Match (weak comparison, RFC 9110
// §13.1.2) or, when absent, If-Modified-Since, with current saying whether
// an entity tag (without W/) names the current representation, and the
// clock read only for If-Modified-Since. A date later than now is ignored,
// as one that is not a date: no Last-Modified we sent can be in the
// future, and a client clock ahead of ours would otherwise get 304s for the
// versions stored until our clock catches up (RFC 2616 §14.25 called such a
// date invalid; RFC 9110 is silent).
func notModifiedBy(r *http.Request, now func() time.Time, lastMod time.Time, current func(tag string) bool) bool {
	if inm := headerValue(r.Header, headerIfNoneMatch); inm != "" {
		for tag := range strings.SplitSeq(inm, ",") {
			tag = strings.TrimPrefix(strings.TrimSpace(tag), "W/")
			if tag == "*" || current(tag) {
				return true
			}
		}
		return false
	}
	if ims := headerValue(r.Header, echo.HeaderIfModifiedSince); ims != "" {
		t, err := http.ParseTime(ims)
		return err == nil && !t.After(now()) && !lastMod.After(t)
	}
	return false
}

// headerValue is h.Get(key) for a key in canonical form: Get checks the form
// of its key on every call, and a cached feed's answer reads six request
// headers.
func headerValue(h http.Header, key string) string {
	if v := h[key]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// baseURL is Options.PublicURL, or the request's scheme and host.
func (s *Server) baseURL(c echo.Context) string {
	if s.opts.PublicURL != "" {
		return strings.TrimRight(s.opts.PublicURL, "/")
	}
	return string(s.appendBaseURL(nil, c))
}

// appendBaseURL appends baseURL(c) to dst.
func (s *Server) appendBaseURL(dst []byte, c echo.Context) []byte {
	if s.opts.PublicURL != "" {
		return append(dst, strings.TrimRight(s.opts.PublicURL, "/")...)
	}
	return append(append(append(dst, c.Scheme()...), "://"...), c.Request().Host...)
}

// resourceFreshness returns how long a feed of resource id stays fresh (until
// its next poll) and the poller's interval for it (0 when unknown).
func (s *Server) resourceFreshness(id string) (maxAge, interval time.Duration) {
	if s.opts.Poller == nil {
		return defaultMaxAge, 0
	}
	st, ok := s.opts.Poller.Status(id)
	if !ok {
		return defaultMaxAge, 0
	}
	return s.statusFreshness(st)
}

// statusFreshness is resourceFreshness for a resource whose status is st.
func (s *Server) statusFreshness(st ResourceStatus) (maxAge, interval time.Duration) {
	return s.untilPoll(st.NextPoll), updateHint(st)
}

// updateHint is the interval a feed announces (<ttl>, sy:updatePeriod): for
// smart, the estimate τ of the time between updates; for flat, its interval.
// It is part of the feed and so of its ETag, and must not move between
// versions: τ changes only when a poll finds an update, whereas the wait
// before the next poll grows after every unchanged one.
func updateHint(st ResourceStatus) time.Duration {
	if st.Policy == "smart" && st.Tau > 0 {
		return st.Tau
	}
	return st.Interval
}

// listFreshness is resourceFreshness for /resources: until the soonest next
// poll of any resource, with the shortest interval.
func (s *Server) listFreshness() (maxAge, interval time.Duration) {
	if s.opts.Poller == nil {
		return defaultMaxAge, 0
	}
	var soonest time.Time
	for _, st := range s.opts.Poller.Statuses() {
		if !st.NextPoll.IsZero() && (soonest.IsZero() || st.NextPoll.Before(soonest)) {
			soonest = st.NextPoll
		}
		if h := updateHint(st); h > 0 && (interval == 0 || h < interval) {
			interval = h
		}
	}
	return s.untilPoll(soonest), interval
}

// untilPoll is the time left until next (0 when overdue), or the default
// when next is unknown.
func (s *Server) untilPoll(next time.Time) time.Duration {
	if next.IsZero() {
		return defaultMaxAge
	}
	return max(0, next.Sub(s.now()))
}
