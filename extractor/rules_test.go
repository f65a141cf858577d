package extractor_test

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dynamo-rss/dynamo/extractor"
	"github.com/dynamo-rss/dynamo/schema"
)

const page = "https://example.org/news/index.html"

// get reads a field of a document by a short path: channel.title,
// channel.image.url, channel.ext.dc:date, channel.encoded, item2.link,
// item1.id, item1.image.link, items (the indexes, comma-separated).
func get(doc *schema.Document, path string) string {
	if path == "items" {
		var idx []string
		for _, it := range doc.Items {
			idx = append(idx, strconv.Itoa(it.Index))
		}
		return strings.Join(idx, ",")
	}
	head, rest, _ := strings.Cut(path, ".")
	var title, link, desc, id string
	var image *schema.Image
	var ext schema.Extensions
	if head == "channel" {
		c := doc.Channel
		title, link, desc, image, ext = c.Title, c.Link, c.Description, c.Image, c.Extensions
	} else {
		n, err := strconv.Atoi(strings.TrimPrefix(head, "item"))
		if err != nil {
			return "<bad path " + path + ">"
		}
		found := false
		for _, it := range doc.Items {
			if it.Index == n {
				title, link, desc, image, ext, id, found = it.Title, it.Link, it.Description, it.Image, it.Extensions, it.ID, true
			}
		}
		if !found {
			return "<no item>"
		}
	}
	switch {
	case rest == "title":
		return title
	case rest == "link":
		return link
	case rest == "description":
		return desc
	case rest == "id":
		return id
	case rest == "published":
		t, ok := ext.Published()
		if !ok {
			return "<none>"
		}
		return t.Format(time.RFC3339)
	case rest == "encoded":
		v, ok := ext.ContentEncoded()
		if !ok {
			return "<none>"
		}
		return v
	case strings.HasPrefix(rest, "image."):
		if image == nil {
			return "<none>"
		}
		switch rest {
		case "image.url":
			return image.URL
		case "image.link":
			return image.Link
		case "image.title":
			return image.Title
		}
	case strings.HasPrefix(rest, "ext."):
		name := strings.TrimPrefix(rest, "ext.")
		for _, x := range ext {
			if x.Prefix+":"+x.LocalName == name {
				return x.Value
			}
		}
		return "<none>"
	}
	return "<bad path " + path + ">"
}

func diagStrings(ds []extractor.Diagnostic) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.String()
	}
	return out
}

// rule is one case: a page body (with a channel title prepended unless
// noTitle), the fields it must yield, and the diagnostics (each a prefix,
// "LINE:COL: severity: start of message"), all of them, in order.
type rule struct {
	name    string
	body    string
	noTitle bool
	opts    extractor.Options
	want    map[string]string
	diags   []string
}

func runRules(t *testing.T, rules []rule) {
	t.Helper()
	for _, tc := range rules {
		t.Run(tc.name, func(t *testing.T) {
			src := tc.body
			if !tc.noTitle {
				src = "<!-- <channel:title> -->T<!-- </channel:title> -->\n" + src
			}
			opts := tc.opts
			if opts.URL == "" {
				opts.URL = page
			}
			res, err := extractor.Extract(strings.NewReader(src), opts)
			if err != nil {
				t.Fatalf("Extract: %v (diagnostics %q)", err, diagStrings(res.Diagnostics))
			}
			doc := res.Document
			checkDocument(t, doc, true)
			for path, want := range tc.want {
				if got := get(doc, path); got != want {
					t.Errorf("%s = %q, want %q", path, got, want)
				}
			}
			got := diagStrings(res.Diagnostics)
			if len(got) != len(tc.diags) {
				t.Fatalf("diagnostics:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.diags, "\n"))
			}
			for i := range got {
				if !strings.HasPrefix(got[i], tc.diags[i]) {
					t.Errorf("diagnostic %d = %q, want prefix %q", i, got[i], tc.diags[i])
				}
			}
		})
	}
}

func TestForm(t *testing.T) {
	runRules(t, []rule{
		{name: "case-insensitive names, single quotes",
			body: `<!-- <ITEM:Title INDEX='1'> -->x<!-- </item:TITLE> -->`,
			want: map[string]string{"item1.title": "x"}},
		{name: "white space inside the tag",
			body: "<!--\n\t<item:title\n index = \"1\"\n>\n-->x<!-- </item:title\n> -->",
			want: map[string]string{"item1.title": "x"}},
		{name: "empty element form",
			body: `<!-- <channel:image url="/l.png"/> -->`,
			want: map[string]string{"channel.image.url": "https://example.org/l.png"}},
		{name: "closing tag with agreeing index",
			body: `<!-- <item:description index="1"> -->d<!-- </item:description index="1"> -->`,
			want: map[string]string{"item1.description": "d"}},
		{name: "closing tag with disagreeing index",
			body:  `<!-- <item:description index="1"> -->d<!-- </item:description index="2"> -->`,
			want:  map[string]string{"item1.description": "d"},
			diags: []string{`2:39: error: closing </item:description index="2"> at 2:39 does not match <item:description index="1">`}},
		{name: "ordinary comments",
			body: `<!-- <p>hello</p> --><!-- channel:title --><!-- <itemx:title> --><!-- < item:title> -->`},
		{name: "comment starting like an annotation but with more",
			body:  `<!-- <item:title index="1"> and more -->`,
			diags: []string{`2:1: error: annotation "<item:title index=\"1\"> and more" does not parse: annotation does not end with '>'`}},
		{name: "two tags in one comment",
			body:  `<!-- <item:title index="1"><item:link index="1"> -->`,
			diags: []string{`2:1: error: annotation "<item:title index=\"1\"><item:link index=\"1\">" does not parse: expected white space before an attribute`}},
		{name: "unquoted attribute",
			body:  `<!-- <item:title index=1> -->`,
			diags: []string{`2:1: error: annotation "<item:title index=1>" does not parse: attribute index value is not quoted`}},
		{name: "unknown tag loses its region, also inside another",
			body:  `<!-- <item:description index="1"> -->a <!-- <item:subtitle index="1"> -->b<!-- </item:subtitle> --> c<!-- </item:description> -->`,
			want:  map[string]string{"item1.description": "a c"},
			diags: []string{`2:40: error: unknown annotation <item:subtitle> ignored with its region`}},
		{name: "a region nested in a refused one keeps its text",
			body:  `<!-- <item:titel index="1"> -->a <!-- <item:title index="1"> -->b<!-- </item:title> --> c<!-- </item:titel> -->`,
			want:  map[string]string{"item1.title": "b"},
			diags: []string{`2:1: error: unknown annotation <item:titel> ignored with its region`}},
		{name: "look-alikes in raw text elements",
			body: `<script>"<!-- <item:title index='1'> -->s<!-- </item:title> -->"</script>` +
				`<style><!-- <item:title index="2"> -->s<!-- </item:title> --></style>` +
				`<textarea><!-- <item:title index="3"> -->s<!-- </item:title> --></textarea>` +
				`<title><!-- <item:title index="4"> -->s<!-- </item:title> --></title>`,
			want: map[string]string{"items": ""}},
	})
}

func TestRegions(t *testing.T) {
	runRules(t, []rule{
		{name: "nested region excluded from the outer value",
			noTitle: true,
			body:    `<!-- <channel:title> -->Title <!-- <channel:link> -->https://example.org/x<!-- </channel:link> -->end<!-- </channel:title> -->`,
			want:    map[string]string{"channel.title": "Title end", "channel.link": "https://example.org/x"}},
		{name: "region spanning elements: link wraps the start tag only",
			body: `<div>by <!-- <item:link index="1"> --><a href="/u?id=1" title="t"><!-- </item:link> -->Joe</a></div>` +
				`<!-- <item:title index="1"> -->x<!-- </item:title> -->`,
			want: map[string]string{"item1.link": "https://example.org/u?id=1"}},
		{name: "closing an outer region closes the inner one",
			body:  `<!-- <item:description index="1"> -->d <!-- <item:title index="1"> -->t<!-- </item:description> -->`,
			want:  map[string]string{"item1.title": "t", "item1.description": "d"},
			diags: []string{`2:72: error: closing </item:description> at 2:72 does not match <item:title index="1"> opened at 2:40`}},
		{name: "closing with no opening",
			body:  "\n  <!-- </item:title> -->",
			diags: []string{`3:3: warning: closing </item:title> has no open region`}},
		{name: "an attribute given twice: the first value wins, with a warning",
			body:  `<!-- <item:title index="1" index="2"> -->t<!-- </item:title> -->`,
			want:  map[string]string{"item1.title": "t"},
			diags: []string{`2:1: warning: <item:title> gives the attribute index twice; the first value is kept`}},
		{name: "unclosed region",
			body:  `<!-- <item:title index="1"> -->runs to the end`,
			want:  map[string]string{"item1.title": "runs to the end"},
			diags: []string{`2:1: error: unclosed <item:title index="1"> opened at 2:1: expected </item:title>`}},
	})
}

func TestTextValues(t *testing.T) {
	runRules(t, []rule{
		{name: "entities", body: `<!-- <item:title index="1"> -->Caff&egrave; &amp; tea&#8217;s &#x1F600;<!-- </item:title> -->`,
			want: map[string]string{"item1.title": "Caffè & tea’s 😀"}},
		{name: "markup removed", body: `<!-- <item:title index="1"> --><b>bold</b> <i>it</i>al<!-- </item:title> -->`,
			want: map[string]string{"item1.title": "bold ital"}},
		{name: "script and style are not text", body: `<!-- <item:title index="1"> -->a<script>var x = 1;</script>b<style>p{}</style>c<!-- </item:title> -->`,
			want: map[string]string{"item1.title": "abc"}},
		{name: "br and blocks are white space", body: `<!-- <item:title index="1"> -->a<br>b<p>c</p>d<li>e<!-- </item:title> -->`,
			want: map[string]string{"item1.title": "a b c d e"}},
		{name: "white space collapsed and trimmed", body: "<!-- <item:title index=\"1\"> -->\n\t a \r\n\n b\u00a0\u2003c  <!-- </item:title> -->",
			want: map[string]string{"item1.title": "a b c"}},
		{name: "characters XML does not allow", body: "<!-- <item:title index=\"1\"> -->a\x01b\x00c&#1;d&#xFFFE;e\uFFFFf\x0bg&#11;h<!-- </item:title> -->",
			want: map[string]string{"item1.title": "abcdefgh"}},
		{name: "invalid UTF-8", body: "<meta charset=utf-8><!-- <item:title index=\"1\"> -->a\xffb<!-- </item:title> -->",
			want: map[string]string{"item1.title": "a\uFFFDb"}},
	})
}

func TestURLValues(t *testing.T) {
	runRules(t, []rule{
		{name: "first a href wins", body: `<!-- <item:link index="1"> -->text <a name="x">no href</a><a href="/a">a</a><a href="/b">b</a><!-- </item:link> --><!-- <item:title index="1"> -->t<!-- </item:title> -->`,
			want: map[string]string{"item1.link": "https://example.org/a"}},
		{name: "an a inside a region nested in the link region",
			body: `<!-- <item:link index="1"> --><!-- <item:title index="1"> --><a href="/x">T</a><!-- </item:title> --><!-- </item:link> -->`,
			want: map[string]string{"item1.link": "https://example.org/x", "item1.title": "T"}},
		{name: "an a inside a refused region nested in the link region",
			body:  `<!-- <item:link index="1"> --><!-- <item:titel index="1"> --><a href="/y">T</a><!-- </item:titel> --><!-- </item:link> --><!-- <item:title index="1"> -->t<!-- </item:title> -->`,
			want:  map[string]string{"item1.link": "https://example.org/y"},
			diags: []string{`2:31: error: unknown annotation <item:titel> ignored with its region`}},
		{name: "an internationalized host name in its ASCII form",
			body: `<!-- <item:link index="1"> --><a href="http://éxample.org/x">x</a><!-- </item:link> --><!-- <item:title index="1"> -->t<!-- </item:title> -->`,
			want: map[string]string{"item1.link": "http://xn--xample-9ua.org/x"}},
		{name: "text when there is no a", body: `<!-- <item:link index="1"> --> <b>other.html</b> <!-- </item:link> --><!-- <item:title index="1"> -->t<!-- </item:title> -->`,
			want: map[string]string{"item1.link": "https://example.org/news/other.html"}},
		{name: "base href", body: `<base href="https://cdn.example.net/x/"><!-- <item:link index="1"> -->y<!-- </item:link> --><!-- <item:title index="1"> -->t<!-- </item:title> -->`,
			want: map[string]string{"item1.link": "https://cdn.example.net/x/y"}},
		{name: "base href after the region still applies", body: `<!-- <item:link index="1"> -->y<!-- </item:link> --><!-- <item:title index="1"> -->t<!-- </item:title> --><base href="/root/">`,
			want: map[string]string{"item1.link": "https://example.org/root/y"}},
		{name: "javascript dropped", body: `<!-- <item:link index="1"> --><a href="javascript:x()">x</a><!-- </item:link> --><!-- <item:title index="1"> -->t<!-- </item:title> -->`,
			want:  map[string]string{"item1.link": page},
			diags: []string{`2:1: warning: item:link of item 1 "javascript:x()" is a javascript: URL`}},
		{name: "data dropped", body: `<!-- <channel:link> -->data:text/plain,hi<!-- </channel:link> -->`,
			want:  map[string]string{"channel.link": page},
			diags: []string{`2:1: warning: channel:link "data:text/plain,hi" is a data: URL`}},
	})
}

// An internationalized page URL gives links in the ASCII form of its host,
// resolved ones and the page-URL defaults alike.
func TestIDNAPageURL(t *testing.T) {
	res, err := extractor.Extract(strings.NewReader(`<!-- <channel:title> -->T<!-- </channel:title> -->`+
		`<!-- <item:title index="1"> -->t<!-- </item:title> -->`+
		`<!-- <item:title index="2"> -->u<!-- </item:title> --><!-- <item:link index="2"> --><a href="x">x</a><!-- </item:link> -->`),
		extractor.Options{URL: "https://bücher.example/news.html"})
	if err != nil {
		t.Fatal(err)
	}
	d := res.Document
	for _, got := range []struct{ what, link, want string }{
		{"channel link", d.Channel.Link, "https://xn--bcher-kva.example/news.html"},
		{"item 1 link (the page)", d.Items[0].Link, "https://xn--bcher-kva.example/news.html"},
		{"item 2 link (resolved)", d.Items[1].Link, "https://xn--bcher-kva.example/x"},
	} {
		if got.link != got.want {
			t.Errorf("%s = %q, want %q", got.what, got.link, got.want)
		}
	}
}

func TestDefaultURL(t *testing.T) {
	res, err := extractor.Extract(strings.NewReader(`<!-- <channel:title> -->T<!-- </channel:title> --><!-- <channel:link> -->/home<!-- </channel:link> -->`), extractor.Options{})
	if err != nil {
		t.Fatal(err)
	}
	d := res.Document
	if d.URL != extractor.DefaultURL || d.RSSID != extractor.DefaultRSSID || d.Channel.Link != "http://localhost/home" {
		t.Errorf("url %q rssId %q link %q", d.URL, d.RSSID, d.Channel.Link)
	}
}

func TestItems(t *testing.T) {
	item := func(i int, rest string) string {
		return fmt.Sprintf(`<!-- <item:title index="%d"%s> -->t%d<!-- </item:title> -->`, i, rest, i)
	}
	runRules(t, []rule{
		{name: "index order", body: item(3, "") + item(1, "") + item(20, "") + item(2, ""),
			want: map[string]string{"items": "1,2,3,20"}},
		{name: "annotations of one index form one item",
			body: item(1, "") + `<!-- <item:description index="1"> -->d<!-- </item:description> --><!-- <item:link index="1"> -->/l<!-- </item:link> -->`,
			want: map[string]string{"items": "1", "item1.title": "t1", "item1.description": "d", "item1.link": "https://example.org/l"}},
		{name: "id attribute", body: item(1, ` id="abc"`),
			want: map[string]string{"item1.id": "abc"}},
		{name: "id from any annotation of the item", body: item(1, "") + `<!-- <item:link index="1" id="x"> -->/l<!-- </item:link> -->`,
			want: map[string]string{"item1.id": "x"}},
		{name: "id derived from the link is stable across indexes",
			body: `<!-- <item:title index="7"> -->a<!-- </item:title> --><!-- <item:link index="7"> -->/same<!-- </item:link> -->`,
			want: map[string]string{"item7.id": "link-" + sha16("https://example.org/same")}},
		{name: "id derived from title and description without link",
			body: `<!-- <item:title index="1"> -->a<!-- </item:title> --><!-- <item:description index="1"> -->b<!-- </item:description> -->`,
			want: map[string]string{"item1.id": "text-" + sha16("a\x00b"), "item1.link": page}},
		{name: "duplicate id", body: item(1, ` id="x"`) + item(2, ` id="x"`),
			want:  map[string]string{"item1.id": "x", "item2.id": "x-2"},
			diags: []string{`2:63: warning: duplicate item id "x": item 2 gets "x-2"`}},
		{name: "duplicate id whose renaming is taken too", body: item(1, ` id="x"`) + item(2, ` id="x-3"`) + item(3, ` id="x"`) + item(4, ` id="x-3-1"`) + item(5, ` id="x-3"`),
			want: map[string]string{"item1.id": "x", "item2.id": "x-3", "item3.id": "x-3-1", "item4.id": "x-3-1-4", "item5.id": "x-3-5"},
			diags: []string{
				`2:127: warning: duplicate item id "x": item 3 gets "x-3-1"`,
				`2:189: warning: duplicate item id "x-3-1": item 4 gets "x-3-1-4"`,
				`2:255: warning: duplicate item id "x-3": item 5 gets "x-3-5"`,
			}},
		{name: "duplicate index", body: item(1, "") + `<!-- <item:title index="1"> -->again<!-- </item:title> -->`,
			want:  map[string]string{"item1.title": "t1"},
			diags: []string{`2:56: warning: item:title of item 1 given twice (first at 2:1): the first wins`}},
		{name: "non-integer index", body: `<!-- <item:title index="1.5"> -->x<!-- </item:title> -->`,
			want:  map[string]string{"items": ""},
			diags: []string{`2:1: error: <item:title> ignored: index "1.5" is not a positive integer`}},
		{name: "missing index", body: `<!-- <item:title> -->x<!-- </item:title> -->`,
			diags: []string{`2:1: error: <item:title> ignored: missing required attribute index`}},
		{name: "item with neither title nor description dropped",
			body:  `<!-- <item:link index="1"> -->/x<!-- </item:link> -->`,
			want:  map[string]string{"items": ""},
			diags: []string{`2:1: error: item 1 has neither title nor description: dropped`}},
	})
}

func TestChannel(t *testing.T) {
	runRules(t, []rule{
		{name: "defaults", body: ``,
			want: map[string]string{"channel.title": "T", "channel.link": page, "channel.description": ""}},
		{name: "first wins", body: `<!-- <channel:title> -->U<!-- </channel:title> -->`,
			want:  map[string]string{"channel.title": "T"},
			diags: []string{`2:1: warning: channel:title given twice (first at 1:1): the first wins`}},
		{name: "image defaults to the channel's title and link",
			body: `<!-- <channel:link> -->/home<!-- </channel:link> --><!-- <channel:image url="logo.png"/> -->`,
			want: map[string]string{"channel.image.url": "https://example.org/news/logo.png", "channel.image.title": "T", "channel.image.link": "https://example.org/home"}},
		{name: "image without url", body: `<!-- <channel:image title="x"/> -->`,
			want:  map[string]string{"channel.image.url": "<none>"},
			diags: []string{`2:1: error: <channel:image> ignored: missing required attribute url`}},
	})
}

func TestNotAnnotated(t *testing.T) {
	for name, src := range map[string]string{
		"no annotations":  `<html><body><h1>Hello</h1></body></html>`,
		"no title":        `<!-- <item:title index="1"> -->x<!-- </item:title> -->`,
		"empty title":     `<!-- <channel:title> --> <!-- </channel:title> -->`,
		"title in script": `<script><!-- <channel:title> -->x<!-- </channel:title> --></script>`,
		"empty input":     ``,
	} {
		t.Run(name, func(t *testing.T) {
			res, err := extractor.Extract(strings.NewReader(src), extractor.Options{URL: page})
			if !errors.Is(err, extractor.ErrNotAnnotated) {
				t.Fatalf("err = %v, want ErrNotAnnotated", err)
			}
			if res == nil || res.Document != nil || !res.HasErrors() {
				t.Fatalf("result %+v: want no document and an error diagnostic", res)
			}
		})
	}
}

func TestDescriptions(t *testing.T) {
	desc := func(html string) string {
		return `<!-- <item:title index="1"> -->t<!-- </item:title> --><!-- <item:description index="1"> -->` + html + `<!-- </item:description> -->`
	}
	runRules(t, []rule{
		{name: "plain text has no content:encoded", body: desc(`just &amp; text`),
			want: map[string]string{"item1.description": "just & text", "item1.encoded": "<none>"}},
		{name: "markup kept and absolutized", body: desc(`<p>See <a href="a.html">a</a> <img src="/i.png"></p>`),
			want: map[string]string{"item1.description": "See a",
				"item1.encoded": `<p>See <a href="https://example.org/news/a.html" rel="nofollow">a</a> <img src="https://example.org/i.png"></p>`}},
		{name: "script, style, handlers and javascript removed",
			body: desc(`<p onclick="x()">a<script>evil()</script><style>p{}</style><a href="javascript:evil()">b</a></p>`),
			want: map[string]string{"item1.description": "ab", "item1.encoded": `<p>a<a>b</a></p>`}}, // the link is kept bare (see feedPolicy)
		{name: "channel description", body: `<!-- <channel:description> -->a<br>b<!-- </channel:description> -->`,
			want: map[string]string{"channel.description": "a b", "channel.encoded": "a<br>b"}},
		{name: "nested region markup stays balanced",
			body: desc(`x <!-- <item:link index="1"> --><a href="/l"><!-- </item:link> -->y</a>`),
			want: map[string]string{"item1.link": "https://example.org/l", "item1.encoded": `x <a href="https://example.org/l" rel="nofollow">y</a>`}},
	})
}

func TestExtensions(t *testing.T) {
	ext := func(local, v string) string {
		return `<!-- <item:title index="1"> -->t<!-- </item:title> --><!-- <item:extension index="1" uri="http://purl.org/dc/elements/1.1/" prefix="dc" localName="` +
			local + `"> -->` + v + `<!-- </item:extension> -->`
	}
	runRules(t, []rule{
		{name: "plain", body: ext("creator", "Jane <b>Doe</b>"), want: map[string]string{"item1.ext.dc:creator": "Jane Doe"}},
		{name: "paper date", body: ext("date", "December 08, 2005 @ 08:25 AM"), want: map[string]string{"item1.ext.dc:date": "December 08, 2005 @ 08:25 AM", "item1.published": "2005-12-08T08:25:00Z"}},
		{name: "RFC 1123 with zone name", body: ext("date", "Thu, 08 Dec 2005 08:25:00 EST"), want: map[string]string{"item1.ext.dc:date": "Thu, 08 Dec 2005 08:25:00 EST", "item1.published": "2005-12-08T13:25:00Z"}},
		{name: "RFC 3339", body: ext("date", "2005-12-08T08:25:00-02:00"), want: map[string]string{"item1.ext.dc:date": "2005-12-08T08:25:00-02:00", "item1.published": "2005-12-08T10:25:00Z"}},
		{name: "ISO date", body: ext("date", "2005-12-08"), want: map[string]string{"item1.ext.dc:date": "2005-12-08", "item1.published": "2005-12-08T00:00:00Z"}},
		{name: "pubDate", body: ext("pubDate", "8 Dec 2005 08:25"), want: map[string]string{"item1.ext.dc:pubDate": "8 Dec 2005 08:25", "item1.published": "2005-12-08T08:25:00Z"}},
		{name: "unreadable date", body: ext("date", "soon"), want: map[string]string{"item1.ext.dc:date": "soon", "item1.published": "<none>"},
			diags: []string{`2:55: warning: unreadable date "soon" in dc:date: kept as text`}},
		{name: "Italian month name", body: ext("date", "sabato 21 novembre 2026, ore 14:30"), want: map[string]string{"item1.published": "2026-11-21T14:30:00Z"}},
		{name: "date readable only by the resource's layout",
			body: ext("date", "2026.21.11"), opts: extractor.Options{Dates: schema.DateRules{Layout: "2006.02.01"}},
			want: map[string]string{"item1.ext.dc:date": "2026.21.11"}},
		{name: "the same date without the layout", body: ext("date", "2026.21.11"),
			want:  map[string]string{"item1.ext.dc:date": "2026.21.11", "item1.published": "<none>"},
			diags: []string{`2:55: warning: unreadable date "2026.21.11" in dc:date: kept as text, not a publication time`}},
		{name: "unreadable date with a layout", body: ext("pubDate", "21 nov"), opts: extractor.Options{Dates: schema.DateRules{Layout: "02.01.2006"}},
			want:  map[string]string{"item1.ext.dc:pubDate": "21 nov"},
			diags: []string{`2:55: warning: unreadable date "21 nov" in dc:pubDate: kept as text, not a publication time (neither the date_format "02.01.2006" nor the usual forms read it)`}},
		{name: "unreadable channel date",
			body:  `<!-- <channel:extension uri="http://purl.org/dc/elements/1.1/" prefix="dc" localName="date"> -->later<!-- </channel:extension> -->`,
			want:  map[string]string{"channel.ext.dc:date": "later", "channel.published": "<none>"},
			diags: []string{`2:1: warning: unreadable date "later" in dc:date: kept as text, not a publication time`}},
		{name: "other local names are not dates", body: ext("modified", "2005-12-08"), want: map[string]string{"item1.ext.dc:modified": "2005-12-08"}},
		{name: "bad local name", body: `<!-- <channel:extension uri="u" prefix="p" localName="a b"> -->v<!-- </channel:extension> -->`,
			diags: []string{`2:1: error: <channel:extension> ignored: localname "a b" is not an XML name without a colon`}},
	})
}

func TestPublished(t *testing.T) {
	src := `<!-- <channel:title> -->T<!-- </channel:title> --><!-- <item:title index="1"> -->t<!-- </item:title> -->` +
		`<!-- <item:extension index="1" uri="http://purl.org/dc/elements/1.1/" prefix="dc" localName="date"> -->December 08, 2005 @ 08:25 AM<!-- </item:extension> -->`
	res, err := extractor.Extract(strings.NewReader(src), extractor.Options{URL: page})
	if err != nil {
		t.Fatal(err)
	}
	got, ok := res.Document.Items[0].Extensions.Published()
	if !ok || got.Format("2006-01-02 15:04") != "2005-12-08 08:25" {
		t.Errorf("Published() = %v, %v", got, ok)
	}
}

func sha16(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:8])
}

func TestRelativePageURL(t *testing.T) {
	res, err := extractor.Extract(strings.NewReader(`<!-- <channel:title> -->T<!-- </channel:title> -->`), extractor.Options{URL: "news.html"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Document.URL != extractor.DefaultURL {
		t.Errorf("url %q", res.Document.URL)
	}
	if got := diagStrings(res.Diagnostics); len(got) != 1 || got[0] != `1:1: warning: page URL "news.html" is not an absolute URL; using http://localhost/` {
		t.Errorf("diagnostics %q", got)
	}
}

// TestAttributeSpaces: an annotation's attribute value with white space
// around it (id="abc ", index=" 1 ") means what it says without the spaces,
// as a hand-written page gives them; so does a link's href.
func TestAttributeSpaces(t *testing.T) {
	item := func(i, attrs string) string {
		return `<!-- <item:title index="` + i + `"` + attrs + `> -->t<!-- </item:title> -->`
	}
	runRules(t, []rule{
		{name: "id with a trailing space", body: item("1", ` id="abc "`),
			want: map[string]string{"item1.id": "abc"}},
		{name: "id with spaces around", body: item("1", ` id="  abc	"`),
			want: map[string]string{"item1.id": "abc"}},
		{name: "the same id with and without a trailing space is one id",
			body: item("1", ` id="abc"`) + `<!-- <item:link index="1" id="abc "> -->/l<!-- </item:link> -->`,
			want: map[string]string{"item1.id": "abc", "item1.link": "https://example.org/l"}},
		{name: "an id of spaces is empty", body: item("1", ` id="  "`),
			want:  map[string]string{"item1.id": "text-" + sha16("t\x00")},
			diags: []string{`2:1: warning: empty id on <item:title> ignored`}},
		{name: "index with a trailing space", body: item("2 ", ""),
			want: map[string]string{"items": "2", "item2.title": "t"}},
		{name: "index with spaces around", body: item(" 3 ", "") + `<!-- <item:link index=" 3"> -->/l<!-- </item:link> -->`,
			want: map[string]string{"items": "3", "item3.link": "https://example.org/l"}},
		{name: "a closing annotation's index with a trailing space",
			body: `<!-- <item:title index="4"> -->t<!-- </item:title index="4 "> -->`,
			want: map[string]string{"items": "4", "item4.title": "t"}},
		{name: "image attributes with spaces",
			body: `<!-- <channel:image url=" /l.png " title=" Logo " link=" /home "/> -->`,
			want: map[string]string{"channel.image.url": "https://example.org/l.png", "channel.image.title": "Logo", "channel.image.link": "https://example.org/home"}},
		{name: "extension names with spaces",
			body: `<!-- <channel:extension uri=" http://example.org/x " prefix=" ex " localName="y "> -->v<!-- </channel:extension> -->`,
			want: map[string]string{"channel.ext.ex:y": "v"}},
		{name: "base href with spaces around",
			body: `<base href=" /b/ ">` + item("1", "") + `<!-- <item:link index="1"> --><a href="c">c</a><!-- </item:link> -->`,
			want: map[string]string{"item1.link": "https://example.org/b/c"}},
		{name: "href with a trailing space",
			body: item("1", "") + `<!-- <item:link index="1"> --><a href="/a/b ">b</a><!-- </item:link> -->`,
			want: map[string]string{"item1.link": "https://example.org/a/b"}},
	})
}
