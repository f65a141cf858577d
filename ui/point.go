package ui

// Point at the list (API.md): /new shows the page itself, and a person
// points at the list instead of writing selectors. With a browser the page
// is fetched as a picture (api.PagePicturer: one visit, the same guard):
// the screenshot is shown in an SVG that outlines every proposal's items
// in its colour and number, with an <a> region over every element that
// could start an item. Without one, an outline of the page (its landmarks
// and headings, and the lists under each) offers the same choices. Every
// choice is a GET link, so no script is needed and none is sent:
//
//	/new?fetch=ID&like=N          the list of items like element N
//	/new?fetch=ID&block=B         a chosen list (B: its select block, YAML)
//	/new?fetch=ID&block=B&pick=N  one of its items picked: what it is
//	...&pick=N&do=exclude|title|date|link   the block rewritten (303 to &block=B')
//
// Everything is computed on the bytes fetched once (fetched.go keeps the
// picture with them), with package suggest's element-to-selector code
// (suggest_adapter.go); elements are numbered as suggest numbers them.

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/goccy/go-yaml"
	"github.com/labstack/echo/v4"

	"github.com/dynamo-rss/dynamo/api"
	"github.com/dynamo-rss/dynamo/config"
	"github.com/dynamo-rss/dynamo/extractor"
)

// Query parameters of pointing.
const (
	paramLike  = "like"  // an element: the list of items like it
	paramBlock = "block" // a chosen list's select block (YAML)
	paramPick  = "pick"  // an element inside one of the chosen list's items
	paramDo    = "do"    // what the picked element is: exclude, title, date, link
)

// Bounds of the picture's links and of a block carried in a URL.
const (
	maxRegions    = 4000 // links over the screenshot, the smallest kept
	minRegionSide = 4.0  // CSS pixels: smaller elements are no place to click
	maxBlockParam = 4096 // bytes of a block in a URL
)

// outlineColors are the proposals' colours on the picture, in order; the
// chosen list has chosenColor.
var outlineColors = []string{"#d62728", "#1f77b4", "#2ca02c", "#9467bd"}

const chosenColor = "#ff7f0e"

// pagePicture is a fetched page as the browser drew it, kept with its
// bytes: the screenshot, and each element's box by its number in the kept
// page (suggest's numbering); a zero box: not drawn, or not found.
type pagePicture struct {
	Image         []byte
	Type          string
	Width, Height int
	Boxes         []api.Box
}

// size is what the picture weighs in the cache of fetched pages.
func (p *pagePicture) size() int {
	if p == nil {
		return 0
	}
	return len(p.Image) + 32*len(p.Boxes)
}

// box is element n's box, and whether it is drawn on the screenshot.
func (p *pagePicture) box(n int) (api.Box, bool) {
	if p == nil || n < 0 || n >= len(p.Boxes) {
		return api.Box{}, false
	}
	b := p.Boxes[n]
	if b.W <= 0 || b.H <= 0 || b.Y >= float64(p.Height) || b.X >= float64(p.Width) || b.X+b.W <= 0 || b.Y+b.H <= 0 {
		return api.Box{}, false
	}
	return b, true
}

// picturer is the fetcher that draws pages, when a browser is configured
// and the fetcher can; else nil.
func (s *Server) picturer() api.PagePicturer {
	if !s.opts.Browser {
		return nil
	}
	p, _ := s.opts.Fetch.(api.PagePicturer)
	return p
}

// getPicture answers the screenshot of a page this session fetched.
func (s *Server) getPicture(c echo.Context) error {
	p, ok := s.fetchedPage(c, c.Param(fieldFetch))
	if !ok || p.Picture == nil {
		return problem(http.StatusNotFound, "no picture of that page is kept for this session (pages are kept "+fetchedTTL.String()+")")
	}
	h := c.Response().Header()
	h.Set("Cache-Control", "private, max-age=600")
	h.Set("X-Content-Type-Options", "nosniff")
	return c.Blob(http.StatusOK, p.Picture.Type, p.Picture.Image)
}

// pointView is what the offer page shows of pointing: the chosen list, the
// item picked in it, the picture or the outline.
type pointView struct {
	Chosen  *candidate   // the list chosen by pointing; nil: none yet
	Pick    *pickView    // an item of the chosen list picked
	Error   string       // why the last choice gave nothing, for people
	Picture *pictureView // nil: no browser drew the page
	Outline []outlineSectionView
}

// pickView offers what a picked element of the chosen list can be.
type pickView struct {
	What                             string // the element, for people
	Exclude, Title, Date, Link, Like string // links
}

// pictureView is the SVG over the screenshot.
type pictureView struct {
	Href          string
	Width, Height int
	Outlines      []outlineView
	Regions       []regionView
}

// outlineView outlines the items of one list.
type outlineView struct {
	Label  string // the proposal's number; "✓" the chosen list
	Color  string
	Chosen bool
	Rects  []rectView
}

// rectView is a rectangle in the screenshot's CSS pixels, formatted.
type rectView struct{ X, Y, W, H string }

// regionView is a link over an element of the screenshot.
type regionView struct {
	Href  string
	Title string
	rectView
}

// outlineSectionView is a landmark or heading of the page with the lists
// under it.
type outlineSectionView struct {
	Heading string
	Level   int
	Lists   []outlineListView
}

// outlineListView is a list of the outline, with its link.
type outlineListView struct {
	Count string
	Where string
	First []string
	Href  string
}

func rectOf(b api.Box, maxH int) rectView {
	h := min(b.H, float64(maxH)-b.Y)
	return rectView{X: num(b.X), Y: num(b.Y), W: num(b.W), H: num(h)}
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', 1, 64) }

// offerHref is the link to page p's offer with query q.
func offerHref(p *fetchedPage, q url.Values, anchor string) string {
	q.Set(fieldFetch, p.ID)
	h := "/new?" + q.Encode()
	if anchor != "" {
		h += "#" + anchor
	}
	return h
}

// pointAction rewrites the chosen block by what the picked element is
// (?do=) and redirects to the block rewritten; false when the request
// asks no such thing, or when the rewrite gives nothing (the offer then
// tells why, with the block as it was).
func (s *Server) pointAction(c echo.Context, p *fetchedPage) (bool, error) {
	if c.QueryParam(paramDo) == "" {
		return false, nil
	}
	spec, err := blockParam(c.QueryParam(paramBlock))
	if err != nil {
		return false, nil
	}
	block, err := rewrite(p, spec, c.QueryParam(paramDo), c.QueryParam(paramPick))
	if err != nil {
		return false, nil
	}
	return true, c.Redirect(http.StatusSeeOther, offerHref(p, url.Values{paramBlock: {block}}, "chosen"))
}

// rewrite is spec rewritten by what element pick is (do: exclude, title,
// date or link), as YAML.
func rewrite(p *fetchedPage, spec extractor.SelectSpec, do, pick string) (string, error) {
	n, err := strconv.Atoi(pick)
	if err != nil {
		return "", errors.New("no item was picked")
	}
	switch do {
	case "exclude":
		return excludeBlock(p.Page, spec, n)
	case "title", "date", "link":
		return fieldBlock(p.Page, spec, do, n)
	}
	return "", fmt.Errorf("%q is not something an element can be (exclude, title, date or link)", do)
}

// point builds what the offer page shows of pointing, for the request's
// choice (?like=, ?block=, ?pick=), with the proposals' candidates to
// outline.
func (s *Server) point(c echo.Context, p *fetchedPage, page *offerPage) {
	v := &pointView{}
	page.Point = v
	q := c.QueryParams()
	var chosen *extractor.SelectSpec
	switch {
	case q.Get(paramLike) != "":
		n, err := strconv.Atoi(q.Get(paramLike))
		if err != nil {
			v.Error = "That is not an element of the page."
			break
		}
		spec, block, where, err := likeBlock(p.Page, n)
		if err != nil {
			v.Error = sentence(err)
			break
		}
		chosen = &spec
		v.Chosen = s.chosenCandidate(p, page, block)
		v.Chosen.Where = where
	case q.Get(paramBlock) != "":
		spec, err := blockParam(q.Get(paramBlock))
		if err != nil {
			v.Error = sentence(err)
			break
		}
		chosen = &spec
		v.Chosen = s.chosenCandidate(p, page, q.Get(paramBlock))
		if do := q.Get(paramDo); do != "" {
			if _, err := rewrite(p, spec, do, q.Get(paramPick)); err != nil {
				v.Error = sentence(err) // else pointAction redirected
			}
		} else if n, err := strconv.Atoi(q.Get(paramPick)); err == nil {
			v.Pick = pickLinks(p, q.Get(paramBlock), n)
		}
	}
	an := p.analysis()
	if an.err != nil && v.Error == "" {
		v.Error = "The page's outline could not be read: " + an.err.Error()
	}
	var chosenParts []int
	if chosen != nil && v.Chosen != nil {
		chosenParts = p.partsOf(v.Chosen.Block, *chosen)
	}
	if p.Picture != nil {
		v.Picture = s.pictureView(p, page, an.starts, chosenParts)
	}
	for _, sec := range an.outline {
		sv := outlineSectionView{Heading: sec.Heading, Level: sec.Level}
		for _, l := range sec.Lists {
			sv.Lists = append(sv.Lists, outlineListView{
				Count: countNoun(l.Count, "item", "items"), Where: l.Where, First: l.First,
				Href: offerHref(p, url.Values{paramLike: {strconv.Itoa(l.Element)}}, "chosen"),
			})
		}
		v.Outline = append(v.Outline, sv)
	}
}

// chosenCandidate is the chosen list as a candidate: its first items and
// its add form, as a proposal's.
func (s *Server) chosenCandidate(p *fetchedPage, page *offerPage, block string) *candidate {
	cd := s.tryBlock(p, block, blockRules{}, s.now())
	cd.Anchor, cd.Label = "chosen", "Items like this"
	cd.Add = addForm{Fetch: p.ID, URL: p.Requested, Select: block, ID: s.proposeID(p.Requested), Errors: fieldErrors{}, Render: p.Render, WaitFor: p.WaitFor}
	s.checkIDFree(&cd.Add)
	return &cd
}

// pickLinks are the choices about element n of the chosen list's block.
func pickLinks(p *fetchedPage, block string, n int) *pickView {
	link := func(do string) string {
		return offerHref(p, url.Values{paramBlock: {block}, paramPick: {strconv.Itoa(n)}, paramDo: {do}}, "chosen")
	}
	return &pickView{
		What:    elementText(p.Page, n),
		Exclude: link("exclude"), Title: link("title"), Date: link("date"), Link: link("link"),
		Like: offerHref(p, url.Values{paramLike: {strconv.Itoa(n)}}, "chosen"),
	}
}

// pictureView draws page p's picture: the proposals' items outlined
// (numbered), the chosen list's (chosenParts: which of its items each
// element is part of; nil: none chosen), and a link over every element
// that could start an item, the smallest on top. On an element of an item
// of the chosen list, the link picks it; elsewhere it asks for the items
// like it.
func (s *Server) pictureView(p *fetchedPage, page *offerPage, starts, chosenParts []int) *pictureView {
	pic := p.Picture
	v := &pictureView{Href: "/new/picture/" + url.PathEscape(p.ID), Width: pic.Width, Height: pic.Height}
	for i, cd := range page.Proposals {
		spec, err := blockParam(cd.Block)
		if err != nil {
			continue
		}
		v.Outlines = append(v.Outlines, outlineView{Label: strconv.Itoa(i + 1), Color: outlineColors[i%len(outlineColors)],
			Rects: itemRects(pic, p.partsOf(cd.Block, spec))})
	}
	block := ""
	if chosenParts != nil {
		v.Outlines = append(v.Outlines, outlineView{Label: "✓", Color: chosenColor, Chosen: true, Rects: itemRects(pic, chosenParts)})
		block = page.Point.Chosen.Block
	}
	type reg struct {
		n    int
		b    api.Box
		area float64
	}
	var regs []reg
	for _, n := range starts {
		if b, ok := pic.box(n); ok && b.W >= minRegionSide && b.H >= minRegionSide {
			b.H = min(b.H, float64(pic.Height)-b.Y)
			regs = append(regs, reg{n, b, b.W * b.H})
		}
	}
	// The smallest are drawn last, on top, so that a click reaches the
	// most precise element under it; over the cap, the largest go.
	slices.SortStableFunc(regs, func(x, y reg) int { return cmp.Compare(y.area, x.area) })
	if len(regs) > maxRegions {
		regs = regs[len(regs)-maxRegions:]
	}
	for _, r := range regs {
		rv := regionView{rectView: rectOf(r.b, pic.Height), Title: "items like this",
			Href: offerHref(p, url.Values{paramLike: {strconv.Itoa(r.n)}}, "chosen")}
		if block != "" && r.n < len(chosenParts) && chosenParts[r.n] >= 0 {
			rv.Title = "this item: not this one, or its title, date or link"
			rv.Href = offerHref(p, url.Values{paramBlock: {block}, paramPick: {strconv.Itoa(r.n)}}, "pick")
		}
		v.Regions = append(v.Regions, rv)
	}
	return v
}

// itemRects are the outlines of a list's items on the picture: each the
// box around the drawn elements that are part of it (parts: which item
// each element is part of), so that an item of a heading and its
// paragraphs, or of two table rows, is outlined whole.
func itemRects(pic *pagePicture, parts []int) []rectView {
	var boxes []api.Box
	for n, i := range parts {
		b, ok := pic.box(n)
		if i < 0 || !ok {
			continue
		}
		for len(boxes) <= i {
			boxes = append(boxes, api.Box{})
		}
		u := &boxes[i]
		if u.W == 0 {
			*u = b
			continue
		}
		x0, y0 := min(u.X, b.X), min(u.Y, b.Y)
		x1, y1 := max(u.X+u.W, b.X+b.W), max(u.Y+u.H, b.Y+b.H)
		*u = api.Box{X: x0, Y: y0, W: x1 - x0, H: y1 - y0}
	}
	var out []rectView
	for _, b := range boxes {
		if b.W > 0 {
			out = append(out, rectOf(b, pic.Height))
		}
	}
	return out
}

// blockParam reads a select block carried in a URL (YAML, as the forms'
// block), with config's checks.
func blockParam(block string) (extractor.SelectSpec, error) {
	var spec extractor.SelectSpec
	if len(block) > maxBlockParam {
		return spec, fmt.Errorf("the block is longer than %d bytes; edit it in the form below instead", maxBlockParam)
	}
	if _, err := config.ParseSelect([]byte(block)); err != nil {
		return spec, fmt.Errorf("the block is not valid: %w", err)
	}
	if err := yaml.Unmarshal([]byte(block), &spec); err != nil {
		return spec, fmt.Errorf("the block is not valid: %w", err)
	}
	if spec.From != "" {
		return spec, errors.New("a block of schema.org items has no elements to point at")
	}
	return spec, nil
}

// sentence is err for people: its first letter upper-cased, ending with a
// full stop.
func sentence(err error) string {
	m := err.Error()
	r, size := utf8.DecodeRuneInString(m)
	m = string(unicode.ToUpper(r)) + m[size:]
	if !strings.HasSuffix(m, ".") {
		m += "."
	}
	return m
}
