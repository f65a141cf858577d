package api

import (
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

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

// safeNext is a redirect target after login: a path on this server, never
// another site ("//evil.example", "/\evil.example") nor a scheme.
func safeNext(next string) string {
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.HasPrefix(next, "/\\") || strings.ContainsAny(next, "\r\n") {
		return "/new"
	}
	return next
}

// adminPagesOff answers the session pages while admin is off: absent, as
// the admin routes are, saying how to turn them on.
func (s *Server) adminPagesOff() error {
	return problemf(http.StatusNotFound, "%s", adminOff)
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
		page.Error = "Too many login attempts from your address; wait " + humanDuration(wait.Round(time.Second)) + " and try again."
		page.CSRF = s.csrfToken(c)
		_ = tooManyRequests(c, wait, "") // sets Retry-After; the page is the answer
		return s.renderPage(c, http.StatusTooManyRequests, "login.html", page)
	}
	if !tokenMatches(c.FormValue("token"), *s.token.Load()) {
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

// logout ends the session in this browser: the cookie is deleted and the
// CSRF seed replaced. POST (the pages' button, with its token) and GET (a
// plain link) both end it: logging out only takes rights away, and a
// SameSite=Strict cookie never rides along another site's link anyway.
func (s *Server) logout(c echo.Context) error {
	c.Response().Header().Set(echo.HeaderCacheControl, "no-store")
	s.setCookie(c, sessionCookie, "", -1)
	s.rotateCSRF(c)
	return c.Redirect(http.StatusSeeOther, "/")
}
