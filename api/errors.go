package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/dynamo-rss/dynamo/config"
	"github.com/dynamo-rss/dynamo/storage"
	"github.com/dynamo-rss/dynamo/websub"
)

// problemContentType is the media type of RFC 9457 problem details.
const problemContentType = "application/problem+json"

// Problem is an error that carries what a client needs to act on it: an HTTP
// status and a detail a person can read. Handlers return it (usually through
// the helpers below); [Server.httpError] writes it as application/problem+json.
// Err, when set, is the cause: matched by errors.Is/As, never shown to clients.
type Problem struct {
	Status     int
	Detail     string
	Param      string        // the query parameter at fault, if any ("index", "type", …)
	RetryAfter time.Duration // > 0: the answer's Retry-After, in whole seconds rounded up
	// Errors are the problems of a definition or block sent in the body,
	// each at its field and place, in body order (the "errors" member).
	Errors []problemField
	Err    error
}

func (p *Problem) Error() string {
	msg := fmt.Sprintf("%d %s", p.Status, http.StatusText(p.Status))
	if p.Detail != "" {
		msg += ": " + p.Detail
	}
	if p.Err != nil {
		msg += ": " + p.Err.Error()
	}
	return msg
}

func (p *Problem) Unwrap() error { return p.Err }

// problemf builds a Problem with a formatted detail.
func problemf(status int, format string, args ...any) *Problem {
	return &Problem{Status: status, Detail: fmt.Sprintf(format, args...)}
}

// errBadParam is a 400 for one query parameter; detail says what is allowed.
func errBadParam(param, format string, args ...any) error {
	p := problemf(http.StatusBadRequest, format, args...)
	p.Param = param
	return p
}

// errNotFound is a 404 that keeps cause (usually storage.ErrNotFound) for errors.Is.
func errNotFound(cause error, format string, args ...any) error {
	p := problemf(http.StatusNotFound, format, args...)
	p.Err = cause
	return p
}

// errGone is a 410 for what existed and was removed on purpose: a version
// retention dropped, a resource deleted through the admin API.
func errGone(detail string) error {
	return &Problem{Status: http.StatusGone, Detail: detail}
}

// errUnauthorized is a 401 for the admin routes; the response carries
// WWW-Authenticate: Bearer.
func errUnauthorized(detail string) error {
	return &Problem{Status: http.StatusUnauthorized, Detail: detail}
}

// errTooLarge is a 413 for a request body over limit bytes.
func errTooLarge(limit int64) error {
	return problemf(http.StatusRequestEntityTooLarge, "the request body is larger than the limit of %d bytes", limit)
}

// TooManyRequests is a 429 whose Retry-After says when to try again, in
// whole seconds rounded up (at least 1: "0" would invite an immediate retry).
func TooManyRequests(c echo.Context, wait time.Duration, format string, args ...any) error {
	c.Response().Header().Set("Retry-After", strconv.Itoa(max(1, int(math.Ceil(wait.Seconds())))))
	return problemf(http.StatusTooManyRequests, format, args...)
}

// errNotImplemented is a 501 for a route this server is not configured to serve.
func errNotImplemented(detail string) error {
	return &Problem{Status: http.StatusNotImplemented, Detail: detail}
}

// UnavailableRetry is the Retry-After of a 503 for a store that cannot be
// reached: a database restarting is usually back within seconds.
const UnavailableRetry = 5 * time.Second

// problemBody is the RFC 9457 JSON object.
type problemBody struct {
	Type     string `json:"type"`
	Title    string `json:"title"`
	Status   int    `json:"status"`
	Detail   string `json:"detail,omitempty"`
	Instance string `json:"instance,omitempty"`
	Param    string `json:"parameter,omitempty"`
	// Errors is an extension member (RFC 9457 §3.2): every problem of
	// the body, in body order.
	Errors []problemField `json:"errors,omitempty"`
}

// problemField is one problem of a request body: its field as people
// write it ("weight", "filter.exclude[1]"; "" for the body as a whole),
// its 1-based line and column in the body (0 when it has no place there),
// and what is wrong.
type problemField struct {
	Field  string `json:"field"`
	Line   int    `json:"line"`
	Column int    `json:"column"`
	Detail string `json:"detail"`
}

// ProblemOf maps any error a handler returns to the problem the client sees.
// This is the only place where errors become HTTP statuses.
func ProblemOf(err error) *Problem {
	var (
		p   *Problem
		he  *echo.HTTPError
		mbe *http.MaxBytesError
		fe  *config.FieldError
	)
	switch {
	case errors.As(err, &p):
		return p
	case errors.As(err, &mbe):
		return problemf(http.StatusRequestEntityTooLarge, "the request body is larger than the limit of %d bytes", mbe.Limit)
	case errors.As(err, &he):
		out := &Problem{Status: he.Code, Err: err}
		if he.Code == http.StatusServiceUnavailable { // the request's deadline passed (requestDeadline)
			out.RetryAfter = UnavailableRetry
		}
		if he.Code < http.StatusInternalServerError {
			if msg, ok := he.Message.(string); ok && msg != http.StatusText(he.Code) {
				out.Detail = msg
			}
			switch {
			case out.Detail != "":
			case he.Code == http.StatusNotFound:
				out.Detail = "no such route; feeds are under /resources"
			case he.Code == http.StatusMethodNotAllowed:
				out.Detail = "this route does not answer this method; the Allow header lists the methods it answers"
			}
		}
		return out
	case errors.Is(err, websub.ErrInvalidRequest), errors.Is(err, websub.ErrUnknownTopic):
		// WebSub §5.1.2: an invalid request may be refused at once with a 4xx.
		return &Problem{Status: http.StatusBadRequest, Detail: err.Error(), Err: err}
	case errors.Is(err, websub.ErrBusy):
		return &Problem{Status: http.StatusServiceUnavailable, Detail: "the hub's verification queue is full; try again in a minute", Err: err}
	case errors.Is(err, errHistoryMoved): // still moving after every attempt of serveResource
		return &Problem{Status: http.StatusServiceUnavailable, Detail: "the resource's history kept changing while its feed was built; try again", Err: err}
	case errors.Is(err, ErrDeclaredInFile):
		return &Problem{Status: http.StatusConflict, Detail: "this resource is declared in the configuration file; change it there", Err: err}
	case errors.As(err, &fe):
		return badDefinition(err)
	case errors.Is(err, storage.ErrUnavailable):
		return &Problem{Status: http.StatusServiceUnavailable, RetryAfter: UnavailableRetry,
			Detail: "the store cannot be reached just now; try again in a few seconds", Err: err}
	case errors.Is(err, storage.ErrGone): // before ErrNotFound, which it also matches
		return &Problem{Status: http.StatusGone, Detail: "this resource was deleted; its feeds are gone for good", Err: err}
	case errors.Is(err, storage.ErrNotFound):
		return &Problem{Status: http.StatusNotFound, Detail: "not found; GET /resources lists the resources", Err: err}
	}
	return &Problem{Status: http.StatusInternalServerError, Err: err}
}

// httpError is the echo HTTPErrorHandler: it logs server-side failures with
// their cause and answers every error as application/problem+json, without
// leaking the cause of a 5xx to the client.
func (s *Server) httpError(err error, c echo.Context) {
	p := ProblemOf(err)
	req := c.Request()
	if p.Status >= http.StatusInternalServerError {
		s.log.ErrorContext(req.Context(), "request failed",
			slog.String("method", req.Method), slog.String("path", req.URL.Path),
			slog.Int("status", p.Status), slog.Any("error", err))
	}
	if c.Response().Committed {
		return
	}
	detail := p.Detail
	if p.Status >= http.StatusInternalServerError && detail == "" {
		detail = "the server could not answer this request; the cause was logged"
	}
	body := problemBody{
		Type:     "about:blank",
		Title:    http.StatusText(p.Status),
		Status:   p.Status,
		Detail:   detail,
		Instance: req.URL.RequestURI(),
		Param:    p.Param,
		Errors:   p.Errors,
	}
	h := c.Response().Header()
	if p.Status == http.StatusUnauthorized && h.Get(echo.HeaderWWWAuthenticate) == "" {
		h.Set(echo.HeaderWWWAuthenticate, `Bearer realm="dynamo admin"`) // unless the route set a more precise challenge
	}
	h.Set(echo.HeaderContentType, problemContentType)
	h.Set("Cache-Control", "no-store")
	if p.RetryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(max(1, int(math.Ceil(p.RetryAfter.Seconds())))))
	}
	if req.Method == http.MethodHead {
		c.Response().WriteHeader(p.Status)
		return
	}
	data, merr := json.Marshal(body)
	if merr != nil { // plain strings and ints: cannot happen, but never fail silently
		s.log.ErrorContext(req.Context(), "encode problem", slog.Any("error", merr))
		c.Response().WriteHeader(http.StatusInternalServerError)
		return
	}
	c.Response().WriteHeader(p.Status)
	_, _ = c.Response().Write(append(data, '\n')) // client gone: nothing left to do
}
