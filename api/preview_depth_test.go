package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/dynamo-rss/dynamo/internal/costtest"
)

// previewRequest is a POST /preview carrying page and a select block, in
// one of the forms the route reads.
type previewRequest struct {
	target, ct string
	body       []byte
}

func previewIn(form, page, block string) previewRequest {
	switch form {
	case "form field":
		v := url.Values{"page": {page}, "select": {block}}
		return previewRequest{"/preview", "application/x-www-form-urlencoded", []byte(v.Encode())}
	case "multipart":
		var b bytes.Buffer
		mw := multipart.NewWriter(&b)
		fw, _ := mw.CreateFormFile("page", "page.html")
		_, _ = fw.Write([]byte(page))
		_ = mw.WriteField("select", block)
		_ = mw.Close()
		return previewRequest{"/preview", mw.FormDataContentType(), b.Bytes()}
	case "JSON text":
		body, _ := json.Marshal(map[string]string{"page": page, "select": block})
		return previewRequest{"/preview", "application/json", body}
	case "JSON object":
		body := `{"page": ` + string(mustJSON(page)) + `, "select": ` + block + `}`
		return previewRequest{"/preview", "application/json", []byte(body)}
	case "query":
		return previewRequest{"/preview?select=" + url.QueryEscape(block), "text/html; charset=utf-8", []byte(page)}
	}
	panic(form)
}

func (r previewRequest) do(s *Server) *httpRecorder {
	return svcDo(s, http.MethodPost, r.target, bytes.NewReader(r.body), "Content-Type", r.ct, "Accept", "application/json")
}

// TestPreviewNestedSelectRefused: a select block nested 1,000 or 30,000
// deep (the 58 KiB body that cost 8 s of CPU and 1.8 GiB) is a 400 naming
// the field, in every form POST /preview takes, and costs no more than
// extracting a flat page of the same size with a real block, in the same
// form, measured in the same run.
func TestPreviewNestedSelectRefused(t *testing.T) {
	s := newSvcServer(t, Options{})
	const page = `<html><head><title>T</title></head><body><ul><li><a href="/a">A</a></li></ul></body></html>`
	for _, depth := range []int{1000, 30000} {
		deep := "{item: " + strings.Repeat("[", depth) + strings.Repeat("]", depth) + "}"
		flat := costtest.FlatPage(len(deep))
		for _, form := range []string{"form field", "multipart", "JSON text", "JSON object", "query"} {
			t.Run(fmt.Sprintf("%s %d", form, depth), func(t *testing.T) {
				block, good := deep, `{item: li, title: a, link: "a @href"}`
				if form == "JSON object" {
					block = `{"item": ` + strings.Repeat("[", depth) + strings.Repeat("]", depth) + "}"
					good = `{"item": "li", "title": "a", "link": "a @href"}`
				}
				bad := previewIn(form, page, block)
				ref := previewIn(form, flat, good)
				refTime, refAlloc := costtest.Best(3, func() {
					if rec := ref.do(s); rec.Code != http.StatusOK {
						t.Fatalf("flat page: %d %s", rec.Code, rec.Body)
					}
				})
				var rec *httpRecorder
				d, alloc := costtest.Best(3, func() { rec = bad.do(s) })
				p := svcProblem(t, rec, http.StatusBadRequest)
				if !strings.HasPrefix(p.Param, "select.item[0][0]") || !strings.HasSuffix(p.Param, "…") || !strings.Contains(p.Detail, "select.item[0]") || !strings.Contains(p.Detail, "nested deeper than 64 levels") {
					t.Fatalf("problem %+v, want the field select.item and the bound", p)
				}
				t.Logf("%d-byte body: %v, %d bytes allocated; flat page %d bytes: %v, %d bytes allocated", len(bad.body), d, alloc, len(ref.body), refTime, refAlloc)
				if d > refTime || alloc > refAlloc {
					t.Fatalf("nested block cost %v and %d bytes, more than extracting the flat page: %v and %d bytes", d, alloc, refTime, refAlloc)
				}
			})
		}
	}
}

// TestPreviewNestedBodyRefused: a JSON body nested too deeply anywhere,
// not only in its select block, is a 400 naming the field; an alias bomb
// in a select block is a 400 at once.
func TestPreviewNestedBodyRefused(t *testing.T) {
	s := newSvcServer(t, Options{})
	body := `{"page": "<p>x</p>", "extra": ` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + "}"
	p := svcProblem(t, svcDo(s, http.MethodPost, "/preview", strings.NewReader(body), "Content-Type", "application/json", "Accept", "application/json"), http.StatusBadRequest)
	if !strings.HasPrefix(p.Param, "extra[0]") || !strings.Contains(p.Detail, "nested deeper than 64 levels") {
		t.Fatalf("problem %+v", p)
	}
	var bomb strings.Builder
	bomb.WriteString("item: li\ntitle:\n  select:\n  - &a0 \"lol\"\n")
	for i := 1; i <= 12; i++ {
		fmt.Fprintf(&bomb, "  - &a%d [%s]\n", i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*a%d, ", i-1), 10), ", "))
	}
	start := time.Now()
	p = svcProblem(t, previewIn("form field", "<p>x</p>", bomb.String()).do(s), http.StatusBadRequest)
	if !strings.HasPrefix(p.Param, "select.title.select") || !strings.Contains(p.Detail, "aliases") {
		t.Fatalf("alias bomb: problem %+v", p)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("alias bomb took %v", d)
	}
}

// TestAdminNestedDefinitionRefused: PUT /admin/resources with a select
// block nested 30,000 deep is a 400 naming the field.
func TestAdminNestedDefinitionRefused(t *testing.T) {
	s := newSvcServer(t, Options{AdminToken: "tok", Registry: newFakeRegistry()})
	for name, body := range map[string]string{
		"JSON": `{"url": "https://example.org/", "select": {"item": "li", "title": {"select": ` + strings.Repeat("[", 30000) + strings.Repeat("]", 30000) + `}}}`,
		"YAML": "url: https://example.org/\nselect:\n  item: li\n  title:\n    select:\n      " + strings.Repeat("- ", 30000) + "x\n",
	} {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			rec := svcDo(s, http.MethodPut, "/admin/resources/deep", strings.NewReader(body), "Authorization", "Bearer tok", "Content-Type", "application/json")
			p := svcProblem(t, rec, http.StatusBadRequest)
			if !strings.HasPrefix(p.Param, "select.title.select[0]") || !strings.Contains(p.Detail, "nested deeper than 64 levels") {
				t.Fatalf("problem %+v", p)
			}
			if d := time.Since(start); d > 2*time.Second { // a safety net: config's TestNestingCostLinear measures
				t.Fatalf("took %v", d)
			}
		})
	}
}

// TestPreviewSelectorLengthLimit: a selector of 4,096 bytes is compiled,
// one byte more is a 400 naming the field.
func TestPreviewSelectorLengthLimit(t *testing.T) {
	s := newSvcServer(t, Options{})
	const page = `<html><head><title>T</title></head><body><ul><li><a href="/a">A</a></li></ul></body></html>`
	long := func(n int) string { return "a" + strings.Repeat(",a", (n-1)/2) }
	if rec := previewIn("form field", page, "item: li\ntitle: \""+long(4095)+"\"\n").do(s); rec.Code != http.StatusOK {
		t.Fatalf("4,095 bytes: %d %s", rec.Code, rec.Body)
	}
	p := svcProblem(t, previewIn("form field", page, "item: li\ntitle: \""+long(4097)+"\"\n").do(s), http.StatusBadRequest)
	if p.Param != "select.title" || !strings.Contains(p.Detail, "longer than 4096 bytes") {
		t.Fatalf("problem %+v", p)
	}
}
