package api

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"github.com/dynamo-rss/dynamo/internal/redact"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
)

// bearerMatches reports whether an Authorization header carries the token:
// the scheme "Bearer" (any case), one space, then exactly the token's bytes.
// Nothing is trimmed: a token padded with spaces, NBSP or U+2003 is another
// token. Both sides are hashed first so that the comparison is constant-time
// in the token's length as well as its content (subtle.ConstantTimeCompare
// returns early on a length mismatch).
func bearerMatches(header, token string) bool {
	scheme, cred, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	return TokenMatches(cred, token)
}

// TokenMatches reports whether got is exactly the admin token, byte for
// byte, nothing trimmed; an empty one never matches. The bearer header and
// the login form both check with it.
func TokenMatches(got, token string) bool {
	if got == "" || token == "" {
		return false
	}
	g := sha256.Sum256([]byte(got))
	want := sha256.Sum256([]byte(token))
	return subtle.ConstantTimeCompare(g[:], want[:]) == 1
}

// AdminOff is the 404 of every admin route while no token is configured.
const AdminOff = "the admin API is off; set admin.token or admin.token_file in the configuration and reload to turn it on"

// requireToken lets through only requests with the configured bearer token.
// Every admin answer is Cache-Control: no-store: shared caches must not keep
// answers to requests with Authorization anyway (RFC 9111 §3.5), but one
// that ignores it, or a browser's heuristic freshness, must not either.
func (s *Server) requireToken(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		c.Response().Header().Set(echo.HeaderCacheControl, "no-store")
		token := *s.token.Load()
		if token == "" {
			return problemf(http.StatusNotFound, "%s", AdminOff)
		}
		h := c.Request().Header.Get(echo.HeaderAuthorization)
		if bearerMatches(h, token) {
			// Poll state, definitions and profiles are for the token's
			// holder: kept by no cache, shared or private.
			c.Response().Header().Set(echo.HeaderCacheControl, "no-store")
			return next(c)
		}
		challenge := `Bearer realm="dynamo admin"`
		detail := "admin routes need an Authorization: Bearer <token> header with the token from the configuration"
		if h != "" {
			challenge += `, error="invalid_token"`
			detail = "the bearer token is not the configured admin token"
		}
		c.Response().Header().Set(echo.HeaderWWWAuthenticate, challenge)
		return errUnauthorized(detail)
	}
}

// adminStatus is the JSON of a resource's poll state: ResourceStatus with
// durations readable by people (Go syntax) and by programs (seconds).
type adminStatus struct {
	ID              string     `json:"id"`
	URL             string     `json:"url"`
	Policy          string     `json:"policy"`
	Interval        string     `json:"interval"`
	IntervalSeconds float64    `json:"interval_seconds"`
	Tau             string     `json:"tau"`
	TauSeconds      float64    `json:"tau_seconds"`
	Alpha           float64    `json:"alpha"`
	AlphaAuto       bool       `json:"alpha_auto"`
	LastPoll        *time.Time `json:"last_poll"`
	NextPoll        *time.Time `json:"next_poll"`
	LastOutcome     string     `json:"last_outcome"`
	LastError       string     `json:"last_error,omitempty"`
	Polls           int64      `json:"polls"`
	Changes         int64      `json:"changes"`
	Errors          int64      `json:"errors"`
	Diagnostics     []string   `json:"diagnostics,omitempty"` // the last extraction's (the first few)
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	t = t.UTC()
	return &t
}

func newAdminStatus(st ResourceStatus) adminStatus {
	return adminStatus{
		ID:              st.ID,
		URL:             redact.URL(st.URL), // a secret, as headers are: in, never out
		Policy:          st.Policy,
		Interval:        st.Interval.String(),
		IntervalSeconds: st.Interval.Seconds(),
		Tau:             st.Tau.String(),
		TauSeconds:      st.Tau.Seconds(),
		Alpha:           st.Alpha,
		AlphaAuto:       st.AlphaAuto,
		LastPoll:        timePtr(st.LastPoll),
		NextPoll:        timePtr(st.NextPoll),
		LastOutcome:     st.LastOutcome,
		LastError:       redact.Text(st.LastError),
		Polls:           st.Polls,
		Changes:         st.Changes,
		Errors:          st.Errors,
		Diagnostics:     redact.Texts(st.Diagnostics),
	}
}

// reloadBody is the JSON of a successful POST /admin/reload.
type reloadBody struct {
	Status string `json:"status"`
}

// postReload reloads the configuration through Options.Reload; a refused
// configuration is a 422 whose detail is the loader's message (the old
// configuration stays in force).
func (s *Server) postReload(c echo.Context) error {
	if s.opts.Reload == nil {
		return errNotImplemented("this server has no configuration file to reload")
	}
	if err := s.opts.Reload(c.Request().Context()); err != nil {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return &Problem{Status: http.StatusServiceUnavailable, Detail: "the reload did not complete; try again", Err: err}
		}
		return &Problem{Status: http.StatusUnprocessableEntity,
			Detail: "configuration not reloaded, the previous one stays in force: " + err.Error(), Err: err}
	}
	return c.JSON(http.StatusOK, reloadBody{Status: "reloaded"})
}

// unknownResource is the 404 of an admin route.
func unknownResource(id string) error {
	return problemf(http.StatusNotFound, "no configured resource has the id %q; GET / lists them", id)
}

// getAdminResource answers a resource's poll state.
func (s *Server) getAdminResource(c echo.Context) error {
	id := c.Param("rssId")
	if s.opts.Poller == nil {
		return unknownResource(id)
	}
	st, ok := s.opts.Poller.Status(id)
	if !ok {
		return unknownResource(id)
	}
	return c.JSON(http.StatusOK, newAdminStatus(st))
}

// postAdminPoll polls a resource now and answers its new poll state. A failed
// fetch is not an HTTP error: it is in the state's last outcome.
func (s *Server) postAdminPoll(c echo.Context) error {
	id := c.Param("rssId")
	if s.opts.Poller == nil {
		return unknownResource(id)
	}
	if _, ok := s.opts.Poller.Status(id); !ok {
		return unknownResource(id)
	}
	st, err := s.opts.Poller.PollNow(c.Request().Context(), id)
	if err != nil {
		return &Problem{Status: http.StatusServiceUnavailable, Detail: fmt.Sprintf("poll of %q did not run: %v", id, err), Err: err}
	}
	return c.JSON(http.StatusOK, newAdminStatus(st))
}
