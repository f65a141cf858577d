package api

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestAdminRegistry(t *testing.T) {
	reg := newFakeRegistry()
	s := newSvcServer(t, Options{AdminToken: "tok", Registry: reg, PublicURL: "https://feeds.example.org"})
	auth := []string{"Authorization", "Bearer tok", "Content-Type", "application/json"}
	do := func(method, target, body string) *httpRecorder {
		return svcDo(s, method, target, strings.NewReader(body), auth...)
	}

	rec := do(http.MethodPut, "/admin/resources/news", `{"url": "https://example.org/news.html", "policy": {"kind": "flat", "interval": "15m"}}`)
	if rec.Code != http.StatusCreated || rec.Header().Get("Location") != "https://feeds.example.org/resources/news" {
		t.Fatalf("PUT new: %d %q %s", rec.Code, rec.Header().Get("Location"), rec.Body)
	}
	var got definitionJSON
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || got.ID != "news" || got.Source != "api" || got.Resource.Policy.Kind != "flat" {
		t.Fatalf("PUT answer %+v %v", got, err)
	}
	mapped := `{"url": "https://example.org/news2.html", "select": {"item": "li", "title": {"select": ["h2", "a"]}, "date": {"select": "span", "pattern": "Posted (.+) by", "format": "02/01/06"}}}`
	if rec := do(http.MethodPut, "/admin/resources/news", mapped); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"date":{"select":"span","pattern":"Posted (.+) by","format":"02/01/06"}`) {
		t.Fatalf("PUT with field mappings: %d %s", rec.Code, rec.Body)
	}
	if rec := do(http.MethodPut, "/admin/resources/news", `{"url": "https://example.org/news2.html"}`); rec.Code != http.StatusOK {
		t.Fatalf("PUT replace: %d %s", rec.Code, rec.Body)
	}
	for _, tc := range []struct{ name, body, param string }{
		{"bad url", `{"url": "ftp://x/"}`, "url"},
		{"unknown field", `{"url": "https://x/", "colour": "red"}`, "colour"},
		{"typo", `{"ulr": "https://x/"}`, "ulr"},
		{"malformed JSON", `{"url": }`, ""},
		{"bad policy", `{"url": "https://x/", "policy": {"kind": "eager"}}`, "policy.kind"},
		{"bad zone", `{"url": "https://x/", "timezone": "Mars/Base"}`, "timezone"},
		{"bad pattern", `{"url": "https://x/", "select": {"item": "li", "date": {"select": "span", "pattern": "Posted ("}}}`, "select.date.pattern"},
		{"bad format", `{"url": "https://x/", "select": {"item": "li", "date": {"select": "span", "format": "dd/mm/yy"}}}`, "select.date.format"},
		{"bad list", `{"url": "https://x/", "select": {"item": "li", "title": {"select": ["h2", "h3 >"]}}}`, "select.title.select[1]"},
		{"empty", ``, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := svcProblem(t, do(http.MethodPut, "/admin/resources/x1", tc.body), http.StatusBadRequest)
			if p.Param != tc.param || p.Detail == "" {
				t.Fatalf("problem %+v, want parameter %q", p, tc.param)
			}
			switch tc.name {
			case "typo": // no knock-on error for the url it was meant to be
				if want := "invalid resource definition: line 1, column 2: ulr: unknown field; did you mean url?"; p.Detail != want {
					t.Errorf("detail %q, want %q", p.Detail, want)
				}
			case "malformed JSON":
				if want := "invalid resource definition: line 1, column 9: malformed JSON: invalid character '}' looking for beginning of value"; p.Detail != want {
					t.Errorf("detail %q, want %q", p.Detail, want)
				}
			}
		})
	}
	svcProblem(t, do(http.MethodPut, "/admin/resources/file1", `{"url": "https://example.org/x"}`), http.StatusConflict)
	svcProblem(t, do(http.MethodDelete, "/admin/resources/file1", ""), http.StatusConflict)

	rec = do(http.MethodGet, "/admin/resources", "")
	var list struct{ Resources []definitionJSON }
	if err := json.Unmarshal(rec.Body.Bytes(), &list); err != nil || len(list.Resources) != 2 || list.Resources[0].ID != "file1" || list.Resources[0].Source != "file" || list.Resources[1].Resource.URL != "https://example.org/news2.html" {
		t.Fatalf("GET list %d: %s", rec.Code, rec.Body)
	}

	if rec := do(http.MethodDelete, "/admin/resources/news", ""); rec.Code != http.StatusNoContent {
		t.Fatalf("DELETE: %d %s", rec.Code, rec.Body)
	}
	svcProblem(t, do(http.MethodDelete, "/admin/resources/news", ""), http.StatusNotFound)
	// Without the token, nothing.
	svcProblem(t, svcDo(s, http.MethodPut, "/admin/resources/news", strings.NewReader(`{"url": "https://x/"}`)), http.StatusUnauthorized)
}

type httpRecorder = httptest.ResponseRecorder

// svcDoFrom is svcDo from a given client address.
func svcDoFrom(s *Server, method, target string, body io.Reader, ip string, header ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, target, body)
	req.RemoteAddr = ip + ":40000"
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	return rec
}

// fakeFetcher serves pages by URL.
type fakeFetcher map[string]string

func (f fakeFetcher) FetchPage(_ context.Context, u string) (Page, error) {
	body, ok := f[u]
	if !ok {
		return Page{}, errors.New("connection refused")
	}
	return Page{Body: []byte(body), ContentType: "text/html; charset=utf-8", URL: u}, nil
}

func TestSelfRegistration(t *testing.T) {
	annotated := `<html><body><h1><!-- <channel:title> -->Town<!-- </channel:title> --></h1><p><!-- <item:title index="1"> -->A<!-- </item:title> --></p></body></html>`
	fetch := fakeFetcher{
		"https://example.org/news.html":  annotated,
		"https://example.org/plain.html": `<html><body><h1>No annotations</h1><!-- <item:titel index="1"> -->x<!-- </item:titel> --></body></html>`,
		"https://other.org/news.html":    annotated,
	}
	reg := newFakeRegistry()
	now := svcNow
	s := newSvcServer(t, Options{Registry: reg, Fetch: fetch, OpenRegistration: true, PublicURL: "https://feeds.example.org",
		RegistrationEvery: time.Hour, Now: func() time.Time { return now }})
	post := func(body, ct, ip string) *httpRecorder {
		req := strings.NewReader(body)
		return svcDoFrom(s, http.MethodPost, "/resources", req, ip, "Content-Type", ct)
	}

	rec := post(`url=https%3A%2F%2Fexample.org%2Fnews.html`, "application/x-www-form-urlencoded", "192.0.2.1")
	if rec.Code != http.StatusCreated || rec.Header().Get("Location") != "https://feeds.example.org/resources/example.org-news.html" {
		t.Fatalf("register: %d %q %s", rec.Code, rec.Header().Get("Location"), rec.Body)
	}
	if strings.Contains(rec.Body.String(), `"status"`) {
		t.Errorf("the answer to a registration carries the poll state (admin only): %s", rec.Body)
	}
	rec = post(`{"url": "https://example.org/news.html"}`, "application/json", "192.0.2.2")
	if rec.Code != http.StatusOK || rec.Header().Get("Location") != "https://feeds.example.org/resources/example.org-news.html" {
		t.Fatalf("again: %d %q %s", rec.Code, rec.Header().Get("Location"), rec.Body)
	}
	rec = post(`{"url": "https://example.org/news.html", "id": "mine"}`, "application/json", "192.0.2.2")
	if rec.Code != http.StatusOK || rec.Header().Get("Location") != "https://feeds.example.org/resources/example.org-news.html" {
		t.Fatalf("again under another id: %d %q %s", rec.Code, rec.Header().Get("Location"), rec.Body)
	}
	var existing map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &existing); err != nil || existing["feed"] != "https://feeds.example.org/resources/example.org-news.html" {
		t.Fatalf("answer for an existing URL: %s (%v)", rec.Body, err)
	}
	if _, ok := existing["status"]; ok {
		t.Errorf("a public answer carries the poll state (admin only): %s", rec.Body)
	}
	if existing["polled"] != true {
		t.Errorf("answer for an existing, polled URL says polled %v: %s", existing["polled"], rec.Body)
	}
	rec = post(`{"url": "https://example.org/plain.html"}`, "application/json", "192.0.2.3")
	p := svcProblem(t, rec, http.StatusUnprocessableEntity)
	var withDiags previewResult
	if err := json.Unmarshal(rec.Body.Bytes(), &withDiags); err != nil || len(withDiags.Diagnostics) == 0 {
		t.Fatalf("422 without diagnostics: %s (%+v)", rec.Body, p)
	}
	svcProblem(t, post(`{"url": "https://other.org/news.html", "id": "example.org-news.html"}`, "application/json", "192.0.2.4"), http.StatusConflict)
	svcProblem(t, post(`{"url": "/relative"}`, "application/json", "192.0.2.5"), http.StatusBadRequest)
	// A URL that does not parse is the same 400 on its field.
	if p := svcProblem(t, post(`{"url": "https://example.org/%zz"}`, "application/json", "192.0.2.5"), http.StatusBadRequest); p.Param != "url" {
		t.Errorf("unparsable url: param %q, want url", p.Param)
	}
	if p := svcProblem(t, post(`{"url":`, "application/json", "192.0.2.5"), http.StatusBadRequest); strings.Contains(p.Detail, "code=") || strings.Contains(p.Detail, "internal=") {
		t.Errorf("malformed JSON: the detail carries echo's wrapping: %q", p.Detail)
	}

	// Per client: a burst, then 429 with Retry-After.
	var last *httpRecorder
	for i := range 7 {
		last = post(fmt.Sprintf(`{"url": "https://nowhere.example/%d"}`, i), "application/json", "198.51.100.7")
	}
	svcProblem(t, last, http.StatusTooManyRequests)
	if last.Header().Get("Retry-After") == "" {
		t.Error("429 without Retry-After")
	}

	closed := newSvcServer(t, Options{Registry: reg, Fetch: fetch})
	svcProblem(t, svcDo(closed, http.MethodPost, "/resources", strings.NewReader(`{"url": "https://example.org/news.html"}`), "Content-Type", "application/json"), http.StatusForbidden)
}

// TestAdminHeadersRedacted checks that a resource's headers are shown back
// by name only, in the PUT answer and the listings, and refused when they
// could smuggle a line or set the host.
func TestAdminHeadersRedacted(t *testing.T) {
	reg := newFakeRegistry()
	var logs strings.Builder
	s := newSvcServer(t, Options{AdminToken: "tok", Registry: reg, PublicURL: "https://feeds.example.org",
		AccessLog: true, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	auth := []string{"Authorization", "Bearer tok", "Content-Type", "application/json"}
	rec := svcDo(s, http.MethodPut, "/admin/resources/town", strings.NewReader(`{"url": "https://example.org/", "title": "Town", "headers": {"Cookie": "consent=s3cr3t"}}`), auth...)
	if rec.Code != http.StatusCreated {
		t.Fatalf("PUT: %d %s", rec.Code, rec.Body)
	}
	for _, target := range []string{"", "/admin/resources", "/admin/resources/town"} {
		body := rec.Body.String()
		if target != "" {
			body = svcDo(s, http.MethodGet, target, nil, auth...).Body.String()
		}
		if strings.Contains(body, "s3cr3t") || (target != "/admin/resources/town" && !strings.Contains(body, `"Cookie":"(redacted)"`)) {
			t.Errorf("%s shows the header's value, or not its name:\n%s", cmp.Or(target, "PUT"), body)
		}
	}
	for _, body := range []string{
		`{"url": "https://example.org/", "headers": {"Host": "evil.example"}}`,
		`{"url": "https://example.org/", "headers": {"Accept-Language": "it\r\nX-Evil: 1"}}`,
		`{"url": "https://example.org/", "headers": {"Bad Name": "1"}}`,
	} {
		p := svcProblem(t, svcDo(s, http.MethodPut, "/admin/resources/bad", strings.NewReader(body), auth...), http.StatusBadRequest)
		if !strings.HasPrefix(p.Param, "headers.") || strings.Contains(p.Detail, "X-Evil") {
			t.Errorf("%s: problem %+v", body, p)
		}
	}
	if strings.Contains(logs.String(), "s3cr3t") {
		t.Errorf("the log shows a header's value:\n%s", logs.String())
	}
}

// TestRegistrationNeedsRegistryAndFetcher: registration: open on a server
// without a page fetcher, or without a registry, cannot register anything,
// so webmasters are told it is off (403 on POST /resources, 404 on the
// form) rather than shown a form or a registration that cannot work.
func TestRegistrationNeedsRegistryAndFetcher(t *testing.T) {
	fetch := fakeFetcher{"https://example.org/news.html": `<html><body><h1><!-- <channel:title> -->Town<!-- </channel:title> --></h1></body></html>`}
	for name, opts := range map[string]Options{
		"no fetcher":  {Registry: newFakeRegistry(), OpenRegistration: true},
		"no registry": {Fetch: fetch, OpenRegistration: true},
	} {
		t.Run(name, func(t *testing.T) {
			s := newSvcServer(t, opts)
			rec := svcDo(s, http.MethodPost, "/resources", strings.NewReader(`{"url": "https://example.org/news.html"}`), "Content-Type", "application/json")
			if p := svcProblem(t, rec, http.StatusForbidden); !strings.Contains(p.Detail, "self-registration is off") {
				t.Errorf("POST /resources: %q", p.Detail)
			}
			svcProblem(t, svcDo(s, http.MethodGet, "/register", nil), http.StatusNotFound)
		})
	}
}
