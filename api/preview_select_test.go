package api

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/dynamo-rss/dynamo/schema"
)

const unannotatedHTML = `<html><head><title>Town hall</title></head><body>
<div class="notice"><h3>Budget approved</h3><a href="/n/1.html">more</a><p>The council <b>approved</b> it.</p></div>
<div class="notice"><h3>Bridge closed</h3><a href="/n/2.html">more</a></div>
</body></html>`

// TestPreviewSelect: a select block in a form field, a query parameter or a
// JSON body (as an object or as YAML text) runs the selectors as the poller
// does; an invalid block is a 400 naming the field; a block whose item
// selector matches nothing is a 422 with the diagnostic.
func TestPreviewSelect(t *testing.T) {
	s := newSvcServer(t, Options{})
	const block = `{item: "div.notice", title: "h3", link: "a @href", description: "p"}`
	form := url.Values{"page": {unannotatedHTML}, "url": {"https://example.org/town/"}, "select": {block}}
	jsonObj, _ := json.Marshal(map[string]any{"page": unannotatedHTML, "url": "https://example.org/town/",
		"select": map[string]string{"item": "div.notice", "title": "h3", "link": "a @href", "description": "p"}})
	jsonText, _ := json.Marshal(map[string]any{"page": unannotatedHTML, "url": "https://example.org/town/",
		"select": "select:\n  item: div.notice\n  title: h3\n  link: a @href\n  description: p\n"})
	tests := []struct {
		name       string
		path, body string
		ct         string
	}{
		{"form", "/preview", form.Encode(), "application/x-www-form-urlencoded"},
		{"query", "/preview?url=" + url.QueryEscape("https://example.org/town/") + "&select=" + url.QueryEscape(block), unannotatedHTML, "text/html; charset=utf-8"},
		{"json object", "/preview", string(jsonObj), "application/json"},
		{"json yaml text", "/preview", string(jsonText), "application/json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, doc := previewOK(t, svcDo(s, http.MethodPost, tt.path, strings.NewReader(tt.body), "Content-Type", tt.ct, "Accept", "application/json"))
			if doc.Channel.Title != "Town hall" || len(doc.Items) != 2 || doc.Items[0].Link != "https://example.org/n/1.html" ||
				doc.Items[1].Title != "Bridge closed" {
				t.Fatalf("document %+v", doc)
			}
			if len(got.Diagnostics) != 1 || !strings.Contains(got.Diagnostics[0].Message, `select.description "p" matched nothing in 1 of 2 items`) {
				t.Fatalf("diagnostics %+v", got.Diagnostics)
			}
		})
	}

	bad := url.Values{"page": {unannotatedHTML}, "select": {`{item: "div", title: "h3 >"}`}}
	rec := svcDo(s, http.MethodPost, "/preview", strings.NewReader(bad.Encode()), "Content-Type", "application/x-www-form-urlencoded", "Accept", "application/json")
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "select.title") {
		t.Fatalf("invalid block: status %d: %s", rec.Code, rec.Body)
	}
	none := url.Values{"page": {unannotatedHTML}, "select": {`{item: "li.news", title: "a"}`}}
	rec = svcDo(s, http.MethodPost, "/preview", strings.NewReader(none.Encode()), "Content-Type", "application/x-www-form-urlencoded", "Accept", "application/json")
	if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), `matched nothing`) {
		t.Fatalf("no items: status %d: %s", rec.Code, rec.Body)
	}
}

// TestPreviewFieldMappingsAndDates: /preview runs field mappings as the
// poller does, reads relative dates against the preview's time, and says
// how each date reads (info lines among the diagnostics).
func TestPreviewFieldMappingsAndDates(t *testing.T) {
	now := time.Date(2026, 11, 27, 18, 30, 0, 0, time.UTC)
	s := newSvcServer(t, Options{Now: func() time.Time { return now }})
	page := "<html><head><title>News</title></head><body>\n<ul>\n" +
		`<li><a href="/a">A</a> <span>Posted 2 hours ago by the desk</span></li>` + "\n" +
		`<li><a href="/b">B</a> <span>Posted 21.11.2026 by the desk</span></li>` + "\n</ul></body></html>"
	body, _ := json.Marshal(map[string]any{"page": page, "url": "https://example.org/news/",
		"select": map[string]any{"item": "li", "title": "a", "date": map[string]any{"select": []string{"em", "span"}, "pattern": `Posted (.+) by`}}})
	got, doc := previewOK(t, svcDo(s, http.MethodPost, "/preview", strings.NewReader(string(body)), "Content-Type", "application/json", "Accept", "application/json"))
	d0, _ := doc.Items[0].Extensions.Lookup(schema.DCNamespace, "date")
	d1, _ := doc.Items[1].Extensions.Lookup(schema.DCNamespace, "date")
	if want := "2026-11-27T16:30:00Z"; d0 != want || d1 != "21.11.2026" {
		t.Fatalf("dates %q, %q; want %q (2 hours before the preview) and the text the pattern kept", d0, d1, want)
	}
	if len(got.Diagnostics) != 2 || got.Diagnostics[0].Severity != "info" || got.Diagnostics[0].Line != 3 ||
		!strings.Contains(got.Diagnostics[0].Message, `date "2 hours ago" reads as`) ||
		!strings.Contains(got.Diagnostics[1].Message, `date "21.11.2026" reads as 2026-11-21T00:00:00Z (day-first dotted, UTC)`) {
		t.Fatalf("diagnostics %+v", got.Diagnostics)
	}
}

// previewOK reads a 200 answer of POST /preview: its JSON and its document.
func previewOK(t *testing.T, rec *httpRecorder) (previewResult, *schema.Document) {
	t.Helper()
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	var got previewResult
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	doc, err := schema.Unmarshal([]byte(got.Document))
	if err != nil {
		t.Fatalf("%v\n%s", err, rec.Body)
	}
	return got, doc
}
