package api

import (
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/text/encoding/charmap"

	"github.com/dynamo-rss/dynamo/schema"
	"github.com/dynamo-rss/dynamo/schema/schematest"
)

func TestPreviewJSON(t *testing.T) {
	s := newSvcServer(t, Options{})
	rec := svcDo(s, http.MethodPost, "/preview?url="+url.QueryEscape("https://example.org/news.html"),
		strings.NewReader(previewPageHTML), "Content-Type", "text/html; charset=utf-8", "Accept", "application/json")
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type = %q", ct)
	}
	var got previewResult
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatalf("decode: %v", err)
	}
	if got.Error != nil {
		t.Errorf("error = %q on an annotated page", *got.Error)
	}
	doc, err := schema.Unmarshal([]byte(got.Document))
	if err != nil {
		t.Fatalf("document does not parse: %v\n%s", err, got.Document)
	}
	schematest.ValidateXSD(t, []byte(got.Document))
	if doc.Channel.Title != "Our Città News" || doc.RSSID != PreviewRSSID || doc.URL != "https://example.org/news.html" ||
		len(doc.Items) != 2 || doc.Items[0].Link != "https://example.org/news/1.html" || !doc.Timestamp.Equal(svcNow) {
		t.Errorf("document = %+v", doc)
	}
	var sawBogus bool
	for _, d := range got.Diagnostics {
		if d.Line <= 0 || d.Col <= 0 || (d.Severity != "error" && d.Severity != "warning") || d.Message == "" {
			t.Errorf("malformed diagnostic %+v", d)
		}
		sawBogus = sawBogus || (d.Line == 7 && strings.Contains(d.Message, "bogus"))
	}
	if !sawBogus {
		t.Errorf("no diagnostic on line 7 for the unknown tag item:bogus: %+v", got.Diagnostics)
	}
}

func TestPreviewLatin1(t *testing.T) {
	s := newSvcServer(t, Options{})
	body, err := charmap.ISO8859_1.NewEncoder().String(previewPageHTML)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(body, "Città") {
		t.Fatal("the page is not Latin-1 bytes")
	}
	rec := svcDo(s, http.MethodPost, "/preview", strings.NewReader(body), "Content-Type", "text/html; charset=ISO-8859-1")
	var got previewResult
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || rec.Code != http.StatusOK {
		t.Fatalf("status %d, decode %v: %s", rec.Code, err, rec.Body)
	}
	if !strings.Contains(got.Document, "<title>Our Città News</title>") {
		t.Errorf("Latin-1 page not decoded:\n%s", got.Document)
	}
}

func TestPreviewNotAnnotated(t *testing.T) {
	s := newSvcServer(t, Options{})
	rec := svcDo(s, http.MethodPost, "/preview", strings.NewReader(notAnnotatedHTML), "Accept", "application/json")
	p := svcProblem(t, rec, http.StatusUnprocessableEntity)
	if !strings.Contains(p.Detail, "not annotated") {
		t.Errorf("detail = %q", p.Detail)
	}
	var got previewResult
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatalf("decode: %v", err)
	}
	if got.Document != "" || got.Error == nil || got.Diagnostics == nil {
		t.Errorf("422 body = %s", rec.Body)
	}
}

func TestPreviewMultipart(t *testing.T) {
	s := newSvcServer(t, Options{})
	var b strings.Builder
	mw := multipart.NewWriter(&b)
	if err := mw.WriteField("page", previewPageHTML); err != nil {
		t.Fatal(err)
	}
	if _, err := mw.CreateFormFile("page", ""); err != nil { // what a browser sends when no file is chosen
		t.Fatal(err)
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	rec := svcDo(s, http.MethodPost, "/preview", strings.NewReader(b.String()), "Content-Type", mw.FormDataContentType())
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "Budget approved") {
		t.Errorf("multipart: %d %s", rec.Code, rec.Body)
	}

	// An empty file chosen beside the pasted page: the pasted page counts.
	b.Reset()
	mw = multipart.NewWriter(&b)
	if err := mw.WriteField("page", previewPageHTML); err != nil {
		t.Fatal(err)
	}
	if _, err := mw.CreateFormFile("page", "empty.html"); err != nil {
		t.Fatal(err)
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	rec = svcDo(s, http.MethodPost, "/preview", strings.NewReader(b.String()), "Content-Type", mw.FormDataContentType())
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "Budget approved") {
		t.Errorf("multipart with an empty file: %d %s", rec.Code, rec.Body)
	}

	// The page as an uploaded Latin-1 file, its charset in the part's header.
	latin1, err := charmap.ISO8859_1.NewEncoder().String(previewPageHTML)
	if err != nil {
		t.Fatal(err)
	}
	b.Reset()
	mw = multipart.NewWriter(&b)
	part, err := mw.CreatePart(textproto.MIMEHeader{
		"Content-Disposition": {`form-data; name="page"; filename="news.html"`},
		"Content-Type":        {"text/html; charset=ISO-8859-1"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(part, latin1); err != nil {
		t.Fatal(err)
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	rec = svcDo(s, http.MethodPost, "/preview", strings.NewReader(b.String()), "Content-Type", mw.FormDataContentType())
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "Our Città News") {
		t.Errorf("uploaded file: %d %s", rec.Code, rec.Body)
	}
}

func TestPreviewLimits(t *testing.T) {
	const limit = 256
	s := newSvcServer(t, Options{MaxPreviewBytes: limit})
	big := strings.Repeat("<p>x</p>", limit)
	for _, tc := range []struct {
		name        string
		body        string
		contentType string
		status      int
	}{
		{"raw over the limit", big, "text/html", http.StatusRequestEntityTooLarge},
		{"form over the limit", url.Values{"page": {big}}.Encode(), "application/x-www-form-urlencoded", http.StatusRequestEntityTooLarge},
		{"bad url", "<p>x</p>", "text/html", http.StatusBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			target := "/preview"
			if tc.status == http.StatusBadRequest {
				target += "?url=javascript:alert(1)"
			}
			rec := svcDo(s, http.MethodPost, target, strings.NewReader(tc.body), "Content-Type", tc.contentType)
			p := svcProblem(t, rec, tc.status)
			if p.Detail == "" {
				t.Error("no detail")
			}
		})
	}
	// Without Content-Length (chunked), the limit holds while reading, in
	// every encoding: never a 422 for a page that was cut.
	var mp strings.Builder
	mw := multipart.NewWriter(&mp)
	_ = mw.WriteField("page", big)
	_ = mw.Close()
	var mpFile strings.Builder
	mwf := multipart.NewWriter(&mpFile)
	fw, _ := mwf.CreateFormFile("page", "page.html")
	_, _ = io.WriteString(fw, big)
	_ = mwf.Close()
	for _, tc := range []struct{ name, body, contentType string }{
		{"raw", big, "text/html"},
		{"urlencoded", url.Values{"page": {big}}.Encode(), "application/x-www-form-urlencoded"},
		{"urlencoded, charset", url.Values{"page": {big}}.Encode(), "application/x-www-form-urlencoded; charset=utf-8"},
		{"multipart field", mp.String(), mw.FormDataContentType()},
		{"multipart file", mpFile.String(), mwf.FormDataContentType()},
		{"no content type", big, ""},
	} {
		t.Run("chunked "+tc.name, func(t *testing.T) {
			rec := svcDoChunkedAs(s, "/preview", strings.NewReader(tc.body), tc.contentType)
			svcProblem(t, rec, http.StatusRequestEntityTooLarge)
		})
	}
}

// TestPreviewLimitBoundary: a request body of exactly MaxPreviewBytes is
// read, one byte more is a 413, however the page is sent (the body, a form
// field, a multipart field, an uploaded file: the bound is the body's, so
// the page in a form is smaller); and the url must be an absolute http or
// https URL.
func TestPreviewLimitBoundary(t *testing.T) {
	const limit = 256
	s := newSvcServer(t, Options{MaxPreviewBytes: limit})
	multipartOf := func(file bool) func(p string) (string, string) {
		return func(p string) (string, string) {
			var b strings.Builder
			mw := multipart.NewWriter(&b)
			_ = mw.SetBoundary("b0undary")
			if file {
				fw, _ := mw.CreateFormFile("page", "page.html")
				_, _ = io.WriteString(fw, p)
			} else {
				_ = mw.WriteField("page", p)
			}
			_ = mw.Close()
			return b.String(), mw.FormDataContentType()
		}
	}
	for _, tc := range []struct {
		name string
		body func(page string) (string, string)
	}{
		{"body", func(p string) (string, string) { return p, "text/html" }},
		{"form field", func(p string) (string, string) {
			return url.Values{"page": {p}}.Encode(), "application/x-www-form-urlencoded"
		}},
		{"multipart field", multipartOf(false)},
		{"uploaded file", multipartOf(true)},
	} {
		empty, _ := tc.body("")
		for _, n := range []int{limit, limit + 1} {
			body, contentType := tc.body(strings.Repeat("x", n-len(empty)))
			if len(body) != n {
				t.Fatalf("%s: a body of %d bytes built, want %d", tc.name, len(body), n)
			}
			rec := svcDo(s, http.MethodPost, "/preview", strings.NewReader(body), "Content-Type", contentType)
			if tooLarge := rec.Code == http.StatusRequestEntityTooLarge; tooLarge != (n > limit) {
				t.Errorf("%s, a body of %d bytes (limit %d): %d %s", tc.name, n, limit, rec.Code, rec.Body)
			}
		}
	}
	for _, u := range []string{"ftp://news.example/", "http:///news", "news.example/list"} {
		rec := svcDo(s, http.MethodPost, "/preview?url="+url.QueryEscape(u), strings.NewReader("<p>x</p>"), "Content-Type", "text/html")
		svcProblem(t, rec, http.StatusBadRequest)
	}
	for _, u := range []string{"https://news.example/list", "http://news.example/list"} {
		rec := svcDo(s, http.MethodPost, "/preview?url="+url.QueryEscape(u), strings.NewReader("<p>x</p>"), "Content-Type", "text/html")
		if rec.Code == http.StatusBadRequest {
			t.Errorf("url %s refused: %s", u, rec.Body)
		}
	}
	// A client that takes anything (curl's Accept: */*) gets JSON; a
	// browser, which prefers HTML, the page.
	plain := newSvcServer(t, Options{})
	for accept, want := range map[string]string{"*/*": "application/json", "text/html,application/xhtml+xml,*/*;q=0.8": "text/html"} {
		rec := svcDo(plain, http.MethodPost, "/preview", strings.NewReader(previewPageHTML), "Content-Type", "text/html", "Accept", accept)
		if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, want) {
			t.Errorf("Accept %q: %d, Content-Type %q, want %s", accept, rec.Code, ct, want)
		}
	}
}

// TestPreviewUnreadableForm: a form body that does not parse is the
// client's mistake (400, saying why), not a page too large.
func TestPreviewUnreadableForm(t *testing.T) {
	s := newSvcServer(t, Options{})
	for _, tc := range []struct{ contentType, body string }{
		{"application/x-www-form-urlencoded", "page=%zz"},
		{"multipart/form-data; boundary=x", "--x\r\nContent-Disposition: form-data; name=\"page\"\r\n\r\nunterminated"},
	} {
		rec := svcDo(s, http.MethodPost, "/preview", strings.NewReader(tc.body), "Content-Type", tc.contentType)
		p := svcProblem(t, rec, http.StatusBadRequest)
		if !strings.Contains(p.Detail, "could not be read") {
			t.Errorf("%s: detail %q", tc.contentType, p.Detail)
		}
	}
}

// TestPreviewUploadWithoutCharset: a page uploaded as a file whose part
// says only its type (text/html, or a browser's application/octet-stream)
// is decoded by its own <meta charset>, and its diagnostics say nothing
// about a content type the person never wrote.
func TestPreviewUploadWithoutCharset(t *testing.T) {
	s := newSvcServer(t, Options{})
	page, err := charmap.Windows1252.NewEncoder().String(strings.Replace(previewPageHTML, "<head>", `<head><meta charset="windows-1252">`, 1))
	if err != nil {
		t.Fatal(err)
	}
	for _, ct := range []string{"text/html", "application/octet-stream"} {
		var b strings.Builder
		mw := multipart.NewWriter(&b)
		part, err := mw.CreatePart(textproto.MIMEHeader{
			"Content-Disposition": {`form-data; name="page"; filename="news.html"`},
			"Content-Type":        {ct},
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(part, page); err != nil {
			t.Fatal(err)
		}
		if err := mw.Close(); err != nil {
			t.Fatal(err)
		}
		rec := svcDo(s, http.MethodPost, "/preview", strings.NewReader(b.String()), "Content-Type", mw.FormDataContentType())
		var res previewResult
		if err := json.Unmarshal(rec.Body.Bytes(), &res); err != nil || rec.Code != http.StatusOK {
			t.Fatalf("%s: %d %v\n%s", ct, rec.Code, err, rec.Body)
		}
		if !strings.Contains(res.Document, "Our Città News") {
			t.Errorf("%s: the page is not decoded by its <meta charset>:\n%s", ct, res.Document)
		}
		for _, d := range res.Diagnostics {
			if strings.Contains(d.Message, "content type") {
				t.Errorf("%s: diagnostic %q", ct, d.Message)
			}
		}
	}
}
