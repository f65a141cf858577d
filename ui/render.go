package ui

// Pages built by a script on /new: "Render with JavaScript" fetches the
// page in the poller's browser (Options.Browser, through Options.Fetch as
// an api.PageRenderer), and Add registers it with fetch: browser.

import "github.com/dynamo-rss/dynamo/api"

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
