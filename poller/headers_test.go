package poller

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// TestResourceHeadersAndTitle checks a resource's headers reaching its
// page's host (and not another host it redirects to), and its title
// replacing the page's channel title.
func TestResourceHeadersAndTitle(t *testing.T) {
	var mu sync.Mutex
	got := map[string]http.Header{}
	record := func(name string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			got[name] = r.Header.Clone()
			mu.Unlock()
			fmt.Fprint(w, page("Page title", "one"))
		}
	}
	other := httptest.NewServer(record("other"))
	t.Cleanup(other.Close)
	o := newOrigin(t)
	o.handle("/page", record("page"))
	o.handle("/moved", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got["moved"] = r.Header.Clone()
		mu.Unlock()
		// Another host: 127.0.0.1 and localhost name two hosts for the client.
		http.Redirect(w, r, strings.Replace(other.URL, "127.0.0.1", "localhost", 1)+"/elsewhere", http.StatusFound)
	})
	cfg := testConfig(t, baseYAML(fmt.Sprintf(`resources:
  - id: a
    url: %q
    title: "Town hall notices"
    headers: {Cookie: "consent=1", Accept-Language: "it"}
  - id: b
    url: %q
    headers: {Cookie: "consent=1", Accept-Language: "it"}
`, o.url("/page"), o.url("/moved"))))
	ms := newMemStore()
	e := newTestEngine(t, cfg, ms, newFakeClock(t0))
	for _, id := range []string{"a", "b"} {
		if _, err := e.PollNow(t.Context(), id); err != nil {
			t.Fatalf("poll %s: %v", id, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if h := got["page"]; h.Get("Cookie") != "consent=1" || h.Get("Accept-Language") != "it" {
		t.Errorf("the page got Cookie %q, Accept-Language %q", h.Get("Cookie"), h.Get("Accept-Language"))
	}
	if h := got["moved"]; h.Get("Cookie") != "consent=1" {
		t.Errorf("the page that redirects got Cookie %q", h.Get("Cookie"))
	}
	if h, ok := got["other"]; !ok || h.Get("Cookie") != "" || h.Get("Accept-Language") != "" {
		t.Errorf("another host (reached %v) got Cookie %q, Accept-Language %q", ok, h.Get("Cookie"), h.Get("Accept-Language"))
	}
	ms.mu.Lock()
	defer ms.mu.Unlock()
	if vs := ms.versions["a"]; len(vs) != 1 || vs[0].Channel.Title != "Town hall notices" {
		t.Fatalf("a's versions %v: want one titled Town hall notices", len(vs))
	}
	if vs := ms.versions["b"]; len(vs) != 1 || vs[0].Channel.Title != "Page title" {
		t.Errorf("b's title %q, want the page's", vs[0].Channel.Title)
	}
}
