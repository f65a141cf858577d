package api

// SKELETON shared by two implementers: routes and Options are fixed here;
// handlers live in their own files (feeds.go, errors.go, home.go, preview.go,
// admin.go, health.go, metrics.go, middleware.go).

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
)

// ResourceStatus is what the poller knows of a resource, as the api shows it
// (GET /, admin JSON, Cache-Control and <ttl> hints).
type ResourceStatus struct {
	ID          string        `json:"id"`
	URL         string        `json:"url"`
	Policy      string        `json:"policy"`   // "flat" or "smart"
	Interval    time.Duration `json:"interval"` // the interval the policy chose for the next poll
	Tau         time.Duration `json:"tau"`      // smart: estimate of the time between updates
	Alpha       float64       `json:"alpha"`
	AlphaAuto   bool          `json:"alpha_auto"`
	LastPoll    time.Time     `json:"last_poll"`
	NextPoll    time.Time     `json:"next_poll"`
	LastOutcome string        `json:"last_outcome"`
	LastError   string        `json:"last_error,omitempty"`
	Polls       int64         `json:"polls"`
	Changes     int64         `json:"changes"`
	Errors      int64         `json:"errors"`
}

// Poller is the api's view of the poller.
type Poller interface {
	Statuses() []ResourceStatus
	Status(id string) (ResourceStatus, bool)
	PollNow(ctx context.Context, id string) (ResourceStatus, error)
}

// Options configure a Server. Store is required; everything else may be zero.
type Options struct {
	Store           Store                           // stored versions and items
	Poller          Poller                          // nil: no poll status (tests, read-only serving)
	Reload          func(ctx context.Context) error // POST /admin/reload; nil: route answers 501
	AdminToken      string                          // bearer token; empty: admin routes off (404)
	PublicURL       string                          // base of absolute links in feeds, e.g. "https://feeds.example.org"
	Logger          *slog.Logger                    // nil: discard
	Registerer      prometheus.Registerer           // nil: metrics not registered
	Gatherer        prometheus.Gatherer             // served at /metrics; nil: /metrics answers 404
	Now             func() time.Time                // nil: time.Now
	MaxPreviewBytes int64                           // POST /preview body limit; 0: 5 MiB
	CacheBytes      int64                           // render cache bound; 0: 32 MiB
}

// Server is the REST service. Safe for concurrent use once built.
type Server struct {
	opts Options
	log  *slog.Logger
	now  func() time.Time
	e    *echo.Echo
}

// New builds a Server and registers its routes.
func New(opts Options) (*Server, error) {
	s := &Server{opts: opts, log: opts.Logger, now: opts.Now}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	s.e = echo.New()
	s.e.HideBanner = true
	s.e.HidePort = true
	s.routes()
	return s, nil
}

// ServeHTTP makes Server an http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.e.ServeHTTP(w, r) }

// routes registers every route in one place.
func (s *Server) routes() {
	e := s.e
	e.GET("/resources", s.getResources)
	e.HEAD("/resources", s.getResources)
	e.GET("/resources/:rssId", s.getResource)
	e.HEAD("/resources/:rssId", s.getResource)
}
