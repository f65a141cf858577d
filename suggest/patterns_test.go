package suggest_test

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/text/encoding/simplifiedchinese"

	"github.com/dynamo-rss/dynamo/extractor"
	"github.com/dynamo-rss/dynamo/suggest"
)

// patternTitles are item titles of varied lengths, as lists have them.
var patternTitles = []string{
	"Council approves the new budget after a long night",
	"Bridge closed for repairs until March",
	"Library opens on Sundays",
	"Storm warning for the coast this weekend",
	"School canteen menus change from December",
	"New cycle lane on the harbour road",
	"Museum extends the winter exhibition",
	"Water supply interrupted in the old town",
	"Volunteers plant two hundred trees",
	"Market moves to the square for the holidays",
	"Tax office changes its opening hours",
	"Choir concert raises money for the hospital",
}

func ptitle(i int) string {
	t := patternTitles[i%len(patternTitles)]
	if i >= len(patternTitles) {
		t += fmt.Sprintf(" (%d)", i)
	}
	return t
}

// navFarm is page furniture: a menu in <nav>, and a footer full of links.
const navFarm = `<header class="site-header"><a href="/">Home</a><nav class="main-nav"><ul>
<li><a href="/news/">News</a></li><li><a href="/events/">Events</a></li><li><a href="/about/">About us</a></li>
<li><a href="/contact/">Contact</a></li><li><a href="/services/">Services</a></li><li><a href="/jobs/">Jobs</a></li></ul></nav></header>`

const footerFarm = `<footer id="footer"><div class="cols"><ul><li><a href="/privacy">Privacy</a></li><li><a href="/terms">Terms</a></li>
<li><a href="/imprint">Imprint</a></li><li><a href="/sitemap">Sitemap</a></li><li><a href="/press/">Press</a></li></ul>
<ul><li><a href="https://facebook.example/town">Facebook</a></li><li><a href="https://x.example/town">X</a></li>
<li><a href="https://video.example/town">Video</a></li><li><a href="/newsletter/">Newsletter</a></li></ul></div></footer>`

func patternPage(body string) string {
	return `<!DOCTYPE html><html><head><meta charset="utf-8"><title>Town</title></head><body>` + navFarm + body + footerFarm + `</body></html>`
}

// suggestPatterns are small pages, one for each pattern SELECTORS.md
// names, with the titles (and links) the first proposal must give.
func suggestPatterns() []struct {
	name   string
	page   string
	titles []string
	links  []string // the first items' links, when checked
} {
	var b strings.Builder
	type pattern = struct {
		name   string
		page   string
		titles []string
		links  []string
	}
	var out []pattern
	var titles, links []string
	reset := func() { b.Reset(); titles, links = nil, nil }

	// A card wrapped in one <a>: the heading is the title, not the card.
	reset()
	b.WriteString(`<main><div class="grid">`)
	for i := range 6 {
		fmt.Fprintf(&b, `<a class="card" href="/stories/%d-story"><img src="/img/%d.jpg" alt=""><h3>%s</h3><p>A few lines that tell what the story is about, longer than the title of course.</p><span class="meta">3 min read</span></a>`, i, i, ptitle(i))
		titles = append(titles, ptitle(i))
		links = append(links, fmt.Sprintf("https://town.example/stories/%d-story", i))
	}
	b.WriteString(`</div></main>`)
	out = append(out, pattern{"card in one link", patternPage(b.String()), titles, links})

	// The heading's link is not the item's first link.
	reset()
	b.WriteString(`<main>`)
	for i := range 5 {
		fmt.Fprintf(&b, `<article class="teaser"><a class="kicker" href="/topics/transport">Transport</a><h2 class="headline"><a href="/2026/11/%d/story">%s</a></h2><p>By <a href="/authors/ann">Ann Smith</a>, <time datetime="2026-11-%02dT10:00:00Z">%d November</time></p></article>`, i, ptitle(i), 20-i, 20-i)
		titles = append(titles, ptitle(i))
		links = append(links, fmt.Sprintf("https://town.example/2026/11/%d/story", i))
	}
	b.WriteString(`</main>`)
	out = append(out, pattern{"heading not first link", patternPage(b.String()), titles, links})

	// Items with no container: under day headings, a heading, its
	// paragraphs and a "posted" line with the permalink, all siblings.
	reset()
	b.WriteString(`<div id="content">`)
	for i := range 7 {
		if i%3 == 0 {
			fmt.Fprintf(&b, `<h2>Wednesday, June %d, 2006</h2>`, 14-i/3)
		}
		fmt.Fprintf(&b, `<a name="p%d"></a><h3>%s</h3><p>What happened, told in a few sentences, with <a href="https://elsewhere.example/source/%d">a source</a> and more text than links.</p>`, i, ptitle(i), i)
		fmt.Fprintf(&b, `<blockquote>A quoted passage from the source, long enough to read as text.</blockquote><p class="posted">posted by Ann at 03:4%d AM <a href="/2006/06/%d/post.html">permalink</a> | <a href="https://comments.example/?p=%d">comments</a></p>`, i, i, i)
		titles = append(titles, ptitle(i))
		links = append(links, fmt.Sprintf("https://town.example/2006/06/%d/post.html", i))
	}
	b.WriteString(`</div>`)
	out = append(out, pattern{"runs of siblings under day headings", patternPage(b.String()), titles, links})

	// A results table of two rows per listing, between pagers in tables
	// of their own, and a view switch: the listings, not the pager.
	reset()
	b.WriteString(`<main><table><tr><td><a href="/results?view=gallery">Gallery view</a></td><td><a href="/results?page=2">2</a></td><td><a href="/results?page=3">3</a></td><td><a href="/results?page=2">&gt;</a></td></tr></table><table class="results">`)
	for i := range 6 {
		fmt.Fprintf(&b, `<tr><td colspan="3"><a href="/expose/%d">%s</a></td></tr><tr><td>3 rooms</td><td>72 m²</td><td>820 EUR</td></tr>`, 100+i, ptitle(i))
		titles = append(titles, ptitle(i))
	}
	b.WriteString(`</table><table><tr><td><a href="/results?page=2">2</a></td><td><a href="/results?page=3">3</a></td><td><a href="/results?page=4">4</a></td><td><a href="/results?page=2">›</a></td></tr></table></main>`)
	out = append(out, pattern{"two rows per listing between pagers", patternPage(b.String()), titles, nil})

	// A heading of two links on one line: the title is the whole heading.
	reset()
	b.WriteString(`<main>`)
	for i := range 5 {
		fmt.Fprintf(&b, `<article class="deal"><h2 class="deal-title"><a href="/redirect/%d">%s $%d at</a> <a href="/merchants/shop-%d">Shop %d</a></h2><p>What the deal is, and how long it lasts, in a sentence.</p></article>`, i, ptitle(i), 10+i, i%2, i%2)
		titles = append(titles, fmt.Sprintf("%s $%d at Shop %d", ptitle(i), 10+i, i%2))
		links = append(links, fmt.Sprintf("https://town.example/redirect/%d", i))
	}
	b.WriteString(`</main>`)
	out = append(out, pattern{"heading of two links", patternPage(b.String()), titles, links})

	// A box of headlines in another script than the page's beside its
	// own, longer list.
	reset()
	b.WriteString(`<html lang="zh"><main><ul class="headlines">`)
	han := []string{"市政府公布新的预算方案", "港口路新自行车道开通", "图书馆周日开放", "海岸本周末风暴预警", "博物馆延长冬季展览"}
	for i, h := range han {
		fmt.Fprintf(&b, `<li><a href="/news/2014-09/%d.htm">%s</a></li>`, i, h)
		titles = append(titles, h)
	}
	b.WriteString(`</ul><ul class="box">`)
	for i := range 8 {
		fmt.Fprintf(&b, `<li><a href="/english/2014-09/%d.htm">%s</a></li>`, i, ptitle(i))
	}
	b.WriteString(`</ul></main>`)
	out = append(out, pattern{"box in another language", patternPage(b.String()), titles, nil})

	// Sections of cards: the cards are the items, not the sections.
	reset()
	b.WriteString(`<main>`)
	k := 0
	for s, sec := range []string{"world", "sport", "culture"} {
		fmt.Fprintf(&b, `<section class="block"><h2 class="block-title"><a href="/%s/">%s</a></h2>`, sec, strings.ToUpper(sec[:1])+sec[1:])
		for range 3 {
			fmt.Fprintf(&b, `<div class="card"><h3><a href="/%s/2026/%d-item">%s</a></h3><p>Summary of the story, in a sentence or two for the reader.</p></div>`, sec, k, ptitle(k))
			titles = append(titles, ptitle(k))
			k++
		}
		_ = s
		b.WriteString(`</section>`)
	}
	b.WriteString(`</main>`)
	out = append(out, pattern{"cards not their sections", patternPage(b.String()), titles, nil})

	// A 211-row advisory table beats a 5-link introduction.
	reset()
	b.WriteString(`<main><p>Start here:</p><ul class="intro">`)
	for i, t := range []string{"How we handle security reports", "Our disclosure policy explained", "Supported versions and their end of life", "Verifying release signatures", "Contact the security team"} {
		fmt.Fprintf(&b, `<li><a href="/security/guide-%d">%s</a></li>`, i, t)
	}
	b.WriteString(`</ul><table class="advisories"><thead><tr><th>ID</th><th>Title</th><th>Published</th></tr></thead><tbody>`)
	for i := range 211 {
		t := fmt.Sprintf("Heap overflow in the %s parser when reading crafted input", []string{"XML", "JSON", "YAML", "TOML"}[i%4])
		if i%3 == 0 {
			t = fmt.Sprintf("Denial of service through deeply nested arrays, part %d", i)
		}
		t = fmt.Sprintf("%s #%d", t, i)
		fmt.Fprintf(&b, `<tr><td>TA-2026-%03d</td><td><a href="/advisories/TA-2026-%03d">%s</a></td><td>2026-%02d-%02d</td></tr>`, i, i, t, 1+i%11, 1+i%28)
		titles = append(titles, t)
	}
	b.WriteString(`</tbody></table></main>`)
	out = append(out, pattern{"211 rows beat 5 links", patternPage(b.String()), titles, nil})

	// One list split over several <ul>s, one per day.
	reset()
	b.WriteString(`<main><div id="archive">`)
	k = 0
	for d, n := range []int{2, 3, 2} {
		fmt.Fprintf(&b, `<h3>%d November 2026</h3><ul>`, 26-d)
		for range n {
			fmt.Fprintf(&b, `<li><a href="/archive/2026/11/%d/%d">%s</a></li>`, 26-d, k, ptitle(k))
			titles = append(titles, ptitle(k))
			k++
		}
		b.WriteString(`</ul>`)
	}
	b.WriteString(`</div></main>`)
	out = append(out, pattern{"several uls", patternPage(b.String()), titles, nil})

	// One <dl> per day.
	reset()
	b.WriteString(`<main><div class="listing">`)
	k = 0
	for d := range 3 {
		fmt.Fprintf(&b, `<h2>Mon, %d Nov 2026</h2><dl>`, 23+d)
		for range 2 {
			fmt.Fprintf(&b, `<dt><a href="/papers/2611.%05d">%s</a></dt><dd><div class="authors">A. Author, B. Author</div><p>An abstract that is a good deal longer than a title, as abstracts are.</p></dd>`, k, ptitle(k))
			titles = append(titles, ptitle(k))
			k++
		}
		b.WriteString(`</dl>`)
	}
	b.WriteString(`</div></main>`)
	out = append(out, pattern{"one dl per day", patternPage(b.String()), titles, nil})

	// arXiv-like listings: one <dl> per section, the identifier's link in
	// the <dt>, the title (after a label) and the authors' links in the
	// <dd>.
	reset()
	b.WriteString(`<div id="dlpage"><h1>Computer Science</h1>`)
	k = 0
	for _, sec := range []string{"New submissions", "Cross-lists", "Replacements"} {
		fmt.Fprintf(&b, `<h3>%s</h3><dl>`, sec)
		for range 3 {
			fmt.Fprintf(&b, `<dt><a name="item%d">[%d]</a>&nbsp; <span class="list-identifier"><a href="/abs/2611.%05d" title="Abstract">arXiv:2611.%05d</a> [<a href="/pdf/2611.%05d" title="Download PDF">pdf</a>, <a href="/format/2611.%05d">other</a>]</span></dt>`, k, k+1, k, k, k, k)
			fmt.Fprintf(&b, `<dd><div class="meta"><div class="list-title mathjax"><span class="descriptor">Title:</span> %s</div><div class="list-authors"><span class="descriptor">Authors:</span> <a href="/a/grothendieck_a_1">Alexander Grothendieck-Villanueva</a>, <a href="/a/noether_e_%d">Emmy Noether</a></div><p class="mathjax">An abstract, longer than the title, as abstracts are, with some more words.</p></div></dd>`, ptitle(k), k)
			titles = append(titles, ptitle(k))
			links = append(links, fmt.Sprintf("https://town.example/abs/2611.%05d", k))
			k++
		}
		b.WriteString(`</dl>`)
	}
	b.WriteString(`</div>`)
	out = append(out, pattern{"arxiv dl listing", patternPage(b.String()), titles, links})

	// GitHub's releases: the release name is a visually hidden heading
	// without a link, the notes hold headings of their own.
	reset()
	b.WriteString(`<div id="repo-content-pjax-container"><h1 class="sr-only">Releases: town/app</h1>`)
	for i, v := range []string{"v2.4.0", "v2.3.1", "v2.3.0", "v2.2.0"} {
		fmt.Fprintf(&b, `<section aria-labelledby="hd-%d"><h2 class="sr-only" id="hd-%d">%s</h2><div class="d-flex"><div class="col-md-2"><relative-time datetime="2026-11-%02dT10:00:00Z">Nov %d</relative-time><a href="/town/app/tree/%s" class="Link Link--muted"><svg></svg><span class="ml-1">%s</span></a><a href="/town/app/commit/abc%d" class="Link Link--muted"><code>abc%d</code></a></div><div class="col-md-9"><div class="Box"><div class="Box-body"><span class="f1 text-bold"><a href="/town/app/releases/tag/%s" class="Link--primary Link">%s</a></span><div class="markdown-body my-3"><h2><a class="anchor" href="#whats-changed-%d"></a>What's Changed</h2><ul><li>Faster start by <a class="user-mention" href="/ann">@ann</a> in <a href="/town/app/pull/%d">#%d</a></li></ul><h3>Bug fixes</h3><ul><li>Fix the %s crash on empty input, reported long ago</li></ul></div></div></div></div></div></section>`,
			i, i, v, 20-i, 20-i, v, v, i, i, v, v, i, 100+i, 100+i, v)
		titles = append(titles, v)
	}
	b.WriteString(`</div>`)
	out = append(out, pattern{"github releases", patternPage(b.String()), titles, nil})

	// WordPress: per-post classes do not split the list.
	reset()
	b.WriteString(`<div id="primary" class="content-area"><main id="main" class="site-main">`)
	cats := []string{"news", "events", "news", "council", "sport", "news", "events"}
	for i, c := range cats {
		fmt.Fprintf(&b, `<article id="post-%d" class="post-%d post type-post status-publish format-standard hentry category-%s tag-town"><header class="entry-header"><h2 class="entry-title"><a href="https://town.example/2026/11/%d/post-%d/" rel="bookmark">%s</a></h2><div class="entry-meta"><span class="posted-on"><time class="entry-date published" datetime="2026-11-%02dT08:00:00+00:00">November %d, 2026</time></span></div></header><div class="entry-summary"><p>The first lines of the post, as WordPress shows them in an archive&hellip;</p></div><footer class="entry-footer"><span class="cat-links"><a href="/category/%s/" rel="category tag">%s</a></span></footer></article>`,
			100+i, 100+i, c, 20-i, 100+i, ptitle(i), 20-i, 20-i, c, c)
		titles = append(titles, ptitle(i))
	}
	b.WriteString(`</main></div><aside id="secondary" class="widget-area"><section class="widget widget_recent_entries"><h2 class="widget-title">Recent Posts</h2><ul>`)
	for i := range 5 {
		fmt.Fprintf(&b, `<li><a href="https://town.example/2026/11/%d/post-%d/">%s</a></li>`, 20-i, 100+i, ptitle(i))
	}
	b.WriteString(`</ul></section></aside>`)
	out = append(out, pattern{"wordpress category classes", patternPage(b.String()), titles, nil})

	// A mailto: entry neither is an item nor breaks the list.
	reset()
	b.WriteString(`<main><h1>Guides</h1><ul class="guides">`)
	for i := range 3 {
		fmt.Fprintf(&b, `<li><a href="/guides/%d-guide">%s</a></li>`, i, ptitle(i+3))
		titles = append(titles, ptitle(i+3))
	}
	b.WriteString(`<li><a href="mailto:help@town.example">Write to the help desk</a></li></ul></main>`)
	out = append(out, pattern{"mailto entry", patternPage(b.String()), titles, nil})

	// Navigation and footer link farms rank below five articles.
	reset()
	b.WriteString(`<div class="wrap"><div class="sidebar"><ul>`)
	for i := range 15 {
		fmt.Fprintf(&b, `<li><a href="/tags/t%d/">Tag %d</a></li>`, i, i)
	}
	b.WriteString(`</ul></div><div class="content">`)
	for i := range 5 {
		fmt.Fprintf(&b, `<div class="news"><h4><a href="/news/2026-11-%02d-item">%s</a></h4><span class="date">%02d.11.2026</span></div>`, 20-i, ptitle(i), 20-i)
		titles = append(titles, ptitle(i))
	}
	b.WriteString(`</div></div>`)
	out = append(out, pattern{"link farms low", patternPage(b.String()), titles, nil})
	return out
}

// TestSuggestPatterns: on a page for each pattern, the first proposal is
// the list a person sees, with their titles and links, and its selectors
// are the stable kind (no positions).
func TestSuggestPatterns(t *testing.T) {
	for _, p := range suggestPatterns() {
		t.Run(p.name, func(t *testing.T) {
			sugs, err := suggest.Page([]byte(p.page), extractor.Options{URL: "https://town.example/list/"})
			if err != nil {
				t.Fatal(err)
			}
			if len(sugs.Proposals) == 0 || sugs.Proposals[0].Select == nil {
				t.Fatalf("no select proposal: %+v", sugs)
			}
			for _, pr := range sugs.Proposals {
				t.Logf("%.2f %d %+v (%s)", pr.Score, pr.Count, *pr.Select, pr.Reason)
			}
			best := sugs.Proposals[0]
			if strings.Contains(best.Select.Item, "nth-of-type") {
				t.Errorf("item selector %q uses a position", best.Select.Item)
			}
			got, gotLinks := proposalTitles(t, []byte(p.page), *best.Select)
			if !slices.Equal(got, p.titles) {
				t.Fatalf("titles\n%q\nwant\n%q", got, p.titles)
			}
			if p.links != nil && !slices.Equal(gotLinks[:len(p.links)], p.links) {
				t.Fatalf("links\n%q\nwant\n%q", gotLinks, p.links)
			}
			if best.Count != len(p.titles) || len(best.Items) != min(len(p.titles), suggest.MaxItems) || best.Items[0].Title != p.titles[0] {
				t.Fatalf("proposal count %d, items %+v", best.Count, best.Items)
			}
		})
	}
}

// proposalTitles extracts the page with a proposed block, as the poller
// would, and returns the items' titles and links.
func proposalTitles(t *testing.T, page []byte, spec extractor.SelectSpec) (titles, links []string) {
	t.Helper()
	sel, err := extractor.CompileSelectors(spec)
	if err != nil {
		t.Fatalf("the proposal does not compile: %v", err)
	}
	res, err := sel.Extract(bytes.NewReader(page), extractor.Options{URL: "https://town.example/list/"})
	if err != nil {
		t.Fatalf("the proposal does not extract: %v", err)
	}
	for _, it := range res.Document.Items {
		titles = append(titles, it.Title)
		links = append(links, it.Link)
	}
	return titles, links
}

// TestSuggestOwnFeedsAndSchemaOrg: a page's own feeds come first, and a
// page that publishes its items as schema.org data gets {from:
// schema.org} as its first proposal.
func TestSuggestOwnFeedsAndSchemaOrg(t *testing.T) {
	const withFeed = `<html><head><title>Blog</title>
<link rel="alternate" type="application/rss+xml" title="Blog posts" href="/feed.xml">
<link rel="alternate" type="application/atom+xml" href="https://blog.example/atom.xml">
<link rel="alternate" hreflang="de" href="/de/">
<link rel="stylesheet" href="/s.css"></head><body><p>Posts</p></body></html>`
	sugs, err := suggest.Page([]byte(withFeed), extractor.Options{URL: "https://blog.example/posts/"})
	if err != nil {
		t.Fatal(err)
	}
	want := []suggest.Feed{
		{URL: "https://blog.example/feed.xml", Type: "application/rss+xml", Title: "Blog posts"},
		{URL: "https://blog.example/atom.xml", Type: "application/atom+xml"},
	}
	if !slices.Equal(sugs.Feeds, want) {
		t.Fatalf("feeds %+v, want %+v", sugs.Feeds, want)
	}

	for _, name := range []string{"itemlist-jsonld", "graph-jsonld", "microdata", "microdata-itemlist"} {
		t.Run(name, func(t *testing.T) {
			page, err := os.ReadFile(filepath.Join("..", "extractor", "testdata", "schemaorg", name+".html"))
			if err != nil {
				t.Fatal(err)
			}
			sugs, err := suggest.Page(page, extractor.Options{URL: "https://library.example/events/"})
			if err != nil {
				t.Fatal(err)
			}
			if len(sugs.Proposals) == 0 {
				t.Fatal("no proposal")
			}
			p := sugs.Proposals[0]
			if p.Kind != suggest.KindSchemaOrg || p.Select == nil || p.Select.From != extractor.SchemaOrg || p.Count < 2 || p.Items[0].Title == "" {
				t.Fatalf("first proposal %+v", p)
			}
		})
	}
}

// TestSuggestLegacyCharset: a GB2312 news portal in a table layout, with
// a menu and a column of links beside the list: the page is decoded as
// the poller decodes it, and the list is its dated headlines.
func TestSuggestLegacyCharset(t *testing.T) {
	heads := []string{
		"市政府召开常务会议研究部署冬季供暖工作",
		"全市中小学开展冬季安全教育活动",
		"新建城市公园将于明年春天对外开放",
		"交通部门发布元旦假期出行提示",
		"图书馆延长周末开放时间方便市民阅读",
		"本市举办第十届传统文化艺术节",
		"气象台发布寒潮蓝色预警信号",
	}
	var b strings.Builder
	b.WriteString(`<html><head><meta http-equiv="Content-Type" content="text/html; charset=gb2312"><title>新闻中心</title></head><body>`)
	b.WriteString(`<table width="100%"><tr><td class="menu"><a href="/">首页</a> | <a href="/news/">新闻</a> | <a href="/gov/">政务</a> | <a href="/about/">关于我们</a></td></tr></table>`)
	b.WriteString(`<table width="960"><tr><td width="700" valign="top"><table width="100%" class="newslist">`)
	for i, h := range heads {
		fmt.Fprintf(&b, `<tr><td><img src="/img/dot.gif"> <a href="/news/2026/11%02d/%d.html" target="_blank">%s</a></td><td class="date">2026-11-%02d</td></tr>`, 26-i, 1000+i, h, 26-i)
	}
	b.WriteString(`</table></td><td width="260" valign="top"><table><tr><td><a href="/special/1/">专题一</a></td></tr><tr><td><a href="/special/2/">专题二</a></td></tr><tr><td><a href="/special/3/">专题三</a></td></tr></table></td></tr></table>`)
	b.WriteString(`</body></html>`)
	page, err := simplifiedchinese.GBK.NewEncoder().String(b.String())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(page, heads[0]) {
		t.Fatal("the page is not GB2312 bytes")
	}
	sugs, err := suggest.Page([]byte(page), extractor.Options{URL: "http://news.example.cn/"})
	if err != nil {
		t.Fatal(err)
	}
	if len(sugs.Proposals) == 0 || sugs.Proposals[0].Select == nil {
		t.Fatalf("no proposal: %+v", sugs)
	}
	best := sugs.Proposals[0]
	t.Logf("%+v (%s)", *best.Select, best.Reason)
	sel, err := extractor.CompileSelectors(*best.Select)
	if err != nil {
		t.Fatal(err)
	}
	res, err := sel.Extract(strings.NewReader(page), extractor.Options{URL: "http://news.example.cn/"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, it := range res.Document.Items {
		got = append(got, it.Title)
	}
	if !slices.Equal(got, heads) || best.Items[0].Date != "2026-11-26" {
		t.Fatalf("titles %q, first date %q; want %q", got, best.Items[0].Date, heads)
	}
}

// TestSuggestSchemaOrgOrder: schema.org items come before a page's
// structures, unless the structure is a list at least twice as long that
// holds them (4 in 5 of their links: a carousel of marked items on a page
// of twenty), or they are fewer than three. Under a structure, they come
// second, scored just below it; "best" names the first proposal only when
// it is a structure.
func TestSuggestSchemaOrgOrder(t *testing.T) {
	// marked items, of which the last outside link elsewhere than the list.
	page := func(marked, outside int) string {
		var ld []string
		for i := range marked {
			link := fmt.Sprintf("https://town.example/stories/%d-story", i)
			if i >= marked-outside {
				link = fmt.Sprintf("https://town.example/elsewhere/%d-page", i)
			}
			ld = append(ld, fmt.Sprintf(`{"@type":"ListItem","position":%d,"url":%q,"name":%q}`, i+1, link, ptitle(i)))
		}
		var b strings.Builder
		fmt.Fprintf(&b, `<html><head><title>Town</title><script type="application/ld+json">{"@context":"https://schema.org","@type":"ItemList","itemListElement":[%s]}</script></head><body><main>`, strings.Join(ld, ","))
		for i := range 20 {
			fmt.Fprintf(&b, `<article><h2><a href="/stories/%d-story">%s</a></h2><p>What the story says, in a sentence.</p></article>`, i, ptitle(i))
		}
		b.WriteString(`</main></body></html>`)
		return b.String()
	}
	tests := []struct {
		marked, outside int
		first           string
	}{
		{3, 0, suggest.KindSelectors},
		{10, 0, suggest.KindSelectors}, // the list exactly twice as long
		{11, 0, suggest.KindSchemaOrg},
		{20, 0, suggest.KindSchemaOrg},
		{5, 1, suggest.KindSelectors}, // 4 in 5 in the list
		{5, 2, suggest.KindSchemaOrg}, // 3 in 5
		{2, 2, suggest.KindSelectors}, // fewer than three, not in the list
	}
	for _, tt := range tests {
		sugs, err := suggest.Page([]byte(page(tt.marked, tt.outside)), extractor.Options{URL: "https://town.example/"})
		if err != nil {
			t.Fatal(err)
		}
		var kinds []string
		for _, p := range sugs.Proposals {
			kinds = append(kinds, p.Kind)
		}
		name := fmt.Sprintf("%d marked items, %d outside the list", tt.marked, tt.outside)
		if len(kinds) < 2 || kinds[0] != tt.first || !slices.Contains(kinds, suggest.KindSchemaOrg) {
			t.Fatalf("%s: proposals %v, want %s first and schema.org among them", name, kinds, tt.first)
		}
		first, second := sugs.Proposals[0], sugs.Proposals[1]
		if tt.first == suggest.KindSelectors {
			if second.Kind != suggest.KindSchemaOrg || second.Score != math.Round(first.Score*0.99*100)/100 {
				t.Errorf("%s: second proposal %s scored %v, want schema.org at 0.99 × %v", name, second.Kind, second.Score, first.Score)
			}
		} else if first.Score != 100 {
			t.Errorf("%s: schema.org first, scored %v, want 100", name, first.Score)
		}
		for i, p := range sugs.Proposals {
			if best := strings.HasPrefix(p.Reason, "best: "); best != (i == 0 && p.Kind == suggest.KindSelectors) {
				t.Errorf("%s: proposal %d (%s) reason %q", name, i+1, p.Kind, p.Reason)
			}
		}
	}
}

// TestSuggestAnnotated: an annotated page's first proposal is its
// annotations, with no select block, and the items they yield.
func TestSuggestAnnotated(t *testing.T) {
	page, err := os.ReadFile(filepath.Join("..", "testdata", "docs", "example.html"))
	if err != nil {
		t.Fatal(err)
	}
	sugs, err := suggest.Page(page, extractor.Options{URL: "https://greenfield.example.org/news/"})
	if err != nil {
		t.Fatal(err)
	}
	if len(sugs.Proposals) == 0 {
		t.Fatal("no proposal")
	}
	p := sugs.Proposals[0]
	if p.Kind != suggest.KindAnnotations || p.Select != nil || p.Count != 2 || p.Items[0].Title == "" {
		t.Fatalf("first proposal %+v", p)
	}
}

// TestSuggestListProposedWhole: a list split over two sections, some of
// its items of another class, is proposed once, whole; its pieces (a
// section's items, the items of one class) are not proposed after it.
func TestSuggestListProposedWhole(t *testing.T) {
	var b strings.Builder
	b.WriteString(`<html><head><title>Town</title></head><body><main><section class="featured">`)
	for i := range 20 {
		if i == 5 {
			b.WriteString(`</section><section class="latest">`)
		}
		cls := ""
		if i == 4 || (i >= 10 && i < 17) {
			cls = ` class="sponsored"`
		}
		fmt.Fprintf(&b, `<article%s><h2><a href="/stories/%d-story">%s</a></h2><p>What the story says, in a sentence.</p></article>`, cls, i, ptitle(i))
	}
	b.WriteString(`</section></main></body></html>`)
	sugs, err := suggest.Page([]byte(b.String()), extractor.Options{URL: "https://town.example/"})
	if err != nil {
		t.Fatal(err)
	}
	if len(sugs.Proposals) == 0 || sugs.Proposals[0].Count != 20 {
		t.Fatalf("proposals %+v, want the list of 20 first", sugs.Proposals)
	}
	for _, p := range sugs.Proposals[1:] {
		t.Errorf("a piece of the list proposed after it: %d items (%s)", p.Count, p.Reason)
	}
}
