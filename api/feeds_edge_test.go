package api

import (
	"cmp"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/japanese"

	"github.com/dynamo-rss/dynamo/extractor"
	"github.com/dynamo-rss/dynamo/schema"
	"github.com/dynamo-rss/dynamo/schema/schematest"
)

// edgePage is one annotated page of [TestFeedEdgeContent]: its bytes as the
// origin serves them and the Content-Type it sends.
type edgePage struct {
	id, contentType string
	body            []byte
	url             string // "": https://pages.example.org/dir/{id}.html
}

// edgeItem writes an item's annotations: title, link (as <a href>),
// description and extensions, each left out when empty.
func edgeItem(index int, id, title, href, desc string, ext ...string) string {
	var b strings.Builder
	attr := fmt.Sprintf(`index="%d"`, index)
	if id != "" {
		attr += ` id="` + id + `"`
	}
	if title != "" {
		fmt.Fprintf(&b, "<h2><!-- <item:title %s> -->%s<!-- </item:title> --></h2>\n", attr, title)
	}
	if href != "" {
		fmt.Fprintf(&b, "<!-- <item:link %s> --><a href=\"%s\">more</a><!-- </item:link> -->\n", attr, href)
	}
	if desc != "" {
		fmt.Fprintf(&b, "<div><!-- <item:description %s> -->%s<!-- </item:description> --></div>\n", attr, desc)
	}
	for i := 0; i+2 < len(ext); i += 3 { // uri, prefix:localName, value
		prefix, local, _ := strings.Cut(ext[i+1], ":")
		fmt.Fprintf(&b, "<!-- <item:extension index=\"%d\" uri=\"%s\" prefix=\"%s\" localName=\"%s\"> -->%s<!-- </item:extension> -->\n",
			index, ext[i], prefix, local, ext[i+2])
	}
	return b.String()
}

// edgeDates are dates in the forms ANNOTATIONS.md accepts, at the edges of
// what RFC 3339 and RFC 822 can write, and beyond (refused: the item is
// dated by when it was seen).
var edgeDates = []string{
	"December 08, 2005 @ 08:25 AM",
	"Mon, 02 Jan 2006 15:04:05 GMT",
	"Mon, 02 Jan 2006 15:04:05 CEST",
	"2026-11-21T10:35:00+01:00",
	"2026-11-21",
	"21.11.2026",
	"21/11/2026 14:30",
	"sabato 21 novembre 2026, ore 14:30",
	"le 1er mars 2026 à 14h30",
	"21 de noviembre de 2026",
	"0001-01-01T00:00:00Z",
	"0999-06-15T12:00:00Z",
	"9999-12-31T23:59:59Z",
	"9999-12-31T23:59:59-05:00", // year 10000 in UTC
	"0001-01-01T00:30:00+01:00", // year 0 in UTC
	"soon",
}

// edgePages are legal but unusual pages: control characters, characters
// outside the BMP, right-to-left text, CDATA, entities, very long text,
// items with only a title or only a description, odd and duplicate links,
// odd item ids, extensions in the feed formats' own namespaces, dates of
// every accepted form, other charsets, no items, an empty channel title.
func edgePages(t *testing.T) []edgePage {
	t.Helper()
	long := strings.Repeat("A very long title, ", 300)
	var b strings.Builder
	b.WriteString(`<!DOCTYPE html><html lang="he" dir="rtl"><head><meta charset="utf-8"><title>x</title></head><body>
<h1><!-- <channel:title> -->Edge &nbsp;&amp;amp; ☃ 😀 עברית العربية` + "\x01\x0b\x7f" + `&#1; ` + long + `<!-- </channel:title> --></h1>
<!-- <channel:description> --><!-- </channel:description> -->
<!-- <channel:image url="//cdn.example.org/logo.png" /> -->
<!-- <channel:extension uri="http://purl.org/dc/elements/1.1/" prefix="dc" localName="language"> -->he<!-- </channel:extension> -->
<!-- <channel:extension uri="http://purl.org/dc/elements/1.1/" prefix="dc" localName="rights"> -->© the editors<!-- </channel:extension> -->
<!-- <channel:extension uri="http://www.w3.org/2005/Atom" prefix="atom" localName="id"> -->urn:x-evil:channel<!-- </channel:extension> -->
`)
	n := 0
	item := func(id, title, href, desc string, ext ...string) {
		n++
		b.WriteString(edgeItem(n, id, title, href, desc, ext...))
	}
	item("", "", "", `<p>Only a <b>description</b>, with ]]&gt; and <![CDATA[ a CDATA section ]]> and `+"\x01"+`&#1; and 😀 <a href="/rel?a=1&amp;b=2">a link</a></p>`)
	item("", "Only a title ‮ שלום 😀", "", "")
	item("", "A mailto link", "mailto:someone@example.org", "mail")
	item("", "A protocol-relative link", "//other.example.org/path?q=1&amp;r=2", "")
	item("", "An IDN host, spaces and a fragment", "http://bücher.example/ü a b.html#frag ment", "")
	item("", "Duplicate link one", "/same.html", "first")
	item("", "Duplicate link two", "/same.html", "second")
	item("", "Duplicate link three", "/same.html#", "third")
	item("a b/c?d#e&amp;&lt;ü&gt; 😀", "An odd id", "/odd.html", "id with every reserved character")
	item("", long, "/long.html", strings.Repeat("Long description. ", 2000))
	item("", "   ", "/blank.html", "a blank title")
	item("", "Atom and RDF namespaces in extensions", "/ns.html", "x",
		nsAtom, "atom:id", "urn:x-evil:1",
		nsAtom, "atom:title", "second title",
		nsRDF, "rdf:about", "https://evil.example/",
		nsRDF, "rdf:li", "li",
		nsRSS1, "rss:title", "rss1 title",
		"http://example.org/ns", "xml1:thing", "reserved prefix",
		"http://example.org/ns", "ex:a-b.c", "odd local name",
		"relative/ns", "rel:x", "a relative namespace name",
		"http://example.org/a b", "sp:x", "a namespace name with a space",
		"urn:x-ü", "u:ünïcode", "non-ASCII names",
		"http://example.org/ns", "rdf:x", "the rdf prefix bound to another namespace")
	for i, d := range edgeDates {
		item("", fmt.Sprintf("Date %d: %s", i, d), fmt.Sprintf("/dates/%d.html", i), "", schema.DCNamespace, "dc:date", d)
	}
	item("", "A pubDate", "/pub.html", "", "http://example.org/rss2", "r:pubDate", "Tue, 10 Jun 2003 04:00:00 GMT")
	b.WriteString(`<!-- <item:image index="1" url="/img/a b.png" title="an image" /> -->
<!-- <item:image index="2" url="https://img.example.org/no-extension" /> -->
</body></html>`)

	encode := func(enc encoding.Encoding, s string) []byte {
		out, err := enc.NewEncoder().String(s)
		if err != nil {
			t.Fatalf("encode test page: %v", err)
		}
		return []byte(out)
	}
	charsetPage := func(meta, title, desc string) string {
		return `<html><head>` + meta + `</head><body>
<h1><!-- <channel:title> -->` + title + `<!-- </channel:title> --></h1>
<!-- <channel:description> -->` + desc + `<!-- </channel:description> -->
` + edgeItem(1, "", title, "/a.html", desc) + `</body></html>`
	}
	return []edgePage{
		{id: "edge", contentType: "text/html", body: []byte(b.String())},
		{id: "cp1252", contentType: "text/html", body: encode(charmap.Windows1252,
			charsetPage(`<meta http-equiv="Content-Type" content="text/html; charset=windows-1252">`, "Café “quoted” – €5 … Œuvre", "Ça coûte 5 €"))},
		{id: "latin1", contentType: "text/html", body: []byte(charsetPage(`<meta http-equiv="Content-Type" content="text/html; charset=ISO-8859-1">`,
			"Caf\xe9 \x93quoted\x94 \x85", "na\xefve \xa0 \xbd"))},
		{id: "sjis", contentType: "text/html", body: encode(japanese.ShiftJIS,
			charsetPage(`<meta charset="Shift_JIS">`, "日本語のニュース", "今日の出来事"))},
		{id: "Ωmega id/ü?#&;+", url: "https://bücher.example/a b/c.html?q=1 2", contentType: "text/html", body: []byte(charsetPage("", "An odd resource id and page URL", ""))},
		{id: "empty", contentType: "text/html", body: []byte(`<html><body><!-- <channel:title> -->No items<!-- </channel:title> --></body></html>`)},
		// The extractor refuses a page whose channel:title is empty; the
		// test blanks the title after extraction (XMLData allows it).
		{id: "notitle", contentType: "text/html", body: []byte(`<html><body><!-- <channel:title> -->blanked<!-- </channel:title> -->
<!-- <channel:description> -->A channel whose title is empty<!-- </channel:description> -->
` + edgeItem(1, "", "An item", "/a.html", "") + `</body></html>`)},
	}
}

// TestFeedEdgeContent extracts unusual but legal pages with the real
// extractor, stores them in Badger, serves them over loopback HTTP and checks
// every feed form in every format: with the external validators
// (feedparser, xmllint, rapper; xmllint --schema for the stored XMLData),
// with gofeed, and against each format's own requirements where validators
// are lenient.
func TestFeedEdgeContent(t *testing.T) {
	py := feedparserPython(t)
	db := openDB(t)
	ctx := context.Background()
	docs := map[string]*schema.Document{}
	for i, p := range edgePages(t) {
		res, err := extractor.Extract(strings.NewReader(string(p.body)), extractor.Options{
			URL: cmp.Or(p.url, "https://pages.example.org/dir/"+p.id+".html"), RSSID: p.id, ContentType: p.contentType,
			Timestamp: fdT0.Add(time.Duration(i) * time.Minute),
		})
		if err != nil {
			t.Fatalf("extract %s: %v", p.id, err)
		}
		if p.id == "notitle" {
			res.Document.Channel.Title = ""
		}
		if _, err := db.Save(ctx, res.Document); err != nil {
			t.Fatalf("save %s: %v", p.id, err)
		}
		stored, _, err := db.Version(ctx, p.id, 1)
		if err != nil {
			t.Fatalf("read back %s: %v", p.id, err)
		}
		xmldata, err := schema.Marshal(stored)
		if err != nil {
			t.Fatalf("marshal %s: %v", p.id, err)
		}
		schematest.ValidateXSD(t, xmldata)
		docs[p.id] = stored
	}
	if _, err := extractor.Extract(strings.NewReader(`<html><body><h1>No channel title</h1>`+edgeItem(1, "", "An item", "/a.html", "")+`</body></html>`),
		extractor.Options{URL: "https://pages.example.org/x.html", RSSID: "x"}); !errors.Is(err, extractor.ErrNotAnnotated) {
		t.Errorf("a page without channel:title: %v, want ErrNotAnnotated", err)
	}
	if got := docs["cp1252"].Channel.Title; got != "Café “quoted” – €5 … Œuvre" {
		t.Errorf("windows-1252 title = %q", got)
	}
	if got := docs["sjis"].Channel.Title; got != "日本語のニュース" {
		t.Errorf("Shift_JIS title = %q", got)
	}
	if got := docs["latin1"].Channel.Title; got != "Café “quoted” …" { // ISO-8859-1 is read as windows-1252, as browsers do
		t.Errorf("ISO-8859-1 title = %q", got)
	}

	// Two resources the poller knows but has no version of: empty feeds
	// whose description is the last poll's error, whatever bytes it holds.
	poller := &svcPoller{List: []ResourceStatus{
		{ID: "unpolled", URL: "https://pages.example.org/unpolled.html", Since: fdT0},
		{ID: "failed", URL: "https://pages.example.org/failed.html", Since: fdT0, LastPoll: fdT0.Add(time.Minute),
			LastError: "GET: 500 \x01\x0b <b>&amp;</b> ]]> 😀 \xff"},
	}}
	srv := httptest.NewServer(newFDServer(t, db, func(o *Options) { o.Poller = poller }))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	var files []string
	targets := []string{"/resources", "/resources/unpolled", "/resources/failed"}
	for _, p := range edgePages(t) {
		path := "/resources/" + url.PathEscape(p.id)
		targets = append(targets, path, path+"?index=1", path+"?max=100")
	}
	for i, target := range targets {
		for _, format := range fdFormats {
			body := edgeGet(t, srv.URL+target+sep(target)+"type="+format)
			name := fmt.Sprintf("%02d-%s.%s", i, strings.NewReplacer("/", "_", "?", "_", "=", "_", "%", "_").Replace(target), format)
			path := filepath.Join(dir, name)
			if err := os.WriteFile(path, body, 0o644); err != nil {
				t.Fatal(err)
			}
			files = append(files, path)
			t.Run(name, func(t *testing.T) {
				if !utf8.Valid(body) {
					t.Errorf("not UTF-8")
				}
				feed := parseFeed(t, body)
				// Our own links (self, permalinks, resource feeds) lead somewhere.
				own := []string{feed.FeedLink}
				for _, it := range feed.Items {
					own = append(own, it.Link)
				}
				for _, l := range own {
					// /view/{id} is a page for people (package ui, whose
					// tests open it); the api's own links must answer here.
					if rest, ok := strings.CutPrefix(l, fdBase); ok && !strings.HasPrefix(rest, "/view/") {
						edgeGet(t, srv.URL+rest)
					}
				}
				if want := edgeItemCount(docs, target); want >= 0 && len(feed.Items) != want {
					t.Errorf("%d items, want %d", len(feed.Items), want)
				}
				if strings.Contains(target, "/edge") { // the page's channel extensions are not lost
					if format == "json" {
						var doc struct{ Language string }
						if err := json.Unmarshal(body, &doc); err != nil || doc.Language != "he" {
							t.Errorf("JSON Feed language %q, want he (dc:language) %v", doc.Language, err)
						}
					} else if !strings.Contains(string(body), `<dc:rights xmlns:dc="http://purl.org/dc/elements/1.1/">© the editors</dc:rights>`) {
						t.Errorf("the channel's dc:rights extension is missing")
					}
				}
				switch format {
				case "rss2":
					checkRSS2(t, body)
				case "atom":
					checkAtom(t, body)
				case "rss1":
					checkRSS1(t, body)
				case "json":
					checkJSONFeed(t, body)
				}
			})
		}
	}
	validateFeedFiles(t, py, files)
}

// edgeItemCount is how many items the feed at target has, -1: not checked.
func edgeItemCount(docs map[string]*schema.Document, target string) int {
	path, query, _ := strings.Cut(target, "?")
	id, _ := url.PathUnescape(strings.TrimPrefix(path, "/resources/"))
	doc := docs[id]
	switch {
	case path == "/resources":
		return len(docs)
	case doc == nil:
		return 0
	case query == "":
		return 1 // one version each
	default:
		return len(doc.Items)
	}
}

func edgeGet(t *testing.T, u string) []byte {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s = %d\n%s", u, resp.StatusCode, body)
	}
	return body
}

// checkIRI reports an id or link that is not an absolute IRI: a scheme, no
// white space or control characters.
func checkIRI(t *testing.T, what, s string) {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" || strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f || r == '<' || r == '>' || r == '"' }) {
		t.Errorf("%s %q is not an absolute IRI (%v)", what, s, err)
	}
}

type xmlText struct {
	XMLName xml.Name
	Text    string     `xml:",chardata"`
	Attrs   []xml.Attr `xml:",any,attr"`
}

func (x xmlText) attr(name string) (string, bool) {
	for _, a := range x.Attrs {
		if a.Name.Local == name {
			return a.Value, true
		}
	}
	return "", false
}

// noNS returns the elements in no namespace (RSS 2.0's own).
func noNS(els []xmlText) []xmlText {
	var out []xmlText
	for _, e := range els {
		if e.XMLName.Space == "" {
			out = append(out, e)
		}
	}
	return out
}

// checkRSS2 checks RSS 2.0's requirements: channel title, link and
// description; an item with a title or a description; RFC 822 dates; guids
// that are not permalinks; enclosures with url, length and type.
func checkRSS2(t *testing.T, body []byte) {
	t.Helper()
	var doc struct {
		Channel struct {
			Title       []xmlText `xml:"title"`
			Link        []xmlText `xml:"link"`
			Description []xmlText `xml:"description"`
			PubDate     []xmlText `xml:"pubDate"`
			Items       []struct {
				Title       []xmlText `xml:"title"`
				Description []xmlText `xml:"description"`
				Link        []xmlText `xml:"link"`
				PubDate     []xmlText `xml:"pubDate"`
				GUID        []xmlText `xml:"guid"`
				Enclosure   []xmlText `xml:"enclosure"`
			} `xml:"item"`
		} `xml:"channel"`
	}
	if err := xml.Unmarshal(body, &doc); err != nil {
		t.Fatalf("RSS 2.0: %v", err)
	}
	checkNoHijack(t, body, "item")
	ch := &doc.Channel
	for name, els := range map[string][]xmlText{"title": ch.Title, "link": ch.Link, "description": ch.Description} {
		if els = noNS(els); len(els) != 1 || strings.TrimSpace(els[0].Text) == "" {
			t.Errorf("RSS 2.0 channel %s: %d elements %v, want one non-empty", name, len(els), els)
		}
	}
	checkRFC822 := func(what string, els []xmlText) {
		for _, e := range noNS(els) {
			if _, err := time.Parse(time.RFC1123Z, e.Text); err != nil || len(strings.Fields(e.Text)[3]) != 4 {
				t.Errorf("RSS 2.0 %s %q is not an RFC 822 date: %v", what, e.Text, err)
			}
		}
	}
	checkRFC822("channel pubDate", ch.PubDate)
	guids := map[string]bool{}
	for i, it := range ch.Items {
		title, desc := noNS(it.Title), noNS(it.Description)
		if (len(title) == 0 || strings.TrimSpace(title[0].Text) == "") && (len(desc) == 0 || strings.TrimSpace(desc[0].Text) == "") {
			t.Errorf("RSS 2.0 item %d has neither title nor description", i)
		}
		if links := noNS(it.Link); len(links) == 1 {
			checkIRI(t, fmt.Sprintf("RSS 2.0 item %d link", i), links[0].Text)
		}
		if len(noNS(it.PubDate)) != 1 {
			t.Errorf("RSS 2.0 item %d: %d pubDates, want 1 (every item is dated)", i, len(noNS(it.PubDate)))
		}
		checkRFC822(fmt.Sprintf("item %d pubDate", i), it.PubDate)
		if len(it.GUID) != 1 {
			t.Errorf("RSS 2.0 item %d: %d guids", i, len(it.GUID))
		} else {
			g := it.GUID[0]
			if p, _ := g.attr("isPermaLink"); p != "false" || g.Text == "" || guids[g.Text] {
				t.Errorf("RSS 2.0 item %d guid %q isPermaLink=%q (empty or duplicate: %v)", i, g.Text, p, guids[g.Text])
			}
			guids[g.Text] = true
		}
		for _, e := range noNS(it.Enclosure) {
			u, _ := e.attr("url")
			l, _ := e.attr("length")
			typ, _ := e.attr("type")
			checkIRI(t, "RSS 2.0 enclosure url", u)
			if l == "" || strings.Trim(l, "0123456789") != "" || !strings.Contains(typ, "/") {
				t.Errorf("RSS 2.0 item %d enclosure length %q type %q", i, l, typ)
			}
		}
	}
}

// checkAtom checks RFC 4287: the feed and every entry have exactly one id
// (an IRI), title and updated (RFC 3339); an author at feed level or in
// every entry; at most one alternate link per type; text constructs typed.
func checkAtom(t *testing.T, body []byte) {
	t.Helper()
	type entry struct {
		ID      []xmlText `xml:"http://www.w3.org/2005/Atom id"`
		Title   []xmlText `xml:"http://www.w3.org/2005/Atom title"`
		Updated []xmlText `xml:"http://www.w3.org/2005/Atom updated"`
		Pub     []xmlText `xml:"http://www.w3.org/2005/Atom published"`
		Author  []xmlText `xml:"http://www.w3.org/2005/Atom author"`
		Link    []xmlText `xml:"http://www.w3.org/2005/Atom link"`
		Summary []xmlText `xml:"http://www.w3.org/2005/Atom summary"`
		Content []xmlText `xml:"http://www.w3.org/2005/Atom content"`
	}
	var doc struct {
		entry
		Subtitle []xmlText `xml:"http://www.w3.org/2005/Atom subtitle"`
		Entries  []entry   `xml:"http://www.w3.org/2005/Atom entry"`
	}
	if err := xml.Unmarshal(body, &doc); err != nil {
		t.Fatalf("Atom: %v", err)
	}
	checkNoHijack(t, body, "entry")
	check := func(what string, e *entry) {
		for name, els := range map[string][]xmlText{"id": e.ID, "title": e.Title, "updated": e.Updated} {
			if len(els) != 1 {
				t.Errorf("Atom %s: %d %s elements, want 1", what, len(els), name)
			}
		}
		for _, id := range e.ID {
			checkIRI(t, "Atom "+what+" id", id.Text)
		}
		for _, d := range append(e.Updated, e.Pub...) {
			if _, err := time.Parse(time.RFC3339, d.Text); err != nil || len(d.Text) < 20 || d.Text[4] != '-' {
				t.Errorf("Atom %s date %q is not RFC 3339: %v", what, d.Text, err)
			}
		}
		alternates := map[string]bool{}
		for _, l := range e.Link {
			href, _ := l.attr("href")
			checkIRI(t, "Atom "+what+" link", href)
			if rel, ok := l.attr("rel"); !ok || rel == "alternate" {
				typ, _ := l.attr("type")
				if alternates[typ] {
					t.Errorf("Atom %s: two alternate links of type %q", what, typ)
				}
				alternates[typ] = true
			}
		}
		for _, tc := range append(append(append([]xmlText{}, e.Title...), e.Summary...), e.Content...) {
			if typ, ok := tc.attr("type"); ok && typ != "text" && typ != "html" && typ != "xhtml" {
				t.Errorf("Atom %s %s type %q", what, tc.XMLName.Local, typ)
			}
		}
	}
	check("feed", &doc.entry)
	ids := map[string]bool{}
	for i := range doc.Entries {
		e := &doc.Entries[i]
		check(fmt.Sprintf("entry %d", i), e)
		if len(doc.Author) == 0 && len(e.Author) == 0 {
			t.Errorf("Atom entry %d has no author and neither has the feed", i)
		}
		if len(e.Content) == 0 && !hasAlternate(e.Link) {
			t.Errorf("Atom entry %d has neither content nor an alternate link", i)
		}
		for _, id := range e.ID {
			if ids[id.Text] {
				t.Errorf("Atom entry %d: duplicate id %q", i, id.Text)
			}
			ids[id.Text] = true
		}
	}
}

func hasAlternate(links []xmlText) bool {
	for _, l := range links {
		if rel, ok := l.attr("rel"); !ok || rel == "alternate" {
			return true
		}
	}
	return false
}

// checkRSS1 checks RSS 1.0: every rdf:about absolute and unique, the
// channel's items Seq listing exactly the items, in order.
func checkRSS1(t *testing.T, body []byte) {
	t.Helper()
	type about struct {
		About string `xml:"http://www.w3.org/1999/02/22-rdf-syntax-ns# about,attr"`
	}
	var doc struct {
		Channel struct {
			about
			Title       string `xml:"http://purl.org/rss/1.0/ title"`
			Description string `xml:"http://purl.org/rss/1.0/ description"`
			Items       struct {
				Seq struct {
					Li []struct {
						Resource string `xml:"http://www.w3.org/1999/02/22-rdf-syntax-ns# resource,attr"`
					} `xml:"http://www.w3.org/1999/02/22-rdf-syntax-ns# li"`
				} `xml:"http://www.w3.org/1999/02/22-rdf-syntax-ns# Seq"`
			} `xml:"http://purl.org/rss/1.0/ items"`
		} `xml:"http://purl.org/rss/1.0/ channel"`
		Image *about `xml:"http://purl.org/rss/1.0/ image"`
		Items []struct {
			about
			Title []xmlText `xml:"http://purl.org/rss/1.0/ title"`
			Link  []xmlText `xml:"http://purl.org/rss/1.0/ link"`
		} `xml:"http://purl.org/rss/1.0/ item"`
	}
	if err := xml.Unmarshal(body, &doc); err != nil {
		t.Fatalf("RSS 1.0: %v", err)
	}
	checkNoHijack(t, body, "item")
	if strings.TrimSpace(doc.Channel.Description) == "" || strings.TrimSpace(doc.Channel.Title) == "" {
		t.Errorf("RSS 1.0 channel title %q, description %q: both are required", doc.Channel.Title, doc.Channel.Description)
	}
	seen := map[string]bool{}
	add := func(what, s string) {
		checkIRI(t, "RSS 1.0 "+what+" rdf:about", s)
		if seen[s] {
			t.Errorf("RSS 1.0 %s rdf:about %q is not unique", what, s)
		}
		seen[s] = true
	}
	add("channel", doc.Channel.About)
	if doc.Image != nil {
		add("image", doc.Image.About)
	}
	seq := doc.Channel.Items.Seq.Li
	if len(seq) != len(doc.Items) {
		t.Errorf("RSS 1.0: %d items in the Seq, %d items", len(seq), len(doc.Items))
	}
	for i, it := range doc.Items {
		add(fmt.Sprintf("item %d", i), it.About)
		if i < len(seq) && seq[i].Resource != it.About {
			t.Errorf("RSS 1.0 Seq %d = %q, item %q", i, seq[i].Resource, it.About)
		}
		if len(it.Title) != 1 || len(it.Link) != 1 {
			t.Errorf("RSS 1.0 item %d: %d titles, %d links, want 1 each", i, len(it.Title), len(it.Link))
		}
	}
}

// checkJSONFeed checks JSON Feed 1.1: version, title and items; each item a
// unique string id and content; RFC 3339 dates; no null anywhere.
func checkJSONFeed(t *testing.T, body []byte) {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatalf("JSON Feed: %v", err)
	}
	var nulls func(path string, v any)
	nulls = func(path string, v any) {
		switch v := v.(type) {
		case nil:
			t.Errorf("JSON Feed: null at %s", path)
		case map[string]any:
			for k, x := range v {
				nulls(path+"."+k, x)
			}
		case []any:
			for i, x := range v {
				nulls(fmt.Sprintf("%s[%d]", path, i), x)
			}
		}
	}
	nulls("$", doc)
	if doc["version"] != "https://jsonfeed.org/version/1.1" {
		t.Errorf("JSON Feed version %v", doc["version"])
	}
	if s, _ := doc["title"].(string); s == "" {
		t.Errorf("JSON Feed title %v", doc["title"])
	}
	items, ok := doc["items"].([]any)
	if !ok {
		t.Fatalf("JSON Feed items %v", doc["items"])
	}
	ids := map[string]bool{}
	for i, x := range items {
		it, _ := x.(map[string]any)
		id, ok := it["id"].(string)
		if !ok || id == "" || ids[id] {
			t.Errorf("JSON Feed item %d id %#v (empty, not a string or duplicate)", i, it["id"])
		}
		ids[id] = true
		h, _ := it["content_html"].(string)
		txt, _ := it["content_text"].(string)
		if h == "" && txt == "" {
			t.Errorf("JSON Feed item %d has neither content_html nor content_text", i)
		}
		if _, ok := it["date_published"]; !ok {
			t.Errorf("JSON Feed item %d has no date_published (every item is dated)", i)
		}
		for _, k := range []string{"date_published", "date_modified"} {
			if d, ok := it[k]; ok {
				s, _ := d.(string)
				if _, err := time.Parse(time.RFC3339, s); err != nil || len(s) < 20 || s[4] != '-' {
					t.Errorf("JSON Feed item %d %s %v is not RFC 3339", i, k, d)
				}
			}
		}
		for _, k := range []string{"url", "external_url", "image"} {
			if s, ok := it[k].(string); ok {
				checkIRI(t, fmt.Sprintf("JSON Feed item %d %s", i, k), s)
			}
		}
	}
}

// checkNoHijack reports an element in the Atom, RDF or RSS 1.0 namespace
// below an item's direct children: readers take those for the feed's own
// markup (feedparser reads an atom:id in an RSS item as the item's id), so a
// page's extension there would overwrite the item's identity or title.
func checkNoHijack(t *testing.T, body []byte, item string) {
	t.Helper()
	dec := xml.NewDecoder(strings.NewReader(string(body)))
	depth, itemDepth := 0, 0
	var own string // the namespace of the item element itself
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatalf("token: %v", err)
		}
		switch el := tok.(type) {
		case xml.StartElement:
			depth++
			switch {
			case itemDepth == 0 && el.Name.Local == item:
				itemDepth, own = depth, el.Name.Space
			case itemDepth > 0 && depth == itemDepth+1 && el.Name.Space != own:
				switch el.Name.Space {
				case nsAtom, nsRDF, nsRSS1:
					t.Errorf("%s:%s inside an %s: a page's extension read as the feed's own markup", el.Name.Space, el.Name.Local, item)
				}
			}
		case xml.EndElement:
			if depth == itemDepth {
				itemDepth = 0
			}
			depth--
		}
	}
}
