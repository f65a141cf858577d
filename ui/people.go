package ui

import (
	"html/template"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/microcosm-cc/bluemonday"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/dynamo-rss/dynamo/api"
)

// pageHeaders sets the headers every HTML page carries, besides those of
// every answer (secureHeaders): the pages' own policy replaces the sandbox.
func pageHeaders(c echo.Context) {
	h := c.Response().Header()
	h.Set("Content-Security-Policy", api.PageSecurityPolicy)
	h.Set("Referrer-Policy", "no-referrer")
}

// people holds what the pages for people share across requests.
type people struct {
	sparks sparkCache
	// html sanitizes item HTML shown on our own origin (the feed preview)
	// once more, whatever the store holds: the extractor sanitized it when
	// it was extracted, but a page of ours is not the place to trust that.
	html *bluemonday.Policy
}

func newPeople() *people {
	return &people{
		html:   bluemonday.UGCPolicy().AddTargetBlankToFullyQualifiedLinks(false),
		sparks: sparkCache{m: map[string]sparkEntry{}},
	}
}

// maxSparks bounds the sparklines kept: a few pages of / for any number of
// resources (a full cache is emptied, then refills with what is looked at).
const maxSparks = 2000

// sparkCache keeps each resource's sparkline until it polls again: drawing
// one costs about a millisecond, and / shows fifty.
type sparkCache struct {
	mu sync.Mutex
	m  map[string]sparkEntry
}

type sparkEntry struct {
	n    int       // polls in the history it was drawn from
	last time.Time // the last of them
	svg  template.HTML
}

// sparkline returns the sparkline of resource id's history h.
func (p *people) sparkline(id string, h []api.PollRecord) (template.HTML, error) {
	key := sparkEntry{n: len(h)}
	if len(h) > 0 {
		key.last = h[len(h)-1].Time
	}
	c := &p.sparks
	c.mu.Lock()
	e, ok := c.m[id]
	c.mu.Unlock()
	if ok && e.n == key.n && e.last.Equal(key.last) {
		return e.svg, nil
	}
	svg, err := sparkline(h)
	if err != nil {
		return "", err
	}
	key.svg = svg
	c.mu.Lock()
	if len(c.m) >= maxSparks {
		clear(c.m)
	}
	c.m[id] = key
	c.mu.Unlock()
	return svg, nil
}

// safeHTML sanitizes item HTML for a page of ours, as a fragment that
// stays in its box: bluemonday filters tags one by one and keeps stray end
// tags (an item's "</div></li></ol>" would close our list and put the rest
// of the item, a heading, a notice "this feed moved", among the page's own
// parts), so the sanitized HTML is parsed as the children of a <div>, as the
// browser will parse it, and written back balanced. Parsing HTML cannot
// fail on a strings.Reader; if it did, the item shows as text.
func (p *people) safeHTML(s string) template.HTML {
	clean := p.html.Sanitize(s)
	nodes, err := html.ParseFragment(strings.NewReader(clean), &html.Node{Type: html.ElementNode, Data: "div", DataAtom: atom.Div})
	if err != nil {
		return template.HTML(template.HTMLEscapeString(clean)) //nolint:gosec // escaped
	}
	var b strings.Builder
	for _, n := range nodes {
		if err := html.Render(&b, n); err != nil {
			return template.HTML(template.HTMLEscapeString(clean)) //nolint:gosec // escaped
		}
	}
	return template.HTML(b.String()) //nolint:gosec // sanitized by bluemonday's UGC policy just now, and balanced
}

// pageNumber reads ?page= (1 when absent or not a positive integer: a bad
// page number on a page for people shows the first page, it is no error).
func pageNumber(c echo.Context) int {
	n, err := strconv.Atoi(c.QueryParam("page"))
	if err != nil || n < 1 {
		return 1
	}
	return n
}

// pager is the navigation between the pages of a long list.
type pager struct {
	Page, Pages int
	Prev, Next  string // hrefs; "": none
	First, Last string
}

// newPager returns the pager of page (1-based) of total entries, per page,
// with hrefs built by href(n).
func newPager(page, total, per int, href func(n int) string) pager {
	pages := max(1, (total+per-1)/per)
	page = min(max(page, 1), pages)
	p := pager{Page: page, Pages: pages}
	if page > 1 {
		p.Prev, p.First = href(page-1), href(1)
	}
	if page < pages {
		p.Next, p.Last = href(page+1), href(pages)
	}
	return p
}
