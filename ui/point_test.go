package ui

import (
	"bytes"
	"context"
	"html"
	"image"
	"image/png"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	xhtml "golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/dynamo-rss/dynamo/api"
	"github.com/dynamo-rss/dynamo/internal/formclient"
	"github.com/dynamo-rss/dynamo/internal/pointpages"
)

// fakePicturer is an api.PagePicturer over fixed pages. Its "browser"
// lays each page out as nested rows: element i (in document order) is a
// row 20 px tall at y = 20·i, as tall as all the elements inside it,
// indented 8 px a level, so that every element's box holds its
// descendants' and no other's, as a browser's boxes do for blocks.
type fakePicturer struct {
	pages map[string]string
	mu    sync.Mutex
	calls int // PicturePage
	gets  int // FetchPage
}

func (f *fakePicturer) FetchPage(_ context.Context, u string) (api.Page, error) {
	f.mu.Lock()
	f.gets++
	f.mu.Unlock()
	return api.Page{Body: []byte(f.pages[u]), ContentType: "text/html; charset=utf-8", URL: u}, nil
}

func (f *fakePicturer) PicturePage(_ context.Context, u, _ string, _ bool) (api.Page, *api.PagePicture, error) {
	f.mu.Lock()
	f.calls++
	f.mu.Unlock()
	body := f.pages[u]
	pic := layOut(body)
	return api.Page{Body: []byte(body), ContentType: "text/html; charset=utf-8", URL: u}, pic, nil
}

// layOut draws body as fakePicturer does.
func layOut(body string) *api.PagePicture {
	doc, err := xhtml.Parse(strings.NewReader(body))
	if err != nil {
		panic(err)
	}
	els := elementsOf(doc)
	boxes := make([]api.Box, len(els))
	end := make([]int, len(els))
	index := map[*xhtml.Node]int{}
	for i, e := range els {
		index[e.n] = i
	}
	for i := len(els) - 1; i >= 0; i-- {
		end[i] = max(end[i], i+1)
		if p := els[i].n.Parent; p != nil {
			if j, ok := index[p]; ok {
				end[j] = max(end[j], end[i])
			}
		}
	}
	for i, e := range els {
		e.n.Attr = append(e.n.Attr, xhtml.Attribute{Key: "data-dynamo-box", Val: strconv.Itoa(i)})
		if e.inHead || e.n.DataAtom == atom.Head {
			continue
		}
		x := float64(8 * e.depth)
		boxes[i] = api.Box{X: x, Y: float64(20 * i), W: 1280 - 2*x, H: float64(20 * (end[i] - i))}
	}
	var marked bytes.Buffer
	if err := xhtml.Render(&marked, doc); err != nil {
		panic(err)
	}
	var img bytes.Buffer
	if err := png.Encode(&img, image.NewGray(image.Rect(0, 0, 2, 2))); err != nil {
		panic(err)
	}
	return &api.PagePicture{Image: img.Bytes(), ImageType: "image/png", Width: 1280, Height: 20 * len(els), Marked: marked.Bytes(), Boxes: boxes}
}

// element is an element of a parsed page in document order.
type element struct {
	n      *xhtml.Node
	depth  int
	inHead bool
}

// elementsOf are doc's elements in document order (<html> first).
func elementsOf(doc *xhtml.Node) []element {
	var out []element
	var walk func(n *xhtml.Node, depth int, inHead bool)
	walk = func(n *xhtml.Node, depth int, inHead bool) {
		if n.Type == xhtml.ElementNode {
			out = append(out, element{n, depth, inHead})
			inHead = inHead || n.DataAtom == atom.Head
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, depth+1, inHead)
		}
	}
	walk(doc, 0, false)
	return out
}

// boxOfText is the box the fake lays out for the innermost element whose
// own text is text, on page body.
func boxOfText(t *testing.T, body, text string) api.Box {
	t.Helper()
	pic := layOut(body)
	doc, _ := xhtml.Parse(strings.NewReader(body))
	for i, e := range elementsOf(doc) {
		for c := e.n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == xhtml.TextNode && strings.TrimSpace(c.Data) == text {
				return pic.Boxes[i]
			}
		}
	}
	t.Fatalf("no element with the text %q", text)
	return api.Box{}
}

// smallestOver is the href of the smallest region over the middle of box
// b, as a person's click on it reaches.
func smallestOver(t *testing.T, body string, b api.Box) string {
	t.Helper()
	h := pointpages.SmallestOver(body, b.X+b.W/2, b.Y+b.H/2)
	if h == "" {
		t.Fatalf("no region over the middle of %+v; %d regions", b, len(pointpages.Regions(body)))
	}
	return h
}

// newPointEnv is a pages env whose /new draws pages with a fakePicturer
// (browser: a browser is configured; else it fetches them with GETs),
// logged in.
func newPointEnv(t *testing.T, browser bool) (*pagesEnv, *fakePicturer, *formclient.Client) {
	t.Helper()
	fp := &fakePicturer{pages: map[string]string{}}
	for _, p := range pointpages.Pages {
		fp.pages["https://example.org/"+p.Name] = p.HTML
	}
	env := newPagesEnv(t, func(o *Options) { o.Fetch, o.Browser = fp, browser })
	b := formclient.New(t, env.srv.URL)
	b.Get("/login")
	if b.Submit(b.Form("/login", "token"), "token", pagesToken); b.Last.Request.URL.Path != "/new" {
		t.Fatalf("login: at %s", b.Last.Request.URL)
	}
	return env, fp, b
}

// fetchPoint fetches page p on /new.
func fetchPoint(t *testing.T, b *formclient.Client, p pointpages.Page) {
	t.Helper()
	b.Get("/new")
	if code := b.Submit(b.Form("/new", "url"), "url", "https://example.org/"+p.Name); code != http.StatusOK {
		t.Fatalf("fetch %s: %d\n%s", p.Name, code, b.Body)
	}
}

// chosenTitles are the titles of the chosen list's first items.
func chosenTitles(t *testing.T, b *formclient.Client) []string {
	t.Helper()
	if section(b, "chosen") == "" {
		t.Fatalf("no chosen list on %s:\n%s", b.Last.Request.URL, section(b, "point-error"))
	}
	return pointpages.Titles(b.Body, "chosen")
}

// firstN is at most n of s.
func firstN(s []string, n int) []string { return s[:min(n, len(s))] }

// TestPointClickGivesTheList: on each synthetic page, the click on the
// wanted first item, the smallest region over its own box, gives the
// wanted list, which Add then registers.
func TestPointClickGivesTheList(t *testing.T) {
	for _, p := range pointpages.Pages {
		t.Run(p.Name, func(t *testing.T) {
			env, fp, b := newPointEnv(t, true)
			fetchPoint(t, b, p)
			if !strings.Contains(b.Body, `<svg class="shot"`) {
				t.Fatalf("no picture on the offer")
			}
			if best := section(b, "p1"); strings.Contains(best, ">"+p.Titles[0]+"<") {
				t.Fatalf("the wanted list is the best proposal already: nothing to point at")
			}
			b.Get(smallestOver(t, b.Body, boxOfText(t, p.HTML, p.Click)))
			got := slices.DeleteFunc(chosenTitles(t, b), func(s string) bool { return p.Ad != "" && s == p.Ad }) // left out by “not this one” (TestPointNotThisOne)
			want := p.Titles
			if p.Title != "" {
				// The heading's whole text, until "this is the title".
				got = firstN(got, len(want))
				for i := range got {
					if !strings.HasSuffix(got[i], want[i]) {
						t.Errorf("item %d: title %q, want one ending in %q", i, got[i], want[i])
					}
				}
			} else if strings.Join(firstN(got, len(want)), "|") != strings.Join(firstN(want, 5), "|") {
				t.Errorf("chosen items %q, want %q", got, want)
			}
			form := b.Form("/new/add", "id")
			if !strings.Contains(section(b, "chosen"), `action="/new/add"`) {
				t.Fatalf("the chosen list has no Add")
			}
			if code := b.Submit(form, "id", "pointed-"+p.Name); code != http.StatusOK {
				t.Fatalf("add: %d\n%s", code, b.Body)
			}
			if _, ok := env.reg.Definition("pointed-" + p.Name); !ok {
				t.Fatalf("not registered")
			}
			if fp.calls != 1 || fp.gets != 0 {
				t.Errorf("the page was fetched %d times as a picture and %d with a GET; want once, as a picture", fp.calls, fp.gets)
			}
		})
	}
}

// pointPageNamed is the synthetic page name.
func pointPageNamed(t *testing.T, name string) pointpages.Page {
	t.Helper()
	p, ok := pointpages.Named(name)
	if !ok {
		t.Fatalf("no page %s", name)
	}
	return p
}

// pickLink follows the link of the pick section whose text is text.
func pickLink(t *testing.T, b *formclient.Client, text string) {
	t.Helper()
	m := regexp.MustCompile(`<a class="choice" href="([^"]+)">` + regexp.QuoteMeta(text) + `</a>`).FindStringSubmatch(section(b, "pick"))
	if m == nil {
		t.Fatalf("no %q on the picked item:\n%s", text, section(b, "pick"))
	}
	b.Get(html.UnescapeString(m[1]))
}

// TestPointNotThisOne: on a chosen list, the click on the ad offers "not
// this one", which leaves the ad out and nothing else.
func TestPointNotThisOne(t *testing.T) {
	p := pointPageNamed(t, "ads")
	_, fp, b := newPointEnv(t, true)
	fetchPoint(t, b, p)
	b.Get(smallestOver(t, b.Body, boxOfText(t, p.HTML, p.Click)))
	if got := chosenTitles(t, b); !slices.Contains(got, p.Ad) {
		t.Fatalf("the chosen list %q lacks the ad: nothing to leave out", got)
	}
	b.Get(smallestOver(t, b.Body, boxOfText(t, p.HTML, p.Ad)))
	pickLink(t, b, "not this one")
	got := chosenTitles(t, b)
	if strings.Join(got, "|") != strings.Join(p.Titles, "|") {
		t.Errorf("after “not this one”: %q, want %q", got, p.Titles)
	}
	if !strings.Contains(b.Last.Request.URL.RawQuery, "block=") || strings.Contains(b.Last.Request.URL.RawQuery, "do=") {
		t.Errorf("the rewrite should land on the new block: %s", b.Last.Request.URL)
	}
	if fp.calls != 1 || fp.gets != 0 {
		t.Errorf("fetched %d+%d times; want once", fp.calls, fp.gets)
	}
}

// TestPointThisIsTheTitle: the click on the right link of a heading of
// two, then "this is the title", makes every item's title that link's.
func TestPointThisIsTheTitle(t *testing.T) {
	p := pointPageNamed(t, "second-link")
	_, _, b := newPointEnv(t, true)
	fetchPoint(t, b, p)
	b.Get(smallestOver(t, b.Body, boxOfText(t, p.HTML, p.Click)))
	chosenTitles(t, b)
	b.Get(smallestOver(t, b.Body, boxOfText(t, p.HTML, p.Title)))
	pickLink(t, b, "this is the title")
	if got := chosenTitles(t, b); strings.Join(got, "|") != strings.Join(p.Titles, "|") {
		t.Errorf("after “this is the title”: %q, want %q", got, p.Titles)
	}
}

// TestPointPictureOutlines: the picture outlines each proposal's items,
// numbered by proposal, as SVG shapes over the image (never in its
// pixels); the page sends no script; the screenshot is this session's
// only.
func TestPointPictureOutlines(t *testing.T) {
	env, _, b := newPointEnv(t, true)
	fetchPoint(t, b, pointPageNamed(t, "footer"))
	offer := b.Body
	if strings.Contains(strings.ToLower(offer), "<script") || regexp.MustCompile(`(?i)\son[a-z]+=`).MatchString(offer) {
		t.Fatalf("the offer sends a script")
	}
	if csp := b.Last.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'none'") {
		t.Errorf("CSP %q allows scripts", csp)
	}
	proposals := regexp.MustCompile(`<section class="card candidate" id="p(\d)"`).FindAllStringSubmatch(offer, -1)
	if len(proposals) < 2 {
		t.Fatalf("%d proposals; the page has a main list and a footer", len(proposals))
	}
	for i, pr := range proposals {
		n := i + 1
		g := regexp.MustCompile(`(?s)<g class="outline" data-proposal="` + strconv.Itoa(n) + `">(.*?)</g>`).FindStringSubmatch(offer)
		if g == nil {
			t.Errorf("proposal %s has no outline numbered %d", pr[1], n)
			continue
		}
		rects := strings.Count(g[1], `<rect class="box"`)
		labels := strings.Count(g[1], ">"+strconv.Itoa(n)+"</text>")
		count := regexp.MustCompile(`<strong class="count">(\d+) items?</strong>`).FindStringSubmatch(section(b, "p"+pr[1]))
		if count == nil || strconv.Itoa(rects) != count[1] || labels != rects {
			t.Errorf("proposal %d: %d outlined, %d labelled; it has %v items", n, rects, labels, count)
		}
	}
	img := regexp.MustCompile(`<image href="([^"]+)"`).FindStringSubmatch(offer)
	if img == nil {
		t.Fatal("no image in the picture")
	}
	b.Get(html.UnescapeString(img[1]))
	if b.Last.StatusCode != http.StatusOK || b.Last.Header.Get("Content-Type") != "image/png" {
		t.Fatalf("the screenshot: %d %s", b.Last.StatusCode, b.Last.Header.Get("Content-Type"))
	}
	other, err := http.Get(env.srv.URL + html.UnescapeString(img[1]))
	if err != nil {
		t.Fatal(err)
	}
	other.Body.Close()
	if other.StatusCode == http.StatusOK && strings.HasPrefix(other.Header.Get("Content-Type"), "image/") {
		t.Errorf("another visitor got the screenshot")
	}
}

// TestPointOutlineWithoutBrowser: without a browser the offer shows the
// page's outline: its parts, the lists in each with counts and first
// items, each with "items like this", which gives the list with the same
// count.
func TestPointOutlineWithoutBrowser(t *testing.T) {
	p := pointPageNamed(t, "footer")
	_, fp, b := newPointEnv(t, false)
	fetchPoint(t, b, p)
	if strings.Contains(b.Body, "<svg class=\"shot\"") || fp.calls != 0 {
		t.Fatalf("a picture without a browser")
	}
	out := section(b, "outline")
	if !strings.Contains(out, "Notices") || !strings.Contains(out, p.Titles[0]) {
		t.Fatalf("the outline lacks the main list under its heading:\n%s", out)
	}
	m := regexp.MustCompile(`<a class="like" href="([^"]+)">items like this</a> <strong>(\d+ items?)</strong>[^<]*(?:<span[^>]*>[^<]*</span>)?: <q>` + regexp.QuoteMeta(p.Titles[0])).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no “items like this” for the main list:\n%s", out)
	}
	b.Get(html.UnescapeString(m[1]))
	if got := chosenTitles(t, b); strings.Join(got, "|") != strings.Join(p.Titles, "|") {
		t.Errorf("items like this: %q, want %q", got, p.Titles)
	}
	if c := regexp.MustCompile(`<strong class="count">([^<]+)</strong>`).FindStringSubmatch(section(b, "chosen")); c == nil || c[1] != m[2] {
		t.Errorf("the outline said %s, the list has %v", m[2], c)
	}
}

// TestPointBadChoices: a choice that names no element, a block that is no
// block, or an element in no list is told on the page, with nothing lost.
func TestPointBadChoices(t *testing.T) {
	_, _, b := newPointEnv(t, true)
	fetchPoint(t, b, pointPageNamed(t, "footer"))
	base := b.Last.Request.URL.Query().Get("fetch")
	for _, q := range []url.Values{
		{"like": {"abc"}}, {"like": {"-3"}}, {"like": {"999999"}}, {"like": {"0"}},
		{"block": {"item: [unclosed"}}, {"block": {strings.Repeat("x", 5000)}},
		{"block": {"item: li\n"}, "pick": {"7"}, "do": {"nonsense"}},
	} {
		q.Set("fetch", base)
		b.Get("/new?" + q.Encode())
		if b.Last.StatusCode != http.StatusOK || section(b, "point-error") == "" {
			t.Errorf("%v: %d, no message", q, b.Last.StatusCode)
		}
	}
}

// TestPointPickInARun: in a list whose items are runs of siblings (a
// heading, its paragraphs), a click on a paragraph picks its item, and the
// item is outlined whole, heading to last paragraph.
func TestPointPickInARun(t *testing.T) {
	p := pointPageNamed(t, "runs")
	_, _, b := newPointEnv(t, true)
	fetchPoint(t, b, p)
	b.Get(smallestOver(t, b.Body, boxOfText(t, p.HTML, p.Click)))
	chosenTitles(t, b)
	posted := boxOfText(t, p.HTML, "After two years of works the bridge is open again.")
	if h := smallestOver(t, b.Body, posted); !strings.Contains(h, "pick=") {
		t.Fatalf("a click on the first item's paragraph: %s, want a pick", h)
	}
	m := regexp.MustCompile(`(?s)<g class="outline chosen" data-proposal="✓"><rect class="box" x="[0-9.]+" y="([0-9.]+)" width="[0-9.]+" height="([0-9.]+)"`).FindStringSubmatch(b.Body)
	if m == nil {
		t.Fatal("the chosen list is not outlined")
	}
	y, _ := strconv.ParseFloat(m[1], 64)
	h, _ := strconv.ParseFloat(m[2], 64)
	if posted.Y < y || posted.Y+posted.H > y+h {
		t.Errorf("the first item's outline (y %v, height %v) leaves out its paragraph at y %v", y, h, posted.Y)
	}
}
