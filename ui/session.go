package ui

// The admin's browser session and the CSRF check of the forms that change
// something (/login, /logout, /new, /register). The signing and the tokens
// are internal/session's; this file puts them in cookies and middleware.

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/dynamo-rss/dynamo/api"
	"github.com/dynamo-rss/dynamo/internal/session"
)

const (
	sessionCookie = "dynamo_session"
	csrfCookie    = "dynamo_csrf" // the browser's CSRF seed
	csrfField     = "csrf"        // the form field that carries the token
	sessionTTL    = 12 * time.Hour
	// sessionKey is where requireSession leaves the session in echo's context.
	sessionKey = "dynamo.session"
	// seedKey is where a seed set during this answer is kept for its forms.
	seedKey = "dynamo.csrfseed"
	// checkedKey is where currentSession keeps what it found, so that a
	// request asks the store about its session once.
	checkedKey = "dynamo.sessionchecked"
)

// errNoSession: the request carries no session cookie, or admin is off.
var errNoSession = errors.New("no session")

// errSessionEnded: the session was ended by a logout (on any node).
var errSessionEnded = errors.New("session ended by a logout")

// sessionUnchecked is currentSession's error when the store could not say
// whether the session was ended: the session is then refused (fail
// closed): a page that needs it, or a form, answers 503.
type sessionUnchecked struct{ err error }

func (e *sessionUnchecked) Error() string { return "check session revocation: " + e.err.Error() }
func (e *sessionUnchecked) Unwrap() error { return e.err }

// sessionUncheckedDetail is the 503 of a request whose session could not be
// checked.
const sessionUncheckedDetail = "this server cannot check your session right now (its store does not answer), so nothing that needs it is done; try again in a minute"

// checkedSession is what currentSession found for this request.
type checkedSession struct {
	sess session.Session
	err  error
}

// setSessionKey derives the session signing key from the admin token, so
// that a rotated token (or admin turned off) ends every session at once and
// every node sharing the token accepts the others' sessions.
func (s *Server) setSessionKey(token string) {
	if token == "" {
		s.sessions.Store(nil)
		return
	}
	codec, err := session.NewCodec(sessionCookie, token, sessionTTL)
	if err != nil { // only for an empty secret, excluded above
		s.sessions.Store(nil)
		return
	}
	s.sessions.Store(codec)
}

// secureRequest reports whether the browser reached us over https: TLS to
// this server, or X-Forwarded-Proto: https from a configured trusted proxy
// (anyone else can send that header).
func (s *Server) secureRequest(req *http.Request) bool {
	if req.TLS != nil {
		return true
	}
	if !strings.EqualFold(strings.TrimSpace(req.Header.Get("X-Forwarded-Proto")), "https") || len(s.opts.TrustedProxies) == 0 {
		return false
	}
	host, _, err := net.SplitHostPort(req.RemoteAddr)
	if err != nil {
		host = req.RemoteAddr
	}
	peer, err := netip.ParseAddr(host)
	if err != nil {
		return false
	}
	peer = peer.Unmap()
	for _, p := range s.opts.TrustedProxies {
		if p.Contains(peer) {
			return true
		}
	}
	return false
}

// setCookie sets one of our cookies: HttpOnly, SameSite=Strict, Path=/,
// Secure over https; maxAge < 0 deletes it.
func (s *Server) setCookie(c echo.Context, name, value string, maxAge int) {
	c.SetCookie(&http.Cookie{
		Name: name, Value: value, Path: "/", MaxAge: maxAge,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: s.secureRequest(c.Request()),
	})
}

// currentSession is the request's valid session: errNoSession without one
// (or with admin off), session.ErrExpired or session.ErrInvalid for a
// cookie that is not (the expired session is returned with its error),
// errSessionEnded for a session a logout ended, and a *sessionUnchecked
// when the store could not say. The answer is kept for the rest of the
// request.
func (s *Server) currentSession(c echo.Context) (session.Session, error) {
	if sess, ok := c.Get(sessionKey).(session.Session); ok {
		return sess, nil
	}
	if got, ok := c.Get(checkedKey).(checkedSession); ok {
		return got.sess, got.err
	}
	sess, err := s.checkSession(c)
	c.Set(checkedKey, checkedSession{sess: sess, err: err})
	return sess, err
}

// checkSession is currentSession without the memory: the cookie's
// signature and age, then whether a logout ended it.
func (s *Server) checkSession(c echo.Context) (session.Session, error) {
	codec := s.sessions.Load()
	ck, err := c.Cookie(sessionCookie)
	if codec == nil || err != nil || ck.Value == "" {
		return session.Session{}, errNoSession
	}
	sess, err := codec.Decode(ck.Value, s.now())
	if err != nil {
		return sess, err
	}
	revoked, err := s.revoked.SessionRevoked(c.Request().Context(), sess.ID)
	switch {
	case err != nil:
		s.log.ErrorContext(c.Request().Context(), "session not checked", slog.Any("error", err))
		return session.Session{}, &sessionUnchecked{err: err}
	case revoked:
		return session.Session{}, errSessionEnded
	}
	return sess, nil
}

// sessionUnavailable answers 503 for a request whose session could not be
// checked, or a logout the store could not record: a page for browsers, a
// problem for others.
func (s *Server) sessionUnavailable(c echo.Context) error {
	detail := sessionUncheckedDetail
	if c.Path() == "/logout" {
		detail = logoutFailed
	}
	c.Response().Header().Set(echo.HeaderRetryAfter, strconv.Itoa(int(api.UnavailableRetry/time.Second)))
	if api.WantsHTML(c) {
		return s.renderPage(c, http.StatusServiceUnavailable, "notice.html", noticePage{Title: "Try again", Message: detail, Back: backLink(c)})
	}
	return problem(http.StatusServiceUnavailable, detail)
}

// loggedIn reports whether the request carries a valid session.
func (s *Server) loggedIn(c echo.Context) bool {
	_, err := s.currentSession(c)
	return err == nil
}

// requireSession lets through only requests with a valid admin session
// (the pages that change the registry); others are sent to /login, told
// why when their session expired. With admin off, such pages are absent
// (404), as the admin routes are.
func (s *Server) requireSession(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		c.Response().Header().Set(echo.HeaderCacheControl, "no-store")
		if s.sessions.Load() == nil {
			return problem(http.StatusNotFound, api.AdminOff)
		}
		sess, err := s.currentSession(c)
		var unchecked *sessionUnchecked
		if errors.As(err, &unchecked) {
			return s.sessionUnavailable(c)
		}
		if err != nil {
			q := url.Values{}
			if c.Request().Method == http.MethodGet {
				q.Set("next", c.Request().URL.RequestURI())
			}
			switch {
			case errors.Is(err, session.ErrExpired):
				q.Set("expired", "1")
				s.setCookie(c, sessionCookie, "", -1)
			case errors.Is(err, errSessionEnded):
				s.setCookie(c, sessionCookie, "", -1) // worth nothing any more, anywhere
			}
			target := "/login"
			if len(q) > 0 {
				target += "?" + q.Encode()
			}
			return c.Redirect(http.StatusSeeOther, target)
		}
		c.Set(sessionKey, sess)
		return next(c)
	}
}

// csrfToken returns the CSRF token for the forms of this answer, setting
// the browser's seed cookie first when it has none (or a malformed one).
func (s *Server) csrfToken(c echo.Context) string {
	seed, _ := c.Get(seedKey).(string) // a seed set earlier in this answer
	if seed == "" {
		if ck, err := c.Cookie(csrfCookie); err == nil && session.ValidSeed(ck.Value) {
			seed = ck.Value
		} else {
			seed = s.rotateCSRF(c)
		}
	}
	sess, _ := s.currentSession(c) // no session: tokens of the anonymous forms
	return session.Token(seed, sess.ID)
}

// rotateCSRF gives the browser a fresh seed (at login and logout, so that a
// seed planted before login is worth nothing after it).
// It returns the new seed, which the forms of this answer are bound to.
func (s *Server) rotateCSRF(c echo.Context) string {
	seed := session.NewSeed()
	s.setCookie(c, csrfCookie, seed, int(sessionTTL/time.Second))
	c.Set(seedKey, seed)
	return seed
}

// csrfRefused is the detail of a 403 for a form without a valid token.
const csrfRefused = "this form was not accepted: its security token is missing, wrong or expired (it may have come from another site, or from a page opened before you logged in or out); reload the page and send the form again"

// checkCSRF is the middleware of every form route that changes something:
// a browser's cross-origin request (Sec-Fetch-Site or Origin, as
// net/http.CrossOriginProtection judges it) or a form whose token is not
// the one of this browser's seed and session is refused with 403 before
// the handler runs, so nothing is changed.
func (s *Server) checkCSRF(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		c.Response().Header().Set(echo.HeaderCacheControl, "no-store")
		req := c.Request()
		if err := s.crossOrigin.Check(req); err != nil {
			return s.forbiddenForm(c, "this form was sent from another site; open this server's own page and send it from there")
		}
		ck, err := req.Cookie(csrfCookie)
		seed := ""
		if err == nil {
			seed = ck.Value
		}
		sess, err := s.currentSession(c) // anonymous forms are bound to ""
		var unchecked *sessionUnchecked
		if errors.As(err, &unchecked) {
			return s.sessionUnavailable(c)
		}
		if !session.CheckToken(seed, sess.ID, req.PostFormValue(csrfField)) {
			return s.forbiddenForm(c, csrfRefused)
		}
		return next(c)
	}
}

// forbiddenForm answers 403: a page for browsers, a problem for others.
func (s *Server) forbiddenForm(c echo.Context, detail string) error {
	if api.WantsHTML(c) {
		return s.renderPage(c, http.StatusForbidden, "notice.html", noticePage{Title: "Form refused", Message: detail, Back: backLink(c)})
	}
	return problem(http.StatusForbidden, detail)
}

// noticePage is the data of notice.html: a short message and where to go.
type noticePage struct {
	Title   string
	Message string
	Back    string
}

// backLink is the page a refused form came from, when it is one of ours.
func backLink(c echo.Context) string {
	switch p := c.Path(); {
	case strings.HasPrefix(p, "/new"):
		return "/new"
	case p == "/login", p == "/register":
		return p
	case p == "/logout":
		return "/login" // which offers to log out again
	}
	return "/"
}

// localSessions keeps the sessions ended by a logout in this process, when
// no store does (Options.Sessions nil): a logout then ends its session on
// this node only. Safe for concurrent use.
type localSessions struct {
	mu    sync.Mutex
	until map[string]time.Time
}

// RevokeSession revokes id until until, forgetting those past now.
func (l *localSessions) RevokeSession(ctx context.Context, id string, until, now time.Time) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for k, t := range l.until {
		if !t.After(now) {
			delete(l.until, k)
		}
	}
	if t, ok := l.until[id]; !ok || until.After(t) {
		l.until[id] = until
	}
	return nil
}

// SessionRevoked reports whether id was revoked.
func (l *localSessions) SessionRevoked(ctx context.Context, id string) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	_, ok := l.until[id]
	return ok, nil
}
