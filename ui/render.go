package ui

// Pages built by a script on /new: "Render with JavaScript" fetches the
// page in the poller's browser (Options.Browser, through Options.Fetch as
// an api.PageRenderer), and Add registers it with fetch: browser.

import (
	"context"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/dynamo-rss/dynamo/api"
)

// renderer is the fetcher that renders pages, when a browser is
// configured and the fetcher can render; else nil.
func (s *Server) renderer() api.PageRenderer {
	if !s.opts.Browser {
		return nil
	}
	r, _ := s.opts.Fetch.(api.PageRenderer)
	return r
}

// canRender reports whether /new can render pages with JavaScript.
func (s *Server) canRender() bool { return s.renderer() != nil }

// renderChoice reads the URL form's render and wait_for fields: render only
// when a browser can render, wait_for only with render.
func (s *Server) renderChoice(c echo.Context) (render bool, waitFor string) {
	if !s.canRender() || c.FormValue(fieldRender) == "" {
		return false, ""
	}
	return true, strings.TrimSpace(c.FormValue(fieldWaitFor))
}

// fetchOrRender fetches raw once, rendered in the browser when render
// (renderChoice said a browser can), else with a GET.
func (s *Server) fetchOrRender(ctx context.Context, raw string, render bool, waitFor string) (api.Page, error) {
	if r := s.renderer(); render && r != nil {
		return r.RenderPage(ctx, raw, waitFor)
	}
	return s.opts.Fetch.FetchPage(ctx, raw)
}
