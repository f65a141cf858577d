package api

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/dynamo-rss/dynamo/schema"
)

// TestViewPagesLargeVersions checks /view of a resource whose version has
// 10,000 items: a bounded page with a link to the version's own pages,
// which list every change, a page at a time.
func TestViewPagesLargeVersions(t *testing.T) {
	store := newFDStore()
	items := make([]schema.Item, 10000)
	for i := range items {
		items[i] = fdItem(i+1, fmt.Sprintf("i%05d", i), fmt.Sprintf("Item %05d", i), fmt.Sprintf("https://example.org/%d", i), "text")
	}
	store.save(&schema.Document{URL: "https://example.org/", RSSID: "big", Timestamp: fdT0, Channel: schema.Channel{Title: "Big"}, Items: items})
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
	for _, bad := range []string{"/view/big?v=2", "/view/big?v=0", "/view/big?v=x"} {
		if code := fdDo(s, http.MethodGet, bad).Code; code != http.StatusNotFound {
			t.Errorf("%s = %d, want 404", bad, code)
		}
	}
}
