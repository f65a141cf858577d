package ui

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/dynamo-rss/dynamo/api"
	"github.com/dynamo-rss/dynamo/internal/apitest"
)

// TestViewVersionSavedMeanwhile: /view/news?v=3 reads the catalog (latest
// 3, so v3 is the newest, index 1), and a poll stores v4 before the
// version is read. Index 1 is then v4: the page must not show v4's changes
// under ?v=3 as a 200; it answers 404 (the person reloads and finds v3 at
// its new place).
func TestViewVersionSavedMeanwhile(t *testing.T) {
	store := apitest.NewMovingStore(apitest.FDFixture())
	s := newFDServer(t, store)
	store.AfterInfo = func() { store.Save(apitest.NewsVersion4()) }
	rec := fdDo(s, http.MethodGet, "/view/news?v=3")
	if rec.Code != http.StatusNotFound {
		t.Fatalf("/view/news?v=3 with v4 stored meanwhile = %d, want 404:\n%.2000s", rec.Code, rec.Body)
	}
	if strings.Contains(rec.Body.String(), "Tram line 4 opens") {
		t.Error("the answer shows v4's new item under ?v=3")
	}
	// Read again, v3 is found where it now is, and v4's item is not in it.
	rec = fdDo(s, http.MethodGet, "/view/news?v=3")
	if rec.Code != http.StatusOK || strings.Contains(rec.Body.String(), "Tram line 4 opens") {
		t.Errorf("/view/news?v=3 afterwards = %d, or shows v4's item", rec.Code)
	}
}

// TestViewListPrunedMeanwhile: retention removes news's v1 between /view's
// catalog read (3 versions) and its version reads. The page lists the two
// versions still stored, the oldest with the retention note, and nothing
// for the version gone.
func TestViewListPrunedMeanwhile(t *testing.T) {
	store := apitest.NewMovingStore(apitest.FDFixture())
	s := newFDServer(t, store)
	store.AfterInfo = func() { store.Prune("news") }
	rec := fdDo(s, http.MethodGet, "/view/news")
	body := rec.Body.String()
	if rec.Code != http.StatusOK {
		t.Fatalf("/view/news = %d:\n%.2000s", rec.Code, body)
	}
	if !strings.Contains(body, `id="v3"`) || !strings.Contains(body, `id="v2"`) || strings.Contains(body, `id="v1"`) {
		t.Errorf("the list is not v3 and v2 only")
	}
	if !strings.Contains(body, "removed by the retention policy") {
		t.Error("v2 lacks the retention note")
	}
}

// TestPagesShowTheHub checks that the view and the browser page of a feed
// name the WebSub hub when there is one.
func TestPagesShowTheHub(t *testing.T) {
	s := newFDServer(t, apitest.FDFixture(), func(o *api.Options) { o.HubURL = fdBase + "/websub" })
	for _, path := range []string{"/view/news", "/resources/news"} {
		rec := fdDo(s, http.MethodGet, path, "Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8")
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), fdBase+"/websub") {
			t.Errorf("%s: %d, hub not shown", path, rec.Code)
		}
	}
}

func TestPreviewForm(t *testing.T) {
	s := newSvcServer(t, api.Options{})
	form := url.Values{"page": {apitest.PreviewPageHTML}, "url": {"https://example.org/news.html"}}
	rec := svcDo(s, http.MethodPost, "/preview", strings.NewReader(form.Encode()),
		"Content-Type", "application/x-www-form-urlencoded", "Accept", "text/html,application/xhtml+xml,*/*;q=0.8")
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	body := rec.Body.String()
	for _, want := range []string{
		`<textarea id="page" name="page" spellcheck="false">&lt;html&gt;`, // the page comes back in the form
		`value="https://example.org/news.html"`,
		`&lt;title&gt;Our Città News&lt;/title&gt;`, // the document, escaped
		`bogus`, // the diagnostic
	} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q", want)
		}
	}

	// Not annotated, from a browser: the page with the error, status 422.
	form.Set("page", apitest.NotAnnotatedHTML)
	rec = svcDo(s, http.MethodPost, "/preview", strings.NewReader(form.Encode()),
		"Content-Type", "application/x-www-form-urlencoded", "Accept", "text/html")
	if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), "not annotated") {
		t.Errorf("not annotated form: %d\n%s", rec.Code, rec.Body)
	}
}
