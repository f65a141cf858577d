package api

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// adminProblem is a problem+json answer of the admin API with its errors.
type adminProblem struct {
	Status int    `json:"status"`
	Detail string `json:"detail"`
	Param  string `json:"parameter"`
	Errors []struct {
		Field  string `json:"field"`
		Line   int    `json:"line"`
		Column int    `json:"column"`
		Detail string `json:"detail"`
	} `json:"errors"`
}

// TestAdminBodyAllProblems: PUT /admin/resources/{id} reports every
// problem of its body in body order, each with its field, line and
// column: a bad weight (refused by the decoder), a bad timezone (by
// validation) and an unknown field; detail and parameter still name
// them as before (parameter: the first).
func TestAdminBodyAllProblems(t *testing.T) {
	s := newSvcServer(t, Options{AdminToken: "tok", Registry: newFakeRegistry(), PublicURL: "https://feeds.example.org"})
	auth := []string{"Authorization", "Bearer tok", "Content-Type", "application/json"}
	body := "{\n" +
		"  \"url\": \"https://example.org/news.html\",\n" +
		"  \"weight\": \"heavy\",\n" +
		"  \"timezone\": \"Mars/Olympus\",\n" +
		"  \"colour\": \"red\"\n" +
		"}\n"
	rec := svcDo(s, http.MethodPut, "/admin/resources/news", strings.NewReader(body), auth...)
	if rec.Code != http.StatusBadRequest || rec.Header().Get("Content-Type") != problemContentType {
		t.Fatalf("%d %s: %s", rec.Code, rec.Header().Get("Content-Type"), rec.Body)
	}
	var p adminProblem
	if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil {
		t.Fatal(err)
	}
	type want struct {
		field        string
		line, column int
		detail       string
	}
	wants := []want{
		{"weight", 3, 13, `weight must be a positive number, got "heavy"`},
		{"timezone", 4, 15, `unknown time zone "Mars/Olympus"`},
		{"colour", 5, 3, "unknown field; the fields here are"},
	}
	if len(p.Errors) != len(wants) {
		t.Fatalf("%d errors, want %d: %s", len(p.Errors), len(wants), rec.Body)
	}
	for i, w := range wants {
		g := p.Errors[i]
		if g.Field != w.field || g.Line != w.line || g.Column != w.column || !strings.HasPrefix(g.Detail, w.detail) {
			t.Errorf("error %d = %+v, want %+v", i, g, w)
		}
	}
	if p.Param != "weight" || !strings.HasPrefix(p.Detail, `invalid resource definition: line 3, column 13: weight: weight must be a positive number`) ||
		!strings.Contains(p.Detail, "line 4, column 15: timezone:") || !strings.Contains(p.Detail, "line 5, column 3: colour:") {
		t.Fatalf("parameter %q, detail %q", p.Param, p.Detail)
	}
	// One problem is an array of one; a malformed body one without a field.
	for _, tc := range []struct{ body, field string }{
		{`{"url": "ftp://x/"}`, "url"},
		{`{"url": }`, ""},
	} {
		rec := svcDo(s, http.MethodPut, "/admin/resources/news", strings.NewReader(tc.body), auth...)
		var p adminProblem
		if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil || len(p.Errors) != 1 || p.Errors[0].Field != tc.field || p.Errors[0].Line != 1 {
			t.Fatalf("%s: %d %s", tc.body, rec.Code, rec.Body)
		}
	}
}

// TestAdminFilter: a resource's filter is taken by PUT, shown back in its
// answer and in GET /admin/resources; a bad entry is named with its place.
func TestAdminFilter(t *testing.T) {
	s := newSvcServer(t, Options{AdminToken: "tok", Registry: newFakeRegistry(), PublicURL: "https://feeds.example.org"})
	auth := []string{"Authorization", "Bearer tok", "Content-Type", "application/json"}
	rec := svcDo(s, http.MethodPut, "/admin/resources/news", strings.NewReader(`{"url": "https://example.org/news.html", "filter": {"include": [], "exclude": ["Sponsored", "re:(?i)^ad\\b"]}}`), auth...)
	want := `"filter":{"exclude":["Sponsored","re:(?i)^ad\\b"]}`
	if rec.Code != http.StatusCreated || !strings.Contains(rec.Body.String(), want) {
		t.Fatalf("PUT: %d %s", rec.Code, rec.Body)
	}
	if rec := svcDo(s, http.MethodGet, "/admin/resources", nil, auth...); !strings.Contains(rec.Body.String(), want) {
		t.Fatalf("GET /admin/resources: %s", rec.Body)
	}
	rec = svcDo(s, http.MethodPut, "/admin/resources/news", strings.NewReader("{\"url\": \"https://example.org/news.html\",\n \"filter\": {\"exclude\": [\"ok\", \"re:(x\"]}}"), auth...)
	var p adminProblem
	if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil || rec.Code != http.StatusBadRequest || p.Param != "filter.exclude[1]" ||
		len(p.Errors) != 1 || p.Errors[0].Line != 2 || p.Errors[0].Column != 31 || !strings.Contains(p.Errors[0].Detail, "not an RE2 expression") {
		t.Fatalf("bad entry: %d %s", rec.Code, rec.Body)
	}
}
