package ui

import (
	"fmt"
	"github.com/dynamo-rss/dynamo/internal/redact"
	"html/template"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/dynamo-rss/dynamo/api"
	"github.com/dynamo-rss/dynamo/internal/ratelimit"
	"github.com/dynamo-rss/dynamo/internal/session"
	"github.com/dynamo-rss/dynamo/storage"
)

// Options configure the pages. Everything may be zero; the services are
// the ones the api is given (cmd/dynamo hands both the same).
type Options struct {
	Store    api.Store       // stored versions: /, /view; nil: only the poller's resources
	Poller   api.Poller      // poll state on / and /view, history for the charts (api.PollHistory), the first poll of /new (api.FirstPoller); nil: none
	Registry api.Registry    // /new registers through it (api.RegisterDefinition); nil: /new/add answers 501
	Fetch    api.PageFetcher // /new fetches pages through it (the poller's guarded fetcher); nil: /new answers 501
	// Browser says a browser is configured to render pages with
	// (poller.browser): /new then offers "Render with JavaScript", through
	// Fetch when it is an api.PageRenderer.
	Browser bool
	// AdminToken is the admin token: /login takes it, and the sessions are
	// signed with a key derived from it; "": /login, /logout and /new are
	// absent (404), as the admin routes are. [Server.SetAdminToken]
	// rotates it.
	AdminToken string
	// Sessions keeps the browser sessions ended by a logout, so that a copy
	// of a session's cookie stops working on every node sharing it (the
	// store: storage/badger and storage/postgres implement it); nil: they
	// are kept in this process only, so a logout ends the session on this
	// node alone.
	Sessions storage.Sessions
	// TrustedProxies are the reverse proxies whose X-Forwarded-Proto says
	// whether the browser came over https (the cookies' Secure flag); the
	// api's, which also name the client.
	TrustedProxies []netip.Prefix
	// PublicURL is the public base URL (public_url): its origin is trusted
	// by the forms' cross-origin check behind a proxy that rewrites Host,
	// and / shows it in its examples.
	PublicURL        string
	OpenRegistration bool                 // registration: open (/ links to /register)
	HubURL           string               // the WebSub hub /view names; "": none
	DiskSpace        func() api.DiskSpace // the store's free space, shown on / when low; nil: not shown
	MaxPreviewBytes  int64                // the limit the /preview form states; 0: api.DefaultMaxPreviewBytes
	Now              func() time.Time     // nil: time.Now
	Logger           *slog.Logger         // nil: discard
}

// Server is the pages for people: an [api.Pages] the api mounts. Safe for
// concurrent use once mounted.
type Server struct {
	opts  Options
	log   *slog.Logger
	now   func() time.Time
	api   *api.Server                   // the server the pages are mounted on (Routes): feed links, self-registration
	pages map[string]*template.Template // the page templates (embedded), by file name
	token atomic.Pointer[string]        // the admin token; "" = the session pages are off
	// people holds what the pages share across requests (sparklines, the
	// sanitizer of item HTML).
	people *people
	// The pages that add feeds (login.go, newfeed.go, register.go): the
	// session codec (nil while admin is off), login attempts per client,
	// the browsers' cross-origin check and the pages /new fetched.
	sessions    atomic.Pointer[session.Codec]
	revoked     storage.Sessions // Options.Sessions, or this process's own
	loginLim    *ratelimit.Keyed
	crossOrigin *http.CrossOriginProtection
	fetched     fetchedPages
	waits       waits // the fetches and first polls that a page waits for (wait.go)
}

var _ api.Pages = (*Server)(nil)

// New builds the pages; they answer once mounted on an api.Server
// (api.Options.Pages).
func New(opts Options) (*Server, error) {
	if opts.MaxPreviewBytes <= 0 {
		opts.MaxPreviewBytes = api.DefaultMaxPreviewBytes
	}
	s := &Server{opts: opts, log: redact.Logger(opts.Logger), now: opts.Now}
	if s.now == nil {
		s.now = time.Now
	}
	var err error
	if s.pages, err = parsePages(); err != nil {
		return nil, fmt.Errorf("parse page templates: %w", err)
	}
	s.SetAdminToken(opts.AdminToken)
	s.loginLim = ratelimit.New(loginEvery, loginBurst)
	s.revoked = opts.Sessions
	if s.revoked == nil {
		s.revoked = &localSessions{until: map[string]time.Time{}}
	}
	s.crossOrigin = http.NewCrossOriginProtection()
	if o, err := url.Parse(opts.PublicURL); err == nil && o.Scheme != "" && o.Host != "" {
		// Behind a proxy that rewrites Host, the public origin is ours too.
		if err := s.crossOrigin.AddTrustedOrigin(o.Scheme + "://" + o.Host); err != nil {
			return nil, fmt.Errorf("public_url as a trusted origin: %w", err)
		}
	}
	s.people = newPeople()
	return s, nil
}

// Routes registers every page in one place, through add (api's, which
// applies the middleware of every request): it is [api.Pages]' method, and
// the api calls it once, from api.New.
func (s *Server) Routes(srv *api.Server, add func(method, path string, h echo.HandlerFunc, mw ...echo.MiddlewareFunc)) {
	s.api = srv
	add(http.MethodGet, "/", s.getHome)
	add(http.MethodHead, "/", s.getHome)
	add(http.MethodGet, "/view/:rssId", s.getView)
	add(http.MethodHead, "/view/:rssId", s.getView)
	add(http.MethodGet, "/preview", s.getPreview)
	add(http.MethodHead, "/preview", s.getPreview)

	// Adding a feed in the browser: the admin's session (login.go,
	// session.go), /new (newfeed.go) and the webmasters' form (register.go).
	// Every form that changes something passes checkCSRF (403 otherwise).
	add(http.MethodGet, "/login", s.getLogin)
	add(http.MethodHead, "/login", s.getLogin)
	add(http.MethodPost, "/login", s.postLogin, s.checkCSRF)
	add(http.MethodGet, "/logout", s.logout)
	add(http.MethodPost, "/logout", s.logout, s.checkCSRF)
	add(http.MethodGet, "/new", s.getNew, s.requireSession)
	add(http.MethodHead, "/new", s.getNew, s.requireSession)
	add(http.MethodPost, "/new", s.postNew, s.requireSession, s.checkCSRF)
	add(http.MethodPost, "/new/preview", s.postNewPreview, s.requireSession, s.checkCSRF)
	add(http.MethodPost, "/new/add", s.postNewAdd, s.requireSession, s.checkCSRF)
	add(http.MethodGet, "/new/wait/:token", s.getWait, s.requireSession)
	add(http.MethodGet, "/new/picture/:fetch", s.getPicture, s.requireSession)
	add(http.MethodGet, "/register", s.getRegister)
	add(http.MethodHead, "/register", s.getRegister)
	add(http.MethodPost, "/register", s.postRegister, s.checkCSRF)
}

// SetAdminToken replaces the admin token ("" turns the session pages off),
// as api.Server.SetAdminToken does for the admin routes; a configuration
// reload calls both. The browser sessions are signed with a key derived
// from it, so a new token ends them. Safe for concurrent use.
func (s *Server) SetAdminToken(token string) {
	s.token.Store(&token)
	s.setSessionKey(token)
}

// problem is an error the api answers as a problem (status, detail).
func problem(status int, detail string) error {
	return &api.Problem{Status: status, Detail: detail}
}

// notFound is a 404 that keeps cause (usually storage.ErrNotFound) for
// errors.Is.
func notFound(cause error, format string, args ...any) error {
	return &api.Problem{Status: http.StatusNotFound, Detail: fmt.Sprintf(format, args...), Err: cause}
}

// getPreview shows the form a webmaster pastes a page into; POST /preview
// is the api's, which answers a browser with PreviewPage.
func (s *Server) getPreview(c echo.Context) error {
	return s.renderPage(c, http.StatusOK, "preview.html", &api.PreviewPage{Title: "Preview an annotated page", MaxBytes: s.opts.MaxPreviewBytes})
}

// PreviewPage answers POST /preview to a browser with the page of p.
func (s *Server) PreviewPage(c echo.Context, code int, p *api.PreviewPage) error {
	return s.renderPage(c, code, "preview.html", p)
}
