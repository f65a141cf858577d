package api

import (
	"fmt"
	"github.com/dynamo-rss/dynamo/internal/redact"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
)

// gzipMinLength is the smallest body worth compressing.
const gzipMinLength = 1024

// middleware returns the chain every request goes through, outermost first:
// security headers, observe (log + metrics, and the one call to the error
// handler), recover, gzip, body limit, request deadline.
func (s *Server) middleware() []echo.MiddlewareFunc {
	return []echo.MiddlewareFunc{
		secureHeaders,
		s.observe,
		middleware.RecoverWithConfig(middleware.RecoverConfig{
			DisableStackAll: true,
			LogErrorFunc: func(c echo.Context, err error, stack []byte) error {
				// Logged here with the stack; observe logs the 500 without it.
				s.log.LogAttrs(c.Request().Context(), slog.LevelError, "handler panicked",
					slog.Any("error", err), slog.String("stack", string(stack)))
				return fmt.Errorf("panic: %w", err)
			},
		}),
		middleware.GzipWithConfig(middleware.GzipConfig{
			MinLength: gzipMinLength,
			// HEAD runs through it too, so that its headers are GET's
			// (Content-Encoding, Vary); net/http drops the body. 304s have
			// none (the middleware drops Content-Encoding when nothing was
			// written). Feeds compress themselves, with an ETag per coding
			// (api/feeds.go), and so does a feed shown to a browser as a
			// page, kept compressed in the render cache (feedpage.go).
			// The admin API's writes answer a resource or a problem, under
			// MinLength, and the middleware resets a compressor twice per
			// request it does not skip, even for a short body: 5–6 % of the
			// CPU of a mass registration by Go clients (BENCHMARKS.md).
			Skipper: func(c echo.Context) bool {
				req := c.Request()
				m := req.Method
				p := c.Path()
				if m != http.MethodGet && m != http.MethodHead && strings.HasPrefix(p, "/admin") {
					return true
				}
				feeds := p == "/resources" || strings.HasPrefix(p, "/resources/") // not /resources.opml
				if feeds && (m == http.MethodGet || m == http.MethodHead || !wantsFeedPage(req)) {
					return true
				}
				// The middleware compresses whenever the header contains
				// "gzip", even "gzip;q=0"; skipped, the answer still varies
				// by Accept-Encoding.
				if !acceptsGzip(req.Header.Get(echo.HeaderAcceptEncoding)) {
					c.Response().Header().Add(echo.HeaderVary, echo.HeaderAcceptEncoding)
					return true
				}
				return false
			},
		}),
		s.limitBody,
		s.requestDeadline,
	}
}

// observe records each request's metrics and, with Options.AccessLog, logs it. It hands a handler's
// error to the error handler itself, so that it sees the status actually sent.
func (s *Server) observe(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now() // a duration: the monotonic clock, not the injected Options.Now
		s.metrics.inFlight.Inc()
		defer s.metrics.inFlight.Dec()
		err := next(c)
		if err != nil {
			c.Error(err)
		}
		req, res := c.Request(), c.Response()
		d := time.Since(start)
		route := c.Path()
		if route == "" || (res.Status == http.StatusNotFound && strings.HasSuffix(route, "/*")) {
			route = "unmatched" // no route: never label with the raw path
		}
		s.metrics.observe(route, req.Method, res.Status, d)
		if !s.opts.AccessLog {
			return nil // 5xx causes are still logged, by the error handler
		}
		level := slog.LevelInfo
		switch {
		case res.Status >= 500:
			level = slog.LevelError
		case res.Status >= 400:
			level = slog.LevelWarn
		}
		ctx := req.Context()
		if !s.log.Enabled(ctx, level) { // the hot path of a quiet server: no attrs built
			return nil
		}
		// The path with its query: the feeds of one resource differ only there.
		attrs := []slog.Attr{
			slog.String("method", req.Method),
			slog.String("path", redact.URI(req.URL)), // a URL in the query without its credentials
			slog.String("route", route),
			slog.Int("status", res.Status),
			slog.Int64("bytes", res.Size),
			slog.Duration("duration", d),
			slog.String("client", c.RealIP()),
			slog.String("user_agent", req.UserAgent()),
		}
		if err != nil && res.Status < 500 { // 5xx causes are logged once, by the error handler
			attrs = append(attrs, slog.Any("error", err))
		}
		s.log.LogAttrs(ctx, level, "http request", attrs...)
		return nil
	}
}

// limitBody bounds request bodies: POST /preview to Options.MaxPreviewBytes,
// everything else to a small fixed size. Reading past the bound fails with
// *http.MaxBytesError, which handlers turn into 413.
func (s *Server) limitBody(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		if req.Body == nil || req.Body == http.NoBody {
			return next(c)
		}
		limit := int64(maxAdminBodyBytes)
		if c.Path() == "/preview" {
			limit = s.opts.MaxPreviewBytes
		}
		if req.ContentLength > limit {
			return errTooLarge(limit)
		}
		req.Body = http.MaxBytesReader(c.Response(), req.Body, limit)
		return next(c)
	}
}

// documentSecurityPolicy is the Content-Security-Policy of every answer that
// is not one of our HTML pages (pageHeaders replaces it on those): feeds,
// problems, JSON, OPML, admin answers. A browser that renders an XML feed as
// an XML document runs the XHTML and SVG <script> elements in it, and a
// page's extensions may be such elements (ANNOTATIONS.md: any uri, prefix
// and localName): sandboxed, with nothing allowed to load or run, the
// document has no origin to act on.
const documentSecurityPolicy = "default-src 'none'; frame-ancestors 'none'; sandbox"

// secureHeaders sets the headers every answer carries, before the handler
// runs, so that error answers and unmatched routes have them too: no MIME
// sniffing, no framing, and documentSecurityPolicy.
func secureHeaders(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := c.Response().Header()
		h["X-Content-Type-Options"] = nosniff
		h["X-Frame-Options"] = frameDeny
		h["Content-Security-Policy"] = documentCSP
		return next(c)
	}
}

// publicRead lets scripts on any site read the feeds (and the OPML list):
// they are public, carry nothing a credential unlocks, and a web page
// showing a legacy site's news in a widget is what many readers of them are.
// The validators and the hub links stay readable to such scripts. No
// credentials are allowed, so the admin token never rides along; admin
// routes and pages do not have this.
func publicRead(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := c.Response().Header()
		h["Access-Control-Allow-Origin"] = anyOrigin
		h["Access-Control-Expose-Headers"] = exposedFeedHeaders
		return next(c)
	}
}

// preflight answers OPTIONS on a public read route: Allow lists the
// route's methods, and a CORS preflight (a script on another site about to
// send a conditional GET, If-None-Match being a header browsers ask about)
// is allowed GET and HEAD with the conditional headers, cached for a day.
// Only reads are invited: the preflight of a POST to /resources does not
// list POST, so the browser does not send it.
func preflight(allow string) echo.HandlerFunc {
	allowed := []string{allow}
	return func(c echo.Context) error {
		h := c.Response().Header()
		h["Allow"] = allowed
		if c.Request().Header.Get("Origin") != "" {
			h["Access-Control-Allow-Origin"] = anyOrigin
			h["Access-Control-Allow-Methods"] = readMethods
			h["Access-Control-Allow-Headers"] = conditionalHeaders
			h["Access-Control-Max-Age"] = oneDay
		}
		return c.NoContent(http.StatusNoContent)
	}
}

// Shared header values (never appended to: capacity = length, so an Add
// elsewhere copies them).
var (
	nosniff            = []string{"nosniff"}
	anyOrigin          = []string{"*"}
	exposedFeedHeaders = []string{"ETag, Last-Modified, Link"}
	readMethods        = []string{"GET, HEAD"}
	conditionalHeaders = []string{"If-None-Match, If-Modified-Since, Accept"}
	oneDay             = []string{"86400"}
	frameDeny          = []string{"DENY"}
	documentCSP        = []string{documentSecurityPolicy}
)
