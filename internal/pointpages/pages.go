// Package pointpages holds synthetic pages of "Point at the list" for
// tests (ui's with a fake browser, cmd/dynamo's with Chromium): pages where
// the wanted list is not the first thing a machine takes, each with the
// element a person clicks and the items they want, and the reading of the
// links /new draws over a page's picture.
package pointpages

import (
	"fmt"
	"strings"
)

// Page is a synthetic page where the wanted list is not the first
// thing a machine would take: clicking the wanted item must give it.
type Page struct {
	Name  string
	HTML  string
	Click string // the text of the element clicked: in the wanted list's first item
	// Item is a CSS selector of the wanted list's items (for the tests
	// only, which click the middle of the first one too); "": they have no
	// element of their own.
	Item   string
	Titles []string // the wanted items' titles, in order
	Ad     string   // the title of an item that is an ad ("": none)
	// title is the text of the element that is the items' real title, when
	// the list's own guess is not (the title as the second link of a
	// heading); "": the guess is right.
	Title string
}

// Pages are the shapes of "Point at the list" (API.md): a big footer
// list beside a small main list, runs of siblings with no container,
// two rows per item, cards wrapped in links, an ad inside the list, and
// the title as the second link of a heading.
var Pages = []Page{
	{
		Name: "footer",
		Item: "div.notice",
		HTML: page("Town hall", `<main><h1>Notices</h1><div class="notices">
<div class="notice"><h3><a href="/n/1">Tram line 4 closed for works</a></h3><p>Buses replace it until March.</p></div>
<div class="notice"><h3><a href="/n/2">Winter hours of the offices</a></h3><p>The offices close at four.</p></div>
<div class="notice"><h3><a href="/n/3">Consultation on the river park</a></h3><p>Comments until the end of the month.</p></div>
<div class="notice"><h3><a href="/n/4">New recycling calendar</a></h3><p>Collection days change in January.</p></div>
</div></main>`+footer(30)),
		Click:  "Tram line 4 closed for works",
		Titles: []string{"Tram line 4 closed for works", "Winter hours of the offices", "Consultation on the river park", "New recycling calendar"},
	},
	{
		Name: "runs",
		HTML: page("Diary", `<main><h1>Diary</h1>
<h2>Monday 30 November</h2>
<h3><a href="/d/1">The bridge reopens to bicycles</a></h3><p>After two years of works the bridge is open again.</p><p class="posted">Posted by the editor</p>
<h3><a href="/d/2">Choir concert in the old church</a></h3><p>Free entry, donations welcome.</p><p class="posted">Posted by the editor</p>
<h2>Sunday 29 November</h2>
<h3><a href="/d/3">Market moves to the square</a></h3><p>Stalls open at eight.</p><p class="posted">Posted by the editor</p>
<h3><a href="/d/4">Library opens on Sundays</a></h3><p>From ten to one, from December.</p><p class="posted">Posted by the editor</p>
</main>`+footer(30)),
		Click:  "The bridge reopens to bicycles",
		Titles: []string{"The bridge reopens to bicycles", "Choir concert in the old church", "Market moves to the square", "Library opens on Sundays"},
	},
	{
		Name: "tworows",
		Item: "tr.head",
		HTML: page("Board", `<main><h1>Board</h1><table class="board">
<tr class="head"><td><a href="/b/1">Harbour dredging starts in spring</a></td></tr><tr class="sub"><td>12 points, 3 comments</td></tr>
<tr class="head"><td><a href="/b/2">School canteen menus published</a></td></tr><tr class="sub"><td>8 points, 1 comment</td></tr>
<tr class="head"><td><a href="/b/3">Night buses on weekends</a></td></tr><tr class="sub"><td>30 points, 12 comments</td></tr>
<tr class="head"><td><a href="/b/4">Swimming pool closed for repairs</a></td></tr><tr class="sub"><td>5 points, 0 comments</td></tr>
</table></main>`+footer(30)),
		Click:  "Harbour dredging starts in spring",
		Titles: []string{"Harbour dredging starts in spring", "School canteen menus published", "Night buses on weekends", "Swimming pool closed for repairs"},
	},
	{
		Name: "cards",
		Item: "a.card",
		HTML: page("Stories", `<main><h1>Stories</h1><section class="grid">
<a class="card" href="/s/1"><div class="body"><h3>A baker who opens at four</h3><p>Bread before dawn.</p></div></a>
<a class="card" href="/s/2"><div class="body"><h3>The last ferryman of the lake</h3><p>Forty years of crossings.</p></div></a>
<a class="card" href="/s/3"><div class="body"><h3>Children plant a forest</h3><p>Three thousand trees in a day.</p></div></a>
</section></main>`+footer(30)),
		Click:  "The last ferryman of the lake",
		Titles: []string{"A baker who opens at four", "The last ferryman of the lake", "Children plant a forest"},
	},
	{
		Name: "ads",
		Item: "li.story",
		HTML: page("News", `<main><h1>News</h1><ul class="news">
<li class="story"><h3><a href="/a/1">Council approves the budget</a></h3><p>The vote was unanimous.</p></li>
<li class="story"><h3><a href="/a/2">Roadworks on the main street</a></h3><p>Traffic is diverted.</p></li>
<li class="story"><span class="badge">Sponsored</span><h3><a href="https://ads.example.net/x">Buy cheap flights now</a></h3><p>Fly anywhere this winter.</p></li>
<li class="story"><h3><a href="/a/3">Museum gets a new wing</a></h3><p>It opens in June.</p></li>
<li class="story"><h3><a href="/a/4">Fire brigade open day</a></h3><p>Come and meet the crews.</p></li>
</ul></main>`+footer(30)),
		Click:  "Council approves the budget",
		Titles: []string{"Council approves the budget", "Roadworks on the main street", "Museum gets a new wing", "Fire brigade open day"},
		Ad:     "Buy cheap flights now",
	},
	{
		Name: "second-link",
		Item: "article.post",
		HTML: page("Tech", `<main><h1>Tech</h1>
<article class="post"><h2><a href="/c/phones">Phones</a> <a href="/p/1">A phone that lasts a week</a></h2><p>Battery life tested.</p></article>
<article class="post"><h2><a href="/c/laptops">Laptops</a> <a href="/p/2">The quietest laptop we tried</a></h2><p>No fan at all.</p></article>
<article class="post"><h2><a href="/c/audio">Audio</a> <a href="/p/3">Headphones for the train</a></h2><p>Noise cancelling compared.</p></article>
</main>`+footer(30)),
		Click:  "A phone that lasts a week",
		Titles: []string{"A phone that lasts a week", "The quietest laptop we tried", "Headphones for the train"},
		Title:  "A phone that lasts a week",
	},
}

// page is a whole page with title and body.
func page(title, body string) string {
	return `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>` + title + `</title></head><body>` + body + `</body></html>`
}

// footer is the bottom of a page: a box of the n most read stories, with
// long titles and dates, a longer list than the main one, which a
// machine proposes first; then the site's footer.
func footer(n int) string {
	topics := []string{"harbour", "library", "council", "garden", "museum", "bridge", "market", "school"}
	var b strings.Builder
	b.WriteString(`<div class="most-read"><h2>Most read</h2><ul class="popular">`)
	for i := range n {
		fmt.Fprintf(&b, `<li><a href="/2025/%02d/popular-story-%d">The popular story number %d about the %s of the town</a> <span>%d February 2025</span></li>`,
			i%12+1, i, i, topics[i%len(topics)], i%28+1)
	}
	b.WriteString(`</ul></div><footer><p>© The town, <a href="/contact">contact</a></p></footer>`)
	return b.String()
}
