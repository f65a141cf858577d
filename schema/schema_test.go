package schema_test

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/dynamo-rss/dynamo/schema"
	"github.com/dynamo-rss/dynamo/schema/schematest"
)

func sampleDoc() *schema.Document {
	return &schema.Document{
		URL:       "https://example.org/news.html",
		RSSID:     "news",
		Timestamp: time.Date(2026, 11, 21, 10, 35, 0, 0, time.UTC),
		Channel: schema.Channel{
			Title:       "Our News & <more> ]]>",
			Link:        "https://example.org/",
			Description: "What happened today",
			Image:       &schema.Image{Title: "Our News", Link: "https://example.org/", URL: "https://example.org/logo.png"},
			Extensions:  schema.Extensions{{URI: schema.DCNamespace, Prefix: "dc", LocalName: "language", Value: "en"}},
		},
		Items: []schema.Item{
			{
				Index: 1, ID: "a1", Title: "Budget approved", Link: "https://example.org/news/1.html",
				Description: "The council approved…",
				Extensions: schema.Extensions{
					{URI: schema.DCNamespace, Prefix: "dc", LocalName: "date", Value: "2005-12-08T08:25:00Z"},
					{URI: schema.ContentNamespace, Prefix: "content", LocalName: "encoded", Value: "<p>The <b>council</b> approved…</p>"},
				},
			},
			{Index: 2, ID: "a2", Title: "Second", Link: "https://example.org/news/2.html", Description: ""},
		},
	}
}

func TestMarshalShapeAndRoundTrip(t *testing.T) {
	doc := sampleDoc()
	out, err := schema.Marshal(doc)
	if err != nil {
		t.Fatalf("Marshal: %v", err)
	}
	s := string(out)
	for _, want := range []string{
		`<resource url="https://example.org/news.html" rssId="news" timestamp="2026-11-21T10:35:00Z">`,
		`<dc:language xmlns:dc="http://purl.org/dc/elements/1.1/">en</dc:language>`,
		`<item index="1" id="a1">`,
		`<content:encoded xmlns:content="http://purl.org/rss/1.0/modules/content/">&lt;p&gt;The &lt;b&gt;council&lt;/b&gt; approved…&lt;/p&gt;</content:encoded>`,
		`<title>Our News &amp; &lt;more&gt; ]]&gt;</title>`,
	} {
		if !strings.Contains(s, want) {
			t.Errorf("marshalled document lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "<extensions></extensions>") || strings.Count(s, "<extensions>") != 2 {
		t.Errorf("empty extensions must be omitted, non-empty kept:\n%s", s)
	}
	back, err := schema.Unmarshal(out)
	if err != nil {
		t.Fatalf("Unmarshal: %v", err)
	}
	if !reflect.DeepEqual(back, doc) {
		t.Errorf("round trip changed the document:\n got %+v\nwant %+v", back, doc)
	}
	schematest.ValidateXSD(t, out)
}

func TestUnmarshalRecoversPrefixFromAncestor(t *testing.T) {
	in := `<resource url="https://e.org/" rssId="x" timestamp="2026-01-01T00:00:00Z" xmlns:dc="http://purl.org/dc/elements/1.1/">
<channel><title>t</title><link>https://e.org/</link><description/>
<extensions xmlns:sy="http://purl.org/rss/1.0/modules/syndication/"><sy:updatePeriod>hourly</sy:updatePeriod><dc:creator>me</dc:creator></extensions></channel></resource>`
	doc, err := schema.Unmarshal([]byte(in))
	if err != nil {
		t.Fatalf("Unmarshal: %v", err)
	}
	got := doc.Channel.Extensions
	if len(got) != 2 || got[0].Prefix != "sy" || got[0].LocalName != "updatePeriod" || got[0].Value != "hourly" {
		t.Fatalf("extension 0 = %+v", got)
	}
	// dc is declared above <extensions>, out of the decoder's reach: a generated prefix keeps the URI.
	if got[1].URI != schema.DCNamespace || got[1].LocalName != "creator" || got[1].Prefix == "" {
		t.Errorf("extension 1 = %+v", got[1])
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*schema.Document)
		want   string // substring of the error; "" = valid
	}{
		{"valid", func(*schema.Document) {}, ""},
		{"relative url", func(d *schema.Document) { d.URL = "/news.html" }, "absolute"},
		{"empty rssId", func(d *schema.Document) { d.RSSID = "" }, "rssId"},
		{"zero index", func(d *schema.Document) { d.Items[0].Index = 0 }, "not positive"},
		{"duplicate index", func(d *schema.Document) { d.Items[1].Index = 1 }, "duplicate index"},
		{"duplicate id", func(d *schema.Document) { d.Items[1].ID = "a1" }, "duplicate id"},
		{"empty id", func(d *schema.Document) { d.Items[1].ID = "" }, "empty id"},
		{"control char", func(d *schema.Document) { d.Items[0].Title = "a\x01b" }, "XML does not allow"},
		{"invalid utf8", func(d *schema.Document) { d.Channel.Description = "a\xffb" }, "XML does not allow"},
		{"bad extension name", func(d *schema.Document) { d.Channel.Extensions[0].LocalName = "1x" }, "well-formed"},
		{"extension prefix xmlns", func(d *schema.Document) { d.Channel.Extensions[0].Prefix = "xmlns" }, "reserved"},
		{"extension prefix xml for another namespace", func(d *schema.Document) { d.Channel.Extensions[0].Prefix = "xml" }, "reserved"},
		{"extension in the xml namespace under another prefix", func(d *schema.Document) {
			d.Channel.Extensions[0].URI = "http://www.w3.org/XML/1998/namespace"
		}, "reserved"},
		{"extension in the xmlns namespace", func(d *schema.Document) { d.Channel.Extensions[0].URI = "http://www.w3.org/2000/xmlns/" }, "reserved"},
		{"xml:lang extension", func(d *schema.Document) {
			d.Channel.Extensions[0] = schema.Extension{URI: "http://www.w3.org/XML/1998/namespace", Prefix: "xml", LocalName: "lang", Value: "en"}
		}, ""},
		{"extension name encoding/xml cannot read", func(d *schema.Document) { d.Items[0].Extensions[0].LocalName = "\u0132x" }, "cannot read back"},
		{"extension name beyond ASCII", func(d *schema.Document) { d.Items[0].Extensions[0].Prefix = "dé" }, ""},
		{"extension prefix of invalid utf8", func(d *schema.Document) { d.Channel.Extensions[0].Prefix = "\xa5" }, "well-formed"},
		{"link with space", func(d *schema.Document) { d.Items[0].Link = "https://e.org/a b" }, "not a URI"},
		{"link with invalid utf8", func(d *schema.Document) { d.Items[0].Link = "https://e.org/\xff" }, "item 1 link contains characters XML does not allow"},
		{"image url with a non-character", func(d *schema.Document) { d.Channel.Image.URL = "https://e.org/\uFFFE" }, "channel image url contains"},
		{"resource url with invalid utf8", func(d *schema.Document) { d.URL = "https://e.org/\xc3" }, "resource url contains"},
		{"rssId with a control char", func(d *schema.Document) { d.RSSID = "a\x02" }, "rssId contains"},
		{"extension namespace with invalid utf8", func(d *schema.Document) { d.Items[0].Extensions[1].URI = "urn:\xff" }, "item 1 extension content:encoded namespace contains"},
		{"extension namespace with a space", func(d *schema.Document) { d.Items[0].Extensions[0].URI = "http://e.org/a b" }, "namespace that is not a URI"},
		{"extension namespace beyond ASCII", func(d *schema.Document) { d.Items[0].Extensions[0].URI = "urn:x-ü" }, "namespace that is not a URI"},
		{"extension namespace with a bad escape", func(d *schema.Document) { d.Items[0].Extensions[0].URI = "urn:x-%g0" }, "namespace that is not a URI"},
		{"extension namespace percent-encoded", func(d *schema.Document) { d.Items[0].Extensions[0].URI = "urn:x-%C3%BC" }, ""},
		{"extension value", func(d *schema.Document) { d.Channel.Extensions[0].Value = "\x00" }, "channel extension language contains"},
		{"image title", func(d *schema.Document) { d.Items[1].Image = &schema.Image{Title: "\x1b"} }, "item 2 image title contains"},
		{"duplicate index on a long page", func(d *schema.Document) {
			for i := range 40 {
				d.Items = append(d.Items, schema.Item{Index: i + 3, ID: fmt.Sprint("b", i)})
			}
			d.Items[41].Index = 7
		}, "item 42: duplicate index 7"},
		{"duplicate id on a long page", func(d *schema.Document) {
			for i := range 40 {
				d.Items = append(d.Items, schema.Item{Index: i + 3, ID: fmt.Sprint("b", i)})
			}
			d.Items[30].ID = "a2"
		}, "item 31: duplicate id \"a2\""},
		{"valid long page", func(d *schema.Document) {
			for i := range 40 {
				d.Items = append(d.Items, schema.Item{Index: i + 3, ID: fmt.Sprint("b", i)})
			}
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := sampleDoc()
			tt.mutate(d)
			err := d.Validate()
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) || !errors.Is(err, schema.ErrInvalid) {
				t.Fatalf("Validate = %v, want an ErrInvalid mentioning %q", err, tt.want)
			}
		})
	}
}

func TestSameContentAndHash(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*schema.Document)
		same   bool
	}{
		{"identical", func(*schema.Document) {}, true},
		{"timestamp", func(d *schema.Document) { d.Timestamp = d.Timestamp.Add(time.Hour) }, true},
		{"extension only", func(d *schema.Document) { d.Items[0].Extensions[0].Value = "2006-01-01T00:00:00Z" }, true},
		{"channel extension", func(d *schema.Document) { d.Channel.Extensions = nil }, true},
		{"image", func(d *schema.Document) { d.Channel.Image = nil }, true},
		{"item id", func(d *schema.Document) { d.Items[0].ID = "zz" }, true},
		{"channel title", func(d *schema.Document) { d.Channel.Title += "!" }, false},
		{"channel link", func(d *schema.Document) { d.Channel.Link += "x" }, false},
		{"channel description", func(d *schema.Document) { d.Channel.Description = "" }, false},
		{"item title", func(d *schema.Document) { d.Items[1].Title = "Other" }, false},
		{"item link", func(d *schema.Document) { d.Items[1].Link += "?x" }, false},
		{"item description", func(d *schema.Document) { d.Items[1].Description = "new" }, false},
		{"item added", func(d *schema.Document) {
			d.Items = append(d.Items, schema.Item{Index: 3, ID: "a3", Title: "t", Link: "https://e.org/"})
		}, false},
		{"item removed", func(d *schema.Document) { d.Items = d.Items[:1] }, false},
		{"items reordered", func(d *schema.Document) { d.Items[0], d.Items[1] = d.Items[1], d.Items[0] }, false},
		{"article marked", func(d *schema.Document) { markArticle(&d.Items[1], schema.ArticleFull) }, false},
		{"article failed", func(d *schema.Document) { markArticle(&d.Items[1], schema.ArticleFailed) }, false},
		{"article with its text", func(d *schema.Document) {
			markArticle(&d.Items[1], schema.ArticleFull)
			d.Items[1].Extensions = append(d.Items[1].Extensions, schema.Extension{URI: schema.ContentNamespace, Prefix: "content", LocalName: "encoded", Value: "<p>other</p>"})
		}, false},
		{"mark as the next item's title", func(d *schema.Document) {
			// A mark "x" on item 0 and none on item 1 titled "x" must not
			// hash like no mark and a title moved: the mark is tagged.
			markArticle(&d.Items[0], "x")
		}, false},
		{"text moved between fields", func(d *schema.Document) {
			d.Items[1].Description = d.Items[1].Title[3:]
			d.Items[1].Title = d.Items[1].Title[:3]
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := sampleDoc(), sampleDoc()
			tt.mutate(b)
			if got := schema.SameContent(a, b); got != tt.same {
				t.Errorf("SameContent = %v, want %v", got, tt.same)
			}
			if got := schema.ContentHash(a) == schema.ContentHash(b); got != tt.same {
				t.Errorf("hashes equal = %v, want %v", got, tt.same)
			}
		})
	}
}

func markArticle(it *schema.Item, mark string) {
	it.Extensions = append(it.Extensions, schema.Extension{URI: schema.ArticleNamespace, Prefix: "dynamo", LocalName: "article", Value: mark})
}

// TestSameContentArticleMarks: two documents whose items carry the same
// article marks are the same content, whatever the article's text.
func TestSameContentArticleMarks(t *testing.T) {
	a, b := sampleDoc(), sampleDoc()
	markArticle(&a.Items[1], schema.ArticleFull)
	markArticle(&b.Items[1], schema.ArticleFull)
	b.Items[1].Extensions = append(b.Items[1].Extensions, schema.Extension{URI: schema.ContentNamespace, Prefix: "content", LocalName: "encoded", Value: "<p>other</p>"})
	if !schema.SameContent(a, b) || schema.ContentHash(a) != schema.ContentHash(b) {
		t.Fatal("same marks, different article text: want the same content")
	}
	markArticle(&a.Items[0], schema.ArticleFailed)
	if schema.SameContent(a, b) || schema.ContentHash(a) == schema.ContentHash(b) {
		t.Fatal("a mark on one side only: want different content")
	}
}

func TestPublished(t *testing.T) {
	doc := sampleDoc()
	got, ok := doc.Items[0].Extensions.Published()
	if !ok || !got.Equal(time.Date(2005, 12, 8, 8, 25, 0, 0, time.UTC)) {
		t.Errorf("Published = %v, %v", got, ok)
	}
	if _, ok := doc.Items[1].Extensions.Published(); ok {
		t.Error("an item without a date extension has no publication time")
	}
	unreadable := schema.Extensions{{URI: schema.DCNamespace, Prefix: "dc", LocalName: "date", Value: "last Tuesday"}}
	if _, ok := unreadable.Published(); ok {
		t.Error("a date left as text is not a publication time")
	}
	// pubDate counts as date does; the first that reads as a date wins.
	for _, tc := range []struct {
		ext  schema.Extensions
		want time.Time
	}{
		{schema.Extensions{{Prefix: "x", LocalName: "pubDate", Value: "2026-11-21T14:30:00Z"}}, time.Date(2026, 11, 21, 14, 30, 0, 0, time.UTC)},
		{schema.Extensions{{Prefix: "x", LocalName: "pubDate", Value: "soon"}, {Prefix: "dc", LocalName: "date", Value: "2026-11-22"}}, time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)},
		{schema.Extensions{{Prefix: "x", LocalName: "modified", Value: "2026-11-23"}, {Prefix: "dc", LocalName: "date", Value: "2026-11-22"}}, time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)},
	} {
		if got, ok := tc.ext.Published(); !ok || !got.Equal(tc.want) {
			t.Errorf("Published(%v) = %v, %v; want %v", tc.ext, got, ok, tc.want)
		}
	}
	if html, ok := doc.Items[0].Extensions.ContentEncoded(); !ok || !strings.HasPrefix(html, "<p>") {
		t.Errorf("ContentEncoded = %q, %v", html, ok)
	}
}

// TestExtensionNamespaceURI: an extension's namespace is a URI reference:
// every end of the letter, digit and hex-digit ranges is taken, '%' only
// before two hex digits.
func TestExtensionNamespaceURI(t *testing.T) {
	for _, tc := range []struct {
		uri string
		ok  bool
	}{
		{"urn:azAZ09:x", true},
		{"urn:x:%0a%9f%AF%Fa%00%99", true},
		{"urn:x:-._~:/?#[]@!$&'()*+,;=", true},
		{"urn:x:%g0", false}, {"urn:x:%0g", false}, {"urn:x:%", false}, {"urn:x:%a", false},
		{"urn:x:%@0", false}, {"urn:x:%`0", false}, {"urn:x:%G0", false}, {"urn:x:%/0", false}, {"urn:x:%:0", false},
		{"urn:x y", false}, {"urn:é", false},
	} {
		d := sampleDoc()
		d.Items[0].Extensions = append(d.Items[0].Extensions, schema.Extension{URI: tc.uri, Prefix: "x", LocalName: "v", Value: "1"})
		if err := d.Validate(); (err == nil) != tc.ok {
			t.Errorf("namespace %q: Validate = %v, want ok %v", tc.uri, err, tc.ok)
		}
	}
}
