package api

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/dynamo-rss/dynamo/config"
	"github.com/dynamo-rss/dynamo/storage"
)

// errDown is what a store says while its database cannot be reached; its
// text names what a client must never see.
var errDown = fmt.Errorf("failed to connect to host=db.internal user=dynamo: %w", storage.ErrUnavailable)

// TestServingThroughStoreOutage: while the store cannot be reached, a feed
// this node rendered before is answered from the render cache with the
// same ETag and body (and a reader's conditional request gets 304), and
// anything else answers 503 problem+json with Retry-After, never 500 and
// never the cause; when the store is back, feeds are current again.
func TestServingThroughStoreOutage(t *testing.T) {
	f := fdFixture()
	s := newFDServer(t, f)
	rendered := []struct{ target, encoding string }{
		{"/resources/news?max=2&type=atom", ""},
		{"/resources/news?max=2&type=atom", "gzip"},
		{"/resources/news", ""},
		{"/resources/news/versions/2?type=json", ""},
		{"/resources?type=rss2", ""},
	}
	type answer struct {
		etag string
		body []byte
	}
	before := map[string]answer{}
	for _, r := range rendered {
		rec := fdDo(s, http.MethodGet, r.target, "Accept-Encoding", r.encoding)
		if rec.Code != http.StatusOK {
			t.Fatalf("GET %s: %d %s", r.target, rec.Code, rec.Body)
		}
		before[r.target+" "+r.encoding] = answer{rec.Header().Get("ETag"), rec.Body.Bytes()}
	}

	f.Mu.Lock()
	f.Err, f.InfoErr = errDown, errDown
	f.Mu.Unlock()
	for _, r := range rendered {
		want := before[r.target+" "+r.encoding]
		rec := fdDo(s, http.MethodGet, r.target, "Accept-Encoding", r.encoding)
		if rec.Code != http.StatusOK || rec.Header().Get("ETag") != want.etag || !bytes.Equal(rec.Body.Bytes(), want.body) {
			t.Errorf("store down, GET %s (%q): %d ETag %s, want 200 with the feed rendered before (ETag %s)",
				r.target, r.encoding, rec.Code, rec.Header().Get("ETag"), want.etag)
		}
		if cc := rec.Header().Get("Cache-Control"); cc != "public, max-age=30" {
			t.Errorf("store down, GET %s: Cache-Control %q, want a short max-age", r.target, cc)
		}
		rec = fdDo(s, http.MethodGet, r.target, "Accept-Encoding", r.encoding, "If-None-Match", want.etag)
		if rec.Code != http.StatusNotModified || rec.Header().Get("ETag") != want.etag {
			t.Errorf("store down, conditional GET %s: %d, want 304 with ETag %s", r.target, rec.Code, want.etag)
		}
	}
	// Rendered only plain: a client that accepts gzip gets the plain one.
	if rec := fdDo(s, http.MethodGet, "/resources/news", "Accept-Encoding", "gzip"); rec.Code != http.StatusOK || rec.Header().Get("Content-Encoding") != "" {
		t.Errorf("store down, a feed rendered plain asked with gzip: %d %q", rec.Code, rec.Header().Get("Content-Encoding"))
	}
	for _, target := range []string{
		"/resources/forum",            // never rendered
		"/resources/news?max=3",       // another query
		"/resources/news?type=rss1",   // another format
		"/resources",                  // /resources?type=rss2 was rendered, not this
		"/resources/news?index=1",     // another version selection
		"/resources/news/versions/1",  // another permalink
		"/resources/nosuch?type=json", // unknown: the store cannot say
	} {
		rec := fdDo(s, http.MethodGet, target)
		p := svcProblem(t, rec, http.StatusServiceUnavailable)
		if rec.Header().Get("Retry-After") == "" {
			t.Errorf("store down, GET %s: 503 without Retry-After", target)
		}
		if strings.Contains(rec.Body.String(), "db.internal") || strings.Contains(rec.Body.String(), "dynamo:") {
			t.Errorf("store down, GET %s: the answer shows the cause: %s", target, rec.Body)
		}
		if !strings.Contains(p.Detail, "store") {
			t.Errorf("store down, GET %s: detail %q does not say the store is the trouble", target, p.Detail)
		}
	}

	f.Mu.Lock()
	f.Err, f.InfoErr = nil, nil
	f.Mu.Unlock()
	if rec := fdDo(s, http.MethodGet, "/resources/forum"); rec.Code != http.StatusOK {
		t.Errorf("store back, GET /resources/forum: %d", rec.Code)
	}
}

// unavailableRegistry is a registry whose store cannot be reached.
type unavailableRegistry struct{ *fakeRegistry }

func (unavailableRegistry) Register(context.Context, config.ResourceEntry) (bool, error) {
	return false, fmt.Errorf("register %q: %w", "x", errDown)
}

func (unavailableRegistry) Unregister(context.Context, string) error {
	return fmt.Errorf("unregister: %w", errDown)
}

// TestAdminWritesThroughStoreOutage: a PUT or DELETE the store cannot take
// answers 503 with Retry-After, not 500, without the cause.
func TestAdminWritesThroughStoreOutage(t *testing.T) {
	s := newSvcServer(t, Options{AdminToken: "tok", Registry: unavailableRegistry{newFakeRegistry()}, PublicURL: "https://feeds.example.org"})
	for _, req := range []struct{ method, target, body string }{
		{http.MethodPut, "/admin/resources/x", `{"url": "https://example.org/x"}`},
		{http.MethodDelete, "/admin/resources/x", ""},
	} {
		rec := svcDo(s, req.method, req.target, strings.NewReader(req.body), "Authorization", "Bearer tok", "Content-Type", "application/json")
		svcProblem(t, rec, http.StatusServiceUnavailable)
		if rec.Header().Get("Retry-After") == "" || strings.Contains(rec.Body.String(), "db.internal") {
			t.Errorf("%s %s: Retry-After %q, body %s", req.method, req.target, rec.Header().Get("Retry-After"), rec.Body)
		}
	}
	if !errors.Is(errDown, storage.ErrUnavailable) {
		t.Fatal("errDown is not ErrUnavailable")
	}
}
