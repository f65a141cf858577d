package suggest_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/andybalholm/cascadia"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/dynamo-rss/dynamo/extractor"
	"github.com/dynamo-rss/dynamo/suggest"
)

// pointDir holds the pages of the pointing tests: each has the list a
// person points at beside a list Page proposes first.
var pointDir = filepath.Join("testdata", "point")

const pointURL = "https://blog.example/"

// pointCase is a page and the list a person points at.
type pointCase struct {
	file  string
	item  string   // CSS: the wanted items' elements (the first is pointed at)
	title []string // each item's title holds this
	links []string // each item's link (paths)
}

var words = []string{"Harbour", "Library", "Council", "Garden", "Museum", "Bridge", "Market", "School", "Station", "Theatre", "River", "Forest"}

func pointCases() []pointCase {
	var cs []pointCase
	c := pointCase{file: "footer.html", item: "div.post"}
	for i := range 4 {
		c.title = append(c.title, words[i])
		c.links = append(c.links, fmt.Sprintf("/p/%d", i+1))
	}
	cs = append(cs, c)
	c = pointCase{file: "runs.html", item: "#content > h3"}
	for k := 1; k <= 6; k++ {
		c.title = append(c.title, fmt.Sprintf("Thoughts on the %s number %d", strings.ToLower(words[k%len(words)]), k))
		c.links = append(c.links, fmt.Sprintf("/2026/03/thoughts-%d.html", k))
	}
	cs = append(cs, c)
	c = pointCase{file: "table.html", item: "tr.entry"}
	for i := range 5 {
		c.title = append(c.title, fmt.Sprintf("A story on the %s that people voted for", strings.ToLower(words[i])))
		c.links = append(c.links, fmt.Sprintf("/item/%d", 101+i))
	}
	cs = append(cs, c)
	c = pointCase{file: "cards.html", item: "a.card"}
	for i := range 5 {
		c.title = append(c.title, fmt.Sprintf("The %s card title %d", strings.ToLower(words[i]), i+1))
		c.links = append(c.links, fmt.Sprintf("/p/card-%d", i+1))
	}
	cs = append(cs, c)
	c = pointCase{file: "ads.html", item: "li.post"}
	for i := range 7 {
		switch i {
		case 2:
			c.title = append(c.title, "Buy the best garden hose of the year now")
			c.links = append(c.links, "https://ads.example/buy")
		case 5:
			c.title = append(c.title, "A partner offer about the town harbour tours")
			c.links = append(c.links, "/p/partner-offer")
		default:
			c.title = append(c.title, fmt.Sprintf("Real news on the %s number %d", strings.ToLower(words[i]), i))
			c.links = append(c.links, fmt.Sprintf("/p/post-%d", i))
		}
	}
	cs = append(cs, c)
	// One <ul> a day: every day's posts are the list.
	c = pointCase{file: "days.html", item: "div.day li"}
	for k := 1; k <= 9; k++ {
		c.title = append(c.title, fmt.Sprintf("News of the %s, part %d", strings.ToLower(words[k%len(words)]), k))
		c.links = append(c.links, fmt.Sprintf("/2026/03/%s-news-%d", strings.ToLower(words[k%len(words)]), k))
	}
	cs = append(cs, c)
	// The suggester reads the heading of two links whole: the items are
	// the entries, their titles hold the second link's text.
	c = pointCase{file: "heading2.html", item: "article.entry"}
	for i := range 5 {
		c.title = append(c.title, fmt.Sprintf("Real title %s %d", words[i], i+1))
	}
	cs = append(cs, c)
	return cs
}

// pointPage is a test page parsed, its elements numbered as the
// package numbers them.
type pointPage struct {
	data  []byte
	opts  extractor.Options
	doc   *html.Node
	nodes []*html.Node
	num   map[*html.Node]int
}

func loadPoint(t *testing.T, file string) *pointPage {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(pointDir, file))
	if err != nil {
		t.Fatal(err)
	}
	opts := extractor.Options{URL: pointURL}
	doc, _, err := extractor.ParsePage(data, opts)
	if err != nil {
		t.Fatal(err)
	}
	p := &pointPage{data: data, opts: opts, doc: doc, num: map[*html.Node]int{}}
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			p.num[n] = len(p.nodes)
			p.nodes = append(p.nodes, n)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	return p
}

// textElement is the innermost element of a text node holding s, and
// the outermost element whose whole text is that element's.
func (p *pointPage) textElement(t *testing.T, s string) (inner, outer *html.Node) {
	t.Helper()
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if inner != nil {
			return
		}
		if n.Type == html.TextNode && strings.Contains(n.Data, s) && n.Parent.Type == html.ElementNode {
			inner = n.Parent
			return
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(p.doc)
	if inner == nil {
		t.Fatalf("no text %q on the page", s)
	}
	outer = inner
	for outer.Parent != nil && outer.Parent.Type == html.ElementNode && extractor.Text(outer.Parent) == extractor.Text(inner) {
		outer = outer.Parent
	}
	return inner, outer
}

func (p *pointPage) first(t *testing.T, css string) *html.Node {
	t.Helper()
	n := cascadia.Query(p.doc, cascadia.MustCompile(css))
	if n == nil {
		t.Fatalf("%s matches nothing", css)
	}
	return n
}

// extract runs a block on the page as the poller would.
func (p *pointPage) extract(t *testing.T, spec extractor.SelectSpec) []suggestItem {
	t.Helper()
	sel, err := extractor.CompileSelectors(spec)
	if err != nil {
		t.Fatalf("%+v does not compile: %v", spec, err)
	}
	res, err := sel.Extract(bytes.NewReader(p.data), p.opts)
	if err != nil {
		t.Fatalf("%+v does not extract: %v", spec, err)
	}
	var out []suggestItem
	for _, it := range res.Document.Items {
		d := ""
		for _, x := range it.Extensions {
			if x.LocalName == "date" {
				d = x.Value
			}
		}
		out = append(out, suggestItem{it.Title, it.Link, d})
	}
	return out
}

type suggestItem struct{ title, link, date string }

// wanted checks items against the case's list.
func (c pointCase) wanted(t *testing.T, items []suggestItem) {
	t.Helper()
	if len(items) != len(c.title) {
		t.Fatalf("%d items, want %d: %+v", len(items), len(c.title), items)
	}
	for i, it := range items {
		if !strings.Contains(it.title, c.title[i]) {
			t.Errorf("item %d: title %q, want %q", i, it.title, c.title[i])
		}
		if c.links != nil && it.link != abs(c.links[i]) {
			t.Errorf("item %d: link %q, want %q", i, it.link, abs(c.links[i]))
		}
	}
}

func abs(l string) string {
	if strings.HasPrefix(l, "http") {
		return l
	}
	return strings.TrimSuffix(pointURL, "/") + l
}

// TestLike: pointing at the first item's title, at the innermost element
// of its text, at the item itself, or at a part of it, gives the list
// the person wants, which is not Page's first proposal.
func TestLike(t *testing.T) {
	for _, c := range pointCases() {
		t.Run(c.file, func(t *testing.T) {
			p := loadPoint(t, c.file)
			sugs, err := suggest.Page(p.data, p.opts)
			if err != nil {
				t.Fatal(err)
			}
			if len(sugs.Proposals) > 0 && sugs.Proposals[0].Count == len(c.title) && strings.Contains(sugs.Proposals[0].Items[0].Title, c.title[0]) {
				t.Fatalf("Page proposes the list first: the page tests nothing")
			}
			inner, outer := p.textElement(t, c.title[0])
			item := p.first(t, c.item)
			points := []*html.Node{outer, inner, item}
			if c.file == "runs.html" || c.file == "table.html" {
				// A part of the item beside its heading or first row.
				points = append(points, p.first(t, "p.posted, td.sub"))
			}
			if item.Parent.DataAtom == atom.Ul || item.Parent.DataAtom == atom.Tbody {
				// The list's own element, clicked between two items.
				points = append(points, item.Parent)
			}
			var count int
			for _, e := range points {
				prop, err := suggest.Like(p.data, p.opts, p.num[e])
				if err != nil {
					t.Fatalf("Like(<%s> %d): %v", e.Data, p.num[e], err)
				}
				t.Logf("<%s>: %d %+v (%s)", e.Data, prop.Count, prop.Select, prop.Reason)
				c.wanted(t, p.extract(t, *prop.Select))
				if prop.Count != len(c.title) || len(prop.Items) != min(len(c.title), suggest.MaxItems) || prop.Kind != suggest.KindSelectors || prop.Reason == "" || prop.Where == "" {
					t.Fatalf("proposal %+v", prop)
				}
				count = prop.Count
				// Items outlines the items: the wanted ones.
				got, err := suggest.Items(p.data, p.opts, *prop.Select)
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != count || got[0] != p.num[item] {
					t.Fatalf("Items: %v, want %d from %d", got, count, p.num[item])
				}
			}
		})
	}
}

// TestLikeErrors: an element in no list, a number off the page.
func TestLikeErrors(t *testing.T) {
	p := loadPoint(t, "footer.html")
	head := p.first(t, "head")
	if _, err := suggest.Like(p.data, p.opts, p.num[head]); !errors.Is(err, suggest.ErrNoList) {
		t.Fatalf("Like(<head>): %v, want ErrNoList", err)
	}
	for _, i := range []int{-1, len(p.nodes)} {
		if _, err := suggest.Like(p.data, p.opts, i); err == nil || errors.Is(err, suggest.ErrNoList) {
			t.Fatalf("Like(%d): %v, want an error for a number off the page", i, err)
		}
	}
}

// likeCase loads the i-th case's page and Like's block for its first
// title.
func likeCase(t *testing.T, i int) (pointCase, *pointPage, extractor.SelectSpec) {
	t.Helper()
	c := pointCases()[i]
	p := loadPoint(t, c.file)
	return c, p, like(t, p, c)
}

// like is the block Like gives for the case's first title.
func like(t *testing.T, p *pointPage, c pointCase) extractor.SelectSpec {
	t.Helper()
	_, outer := p.textElement(t, c.title[0])
	prop, err := suggest.Like(p.data, p.opts, p.num[outer])
	if err != nil {
		t.Fatal(err)
	}
	return *prop.Select
}

// TestExclude: pointing at an ad leaves out the ad and nothing else, by
// its class; pointing at a "Sponsored" badge leaves out that item, by
// the badge.
func TestExclude(t *testing.T) {
	c, p, spec := likeCase(t, 4)
	ad, _ := p.textElement(t, "Buy the best garden hose")
	prop, err := suggest.Exclude(p.data, p.opts, spec, p.num[ad])
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v (%s)", prop.Select, prop.Reason)
	if !strings.Contains(prop.Select.Item, ":not(.ad)") {
		t.Errorf("item %q: want the ad's class left out", prop.Select.Item)
	}
	without := func(c pointCase, drop int) pointCase {
		c.title = slices.Delete(slices.Clone(c.title), drop, drop+1)
		c.links = slices.Delete(slices.Clone(c.links), drop, drop+1)
		return c
	}
	c = without(c, 2)
	c.wanted(t, p.extract(t, *prop.Select))
	if prop.Count != 6 {
		t.Fatalf("count %d", prop.Count)
	}

	badge, _ := p.textElement(t, "Sponsored")
	prop, err = suggest.Exclude(p.data, p.opts, *prop.Select, p.num[badge])
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v (%s)", prop.Select, prop.Reason)
	if !strings.Contains(prop.Select.Item, ":not(:has(.sponsored))") {
		t.Errorf("item %q: want the badge named", prop.Select.Item)
	}
	c = without(c, 4)
	c.wanted(t, p.extract(t, *prop.Select))

	// An element in no item; an exclusion of every item.
	older, _ := p.textElement(t, "Older posts")
	if _, err := suggest.Exclude(p.data, p.opts, spec, p.num[older]); err == nil {
		t.Fatal("Exclude of an element in no item: no error")
	}
	one := extractor.SelectSpec{Item: "li.ad", Title: "h2"}
	if _, err := suggest.Exclude(p.data, p.opts, one, p.num[ad]); err == nil {
		t.Fatal("Exclude of the only item: no error")
	}
}

// TestField: the title, link and date pointed at in one item are read
// from the same place in every item.
func TestField(t *testing.T) {
	c, p, spec := likeCase(t, 6)
	second, _ := p.textElement(t, "Real title Harbour 1")
	when, _ := p.textElement(t, "1 March 2026")
	var links []string
	for i := range 5 {
		links = append(links, abs(fmt.Sprintf("/p/%d", i+1)))
	}

	prop, err := suggest.Field(p.data, p.opts, spec, suggest.FieldTitle, p.num[second])
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("title %q", prop.Select.Title)
	if strings.Contains(prop.Select.Title, "nth") {
		t.Errorf("title %q: a position, where a chain of tags does", prop.Select.Title)
	}
	for i, it := range p.extract(t, *prop.Select) {
		if want := fmt.Sprintf("Real title %s %d", words[i], i+1); it.title != want {
			t.Errorf("item %d: title %q, want %q", i, it.title, want)
		}
	}

	prop, err = suggest.Field(p.data, p.opts, *prop.Select, suggest.FieldLink, p.num[second])
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("link %q", prop.Select.Link)
	for i, it := range p.extract(t, *prop.Select) {
		if it.link != links[i] || !strings.HasPrefix(it.title, "Real title") {
			t.Errorf("item %d: %+v, want link %q", i, it, links[i])
		}
	}

	prop, err = suggest.Field(p.data, p.opts, *prop.Select, suggest.FieldDate, p.num[when])
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("date %q", prop.Select.Date)
	for i, it := range p.extract(t, *prop.Select) {
		if want := fmt.Sprintf("%d March 2026", i+1); it.date != want || it.link != links[i] {
			t.Errorf("item %d: %+v, want date %q", i, it, want)
		}
	}

	// A date that is none; a field that cannot be pointed at.
	if _, err := suggest.Field(p.data, p.opts, spec, suggest.FieldDate, p.num[second]); err == nil {
		t.Fatal("a title as the date: no error")
	}
	if _, err := suggest.Field(p.data, p.opts, spec, "description", p.num[second]); err == nil {
		t.Fatal("a description pointed at: no error")
	}

	// Cards: the link is the card itself.
	c = pointCases()[3]
	p = loadPoint(t, c.file)
	spec = like(t, p, c)
	inner, _ := p.textElement(t, c.title[0])
	prop, err = suggest.Field(p.data, p.opts, spec, suggest.FieldLink, p.num[inner])
	if err != nil {
		t.Fatal(err)
	}
	c.wanted(t, p.extract(t, *prop.Select))
}

// TestMarks: a browser's serialization with an element added by a
// script before the content and one inside an item: every other element
// gets its mark.
func TestMarks(t *testing.T) {
	p := loadPoint(t, "footer.html")
	// The browser's copy, marked with its own numbers (here number+1000).
	mdoc, err := html.Parse(bytes.NewReader(p.data))
	if err != nil {
		t.Fatal(err)
	}
	var all []*html.Node
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			all = append(all, n)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(mdoc)
	if len(all) != len(p.nodes) {
		t.Fatalf("%d elements, %d", len(all), len(p.nodes))
	}
	for i, n := range all {
		n.Attr = append(n.Attr, html.Attribute{Key: "data-dynamo-box", Val: strconv.Itoa(i + 1000)})
	}
	body := cascadia.Query(mdoc, cascadia.MustCompile("body"))
	extra, _ := html.ParseFragment(strings.NewReader(`<div class="cookie"><p>We use cookies</p></div>`), body)
	body.InsertBefore(extra[0], body.FirstChild)
	post := cascadia.Query(mdoc, cascadia.MustCompile("div.post"))
	span, _ := html.ParseFragment(strings.NewReader(`<span>new</span>`), post)
	post.InsertBefore(span[0], post.FirstChild)
	var b bytes.Buffer
	if err := html.Render(&b, mdoc); err != nil {
		t.Fatal(err)
	}
	marks := suggest.Marks(p.data, p.opts, b.Bytes())
	if len(marks) != len(p.nodes) {
		t.Fatalf("%d marks for %d elements", len(marks), len(p.nodes))
	}
	for i, m := range marks {
		if m != i+1000 {
			t.Errorf("element %d <%s>: mark %d, want %d", i, p.nodes[i].Data, m, i+1000)
		}
	}
	// Unmarked or unreadable: -1 throughout, never a panic.
	for _, m := range suggest.Marks(p.data, p.opts, p.data) {
		if m != -1 {
			t.Fatalf("an unmarked copy gave mark %d", m)
		}
	}
}

// TestOutline: the footer page's outline has the main list under its
// heading and the footer's under "Footer", with Like's counts.
func TestOutline(t *testing.T) {
	p := loadPoint(t, "footer.html")
	o, err := suggest.Outline(p.data, p.opts)
	if err != nil {
		t.Fatal(err)
	}
	var heads []string
	found := map[string]suggest.OutlineList{}
	for _, s := range o.Sections {
		heads = append(heads, fmt.Sprintf("%s/%d/%s", s.Heading, s.Level, s.Landmark))
		for _, l := range s.Lists {
			t.Logf("%s: %+v", s.Heading, l)
			if _, ok := found[s.Heading]; !ok {
				found[s.Heading] = l
			}
			prop, err := suggest.Like(p.data, p.opts, l.Element)
			if err != nil {
				t.Fatalf("Like(%d) of the outline: %v", l.Element, err)
			}
			if prop.Count != l.Count {
				t.Errorf("list of %d: count %d, Like's %d", l.Element, l.Count, prop.Count)
			}
		}
	}
	t.Logf("sections %v", heads)
	main, ok := found["Latest posts"]
	if !ok || main.Count != 4 || !slices.Equal(main.First, words[:3]) {
		t.Errorf("under “Latest posts”: %+v", main)
	}
	foot, ok := found["Footer"]
	if !ok || foot.Count != 30 {
		t.Errorf("under “Footer”: %+v", foot)
	}
	if !slices.Contains(heads, "Footer/0/footer") || !slices.Contains(heads, "Latest posts/2/") {
		t.Errorf("sections %v", heads)
	}
}

// outlineAgrees checks that the first most lists of the page's outline
// are Like's for their elements, with the same counts; it returns how
// many lists the outline has.
func outlineAgrees(t *testing.T, data []byte, opts extractor.Options, most int) int {
	t.Helper()
	o, err := suggest.Outline(data, opts)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, s := range o.Sections {
		for _, l := range s.Lists {
			if n++; n > most {
				continue
			}
			prop, err := suggest.Like(data, opts, l.Element)
			if err != nil || prop.Count != l.Count {
				t.Errorf("list at %d under %q, %d items: Like gives %d, %v (%+v)", l.Element, s.Heading, l.Count, prop.Count, err, prop.Select)
			}
		}
	}
	return n
}

// TestOutlineCounts: on every pointing page, each outline list's count
// is the count Like gives for its element.
func TestOutlineCounts(t *testing.T) {
	for _, c := range pointCases() {
		t.Run(c.file, func(t *testing.T) {
			p := loadPoint(t, c.file)
			if n := outlineAgrees(t, p.data, p.opts, 40); n < 2 {
				t.Errorf("%d lists in the outline", n)
			}
		})
	}
}

// TestStarts: the first item's title and container are starts; the
// <head> is not.
func TestStarts(t *testing.T) {
	for _, c := range pointCases() {
		p := loadPoint(t, c.file)
		starts := suggest.Starts(p.data, p.opts)
		if len(starts) == 0 || len(starts) > suggest.MaxStarts || !slices.IsSorted(starts) {
			t.Fatalf("%s: %d starts", c.file, len(starts))
		}
		inner, _ := p.textElement(t, c.title[0])
		for _, e := range []*html.Node{inner, p.first(t, c.item)} {
			if _, ok := slices.BinarySearch(starts, p.num[e]); !ok {
				t.Errorf("%s: <%s> %d is no start", c.file, e.Data, p.num[e])
			}
		}
		if _, ok := slices.BinarySearch(starts, p.num[p.first(t, "head")]); ok {
			t.Errorf("%s: <head> is a start", c.file)
		}
	}
}

// TestPointPatterns: on every pattern page and select golden page, each
// list of the outline (the first eight) is Like's for its element, with
// the same count, and Like of the first item of Page's best structure
// gives a list of it.
func TestPointPatterns(t *testing.T) {
	type page struct {
		name string
		data []byte
		opts extractor.Options
	}
	var pages []page
	for _, p := range suggestPatterns() {
		pages = append(pages, page{p.name, []byte(p.page), extractor.Options{URL: "https://town.example/list/"}})
	}
	for _, c := range selectCases(t) {
		pages = append(pages, page{c.name, c.page, c.opts})
	}
	for _, p := range pages {
		t.Run(p.name, func(t *testing.T) {
			outlineAgrees(t, p.data, p.opts, 8)
			sugs, err := suggest.Page(p.data, p.opts)
			if err != nil {
				t.Fatal(err)
			}
			for _, pr := range sugs.Proposals {
				if pr.Kind != suggest.KindSelectors {
					continue
				}
				items, err := suggest.Items(p.data, p.opts, *pr.Select)
				if err != nil {
					t.Fatal(err)
				}
				like, err := suggest.Like(p.data, p.opts, items[0])
				if err != nil {
					t.Errorf("Like of the first item of %+v: %v", pr.Select, err)
				} else if like.Count < pr.Count*4/5 {
					t.Errorf("Like of the first item of %+v (%d): %d items, %+v", pr.Select, pr.Count, like.Count, like.Select)
				}
				break
			}
		})
	}
}

// TestFieldRuns: in items that are a heading's run of siblings, the
// date pointed at in a "posted" line is read from every item's line;
// a day's heading is in no item.
func TestFieldRuns(t *testing.T) {
	c, p, spec := likeCase(t, 1)
	posted, _ := p.textElement(t, "Posted by Ann at 10:01")
	link, _ := p.textElement(t, "Permalink")
	prop, err := suggest.Field(p.data, p.opts, spec, suggest.FieldLink, p.num[link])
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("link %q", prop.Select.Link)
	c.wanted(t, p.extract(t, *prop.Select))
	prop, err = suggest.Field(p.data, p.opts, spec, suggest.FieldTitle, p.num[posted])
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("title %q", prop.Select.Title)
	for i, it := range p.extract(t, *prop.Select) {
		if want := fmt.Sprintf("Posted by Ann at 10:0%d | Permalink", i+1); it.title != want {
			t.Errorf("item %d: title %q, want %q", i, it.title, want)
		}
	}
	day, _ := p.textElement(t, "4 March 2026")
	if _, err := suggest.Exclude(p.data, p.opts, spec, p.num[day]); err == nil {
		t.Error("a day's heading is in an item")
	}
}

// TestItemParts: every element of an item is part of it (its own, the
// siblings of a heading's run, a table item's second row), the
// elements between lists part of none.
func TestItemParts(t *testing.T) {
	for _, c := range []struct {
		file, in, part, outside string
	}{
		{"runs.html", "#content > h3", "p.posted", "#content > h2"},
		{"table.html", "tr.entry", "td.sub", "title"},
		{"ads.html", "li.post", "li.post h2 a", "title"},
	} {
		t.Run(c.file, func(t *testing.T) {
			p := loadPoint(t, c.file)
			item := p.first(t, c.in)
			prop, err := suggest.Like(p.data, p.opts, p.num[item])
			if err != nil {
				t.Fatal(err)
			}
			parts, err := suggest.ItemParts(p.data, p.opts, *prop.Select)
			if err != nil {
				t.Fatal(err)
			}
			if len(parts) != len(p.nodes) {
				t.Fatalf("%d parts for %d elements", len(parts), len(p.nodes))
			}
			if got := parts[p.num[item]]; got != 0 {
				t.Errorf("the first item is part of %d", got)
			}
			if got := parts[p.num[p.first(t, c.part)]]; got != 0 {
				t.Errorf("%s of the first item is part of %d", c.part, got)
			}
			if got := parts[p.num[p.first(t, c.outside)]]; got != -1 {
				t.Errorf("%s is part of item %d", c.outside, got)
			}
			items := map[int]bool{}
			for _, i := range parts {
				if i >= 0 {
					items[i] = true
				}
			}
			if len(items) != prop.Count {
				t.Errorf("parts of %d items; the list has %d", len(items), prop.Count)
			}
		})
	}
}
