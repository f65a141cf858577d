package api

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
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
			Help:    "Time to build and render a feed that was not in the render cache, by format.",
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

// feedRequest is what a handler settled before anything is rendered.
type feedRequest struct {
	key     string    // every input of the rendering: hashed into the ETag and the cache key
	lastMod time.Time // the latest version's timestamp
	maxAge  time.Duration
	format  *feedFormat
	self    string // the feed's absolute URL, as its self link says
	build   func(ctx context.Context) (*feedModel, error)
}

// getResources serves GET /resources: one item per resource.
func (s *Server) getResources(c echo.Context) error {
	req := c.Request()
	ctx := req.Context()
	q, err := parseFeedQuery(req.URL.RawQuery)
	if err != nil {
		return err
	}
	format := negotiate(q.format, req.Header.Get(echo.HeaderAccept))
	base := s.baseURL(c)
	infos, err := s.opts.Store.Resources(ctx)
	if err != nil {
		return fmt.Errorf("list resources: %w", err)
	}
	maxAge, interval := s.listFreshness()
	var key strings.Builder
	fmt.Fprintf(&key, "resources\x00%s\x00%s\x00%s\x00%d", base, format.name, q.canonical(q.format), ttlMinutes(interval))
	var lastMod time.Time
	for _, in := range infos {
		fmt.Fprintf(&key, "\x00%s\x00%d\x00%d\x00%d", in.ID, in.LatestSeq, in.Versions, in.Updated.UnixNano())
		if in.Updated.After(lastMod) {
			lastMod = in.Updated
		}
	}
	if lastMod.IsZero() {
		lastMod = s.started // nothing stored yet: dated like an empty feed, never 1970
	}
	b := &builder{s: s, base: base, q: q, format: format, interval: interval}
	return s.serveFeed(c, feedRequest{
		key:     key.String(),
		lastMod: lastMod,
		maxAge:  maxAge,
		format:  format,
		self:    b.self("/resources"),
		build: func(ctx context.Context) (*feedModel, error) {
			return b.resources(ctx, infos, lastMod)
		},
	})
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
	format := negotiate(q.format, req.Header.Get(echo.HeaderAccept))
	info, err := s.opts.Store.Resource(ctx, id)
	switch {
	case errors.Is(err, storage.ErrGone):
		return &Problem{Status: http.StatusGone, Detail: fmt.Sprintf("the resource %q was deleted; its feeds are gone for good", id), Err: err}
	case errors.Is(err, storage.ErrNotFound):
		st, known := s.knownResource(id)
		switch {
		case known && seq == 0 && q.index == 0:
			s.readers.saw(id, c.RealIP())
			return s.serveEmpty(c, q, format, st)
		case known:
			return errNotFound(err, "%q has no stored version yet", id)
		}
		return errNotFound(err, "there is no resource %q; GET /resources lists the resources", id)
	case err != nil:
		return fmt.Errorf("read resource %q: %w", id, err)
	}
	// Readers are counted for resources that exist only: ids a client makes
	// up must not grow the count's memory.
	s.readers.saw(id, c.RealIP())
	path := resourcePath(id)
	if seq > 0 {
		idx, err := seqIndex(info, seq)
		if err != nil {
			return err
		}
		q.index = idx
		path = versionPath(id, seq)
	}
	if q.index > info.Versions {
		return errNotFound(storage.ErrNotFound, "index %d is beyond the history of %q, which has %d versions (index 1 is the newest)", q.index, id, info.Versions)
	}
	maxAge, interval := s.resourceFreshness(id)
	base := s.baseURL(c)
	key := fmt.Sprintf("resource\x00%s\x00%s\x00%s\x00%s\x00%s\x00%d\x00%d\x00%d",
		base, format.name, q.canonical(q.format), id, path, info.LatestSeq, info.Versions, ttlMinutes(interval))
	dates := s.dateRules(id)
	if dates != (schema.DateRules{}) { // a reload may change how the stored dates read
		key += "\x00" + dates.Layout + "\x00" + dates.Location.String()
	}
	b := &builder{s: s, base: base, q: q, format: format, interval: interval, path: path, seq: seq, dates: dates}
	lastMod := info.Updated
	return s.serveFeed(c, feedRequest{
		key:     key,
		lastMod: lastMod,
		maxAge:  maxAge,
		format:  format,
		self:    b.self(path),
		build: func(ctx context.Context) (*feedModel, error) {
			var m *feedModel
			var err error
			switch {
			case q.index > 0: // also a version's permalink
				m, err = b.version(ctx, info)
			case q.max > 0:
				m, err = b.items(ctx, info)
			default:
				m, err = b.versions(ctx, info)
			}
			if s.historyMoved(ctx, info) {
				return nil, errHistoryMoved
			}
			return m, err
		},
	})
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
func (s *Server) serveEmpty(c echo.Context, q *feedQuery, format *feedFormat, st ResourceStatus) error {
	maxAge, interval := s.resourceFreshness(st.ID)
	base := s.baseURL(c)
	since := st.Since
	if since.IsZero() {
		since = s.started
	}
	why := emptyReason(st)
	key := fmt.Sprintf("empty\x00%s\x00%s\x00%s\x00%s\x00%s\x00%d\x00%s\x00%d",
		base, format.name, q.canonical(q.format), st.ID, st.URL, since.UnixNano(), why, ttlMinutes(interval))
	b := &builder{s: s, base: base, q: q, format: format, interval: interval, path: resourcePath(st.ID)}
	// The reason changes only with a poll: dated by the last one, a reader
	// revalidating with If-Modified-Since alone sees a new reason.
	lastMod := since
	if st.LastPoll.After(lastMod) {
		lastMod = st.LastPoll
	}
	return s.serveFeed(c, feedRequest{
		key:     key,
		lastMod: lastMod,
		maxAge:  maxAge,
		format:  format,
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
func (s *Server) serveFeed(c echo.Context, fr feedRequest) error {
	req := c.Request()
	if wantsFeedPage(req) { // a browser: the same feed as a page (feedpage.go)
		return s.serveFeedPage(c, fr)
	}
	sum := sha256.Sum256([]byte(fr.key))
	identityTag := `"` + hex.EncodeToString(sum[:16]) + `"`
	gz := acceptsGzip(req.Header.Get(echo.HeaderAcceptEncoding))
	etag := identityTag
	if gz {
		etag = gzipTag(identityTag)
	}
	lastMod := fr.lastMod.UTC().Truncate(time.Second)
	// The validators go on a 304 or a 200 only: an error while building the
	// feed (a bad xpath, a failing store) must not carry the feed's ETag.
	h := c.Response().Header()
	validators := func() {
		h.Set("ETag", etag)
		h.Set(echo.HeaderLastModified, lastMod.Format(http.TimeFormat))
		h.Set("Cache-Control", "public, max-age="+strconv.FormatInt(int64(fr.maxAge/time.Second), 10))
		if len(h[echo.HeaderVary]) == 0 {
			h[echo.HeaderVary] = varyFeed // shared, full: an Add elsewhere copies it
		} else {
			h.Add(echo.HeaderVary, echo.HeaderAccept)
			h.Add(echo.HeaderVary, echo.HeaderAcceptEncoding)
		}
		if s.opts.HubURL != "" { // WebSub discovery (§4)
			h.Add("Link", "<"+s.opts.HubURL+`>; rel="hub"`)
			h.Add("Link", "<"+fr.self+`>; rel="self"`)
		}
	}
	// Either representation's tag proves the client holds the current feed.
	if notModified(req, s.now(), lastMod, identityTag, gzipTag(identityTag)) {
		validators()
		return c.NoContent(http.StatusNotModified)
	}
	body, err := s.feedBody(req.Context(), identityTag, gz, fr)
	if err != nil {
		return err
	}
	validators()
	h[echo.HeaderContentType] = fr.format.contentTypeHeader
	if gz {
		h[echo.HeaderContentEncoding] = gzipEncoding
	}
	h.Set(echo.HeaderContentLength, strconv.Itoa(len(body)))
	c.Response().WriteHeader(http.StatusOK)
	if req.Method == http.MethodHead {
		return nil
	}
	_, _ = c.Response().Write(body) // client gone: nothing left to do
	return nil
}

// Header values every feed response shares: assigned, not Set, to spare a
// slice per response (a cached feed's answer allocates almost nothing). Their
// capacity equals their length, so an Add elsewhere copies instead of
// writing into them.
var (
	varyFeed     = []string{echo.HeaderAccept, echo.HeaderAcceptEncoding}[:2:2]
	gzipEncoding = []string{"gzip"}[:1:1]
)

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
// cache, or renders it once however many requests ask for it at the same time.
func (s *Server) feedBody(ctx context.Context, etag string, gz bool, fr feedRequest) ([]byte, error) {
	key := etag
	if gz {
		key = gzipTag(etag)
	}
	if body, ok := s.feeds.cache.get(key); ok {
		return body, nil
	}
	if gz {
		v, err, _ := s.feeds.renders.Do(key, func() (any, error) {
			plain, err := s.feedBody(ctx, etag, false, fr)
			if err != nil {
				return nil, err
			}
			var buf bytes.Buffer
			zw := gzip.NewWriter(&buf)
			if _, err := zw.Write(plain); err != nil {
				return nil, fmt.Errorf("gzip feed: %w", err)
			}
			if err := zw.Close(); err != nil {
				return nil, fmt.Errorf("gzip feed: %w", err)
			}
			body := buf.Bytes()
			s.feeds.cache.put(key, body)
			return body, nil
		})
		if err != nil {
			return nil, err
		}
		return v.([]byte), nil
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
		body := buf.Bytes()
		s.feeds.seconds.WithLabelValues(fr.format.name).Observe(time.Since(start).Seconds())
		s.feeds.cache.put(key, body)
		return body, nil
	})
	if err != nil {
		return nil, err
	}
	return v.([]byte), nil
}

// notModified evaluates If-None-Match (weak comparison, RFC 9110 §13.1.2) or,
// when absent, If-Modified-Since. A date later than now is ignored, as one
// that is not a date: no Last-Modified we sent can be in the future, and a
// client clock ahead of ours would otherwise get 304s for the versions
// stored until our clock catches up (RFC 2616 §14.25 called such a date
// invalid; RFC 9110 is silent).
func notModified(r *http.Request, now, lastMod time.Time, etags ...string) bool {
	if inm := r.Header.Get("If-None-Match"); inm != "" {
		for tag := range strings.SplitSeq(inm, ",") {
			tag = strings.TrimPrefix(strings.TrimSpace(tag), "W/")
			if tag == "*" || slices.Contains(etags, tag) {
				return true
			}
		}
		return false
	}
	if ims := r.Header.Get(echo.HeaderIfModifiedSince); ims != "" {
		t, err := http.ParseTime(ims)
		return err == nil && !t.After(now) && !lastMod.After(t)
	}
	return false
}

// baseURL is Options.PublicURL, or the request's scheme and host.
func (s *Server) baseURL(c echo.Context) string {
	if s.opts.PublicURL != "" {
		return strings.TrimRight(s.opts.PublicURL, "/")
	}
	return c.Scheme() + "://" + c.Request().Host
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
