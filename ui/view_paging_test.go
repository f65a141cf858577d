package ui

import (
	"fmt"
	"github.com/dynamo-rss/dynamo/api"
	"github.com/dynamo-rss/dynamo/internal/apitest"
	"github.com/labstack/echo/v4"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/dynamo-rss/dynamo/schema"
)

// TestViewPagesLargeVersions checks /view of a resource whose version has
// 10,000 items: a bounded page with a link to the version's own pages,
// which list every change, a page at a time.
func TestViewPagesLargeVersions(t *testing.T) {
	store := apitest.NewFDStore()
	items := make([]schema.Item, 10000)
	for i := range items {
		items[i] = apitest.FDItem(i+1, fmt.Sprintf("i%05d", i), fmt.Sprintf("Item %05d", i), fmt.Sprintf("https://example.org/%d", i), "text")
	}
	store.Save(&schema.Document{URL: "https://example.org/", RSSID: "big", Timestamp: apitest.FDT0, Channel: schema.Channel{Title: "Big"}, Items: items})
	s := newFDServer(t, store)

	rec := fdDo(s, http.MethodGet, "/view/big")
	body := rec.Body.String()
	if rec.Code != http.StatusOK || len(body) > 200<<10 {
		t.Fatalf("/view/big = %d, %d bytes: want a bounded page", rec.Code, len(body))
	}
	if n := strings.Count(body, `class="added"`); n != viewDiffItems {
		t.Errorf("%d items shown in the list of versions, want %d", n, viewDiffItems)
	}
	if !strings.Contains(body, `href="/view/big?v=1#v1"`) || !strings.Contains(body, "9950 more changes") || !strings.Contains(body, "10000 added") {
		t.Errorf("no link to the version's own pages, or wrong counts")
	}
	for _, tt := range []struct {
		target      string
		first, last string
		pageOf      string
	}{
		{"/view/big?v=1", "Item 00000", "Item 00199", "page 1 of 50"},
		{"/view/big?v=1&items=2", "Item 00200", "Item 00399", "page 2 of 50"},
		{"/view/big?v=1&items=50", "Item 09800", "Item 09999", "page 50 of 50"},
	} {
		body := fdDo(s, http.MethodGet, tt.target).Body.String()
		if n := strings.Count(body, `class="added"`); n != viewItemsPerPage {
			t.Errorf("%s: %d items, want %d", tt.target, n, viewItemsPerPage)
		}
		if !strings.Contains(body, ">"+tt.first+"<") || !strings.Contains(body, ">"+tt.last+"<") || !strings.Contains(body, tt.pageOf) {
			t.Errorf("%s: not items %s to %s, %s", tt.target, tt.first, tt.last, tt.pageOf)
		}
	}
	if !strings.Contains(fdDo(s, http.MethodGet, "/view/big?v=1").Body.String(), `href="/view/big?v=1&amp;items=2#v1"`) {
		t.Error("no link to the next page of items")
	}
	// A version that adds, removes and changes: every kind counts in its pages.
	next := make([]schema.Item, 0, len(items))
	next = append(next, items[300:]...)
	for i := range 300 {
		next = append(next, apitest.FDItem(20000+i, fmt.Sprintf("n%05d", i), fmt.Sprintf("New %05d", i), fmt.Sprintf("https://example.org/n%d", i), "text"))
	}
	for i := range 100 {
		next[i].Title += " (updated)"
	}
	store.Save(&schema.Document{URL: "https://example.org/", RSSID: "big", Timestamp: apitest.FDT0.Add(time.Hour), Channel: schema.Channel{Title: "Big"}, Items: next})
	if body := fdDo(s, http.MethodGet, "/view/big?v=2").Body.String(); !strings.Contains(body, "page 1 of 4") {
		t.Errorf("/view/big?v=2 (300 added, 300 removed, 100 changed): not page 1 of 4")
	}
	for _, bad := range []string{"/view/big?v=3", "/view/big?v=0", "/view/big?v=x"} {
		if code := fdDo(s, http.MethodGet, bad).Code; code != http.StatusNotFound {
			t.Errorf("%s = %d, want 404", bad, code)
		}
	}
}

// TestVersionHistory checks the chart's history made of stored versions
// when the poller keeps none: a changed poll per version, oldest first,
// each waiting until the next (the newest until now), the count of
// versions stored after each.
func TestVersionHistory(t *testing.T) {
	store := apitest.NewFDStore()
	for i := range 3 {
		store.Save(&schema.Document{URL: "https://example.org/", RSSID: "h", Timestamp: apitest.FDT0.Add(time.Duration(i) * time.Hour), Channel: schema.Channel{Title: "H"},
			Items: []schema.Item{apitest.FDItem(1, "a", fmt.Sprintf("A %d", i), "https://example.org/a", "text")}})
	}
	_, s := mountBoth(t, api.Options{Store: store, Now: func() time.Time { return fdNow }})
	c := echo.New().NewContext(httptest.NewRequest(http.MethodGet, "/view/h", nil), httptest.NewRecorder())
	info, err := store.Resource(t.Context(), "h")
	if err != nil {
		t.Fatal(err)
	}
	h, err := s.versionHistory(c, info, fdNow)
	if err != nil {
		t.Fatal(err)
	}
	if len(h) != 3 {
		t.Fatalf("%d records, want 3", len(h))
	}
	for i, r := range h {
		at := apitest.FDT0.Add(time.Duration(i) * time.Hour)
		next := at.Add(time.Hour)
		if i == 2 {
			next = fdNow
		}
		if !r.Time.Equal(at) || r.Outcome != "changed" || r.Wait != next.Sub(at) || r.Versions != i+1 {
			t.Errorf("record %d = %+v, want at %v, changed, wait %v, %d versions", i, r, at, next.Sub(at), i+1)
		}
	}
}

// TestViewOutOfRangeNumbers: ?items= too large to read as a number is no
// page number, like any unreadable one: the version's first page of
// changes, not its last. ?v= past the latest version is one the resource
// never had: the 404 says so and points at the list of versions, rather
// than saying it is "no longer stored".
func TestViewOutOfRangeNumbers(t *testing.T) {
	store := apitest.NewFDStore()
	items := make([]schema.Item, 450)
	for i := range items {
		items[i] = apitest.FDItem(i+1, fmt.Sprintf("i%05d", i), fmt.Sprintf("Item %05d", i), fmt.Sprintf("https://example.org/%d", i), "text")
	}
	store.Save(&schema.Document{URL: "https://example.org/", RSSID: "big", Timestamp: apitest.FDT0, Channel: schema.Channel{Title: "Big"}, Items: items})
	s := newFDServer(t, store)
	for _, n := range []string{"99999999999999999999", "x", "0", "-99999999999999999999"} {
		body := fdDo(s, http.MethodGet, "/view/big?v=1&items="+n).Body.String()
		if !strings.Contains(body, "page 1 of 3") || !strings.Contains(body, ">Item 00000<") {
			t.Errorf("?items=%s: not the first page of 3", n)
		}
	}
	for _, v := range []string{"2", "99", "99999999999999999999"} {
		rec := fdDo(s, http.MethodGet, "/view/big?v="+v)
		if p := apitest.CheckProblem(t, rec, http.StatusNotFound); !strings.Contains(p.Detail, "has no stored version") || !strings.Contains(p.Detail, "/view/big") {
			t.Errorf("?v=%s: detail %q", v, p.Detail)
		}
	}
}
