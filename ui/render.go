package ui

// Pages built by a script on /new: "Render with JavaScript" fetches the
// page in the poller's browser (Options.Browser, through Options.Fetch as
// an api.PageRenderer), and Add registers it with fetch: browser.

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/labstack/echo/v4"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/dynamo-rss/dynamo/api"
	"github.com/dynamo-rss/dynamo/internal/redact"
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

// fetchOrRender fetches raw once: rendered in the browser when render
// (renderChoice said a browser can), else with a GET. With a browser that
// draws pages (picturer), that one visit is a picture (point.go): the page's
// bytes as a GET or a render gives them, and its screenshot and element
// boxes; a picture that fails is no failure of the fetch, which is then
// made without it.
func (s *Server) fetchOrRender(ctx context.Context, raw string, render bool, waitFor string) (api.Page, *pagePicture, error) {
	if pr := s.picturer(); pr != nil {
		page, pic, err := pr.PicturePage(ctx, raw, waitFor, render)
		if err == nil {
			return page, newPagePicture(page, pic), nil
		}
		if ctx.Err() != nil {
			return api.Page{}, nil, err
		}
		s.log.LogAttrs(ctx, slog.LevelWarn, "picture of a page for /new failed; fetching it without one",
			slog.String("url", redact.URL(raw)), slog.String("error", redact.Text(err.Error())))
	}
	if r := s.renderer(); render && r != nil {
		page, err := r.RenderPage(ctx, raw, waitFor)
		return page, nil, err
	}
	page, err := s.opts.Fetch.FetchPage(ctx, raw)
	return page, nil, err
}

// Signs of a page built by a script (scriptBuilt).
const (
	scriptBuiltText    = 200 // fewer characters of text than this
	scriptBuiltScripts = 5   // more scripts than this, and no list found
)

// scriptRoots are the ids of the elements that frameworks fill (React's
// root, Vue's app, Next's and Nuxt's).
var scriptRoots = map[string]bool{"root": true, "app": true, "__next": true, "__nuxt": true}

// scriptBuilt says why a page fetched with a GET looks built by a script
// ("" when it does not): little text, an empty root element, a <noscript>
// asking for JavaScript, or many scripts and no list (proposals: the lists
// suggest found on it).
func scriptBuilt(body []byte, proposals int) string {
	doc, err := html.Parse(bytes.NewReader(body))
	if err != nil {
		return ""
	}
	var text strings.Builder
	var signs []string
	scripts := 0
	var walk func(n *html.Node, hidden bool)
	walk = func(n *html.Node, hidden bool) {
		switch {
		case n.Type == html.TextNode && !hidden:
			text.WriteString(" " + n.Data)
		case n.Type == html.ElementNode:
			switch n.DataAtom {
			case atom.Script:
				scripts++
				hidden = true
			case atom.Style, atom.Template, atom.Head:
				hidden = true
			case atom.Noscript:
				hidden = true
				var inner strings.Builder
				for c := n.FirstChild; c != nil; c = c.NextSibling {
					inner.WriteString(c.Data)
				}
				if strings.Contains(strings.ToLower(inner.String()), "javascript") {
					signs = append(signs, "a <noscript> asks for JavaScript")
				}
			}
			for _, a := range n.Attr {
				if a.Key == "id" && scriptRoots[a.Val] && emptyElement(n) {
					signs = append(signs, fmt.Sprintf("its <%s id=%q> is empty", n.Data, a.Val))
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, hidden)
		}
	}
	walk(doc, false)
	if n := len([]rune(strings.Join(strings.Fields(text.String()), " "))); n < scriptBuiltText {
		signs = append(signs, fmt.Sprintf("it has little text (%s)", countNoun(n, "character", "characters")))
	}
	if scripts > scriptBuiltScripts && proposals == 0 {
		signs = append(signs, fmt.Sprintf("it has %d scripts and no list", scripts))
	}
	return strings.Join(signs, "; ")
}

// emptyElement reports whether n has no element and no text but white
// space inside.
func emptyElement(n *html.Node) bool {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode || (c.Type == html.TextNode && strings.TrimSpace(c.Data) != "") {
			return false
		}
	}
	return true
}

// scriptHint is what the offer of page p says of a page built by a
// script: why it looks so ("" = it does not, or it was rendered already).
func (s *Server) scriptHint(p *fetchedPage, proposals int) string {
	if p.Render || (p.ContentType != "" && !strings.Contains(strings.ToLower(p.ContentType), "html")) {
		return ""
	}
	return scriptBuilt(p.Body, proposals)
}
