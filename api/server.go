package api

// Routes and Options: handlers live in their own files (feeds.go,
// errors.go, preview.go, admin.go, registry.go, websub.go, opml.go,
// health.go, metrics.go, middleware.go, http.go); the pages for people are
// package ui's, mounted through Options.Pages (pages.go).

import (
	"context"
	"fmt"
	"github.com/dynamo-rss/dynamo/internal/readers"
	"github.com/dynamo-rss/dynamo/internal/redact"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/dynamo-rss/dynamo/internal/ratelimit"
	"github.com/dynamo-rss/dynamo/schema"
)

// Options configure a Server. Store is required; everything else may be zero.
type Options struct {
	Store      Store                           // stored versions and items
	Poller     Poller                          // nil: no poll status (tests, read-only serving)
	Reload     func(ctx context.Context) error // POST /admin/reload; nil: route answers 501
	Ready      func(ctx context.Context) error // GET /readyz: nil error when the store is reachable and the poller runs; nil: always ready
	AdminToken string                          // bearer token; empty: admin routes off (404)
	PublicURL  string                          // base of absolute links in feeds, e.g. "https://feeds.example.org"
	// SubscribeMax is the N of the items feed /resources/{rssId}?max=N that
	// subscribe links (pages, autodiscovery, OPML) point at
	// (feeds.subscribe_max); 0: 50.
	SubscribeMax int
	Logger       *slog.Logger                     // nil: discard
	AccessLog    bool                             // one log line per request (log.access); off: only 5xx causes are logged
	Registry     Registry                         // GET/PUT/DELETE /admin/resources; nil: those answer 501
	Fetch        PageFetcher                      // self-registration fetches the page through it
	DateRules    func(id string) schema.DateRules // a resource's date_format and timezone, for reading its dates; nil: the lenient defaults
	// OpenRegistration lets webmasters register annotated pages with POST
	// /resources (registration: open); RegistrationEvery is the mean time
	// between registrations a client may make (0: one a minute, bursts of 5).
	OpenRegistration  bool
	RegistrationEvery time.Duration
	// HubURL is the absolute URL of the WebSub hub of these feeds (e.g.
	// PublicURL+"/websub"): feed responses carry Link rel="hub" and
	// rel="self", and RSS 2.0 and Atom documents atom:link rel="hub". "":
	// no discovery. Hub handles POST /websub (nil: 404; see [Server.SetHub]).
	HubURL          string
	Hub             Hub
	Registerer      prometheus.Registerer // nil: metrics not registered
	Gatherer        prometheus.Gatherer   // served at /metrics; nil: /metrics answers 404
	Now             func() time.Time      // nil: time.Now
	MaxPreviewBytes int64                 // POST /preview body limit; 0: 5 MiB
	CacheBytes      int64                 // render cache bound; 0: 32 MiB
	RequestTimeout  time.Duration         // deadline of each request's context; 0: 30s
	ShutdownTimeout time.Duration         // Serve: bound on finishing in-flight requests after ctx ends; 0: 10s
	// TrustedProxies are the reverse proxies whose X-Forwarded-For names the
	// client (the last address in it that is not one of them); empty: the
	// client is the connection's address, whatever the headers say.
	TrustedProxies []netip.Prefix
	// Pages are the pages for people (package ui), mounted through the
	// same middleware; nil: none (a browser asking for a feed gets the
	// feed, POST /preview answers JSON).
	Pages Pages
}

// DefaultMaxPreviewBytes is POST /preview's body limit when
// Options.MaxPreviewBytes is 0 (the /preview form states it).
const DefaultMaxPreviewBytes = 5 << 20

// Defaults for the zero values of Options.
const (
	defaultMaxPreviewBytes = DefaultMaxPreviewBytes
	defaultRequestTimeout  = 30 * time.Second
	defaultShutdownTimeout = 10 * time.Second
	maxAdminBodyBytes      = 64 << 10
)

// Server is the REST service. Safe for concurrent use once built.
type Server struct {
	opts    Options
	log     *slog.Logger
	now     func() time.Time
	started time.Time // when New ran: the date of an empty feed whose registration time is unknown
	e       *echo.Echo
	metrics *httpMetrics
	token   atomic.Pointer[string] // admin bearer token; "" = admin routes off
	hub     atomic.Pointer[Hub]    // POST /websub; nil or a nil Hub = off
	feeds   *feedEngine            // render cache and render metrics of the /resources feeds
	limiter *ratelimit.Keyed       // self-registrations per client
	subLim  *ratelimit.Keyed       // POST /websub per client
	readers *readers.Counter       // distinct clients per resource, for weight_readers
	// chain is the middleware every request goes through, outermost first
	// (middleware.go); handlers holds the routes registered with handle,
	// chain and route middleware applied. Both are fixed once New returns.
	chain    []echo.MiddlewareFunc
	handlers map[routeKey]echo.HandlerFunc
}

// New builds a Server and registers its routes and metrics.
func New(opts Options) (*Server, error) {
	if opts.MaxPreviewBytes <= 0 {
		opts.MaxPreviewBytes = defaultMaxPreviewBytes
	}
	if opts.RequestTimeout <= 0 {
		opts.RequestTimeout = defaultRequestTimeout
	}
	if opts.ShutdownTimeout <= 0 {
		opts.ShutdownTimeout = defaultShutdownTimeout
	}
	s := &Server{opts: opts, log: opts.Logger, now: opts.Now}
	s.SetAdminToken(opts.AdminToken)
	s.SetHub(opts.Hub)
	s.log = redact.Logger(s.log) // no credentials of a URL in the logs (redact.go)
	if s.now == nil {
		s.now = time.Now
	}
	s.started = s.now().UTC().Truncate(time.Second)
	s.readers = readers.New(s.now)
	m, err := newHTTPMetrics(opts.Registerer)
	if err != nil {
		return nil, fmt.Errorf("register http metrics: %w", err)
	}
	s.metrics = m
	feeds, err := newFeedEngine(opts)
	if err != nil {
		return nil, err
	}
	s.feeds = feeds
	every := opts.RegistrationEvery
	if every <= 0 {
		every = time.Minute
	}
	s.limiter = ratelimit.New(every, 5)
	s.subLim = ratelimit.New(webSubEvery, webSubBurst)
	s.e = echo.New()
	s.e.HideBanner = true
	s.e.HidePort = true
	s.e.HTTPErrorHandler = s.httpError
	// Client addresses (per-client limits, readers, the access log) come
	// from the connection: X-Forwarded-For is trivially forged unless a
	// known proxy sets it, and then only the addresses that proxy added
	// count. Echo trusts loopback, link-local and private addresses by
	// default; here only the configured proxies are trusted.
	s.e.IPExtractor = echo.ExtractIPDirect()
	if len(opts.TrustedProxies) > 0 {
		trust := []echo.TrustOption{echo.TrustLoopback(false), echo.TrustLinkLocal(false), echo.TrustPrivateNet(false)}
		for _, p := range opts.TrustedProxies {
			trust = append(trust, echo.TrustIPRange(&net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())}))
		}
		s.e.IPExtractor = echo.ExtractIPFromXFFHeader(trust...)
	}
	s.chain = s.middleware()
	s.handlers = make(map[routeKey]echo.HandlerFunc)
	s.routes(s.handle)
	if opts.Pages != nil {
		opts.Pages.Routes(s, s.handle)
	}
	return s, nil
}

// routes registers every route in one place, through add (Server.handle).
func (s *Server) routes(add func(method, path string, h echo.HandlerFunc, mw ...echo.MiddlewareFunc)) {
	add(http.MethodGet, "/resources", s.getResources, publicRead)
	add(http.MethodHead, "/resources", s.getResources, publicRead)
	add(http.MethodPost, "/resources", s.postResources)
	add(http.MethodOptions, "/resources", preflight("OPTIONS, GET, HEAD, POST"))
	add(http.MethodGet, "/resources/:rssId", s.getResource, publicRead)
	add(http.MethodHead, "/resources/:rssId", s.getResource, publicRead)
	add(http.MethodOptions, "/resources/:rssId", preflight("OPTIONS, GET, HEAD"))
	add(http.MethodGet, "/resources/:rssId/versions/:seq", s.getVersion, publicRead)
	add(http.MethodHead, "/resources/:rssId/versions/:seq", s.getVersion, publicRead)
	add(http.MethodOptions, "/resources/:rssId/versions/:seq", preflight("OPTIONS, GET, HEAD"))

	add(http.MethodPost, "/websub", s.postWebSub)

	add(http.MethodGet, "/resources.opml", s.getOPML, publicRead)
	add(http.MethodHead, "/resources.opml", s.getOPML, publicRead)
	add(http.MethodOptions, "/resources.opml", preflight("OPTIONS, GET, HEAD"))
	add(http.MethodPost, "/preview", s.postPreview)
	// The pages for people (/, /view, GET /preview, /login, /logout, /new,
	// /register) are Options.Pages', registered after these (New).

	add(http.MethodGet, "/favicon.ico", s.getFavicon)
	add(http.MethodHead, "/favicon.ico", s.getFavicon)

	add(http.MethodGet, "/healthz", s.getHealthz)
	add(http.MethodHead, "/healthz", s.getHealthz)
	add(http.MethodGet, "/readyz", s.getReadyz)
	add(http.MethodHead, "/readyz", s.getReadyz)
	if s.opts.Gatherer != nil {
		add(http.MethodGet, "/metrics", s.metricsHandler())
	}

	// Without a token the admin routes answer 404 saying how to turn them
	// on. The token check is route middleware, not group middleware: echo's
	// group middleware adds a catch-all route under /admin that would turn a
	// wrong method's 405 into a 404.
	add(http.MethodPost, "/admin/reload", s.postReload, s.requireToken)
	add(http.MethodGet, "/admin/resources", s.getAdminResources, s.requireToken)
	add(http.MethodGet, "/admin/resources/:rssId", s.getAdminResource, s.requireToken)
	add(http.MethodPut, "/admin/resources/:rssId", s.putAdminResource, s.requireToken)
	add(http.MethodDelete, "/admin/resources/:rssId", s.deleteAdminResource, s.requireToken)
	add(http.MethodPost, "/admin/resources/:rssId/poll", s.postAdminPoll, s.requireToken)
	add(http.MethodGet, "/admin/debug/pprof", func(c echo.Context) error {
		return c.Redirect(http.StatusMovedPermanently, "/admin/debug/pprof/") // the index's links are relative
	}, s.requireToken)
	add(http.MethodGet, "/admin/debug/pprof/*", getPprof, s.requireToken)
}

// routeKey names a route: its method and its path pattern.
type routeKey struct{ method, path string }

// handle registers a route whose handler runs behind mw (route middleware,
// outermost first) and the middleware every request goes through
// (Server.middleware), both applied here, once: echo's e.Use and route
// middleware wrap the handler again on every request, a closure per
// middleware per request.
func (s *Server) handle(method, path string, h echo.HandlerFunc, mw ...echo.MiddlewareFunc) {
	h = applyMiddleware(applyMiddleware(h, mw), s.chain)
	s.e.Add(method, path, h)
	s.handlers[routeKey{method, path}] = h
}

// applyMiddleware wraps h in mw, mw[0] outermost, as echo does.
func applyMiddleware(h echo.HandlerFunc, mw []echo.MiddlewareFunc) echo.HandlerFunc {
	for i := len(mw) - 1; i >= 0; i-- {
		h = mw[i](h)
	}
	return h
}

// ServeHTTP makes Server an http.Handler. It is echo's ServeHTTP with the
// middleware of the routes registered with handle applied in advance: a
// request the router matched to one of them runs its prepared handler;
// anything else (echo's 404, 405 and OPTIONS answers, a route added on s.e
// directly) gets the middleware wrapped around it here, as e.Use would.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c := s.e.AcquireContext()
	c.Reset(r, w)
	s.e.Router().Find(r.Method, echo.GetPath(r), c)
	// The router sets c.Path to the matched route's pattern; when nothing
	// matched, to a pattern registered without this method, or to "".
	h, ok := s.handlers[routeKey{r.Method, c.Path()}]
	if !ok {
		h = applyMiddleware(c.Handler(), s.chain)
	}
	if err := h(c); err != nil {
		s.e.HTTPErrorHandler(err, c)
	}
	s.e.ReleaseContext(c)
}

// SetAdminToken replaces the admin bearer token ("" turns the admin routes
// off), so that a configuration reload can rotate it. Safe for concurrent use.
// The pages' browser sessions are signed with a key derived from the
// same token: whoever rotates it here rotates it there too (cmd/dynamo
// calls both).
func (s *Server) SetAdminToken(token string) {
	s.token.Store(&token)
}

// Readers is the number of distinct clients that fetched resource id's
// feeds in the last week, for the budget policy's weight_readers.
func (s *Server) Readers(id string) int { return s.readers.Readers(id) }
