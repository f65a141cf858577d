package extractor_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dynamo-rss/dynamo/config"
	"github.com/dynamo-rss/dynamo/extractor"
	"github.com/dynamo-rss/dynamo/schema"
)

// selectDir holds the golden pages nobody annotated: NAME.html, its select
// block NAME.select.yaml, the document it yields NAME.xml and its
// diagnostics NAME.lint; NAME.content-type, when present, is the HTTP
// Content-Type the page is served with.
const selectDir = "../testdata/select"

type selectCase struct {
	name string
	page []byte
	sel  *extractor.Selectors
	opts extractor.Options
}

func selectCases(t testing.TB) []selectCase {
	t.Helper()
	pages, err := filepath.Glob(filepath.Join(selectDir, "*.html"))
	if err != nil || len(pages) == 0 {
		t.Fatalf("no golden pages in %s: %v", selectDir, err)
	}
	var out []selectCase
	for _, p := range pages {
		name := strings.TrimSuffix(filepath.Base(p), ".html")
		page, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		block, err := os.ReadFile(filepath.Join(selectDir, name+".select.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		sel, err := config.ParseSelect(block)
		if err != nil {
			t.Fatalf("%s.select.yaml: %v", name, err)
		}
		opts := extractor.Options{URL: "https://example.org/" + name + "/", RSSID: name, Timestamp: goldenTime}
		if ct, err := os.ReadFile(filepath.Join(selectDir, name+".content-type")); err == nil {
			opts.ContentType = strings.TrimSpace(string(ct))
		}
		out = append(out, selectCase{name, page, sel, opts})
	}
	return out
}

func TestSelectGolden(t *testing.T) {
	for _, c := range selectCases(t) {
		t.Run(c.name, func(t *testing.T) {
			res, err := c.sel.Extract(bytes.NewReader(c.page), c.opts)
			if err != nil {
				t.Fatalf("extract: %v\n%s", err, lintText(c.name+".html", res.Diagnostics))
			}
			got := checkDocument(t, res.Document, true)
			compareGolden(t, filepath.Join(selectDir, c.name+".xml"), got)
			compareGolden(t, filepath.Join(selectDir, c.name+".lint"), lintText(c.name+".html", res.Diagnostics))
			for _, it := range res.Document.Items {
				if strings.ContainsRune(it.Title+it.Description, '\uFFFD') {
					t.Errorf("item %d decoded wrongly (charset %s): %q", it.Index, res.Charset, it.Title)
				}
			}
		})
	}
}

// TestSelectSameBackEnd: a page extracted by selectors and the same page
// annotated give the same document: one back end for both front ends.
func TestSelectSameBackEnd(t *testing.T) {
	annotated := `<html><head><title>Town</title><base href="https://example.org/town/"></head><body>
<!-- <channel:title> -->Town<!-- </channel:title> -->
<div class="n"><h3><!-- <item:title index="1"> -->Budget &amp; roads<!-- </item:title> --></h3>
<!-- <item:link index="1"> --><a href="a/1.html">more</a><!-- </item:link> -->
<p class="s"><!-- <item:description index="1"> -->The <b>council</b> met <a href="/x">here</a>.<script>evil()</script><!-- </item:description> --></p>
<span class="d"><!-- <item:extension index="1" uri="http://purl.org/dc/elements/1.1/" prefix="dc" localName="date"> -->21.11.2026<!-- </item:extension> --></span></div>
<div class="n"><h3><!-- <item:title index="2"> -->Library<!-- </item:title> --></h3>
<!-- <item:link index="2"> --><a href="javascript:alert(1)">more</a><!-- </item:link> -->
<p class="s"><!-- <item:description index="2"> -->Closed <i>Monday</i>.<!-- </item:description> --></p></div>
</body></html>`
	opts := extractor.Options{URL: "https://example.org/page.html", RSSID: "town", Timestamp: goldenTime}
	want, err := extractor.Extract(strings.NewReader(annotated), opts)
	if err != nil {
		t.Fatal(err)
	}
	sel, err := extractor.CompileSelectors(extractor.SelectSpec{
		Item: "div.n", Title: "h3", Link: "a @href", Description: "p.s", Date: "span.d",
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := sel.Extract(strings.NewReader(annotated), opts)
	if err != nil {
		t.Fatal(err)
	}
	w, _ := schema.Marshal(want.Document)
	g, _ := schema.Marshal(got.Document)
	if !bytes.Equal(w, g) {
		t.Fatalf("selector document differs from the annotated one:\nannotations:\n%s\nselectors:\n%s", w, g)
	}
}

func TestSelectErrors(t *testing.T) {
	page := `<html><head><title>T</title></head><body><div class="a"><a href="/1">One</a></div></body></html>`
	tests := []struct {
		name     string
		spec     extractor.SelectSpec
		wantErr  error
		wantDiag string
	}{
		{"item matches nothing", extractor.SelectSpec{Item: "div.none", Title: "a"}, extractor.ErrNoItems, `select.item "div.none" matched nothing`},
		{"every item dropped", extractor.SelectSpec{Item: "div.a", Title: "h3"}, extractor.ErrNoItems, `select.title "h3" matched nothing in 1 of 1 items (item 1)`},
		{"field matches nothing", extractor.SelectSpec{Item: "div.a", Title: "a", Description: "p"}, nil, `select.description "p" matched nothing in 1 of 1 items`},
		{"channel field matches nothing", extractor.SelectSpec{Item: "div.a", Channel: extractor.ChannelSelectSpec{Description: "meta[name=description] @content"}}, nil, `select.channel.description "meta[name=description] @content" matched nothing on the page`},
		{"channel title matches nothing", extractor.SelectSpec{Item: "div.a", Channel: extractor.ChannelSelectSpec{Title: "h9"}}, nil, `select.channel.title "h9" matched nothing on the page`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sel, err := extractor.CompileSelectors(tt.spec)
			if err != nil {
				t.Fatal(err)
			}
			res, err := sel.Extract(strings.NewReader(page), extractor.Options{URL: "https://example.org/"})
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err %v, want %v", err, tt.wantErr)
			}
			if (res.Document == nil) != (tt.wantErr != nil) {
				t.Fatalf("document %v with error %v", res.Document != nil, err)
			}
			if !strings.Contains(string(lintText("p", res.Diagnostics)), tt.wantDiag) {
				t.Fatalf("diagnostics %q lack %q", lintText("p", res.Diagnostics), tt.wantDiag)
			}
		})
	}
}

func TestCompileSelectors(t *testing.T) {
	tests := []struct {
		name   string
		spec   extractor.SelectSpec
		fields []string // the fields named by the errors; none: valid
	}{
		{"valid css", extractor.SelectSpec{Item: "div.notice", Title: "h3", Link: "h3 a @href", ID: "@data-id"}, nil},
		{"valid xpath", extractor.SelectSpec{Item: "xpath://tr[td]", Title: "xpath:./td[2]", Link: "xpath:.//a/@href", Date: "xpath:string(./td[1])"}, nil},
		{"no item", extractor.SelectSpec{Title: "h3"}, []string{"item"}},
		{"item attribute", extractor.SelectSpec{Item: "a @href"}, []string{"item"}},
		{"bad css", extractor.SelectSpec{Item: "div[", Title: "h3 >", Channel: extractor.ChannelSelectSpec{Description: "::x"}}, []string{"item", "title", "channel.description"}},
		{"bad xpath", extractor.SelectSpec{Item: "div", Link: "xpath://a[", Date: "xpath:"}, []string{"link", "date"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := extractor.CompileSelectors(tt.spec)
			var got []string
			if err != nil {
				for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
					var se *extractor.SelectorError
					if !errors.As(e, &se) {
						t.Fatalf("%v is not a SelectorError", e)
					}
					got = append(got, se.Field)
				}
			}
			if strings.Join(got, ",") != strings.Join(tt.fields, ",") {
				t.Fatalf("errors name %v, want %v (%v)", got, tt.fields, err)
			}
		})
	}
}

// TestSelectAttributeSpaces: values selected from attributes with white
// space around them (data-id=" abc ", href=" /a/1 ", src=" /i.png ") mean
// what they say without it, as through annotations.
func TestSelectAttributeSpaces(t *testing.T) {
	sel, err := extractor.CompileSelectors(extractor.SelectSpec{Item: "div.i", Title: "h3", Link: "a @href", Image: "img", ID: "@data-id"})
	if err != nil {
		t.Fatal(err)
	}
	src := `<html><head><title>T</title></head><body><div class="i" data-id=" abc "><h3> t </h3><a href=" /a/1 ">x</a><img src=" /i.png "></div>` +
		`<div class="i" data-id="abc	"><h3>u</h3><a href="/a/2 ">y</a></div></body></html>`
	res, err := sel.Extract(strings.NewReader(src), extractor.Options{URL: "https://example.org/news/"})
	if err != nil {
		t.Fatal(err)
	}
	d := res.Document
	if len(d.Items) != 2 {
		t.Fatalf("%d items, want 2 (%q)", len(d.Items), diagStrings(res.Diagnostics))
	}
	a, b := d.Items[0], d.Items[1]
	if a.Title != "t" || a.Link != "https://example.org/a/1" || a.ID != "abc" || a.Image == nil || a.Image.URL != "https://example.org/i.png" {
		t.Errorf("item 1: title %q link %q id %q image %+v", a.Title, a.Link, a.ID, a.Image)
	}
	// The same id once trimmed: the second is told apart as a duplicate.
	if b.Link != "https://example.org/a/2" || b.ID != "abc-2" {
		t.Errorf("item 2: link %q id %q, want the link trimmed and the id a duplicate of abc", b.Link, b.ID)
	}
}

// TestSelectorErrorText: a selector's error names the field and quotes the
// selector; a missing selector's names the field alone.
func TestSelectorErrorText(t *testing.T) {
	_, err := extractor.CompileSelectors(extractor.SelectSpec{})
	if err == nil || err.Error() != "select.item: required: the selector of the page's items" {
		t.Errorf("no item selector: %v", err)
	}
	_, err = extractor.CompileSelectors(extractor.SelectSpec{Item: "@href"})
	if err == nil || err.Error() != `select.item "@href": must select elements, not an attribute` {
		t.Errorf("an attribute as the item selector: %v", err)
	}
}

// TestSelectMissList: a field that matches nothing in many items names the
// first five; the reason there is no document is reported even when the
// diagnostics are full.
func TestSelectMissList(t *testing.T) {
	page := "<ul>" + strings.Repeat("<li><a href=/x>x</a></li>", 7) + "</ul>"
	sel, err := extractor.CompileSelectors(extractor.SelectSpec{Item: "li", Title: "a", Description: "p"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := sel.Extract(strings.NewReader(page), extractor.Options{URL: "https://example.org/"})
	if err != nil {
		t.Fatal(err)
	}
	if want := `select.description "p" matched nothing in 7 of 7 items (item 1, 2, 3, 4, 5, …)`; !strings.Contains(string(lintText("p", res.Diagnostics)), want) {
		t.Errorf("diagnostics %q lack %q", lintText("p", res.Diagnostics), want)
	}
	for _, tc := range []struct {
		name string
		spec extractor.SelectSpec
		want string
	}{
		{"no item", extractor.SelectSpec{Item: "div.none", Title: "a"}, `select.item "div.none" matched nothing on the page: no document`},
		{"every item dropped", extractor.SelectSpec{Item: "li", Title: "h3"}, "no item is left (each had neither title nor description): no document"},
	} {
		sel, err := extractor.CompileSelectors(tc.spec)
		if err != nil {
			t.Fatal(err)
		}
		// A malformed content type fills the one diagnostic allowed.
		res, err := sel.Extract(strings.NewReader(page), extractor.Options{URL: "https://example.org/", ContentType: "text/html; charset", Limits: extractor.Limits{MaxDiagnostics: 1}})
		if !errors.Is(err, extractor.ErrNoItems) {
			t.Fatalf("%s: err %v", tc.name, err)
		}
		if !strings.Contains(string(lintText("p", res.Diagnostics)), tc.want) {
			t.Errorf("%s, diagnostics full: %q lack %q", tc.name, lintText("p", res.Diagnostics), tc.want)
		}
	}
}
