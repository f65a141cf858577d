package api

import (
	"github.com/dynamo-rss/dynamo/internal/humantime"
	"github.com/labstack/echo/v4"
)

// Pages are the pages for people (package ui: /, /view, /login, /new,
// /register, the /preview form, and feeds shown to a browser). The api
// mounts them and never imports their package: it declares what it needs
// of them here, and cmd/dynamo hands it an implementation in
// Options.Pages. Without one, the api serves machines only: a browser
// asking for a feed gets the feed, and POST /preview answers JSON.
type Pages interface {
	// Routes registers the pages' routes on s with add, which runs each
	// behind the middleware every request goes through (security headers,
	// access log and metrics, recover, gzip, body limit, deadline) and the
	// route's own mw, outermost first. The pages' handlers return errors as
	// the api's do (a *Problem, or any error), and the api answers them.
	Routes(s *Server, add func(method, path string, h echo.HandlerFunc, mw ...echo.MiddlewareFunc))
	// FeedPage renders the page of a feed that a browser asked for. The
	// api decides when a browser gets it, caches the bytes and answers
	// with its own validators (feedpage.go).
	FeedPage(p *FeedPage) ([]byte, error)
	// PreviewPage answers POST /preview to a browser with the page of the
	// preview p, with status code.
	PreviewPage(c echo.Context, code int, p *PreviewPage) error
}

// PageSecurityPolicy is the Content-Security-Policy of every HTML page. The
// pages work offline and without JavaScript: no scripts at all, styles
// only inline (the layout's <style> and the style attributes gonum's SVG
// charts carry), images from anywhere (the item images of a feed preview
// are the watched site's), forms posting only here, and no framing.
const PageSecurityPolicy = "default-src 'none'; script-src 'none'; style-src 'unsafe-inline'; img-src * data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// FeedPage is a feed as its page shows it: the same feed model, so a
// person sees exactly the reader's items.
type FeedPage struct {
	Title       string
	Description string
	Link        string // the page people read
	View        string // the resource's page for people; "": not a resource's feed
	Updated     humantime.Time
	Links       []Link // subscribe: the resource's items feed (this feed when it is one), or this feed, in each format
	History     []Link // a resource's versions feed, the history of its changes; nil: the feed of all resources
	Hub         string // the WebSub hub; "": none
	Items       []FeedPageItem
}

// FeedPageItem is one item as a reader would show it.
type FeedPageItem struct {
	Title       string
	Link        string
	Date        humantime.Time
	Image       string
	ContentHTML string // content:encoded as the feed carries it, not sanitized for a page; "": none
	Text        string // the description
}

// PreviewPage is what POST /preview found in a page, as its page shows it
// (and GET /preview's empty form, Submitted false).
type PreviewPage struct {
	Title       string
	Page        string // the submitted page, echoed into the form (UTF-8)
	URL         string
	MaxBytes    int64
	Submitted   bool
	Document    string
	Diagnostics []Diagnostic
	Error       string
}
