package ui

import (
	"errors"
	"github.com/dynamo-rss/dynamo/internal/humantime"
	"log/slog"
	"net/http"
	"net/url"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/dynamo-rss/dynamo/api"
	"github.com/dynamo-rss/dynamo/internal/session"
)

// Login: the admin token in a form, for the pages that add feeds. Attempts
// are limited per client address (trusted_proxies respected, as for every
// per-client limit): loginBurst at once, then one every loginEvery; a
// correct token gives its attempt back, so only wrong ones count.
const (
	loginEvery = 30 * time.Second
	loginBurst = 5
)

// loginPage is the data of login.html.
type loginPage struct {
	Title    string
	CSRF     string
	Next     string // where a successful login goes (a path of ours)
	Error    string
	Notice   string
	LoggedIn bool
}

// safeNext is where a successful login goes: next when it is a path of
// this site, else "/". A path of this site is one "/" followed by neither
// "/" nor "\" (browsers read "//host" and "/\host" as another site), with
// no control character, white space or invisible format character
// anywhere (browsers drop a tab or a newline, which turns "/\t/host" into
// "//host"); the same holds of every layer of its percent-encoding, so that
// "/%2F%2Fhost" or "/%09/host" is refused too. Anything else (absolute URLs,
// "javascript:", a relative path, bytes that are not UTF-8 or a broken
// escape) goes to "/". Without a return path, a login goes to /new.
func safeNext(next string) string {
	if next == "" {
		return "/new" // no return path: the page a login is for
	}
	s := next
	for range 4 { // each layer of percent-encoding; deeper is refused
		if !localPath(s) {
			return "/"
		}
		dec, err := url.PathUnescape(s)
		if err != nil {
			return "/"
		}
		if dec == s {
			return next
		}
		s = dec
	}
	return "/"
}

// localPath reports whether s, taken literally, is a path of this site
// (see safeNext).
func localPath(s string) bool {
	if s == "" || s[0] != '/' || (len(s) > 1 && (s[1] == '/' || s[1] == '\\')) || !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if unicode.IsSpace(r) || !unicode.IsGraphic(r) {
			return false
		}
	}
	return true
}

// adminPagesOff answers the session pages while admin is off: absent, as
// the admin routes are, saying how to turn them on.
func (s *Server) adminPagesOff() error {
	return problem(http.StatusNotFound, api.AdminOff)
}

// getLogin shows the login form.
func (s *Server) getLogin(c echo.Context) error {
	if s.sessions.Load() == nil {
		return s.adminPagesOff()
	}
	c.Response().Header().Set(echo.HeaderCacheControl, "no-store")
	page := loginPage{Title: "Log in", Next: safeNext(c.QueryParam("next")), LoggedIn: s.loggedIn(c)}
	if c.QueryParam("expired") != "" && !page.LoggedIn {
		page.Notice = "Your session expired (sessions last 12 hours); log in again."
	}
	page.CSRF = s.csrfToken(c)
	return s.renderPage(c, http.StatusOK, "login.html", page)
}

// postLogin checks the token and starts a session: 303 to the next page;
// a wrong token is a 401 with the form again, too many attempts a 429.
func (s *Server) postLogin(c echo.Context) error {
	codec := s.sessions.Load()
	if codec == nil {
		return s.adminPagesOff()
	}
	page := loginPage{Title: "Log in", Next: safeNext(c.FormValue("next"))}
	ok, wait, giveBack := s.loginLim.Take(c.RealIP(), s.now())
	if !ok {
		page.Error = "Too many login attempts from your address; wait " + humantime.Duration(wait.Round(time.Second)) + " and try again."
		page.CSRF = s.csrfToken(c)
		_ = api.TooManyRequests(c, wait, "") // sets Retry-After; the page is the answer
		return s.renderPage(c, http.StatusTooManyRequests, "login.html", page)
	}
	if !api.TokenMatches(c.FormValue("token"), *s.token.Load()) {
		page.Error = "That is not the admin token of this server (admin.token or admin.token_file in its configuration). Paste it exactly: nothing is trimmed."
		page.CSRF = s.csrfToken(c)
		c.Response().Header().Set(echo.HeaderWWWAuthenticate, `Bearer realm="dynamo admin"`)
		return s.renderPage(c, http.StatusUnauthorized, "login.html", page)
	}
	giveBack()
	value, err := codec.Encode(session.New(s.now()))
	if err != nil {
		return err
	}
	s.setCookie(c, sessionCookie, value, int(sessionTTL/time.Second))
	s.rotateCSRF(c)
	return c.Redirect(http.StatusSeeOther, page.Next)
}

// logout ends the session: on the server first (the store keeps its id
// until the cookie would have expired, so a copy of the cookie stops
// working on every node), then in this browser (the cookie is deleted and
// the CSRF seed replaced). When the store cannot record it, the answer is
// a 503 and the cookie stays, so that logging out again can finish the
// job. POST (the pages' button, with its token) and GET (a plain link)
// both end it: logging out only takes rights away, and a SameSite=Strict
// cookie never rides along another site's link anyway.
func (s *Server) logout(c echo.Context) error {
	c.Response().Header().Set(echo.HeaderCacheControl, "no-store")
	sess, err := s.currentSession(c)
	var unchecked *sessionUnchecked
	switch {
	case errors.As(err, &unchecked):
		return s.sessionUnavailable(c)
	case err == nil:
		ctx := c.Request().Context()
		if err := s.revoked.RevokeSession(ctx, sess.ID, sess.Expires(sessionTTL), s.now()); err != nil {
			s.log.ErrorContext(ctx, "logout not recorded", slog.Any("error", err))
			return s.sessionUnavailable(c)
		}
	}
	s.setCookie(c, sessionCookie, "", -1)
	s.rotateCSRF(c)
	return c.Redirect(http.StatusSeeOther, "/")
}

// logoutFailed is the 503 of a logout the store could not record.
const logoutFailed = "you are not logged out yet: this server could not record the end of your session (its store does not answer), and until it does a copy of your session cookie would still work; log out again in a minute"
