package ui

// GET/POST /register: the webmasters' form for POST /resources (with
// registration: open). It registers through the same path (api.Server.SelfRegister)
// and shows the feed, or the lint diagnostics that say why the page was
// refused.

import (
	"errors"
	"fmt"
	"github.com/dynamo-rss/dynamo/internal/humantime"
	"net/http"
	"net/url"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/dynamo-rss/dynamo/api"
	"github.com/dynamo-rss/dynamo/config"
)

// registerPage is the data of register.html.
type registerPage struct {
	Title       string
	CSRF        string
	URL         string
	ID          string
	Errors      fieldErrors
	Refused     bool     // the page is not annotated
	Diagnostics []string // LINE:COL: severity: message, as dynamo lint prints them
	Feed        string   // the feed, once registered
	FeedID      string
	View        string
	Links       []api.Link
	History     []api.Link // the versions feed, the history of changes
}

// registrationClosed is the 404 of /register while registration is closed.
func registrationClosed() error {
	return problem(http.StatusNotFound, "self-registration is off on this server; its operator can turn it on with registration: open")
}

// getRegister shows the form, or, with ?feed=, the feed just registered.
func (s *Server) getRegister(c echo.Context) error {
	if s.api.RegistrationOpen() != nil {
		return registrationClosed()
	}
	c.Response().Header().Set(echo.HeaderCacheControl, "no-store") // the form's token is this browser's
	page := registerPage{Title: "Register your page", CSRF: s.csrfToken(c), URL: config.RedactURL(c.QueryParam(fieldURL)), Errors: fieldErrors{}}
	if id := c.QueryParam("feed"); id != "" {
		if d, ok := s.opts.Registry.Definition(id); ok {
			// The feed for readers is the items feed, as every subscribe link.
			page.FeedID, page.Feed, page.View, page.URL = id, s.api.FeedHref(id, "", false), api.ViewHref(id), config.RedactURL(d.Resource.URL)
			page.Links, page.History = s.api.FeedLinks(id), s.api.HistoryLinks(id)
		}
	}
	return s.renderPage(c, http.StatusOK, "register.html", page)
}

// postRegister registers a webmaster's annotated page: 303 to the page that
// shows its feed, or the form again with why it was refused.
func (s *Server) postRegister(c echo.Context) error {
	if s.api.RegistrationOpen() != nil {
		return registrationClosed()
	}
	in := api.SelfRegistration{URL: c.FormValue(fieldURL), ID: c.FormValue(fieldID)}
	out, err := s.api.SelfRegister(c.Request().Context(), c.RealIP(), in)
	if err == nil {
		return c.Redirect(http.StatusSeeOther, "/register?"+url.Values{"feed": {out.ID()}}.Encode())
	}
	// The URL is shown back without credentials, which registration refuses.
	page := registerPage{Title: "Register your page", URL: config.RedactURL(in.URL), ID: in.ID, Errors: fieldErrors{}}
	var (
		limited *api.RateLimited
		refused *api.NotAnnotated
		p       *api.Problem
	)
	code := http.StatusUnprocessableEntity
	switch {
	case errors.As(err, &limited):
		code = http.StatusTooManyRequests
		_ = api.TooManyRequests(c, limited.Wait, "") // sets Retry-After; the page is the answer
		page.Errors.add("", "Too many registrations from your address; try again in "+humantime.Duration(limited.Wait.Round(time.Second))+".")
	case errors.As(err, &refused):
		page.Refused = true
		page.Errors.add(fieldURL, "The page is not annotated, so it was not registered: its annotations are your consent to be polled. The diagnostics below say what is missing; see the annotation guide, and check the page with dynamo lint.")
		for _, d := range refused.Diagnostics {
			page.Diagnostics = append(page.Diagnostics, diagnosticLine(d))
		}
	case errors.As(err, &p) && p.Status < http.StatusInternalServerError:
		code = p.Status
		page.Errors.add(p.Param, p.Detail)
	default:
		return err // 5xx: logged by errors.go, a problem for the client
	}
	page.CSRF = s.csrfToken(c)
	return s.renderPage(c, code, "register.html", page)
}

// diagnosticLine is a diagnostic as dynamo lint prints it, without the file.
func diagnosticLine(d api.Diagnostic) string {
	return fmt.Sprintf("%d:%d: %s: %s", d.Line, d.Col, d.Severity, d.Message)
}
