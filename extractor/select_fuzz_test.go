package extractor_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dynamo-rss/dynamo/extractor"
)

const fuzzPage = `<html><head><title>T</title><base href="/b/"></head><body><div id="m" class="a b">
<div class="n" data-id="x1"><h3><a href="1.html">One</a></h3><p>Text <b>bold</b><script>x()</script></p><time datetime="2026-11-21">d</time></div>
<div class="n"><h3>Two</h3><img src="i.png"><a href="javascript:alert(1)">j</a></div></div></body></html>`

// FuzzSelectorParse: whatever the selector, compiling it does not panic,
// and a selector that compiles runs as every field on a page without
// panicking, giving a valid document or a known error.
func FuzzSelectorParse(f *testing.F) {
	for _, s := range []string{"div.n", "h3 a @href", "@data-id", "xpath:.//a/@href", "xpath:count(//div)",
		"xpath:following-sibling::dd[1]", "a:has(b) @x", "xpath:concat(., 'x')", "tr:nth-child(2n+1) td", "xpath:/..", "[", "xpath:(", "a @",
		"xpath:concat(.//h3[a], ' ', .//p[b])", "xpath:substring(normalize-space(), 2, 3)", "xpath:translate(h3, 'ab', 'A')",
		"xpath:concat('(', \"a,b\", ')')", "xpath:substring-after(concat(a[1], '|'), '|') = ''", "xpath:string()"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		spec := extractor.SelectSpec{Item: "div", Title: src, Link: src, Description: src, Date: src, Image: src, ID: src,
			Channel: extractor.ChannelSelectSpec{Title: src, Link: src, Description: src, Image: src}}
		sel, err := extractor.CompileSelectors(spec)
		if err != nil {
			var se *extractor.SelectorError
			if !errors.As(err, &se) {
				t.Fatalf("%v is not a SelectorError", err)
			}
			return
		}
		checkSelectRun(t, sel, []byte(fuzzPage), "")
		if item, err := extractor.CompileSelectors(extractor.SelectSpec{Item: src}); err == nil {
			checkSelectRun(t, item, []byte(fuzzPage), "")
		}
	})
}

// FuzzSelectExtract: whatever the page and content type, a selector
// extraction does not panic, and gives a valid document or a known error.
func FuzzSelectExtract(f *testing.F) {
	pages, _ := filepath.Glob(filepath.Join(selectDir, "*.html"))
	for _, p := range pages {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data, "", 0)
		}
	}
	f.Add([]byte(fuzzPage), "text/html; charset=iso-8859-1", 1)
	f.Add([]byte("<dl><dt><a href=x>\x00\xff</a><dd>&#0;<dt>"), "text/html; charset=utf-16", 2)
	specs := []extractor.SelectSpec{
		{Item: "div.n", Title: "h3", Link: "h3 a @href", Description: "p", Date: "time @datetime", Image: "img @src", ID: "@data-id"},
		{Item: "xpath://*[a]", Description: "xpath:following-sibling::*[1]", Channel: extractor.ChannelSelectSpec{Title: "h1", Image: "img"}},
		{Item: "dt", Title: "a", Description: "xpath:following-sibling::dd[1]", Date: "xpath:string(.)"},
	}
	sels := make([]*extractor.Selectors, len(specs))
	for i, s := range specs {
		var err error
		if sels[i], err = extractor.CompileSelectors(s); err != nil {
			f.Fatal(err)
		}
	}
	f.Fuzz(func(t *testing.T, page []byte, contentType string, which int) {
		sel := sels[uint(which)%uint(len(sels))]
		checkSelectRun(t, sel, page, contentType)
	})
}

func checkSelectRun(t *testing.T, sel *extractor.Selectors, page []byte, contentType string) {
	t.Helper()
	res, err := sel.Extract(bytes.NewReader(page), extractor.Options{URL: "https://example.org/p/", RSSID: "fuzz",
		ContentType: contentType, Timestamp: goldenTime})
	if res == nil {
		t.Fatalf("nil result (err %v)", err)
	}
	switch {
	case err == nil:
		if res.Document == nil || len(res.Document.Items) == 0 {
			t.Fatal("no error, and no document or no items")
		}
		checkDocument(t, res.Document, false)
	case errors.Is(err, extractor.ErrNoItems):
		if res.Document != nil {
			t.Fatal("a document with an error")
		}
		if !strings.Contains(string(lintText("f", res.Diagnostics)), "error") {
			t.Fatalf("no error diagnostic: %q", lintText("f", res.Diagnostics))
		}
	default:
		t.Fatalf("unexpected error: %v", err)
	}
}
