package pointpages

import (
	"html"
	"regexp"
	"strconv"
	"strings"
)

// Region is a link /new draws over an element of a page's picture, in the
// picture's CSS pixels.
type Region struct {
	Href       string
	X, Y, W, H float64
}

var regionRE = regexp.MustCompile(`<a href="([^"]+)"[^>]*><title>[^<]*</title><rect x="([0-9.]+)" y="([0-9.]+)" width="([0-9.]+)" height="([0-9.]+)"/></a>`)

// Regions are the links over the picture on the offer page body.
func Regions(body string) []Region {
	var out []Region
	f := func(s string) float64 { v, _ := strconv.ParseFloat(s, 64); return v }
	for _, m := range regionRE.FindAllStringSubmatch(body, -1) {
		out = append(out, Region{html.UnescapeString(m[1]), f(m[2]), f(m[3]), f(m[4]), f(m[5])})
	}
	return out
}

// SmallestOver is the href of the smallest region of the offer page body
// over the point (x, y), as a person's click there reaches it; "" none.
func SmallestOver(body string, x, y float64) string {
	best, area := "", -1.0
	for _, r := range Regions(body) {
		if x >= r.X && x <= r.X+r.W && y >= r.Y && y <= r.Y+r.H && (area < 0 || r.W*r.H < area) {
			best, area = r.Href, r.W*r.H
		}
	}
	return best
}

// SmallestAround is the href of the smallest region of the offer page
// body that holds the whole box (x, y, w, h), a pixel's tolerance; ""
// none.
func SmallestAround(body string, x, y, w, h float64) string {
	const tol = 1
	best, area := "", -1.0
	for _, r := range Regions(body) {
		if x >= r.X-tol && y >= r.Y-tol && x+w <= r.X+r.W+tol && y+h <= r.Y+r.H+tol && (area < 0 || r.W*r.H < area) {
			best, area = r.Href, r.W*r.H
		}
	}
	return best
}

// Named is the page of that name, or false.
func Named(name string) (Page, bool) {
	for _, p := range Pages {
		if p.Name == name {
			return p, true
		}
	}
	return Page{}, false
}

var titleRE = regexp.MustCompile(`<h3>(?:<a [^>]*>)?([^<]*)`)

// Titles are the titles of the first items the offer page body shows in
// its section id ("chosen", "p1"…), as a reader shows them; nil when
// there is no such section.
func Titles(body, id string) []string {
	i := strings.Index(body, `id="`+id+`"`)
	if i < 0 {
		return nil
	}
	sec := body[i:]
	if j := strings.Index(sec, "</section>"); j >= 0 {
		sec = sec[:j]
	}
	var out []string
	for _, m := range titleRE.FindAllStringSubmatch(sec, -1) {
		out = append(out, html.UnescapeString(strings.TrimSpace(m[1])))
	}
	return out
}
