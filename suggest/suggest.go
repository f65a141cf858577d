package suggest

import (
	"bytes"
	"cmp"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"unicode"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/dynamo-rss/dynamo/extractor"
	"github.com/dynamo-rss/dynamo/schema"
)

// Suggestions is what [Page] found on a page: the feeds it links to
// itself, and the ways dynamo can read it, best first. It is plain data,
// ready for encoding/json (docs/selectors.md documents the shape).
type Suggestions struct {
	// Feeds are the page's own feeds (<link rel="alternate"> of a feed
	// type), in page order: subscribe to them directly.
	Feeds []Feed `json:"feeds"`
	// Proposals are at most [MaxProposals] ways to read the page, the
	// best first: its annotations, its schema.org items, or a select block
	// found in its repeated structures.
	Proposals []Proposal `json:"proposals"`
}

// Feed is a feed a page links to.
type Feed struct {
	URL   string `json:"url"`             // absolute
	Type  string `json:"type"`            // e.g. application/rss+xml
	Title string `json:"title,omitempty"` // its title attribute
}

// Proposal kinds.
const (
	KindAnnotations = "annotations" // the page is annotated: no select block needed
	KindSchemaOrg   = "schema.org"  // select {from: schema.org}
	KindSelectors   = "selectors"   // a select block for a repeated structure
)

// Proposal is one way to read a page, with the items it yields (extracted
// exactly as the poller would).
type Proposal struct {
	Kind string `json:"kind"` // KindAnnotations, KindSchemaOrg or KindSelectors
	// Select is the block to paste under a resource; nil for annotations.
	Select *extractor.SelectSpec `json:"select,omitempty"`
	// Reason says in one line why this proposal is where it is: the
	// items it yields (Count), where they sit (Where), what they look
	// like.
	Reason string `json:"reason"`
	// Where says where the list sits on the page: "under “Latest
	// news”" (the nearest heading above it), "in the sidebar", "in the
	// footer", "in the navigation", "in the header", "in the main
	// content"; for schema.org items "in the page's schema.org data";
	// "" for annotations, or when nothing names the place.
	Where string  `json:"where,omitempty"`
	Score float64 `json:"score"` // higher is better; comparable within one page
	// Count is how many items the proposal yields, extracted as the
	// poller would: the number its reason states and every reader shows.
	Count int `json:"count"`
	// Items are the first of them (at most [MaxItems]).
	Items []Item `json:"items"`

	links  map[string]bool // of all the items
	titles int             // distinct non-empty titles of all the items
}

// Item is an item as a reader would show it.
type Item struct {
	Title       string `json:"title,omitempty"`
	Link        string `json:"link"`
	Date        string `json:"date,omitempty"` // as the page writes it
	Description string `json:"description,omitempty"`
}

// Limits of a [Suggestions].
const (
	MaxProposals = 4 // the best and three alternatives
	MaxItems     = 5
)

// positionOnly weighs the score of a list whose item selector is a
// chain of positions.
const positionOnly = 0.6

// recentHeading weighs the score of a list under a heading that calls
// it the newest (see recent).
const recentHeading = 1.3

// recentWords are the words of a heading over a page's newest items, in
// the languages of the pages dynamo reads.
var recentWords = []string{"latest", "recent", "newest", "new", "news", "neueste", "neuesten", "aktuell", "aktuelles",
	"neu", "nachrichten", "dernières", "derniers", "récents", "actualités", "últimas", "últimos", "recientes",
	"noticias", "ultime", "ultimi", "notizie", "laatste", "nieuws", "najnowsze", "последние", "новости"}

// recentCJK are such words in scripts without spaces.
var recentCJK = []string{"最新", "新着", "即时", "最近", "新闻", "ニュース", "뉴스", "최신"}

// recent reports whether a proposal's place is under a heading with a
// word of recentWords.
func recent(where string) bool {
	h, ok := strings.CutPrefix(where, "under “")
	if !ok {
		return false
	}
	h = strings.ToLower(h)
	for _, w := range strings.FieldsFunc(h, func(r rune) bool { return !unicode.IsLetter(r) }) {
		if slices.Contains(recentWords, w) {
			return true
		}
	}
	for _, w := range recentCJK {
		if strings.Contains(h, w) {
			return true
		}
	}
	return false
}

// maxTries bounds the extractions Page runs to check the blocks it
// writes (each parses the page again).
const maxTries = 12

// Page tells how to get a feed of a page (SELECTORS.md): the page's
// own feeds, then, best first, its annotations, its schema.org items and
// the select blocks of its repeated structures (see groups.go for
// how those are found and ranked). The page is decoded as for extraction
// (opts.ContentType, BOM, <meta>, detection); opts.URL resolves links;
// opts.Dates reads dates. Every proposal's items come from [extractor.Extract] with
// its block, as the poller would get them; a proposal that yields nothing
// is left out. A page with none of these gives empty lists, and no error.
// Page is pure and safe for concurrent use.
func Page(page []byte, opts extractor.Options) (*Suggestions, error) {
	opts.Select = nil
	doc, pageURL, err := extractor.ParsePage(page, opts)
	if err != nil {
		return nil, err
	}
	out := &Suggestions{Feeds: pageFeeds(doc, pageURL), Proposals: []Proposal{}}
	if out.Feeds == nil {
		out.Feeds = []Feed{}
	}

	if p, ok := tryProposal(page, opts, nil); ok { // the annotations
		p.Kind = KindAnnotations
		p.Reason = fmt.Sprintf("the page is annotated (%d items): dynamo reads it as it is, no select block needed", p.Count)
		p.Score = 1000
		out.Proposals = append(out.Proposals, p)
	}
	var schemaP *Proposal
	if p, ok := tryProposal(page, opts, &extractor.SelectSpec{From: extractor.SchemaOrg}); ok {
		p.Kind = KindSchemaOrg
		p.Where = "in the page's schema.org data"
		p.Reason = fmt.Sprintf("the page publishes %d items as schema.org data (JSON-LD or microdata)", p.Count)
		schemaP = &p
	}

	sg := newSuggester(doc, pageURL, opts)
	sg.script = pageScript(doc)
	var structs []Proposal
	var kept []*group
	tries := 0
	for _, g := range sg.ranked() {
		if len(structs) >= MaxProposals || tries == maxTries {
			break
		}
		if partOf(g, kept) {
			continue // a piece of a list already proposed
		}
		spec, ok := sg.spec(g)
		if !ok {
			continue
		}
		tries++
		p, ok := sg.proposal(page, opts, g, spec)
		if !ok || !distinctFrom(p, structs) {
			continue
		}
		structs = append(structs, p)
		kept = append(kept, g)
	}

	// A list the page names (an id, a class, a data attribute) before
	// one only a chain of positions reaches: a person's selector names
	// what it reads.
	for i := range structs {
		placed(&structs[i])
	}
	slices.SortStableFunc(structs, func(x, y Proposal) int { return cmp.Compare(y.Score, x.Score) })

	if schemaP != nil {
		// schema.org items come before structures (the page says what its
		// items are), unless the best structure is a longer list that
		// holds them: a carousel of three marked items on a page of forty.
		lead := schemaP.Count >= minItems || len(structs) == 0
		switch {
		case !lead || len(structs) == 0:
		case structs[0].Count >= 2*schemaP.Count && covers(structs[0], *schemaP):
			lead = false
			schemaP.Reason += ", fewer than the list below"
		case schemaP.titles*2 < schemaP.Count && structs[0].titles > schemaP.titles:
			// Poorer than the page: the same title on every item (the
			// artist's name), or none.
			lead = false
			schemaP.Reason += ", most with the same title or none"
		}
		if lead {
			schemaP.Score = 100
			out.Proposals = append(out.Proposals, *schemaP)
			schemaP = nil
		}
	}
	for i, p := range structs {
		if i == 0 && len(out.Proposals) == 0 {
			p.Reason = "best: " + p.Reason
		}
		out.Proposals = append(out.Proposals, p)
		if schemaP != nil && i == 0 {
			schemaP.Score = round2(p.Score * 0.99)
			out.Proposals = append(out.Proposals, *schemaP)
			schemaP = nil
		}
	}
	if schemaP != nil {
		out.Proposals = append(out.Proposals, *schemaP)
	}
	if len(out.Proposals) > MaxProposals {
		out.Proposals = out.Proposals[:MaxProposals]
	}
	return out, nil
}

// proposal extracts the page with g's block and makes it a proposal
// of a structure, as Page shows it (before placed); false when it
// yields fewer than minItems items.
func (sg *suggester) proposal(page []byte, opts extractor.Options, g *group, spec extractor.SelectSpec) (Proposal, bool) {
	p, ok := tryProposal(page, opts, &spec)
	if !ok || p.Count < minItems {
		return Proposal{}, false
	}
	p.Kind = KindSelectors
	p.Score = round2(g.score)
	p.Where = sg.where(g.linked)
	p.Reason = reason(p.Count, p.Where, g.why)
	return p, true
}

// placed weighs a structure's score by how its list is named and
// placed: a list reached only by positions lower, one under a heading
// that calls it the newest higher.
func placed(p *Proposal) {
	if strings.Contains(p.Select.Item, "nth-of-type") {
		p.Score = round2(p.Score * positionOnly)
		p.Reason += ", reached only by its position"
	}
	if recent(p.Where) {
		// Under "Latest news", "Neueste Beiträge", "最新": the list the
		// page itself calls its newest, what a feed is for.
		p.Score = round2(p.Score * recentHeading)
	}
}

// reason is a structure's reason line: its count, where it sits, then
// why.
func reason(count int, where, why string) string {
	r := fmt.Sprintf("%d items", count)
	if where != "" {
		r += " " + where
	}
	for part := range strings.SplitSeq(why, ", ") {
		if strings.HasPrefix(part, "inside ") && strings.HasPrefix(where, "in the ") && where != "in the main content" {
			continue // the landmark, said once
		}
		r += ", " + part
	}
	return r
}

// tryProposal extracts the page with spec (nil: its annotations) and
// reports the proposal it makes, if it yields items.
func tryProposal(page []byte, opts extractor.Options, spec *extractor.SelectSpec) (Proposal, bool) {
	if spec != nil {
		sel, err := extractor.CompileSelectors(*spec)
		if err != nil {
			return Proposal{}, false
		}
		opts.Select = sel
	}
	res, err := extractor.Extract(bytes.NewReader(page), opts)
	if err != nil || res.Document == nil || len(res.Document.Items) == 0 {
		return Proposal{}, false
	}
	p := Proposal{Select: spec, Count: len(res.Document.Items), Items: []Item{}, links: map[string]bool{}}
	titles := map[string]bool{}
	for i, it := range res.Document.Items {
		p.links[it.Link] = true
		if it.Title != "" {
			titles[it.Title] = true
		}
		if i < MaxItems {
			p.Items = append(p.Items, proposedItem(it))
		}
	}
	p.titles = len(titles)
	return p, true
}

func proposedItem(it schema.Item) Item {
	pi := Item{Title: it.Title, Link: it.Link, Description: it.Description}
	for _, x := range it.Extensions {
		if x.LocalName == "date" || x.LocalName == "pubDate" {
			pi.Date = x.Value
			break
		}
	}
	const maxDesc = 200
	if r := []rune(pi.Description); len(r) > maxDesc {
		pi.Description = string(r[:maxDesc-1]) + "…"
	}
	return pi
}

// covers reports whether most (4 in 5) of q's items' links are among p's.
func covers(p, q Proposal) bool {
	hit := 0
	for l := range q.links {
		if p.links[l] {
			hit++
		}
	}
	return len(q.links) > 0 && hit*5 >= len(q.links)*4
}

// feedTypes are the MIME types of <link rel="alternate"> that are feeds.
var feedTypes = map[string]bool{
	"application/rss+xml": true, "application/atom+xml": true, "application/feed+json": true,
	"application/json": false, "application/rdf+xml": true, "text/xml": true, "application/xml": true,
	"application/x.atom+xml": true, "application/x-rss+xml": true,
}

// pageFeeds are the feeds a page names with <link rel="alternate">.
func pageFeeds(doc *html.Node, page *url.URL) []Feed {
	base := page
	if n := extractor.FindElement(doc, atom.Base, "href"); n != nil {
		if u, err := page.Parse(strings.TrimSpace(attrMatch(n, "href").s)); err == nil && u.IsAbs() {
			base = u
		}
	}
	var out []Feed
	seen := map[string]bool{}
	extractor.WalkAll(doc, func(n *html.Node) {
		if n.DataAtom != atom.Link && n.DataAtom != atom.A {
			return
		}
		rel := strings.Fields(strings.ToLower(attrMatch(n, "rel").s))
		typ := strings.ToLower(strings.TrimSpace(strings.Split(attrMatch(n, "type").s, ";")[0]))
		if !slices.Contains(rel, "alternate") || !feedTypes[typ] {
			return
		}
		href := strings.TrimSpace(attrMatch(n, "href").s)
		u, err := base.Parse(href)
		if href == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || seen[u.String()] {
			return
		}
		seen[u.String()] = true
		out = append(out, Feed{URL: u.String(), Type: typ, Title: extractor.CleanText(attrMatch(n, "title").s)})
	})
	return out
}

// distinctFrom reports whether a proposal's items differ from those of
// the proposals kept so far (two blocks for one list are one proposal).
func distinctFrom(p Proposal, kept []Proposal) bool {
	for _, k := range kept {
		if k.Count == p.Count && sameItems(k.Items, p.Items) {
			return false
		}
	}
	return true
}

func sameItems(a, b []Item) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Link != b[i].Link {
			return false
		}
	}
	return true
}

func round2(f float64) float64 {
	return float64(int64(f*100+0.5)) / 100
}

// partOf reports whether most of g's main links are main links of a
// group already kept: a piece of a list proposed whole.
func partOf(g *group, kept []*group) bool {
	for _, k := range kept {
		mains := map[*html.Node]bool{}
		for _, f := range k.facts {
			mains[f.main] = true
		}
		hit := 0
		for _, f := range g.facts {
			if mains[f.main] {
				hit++
			}
		}
		if hit*5 >= len(g.facts)*4 {
			return true
		}
	}
	return false
}
