package api

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// filterHTML is an annotated page with an advertisement among its items.
const filterHTML = `<html><body>
<h1><!-- <channel:title> -->Town hall<!-- </channel:title> --></h1>
<p><!-- <item:title index="1"> -->Gemeinderat tagt<!-- </item:title> --> <!-- <item:link index="1"> --><a href="/n/1">more</a><!-- </item:link> --></p>
<p><!-- <item:title index="2"> -->ANZEIGE: Sofa zu verkaufen<!-- </item:title> --> <!-- <item:link index="2"> --><a href="/n/2">more</a><!-- </item:link> --></p>
<p><!-- <item:title index="3"> -->Neues im Anzeigenblatt<!-- </item:title> --> <!-- <item:link index="3"> --><a href="/n/3">more</a><!-- </item:link> --></p>
<p><!-- <item:title index="4"> -->Budget 2027<!-- </item:title> --> <!-- <item:link index="4"> --><a href="/n/4">more</a><!-- </item:link> --></p>
</body></html>`

// TestPreviewFilter: POST /preview takes a filter in each of its input
// forms (a JSON member filter as an object or as YAML text, a form field
// filter, form fields include and exclude with one entry a line, query
// parameters beside a raw page), answers the document of the items kept,
// and lists the items filtered out, each with why, counted.
func TestPreviewFilter(t *testing.T) {
	s := newSvcServer(t, Options{})
	pageURL := "https://example.org/town/"
	jsonObj, _ := json.Marshal(map[string]any{"page": filterHTML, "url": pageURL,
		"filter": map[string]any{"include": []string{"Gemeinderat", "re:(?i)sofa|budget"}, "exclude": []string{"Anzeige"}}})
	jsonText, _ := json.Marshal(map[string]any{"page": filterHTML, "url": pageURL,
		"filter": "include: [Gemeinderat, \"re:(?i)sofa|budget\"]\nexclude: [Anzeige]\n"})
	block := `{include: [Gemeinderat, "re:(?i)sofa|budget"], exclude: [Anzeige]}`
	tests := []struct {
		name, path, body, ct string
	}{
		{"json object", "/preview", string(jsonObj), "application/json"},
		{"json yaml text", "/preview", string(jsonText), "application/json"},
		{"form filter", "/preview", url.Values{"page": {filterHTML}, "url": {pageURL}, "filter": {block}}.Encode(), "application/x-www-form-urlencoded"},
		{"form lines", "/preview", url.Values{"page": {filterHTML}, "url": {pageURL},
			"include": {"Gemeinderat\r\n\r\nre:(?i)sofa|budget\r\n"}, "exclude": {"Anzeige"}}.Encode(), "application/x-www-form-urlencoded"},
		{"query lines", "/preview?" + url.Values{"url": {pageURL}, "include": {"Gemeinderat", "re:(?i)sofa|budget"}, "exclude": {"Anzeige"}}.Encode(), filterHTML, "text/html; charset=utf-8"},
		{"query filter", "/preview?" + url.Values{"url": {pageURL}, "filter": {block}}.Encode(), filterHTML, "text/html; charset=utf-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := svcDo(s, http.MethodPost, tt.path, strings.NewReader(tt.body), "Content-Type", tt.ct, "Accept", "application/json")
			got, doc := previewOK(t, rec)
			if len(doc.Items) != 2 || doc.Items[0].Title != "Gemeinderat tagt" || doc.Items[1].Title != "Budget 2027" {
				t.Fatalf("document items %+v", doc.Items)
			}
			if got.Counts == nil || got.Counts.Kept != 2 || got.Counts.FilteredOut != 2 || len(got.FilteredOut) != 2 {
				t.Fatalf("counts %+v, filtered out %+v", got.Counts, got.FilteredOut)
			}
			want := []previewFiltered{
				{Index: 2, Title: "ANZEIGE: Sofa zu verkaufen", Link: "https://example.org/n/2", Rule: "exclude", Entry: "Anzeige", Matched: "exclude: Anzeige"},
				{Index: 3, Title: "Neues im Anzeigenblatt", Link: "https://example.org/n/3", Rule: "include", Matched: "include: none matched"},
			}
			for i, w := range want {
				g := got.FilteredOut[i]
				g.ID = ""
				if g != w {
					t.Errorf("filtered out %d = %+v, want %+v", i, g, w)
				}
			}
			if !strings.Contains(rec.Body.String(), `"filtered_out":[{"index":2,`) || !strings.Contains(rec.Body.String(), `"counts":{"kept":2,"filtered_out":2}`) {
				t.Errorf("answer %s", rec.Body)
			}
		})
	}
}

// TestPreviewFilterAnswer: without a filter the answer counts the items
// and lists no filtered_out; a filter that drops nothing lists an empty
// one; a bad filter is a 400 naming each bad entry with its place; a
// filter both as a block and as lines is refused.
func TestPreviewFilterAnswer(t *testing.T) {
	s := newSvcServer(t, Options{})
	post := func(v url.Values) *httpRecorder {
		v.Set("page", filterHTML)
		return svcDo(s, http.MethodPost, "/preview", strings.NewReader(v.Encode()), "Content-Type", "application/x-www-form-urlencoded", "Accept", "application/json")
	}
	rec := post(url.Values{})
	if got, _ := previewOK(t, rec); got.Counts == nil || got.Counts.Kept != 4 || got.FilteredOut != nil || strings.Contains(rec.Body.String(), "filtered_out\":[") {
		t.Fatalf("no filter: %s", rec.Body)
	}
	rec = post(url.Values{"exclude": {"Werbung"}})
	if got, _ := previewOK(t, rec); got.Counts.Kept != 4 || !strings.Contains(rec.Body.String(), `"filtered_out":[]`) {
		t.Fatalf("nothing filtered out: %s", rec.Body)
	}
	for _, tc := range []struct {
		name   string
		form   url.Values
		param  string
		errors []problemField
	}{
		{"block", url.Values{"filter": {"exclude:\n  - ok\n  - \"re:(x\"\n  - \"\"\n"}}, "filter.exclude[1]", []problemField{
			{Field: "filter.exclude[1]", Line: 3, Column: 5, Detail: "\"re:(x\": not an RE2 expression: missing closing ): `(x`"},
			{Field: "filter.exclude[2]", Line: 4, Column: 5, Detail: "an empty word matches nothing; remove it or write a word (or re: and an expression)"},
		}},
		{"lines", url.Values{"include": {"ok\n\nre:["}}, "filter.include", []problemField{
			{Field: "filter.include", Line: 3, Column: 1, Detail: "\"re:[\": not an RE2 expression: missing closing ]: `[`"},
		}},
		{"both", url.Values{"filter": {"exclude: [a]"}, "exclude": {"b"}}, "filter", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := post(tc.form)
			var p adminProblem
			if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil || rec.Code != http.StatusBadRequest || p.Param != tc.param || len(p.Errors) != len(tc.errors) {
				t.Fatalf("%d %s", rec.Code, rec.Body)
			}
			for i, w := range tc.errors {
				if g := p.Errors[i]; g.Field != w.Field || g.Line != w.Line || g.Column != w.Column || g.Detail != w.Detail {
					t.Errorf("error %d = %+v, want %+v", i, g, w)
				}
			}
		})
	}
}
