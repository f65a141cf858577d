package api

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/dynamo-rss/dynamo/schema"
	"github.com/dynamo-rss/dynamo/schema/schematest"
	"github.com/dynamo-rss/dynamo/storage"
)

// infoStore answers Resource from a fixed info, without allocating, as
// Badger's info cache does; the rest comes from the fdStore.
type infoStore struct {
	*fdStore
	info storage.ResourceInfo
}

func (f infoStore) Resource(ctx context.Context, id string) (storage.ResourceInfo, error) {
	if id == f.info.ID {
		return f.info, nil
	}
	return f.fdStore.Resource(ctx, id)
}

// maxCachedFeedAllocs bounds the allocations of answering a feed that is in
// the render cache, through the whole middleware chain: its key is built and
// hashed in place, and the header values of its answers were made with it.
const maxCachedFeedAllocs = 2

// maxCachedPageAllocs bounds the allocations of answering a feed's page for
// browsers that is in the render cache, as maxCachedFeedAllocs does a feed's:
// checking that the page's one live part, its age ("updated 3h ago"), still
// reads the same makes the text in a stack buffer (the clock stands still
// here; when the age changes, the page is rendered again).
const maxCachedPageAllocs = 2

func TestCachedFeedAllocs(t *testing.T) {
	checkCachedAllocs(t, "", "application/rss+xml", maxCachedFeedAllocs, func(etag string) []allocCase {
		return []allocCase{
			{"GET", http.MethodGet, nil, http.StatusOK},
			{"GET gzip", http.MethodGet, []string{"Accept-Encoding", "gzip, deflate, br"}, http.StatusOK},
			{"HEAD", http.MethodHead, nil, http.StatusOK},
			{"a feed reader's Accept", http.MethodGet, []string{"Accept", acceptSeeds[2], "Accept-Encoding", "gzip"}, http.StatusOK},
			{"304", http.MethodGet, []string{"If-None-Match", etag}, http.StatusNotModified},
		}
	})
}

func TestCachedPageAllocs(t *testing.T) {
	checkCachedAllocs(t, acceptFirefox, "text/html", maxCachedPageAllocs, func(etag string) []allocCase {
		if !strings.HasPrefix(etag, "W/") {
			t.Fatalf("ETag %q: not the page's", etag)
		}
		return []allocCase{
			{"GET", http.MethodGet, nil, http.StatusOK},
			{"GET gzip", http.MethodGet, []string{"Accept-Encoding", "gzip, deflate, br, zstd"}, http.StatusOK},
			{"HEAD", http.MethodHead, nil, http.StatusOK},
			{"HEAD gzip", http.MethodHead, []string{"Accept-Encoding", "gzip"}, http.StatusOK},
			{"304 If-None-Match", http.MethodGet, []string{"If-None-Match", etag, "Accept-Encoding", "gzip"}, http.StatusNotModified},
			{"304 If-Modified-Since", http.MethodGet, []string{"If-Modified-Since", fdNow.Format(http.TimeFormat)}, http.StatusNotModified},
		}
	})
}

type allocCase struct {
	name, method string
	header       []string
	code         int
}

// checkCachedAllocs fills the render cache with a 20-item feed as asked for
// with accept (plain and gzip), then requires each case of cases (given the
// answer's ETag) to be answered with its status, a Content-Type starting
// with wantType when 200, and at most max allocations.
func checkCachedAllocs(t *testing.T, accept, wantType string, max int, cases func(etag string) []allocCase) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	fds := newFDStore()
	fds.Save(benchDoc("bench", fdT0, 0, 20))
	info, err := fds.Resource(context.Background(), "bench")
	if err != nil {
		t.Fatal(err)
	}
	s := newFDServer(t, infoStore{fds, info})
	const target = "/resources/bench?max=20"
	first := fdDo(s, http.MethodGet, target, "Accept", accept)
	if first.Code != http.StatusOK {
		t.Fatalf("GET %s = %d", target, first.Code)
	}
	fdDo(s, http.MethodGet, target, "Accept", accept, "Accept-Encoding", "gzip")
	for _, tc := range cases(first.Header().Get("ETag")) {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(tc.method, target, nil)
			if accept != "" {
				req.Header.Set("Accept", accept)
			}
			for i := 0; i+1 < len(tc.header); i += 2 {
				req.Header.Set(tc.header[i], tc.header[i+1])
			}
			w := &discardWriter{h: http.Header{}}
			allocs := testing.AllocsPerRun(100, func() {
				clear(w.h)
				w.code = 0
				s.ServeHTTP(w, req)
			})
			if w.code != tc.code {
				t.Fatalf("status %d, want %d", w.code, tc.code)
			}
			if ct := w.h.Get("Content-Type"); tc.code == http.StatusOK && !strings.HasPrefix(ct, wantType) {
				t.Fatalf("Content-Type %q, want %s", ct, wantType)
			}
			if allocs > float64(max) {
				t.Errorf("%.0f allocations per answer, want at most %d", allocs, max)
			}
		})
	}
}

// A feed answered from the render cache (serveCached, with the header values
// made when it was rendered) is answered byte for byte and header for header
// as one rendered for the request: compared with a server that caches
// nothing, for every request of the dispatch comparison, with a poller (so
// max-age and <ttl> are the resource's) and a hub (Link). The clock moves
// between filling the cache and the comparison, so max-age does too.
//
// Feeds opened in a browser (pages) are compared the same way, in every form
// a page takes (compressed or not, HEAD, 304 by either validator, each feed
// route, raw paths and queries that name the same feed but show other links,
// a resource with no version yet, whose page says why), then again after
// what a page shows moves without the cache being filled again: the clock
// (the page's "updated … ago"), a new version, and the poll status an empty
// resource's page shows.
func TestCachedAnswersMatchRendered(t *testing.T) {
	store := newFDStore()
	for v := range 3 {
		store.Save(benchDoc("bench", fdT0.Add(time.Duration(v)*time.Hour), 2*v, 20))
	}
	poller := &svcPoller{At: fdNow, List: []ResourceStatus{{ID: "bench", URL: "https://example.org/bench/", Policy: "flat",
		Interval: 20 * time.Minute, LastPoll: fdNow.Add(-5 * time.Minute), NextPoll: fdNow.Add(15*time.Minute + 30*time.Second)},
		{ID: "fresh", URL: "https://example.org/fresh/", Policy: "flat", Interval: time.Hour, Since: fdT0, NextPoll: fdNow.Add(time.Minute)}}}
	now := fdNow
	build := func(cacheBytes int64) *Server {
		return newFDServer(t, store, func(o *Options) {
			o.Now = func() time.Time { return now }
			o.Registerer = nil
			o.Poller = poller
			o.HubURL = fdBase + "/websub"
			o.AdminToken = dispatchToken
			o.CacheBytes = cacheBytes
		})
	}
	cached, rendered := build(0), build(-1)
	etag := fdDo(cached, http.MethodGet, "/resources/bench?max=20").Header().Get("ETag")
	cases := slices.DeleteFunc(dispatchCases(etag), func(tc dispatchCase) bool { return tc.target == "/metrics" })
	do := func(s *Server, tc dispatchCase) *httptest.ResponseRecorder {
		return fdDo(s, tc.method, tc.target, tc.header...)
	}
	pageETag := fdDo(cached, http.MethodGet, "/resources/bench?max=20", "Accept", acceptFirefox).Header().Get("ETag")
	pages := pageCases(pageETag)
	for _, tc := range append(cases, pages...) { // fills the cache
		do(cached, tc)
	}
	compare := func(when string, cases []dispatchCase) {
		t.Helper()
		for _, tc := range cases {
			want, got := do(rendered, tc), do(cached, tc)
			name := when + ": " + tc.method + " " + tc.target + " " + strings.Join(tc.header, " ")
			if got.Code != want.Code {
				t.Errorf("%s: status %d, rendered %d", name, got.Code, want.Code)
			}
			if !maps.EqualFunc(got.Header(), want.Header(), slices.Equal) {
				t.Errorf("%s: headers\n%v\nrendered\n%v", name, got.Header(), want.Header())
			}
			if !bytes.Equal(got.Body.Bytes(), want.Body.Bytes()) {
				t.Errorf("%s: body\n%.300s\nrendered\n%.300s", name, got.Body, want.Body)
			}
		}
	}
	now = now.Add(90 * time.Second)
	compare("90 s later", cases)
	if hits := testutil.ToFloat64(cached.feeds.cache.hits); hits < 10 {
		t.Errorf("%v cache hits: the comparison did not go through the cache", hits)
	}

	// The pages' ages moved: each is rendered again, replacing its entry;
	// then, the clock still, they come from the cache.
	compare("pages, 90 s later", pages)
	hits := testutil.ToFloat64(cached.feeds.cache.hits)
	compare("pages, 90 s later, again", pages)
	if got := testutil.ToFloat64(cached.feeds.cache.hits) - hits; got < float64(len(pages))/2 {
		t.Errorf("%v cache hits for %d page requests: the pages did not come from the cache", got, len(pages))
	}
	now = now.Add(3*24*time.Hour + 7*time.Second) // the page's age reads 3d…
	compare("3 days later", pages)
	store.Save(benchDoc("bench", now.Add(-time.Minute), 10, 20))
	compare("after a new version", pages)
	poller.Mu.Lock()
	poller.List[1].LastPoll, poller.List[1].LastError = now.Add(-time.Second), "HTTP 503 from the origin"
	poller.Mu.Unlock()
	compare("after a failed poll", pages)
}

// pageCases are the requests of browsers for feeds, answered with pages:
// etag is the page of /resources/bench?max=20's.
func pageCases(etag string) []dispatchCase {
	const feed = "/resources/bench?max=20"
	browser := func(h ...string) []string { return append([]string{"Accept", acceptFirefox}, h...) }
	return []dispatchCase{
		{"GET", feed, browser()},
		{"GET", feed, browser("Accept-Encoding", "gzip, deflate, br, zstd")},
		{"GET", feed, browser("Accept-Encoding", "gzip;q=0")},
		{"HEAD", feed, browser()},
		{"HEAD", feed, browser("Accept-Encoding", "gzip")},
		{"GET", feed, browser("If-None-Match", etag)},
		{"GET", feed, browser("If-None-Match", strings.TrimPrefix(etag, "W/"), "Accept-Encoding", "gzip")},
		{"HEAD", feed, browser("If-None-Match", etag, "Accept-Encoding", "gzip")},
		{"GET", feed, browser("If-None-Match", `W/"nope"`)},
		{"GET", feed, browser("If-Modified-Since", fdNow.Format(http.TimeFormat))},
		{"GET", feed, browser("If-Modified-Since", fdT0.Format(http.TimeFormat), "Accept-Encoding", "gzip")},
		{"GET", feed, []string{"Accept", "text/html", "Accept-Encoding", "gzip"}},
		{"GET", feed + "&utm_source=x", browser("Accept-Encoding", "gzip")},
		{"GET", "/resources/bench?utm_source=x;max=20", browser()},
		{"GET", "/resources/be%6Ech?max=20", browser("Accept-Encoding", "gzip")},
		{"GET", "/resources/bench", browser("Accept-Encoding", "gzip")},
		{"GET", "/resources/bench?index=2", browser()},
		{"GET", "/resources/bench/versions/2", browser("Accept-Encoding", "gzip")},
		{"GET", "/resources", browser("Accept-Encoding", "gzip")},
		{"HEAD", "/resources", browser()},
		{"GET", "/resources/fresh", browser("Accept-Encoding", "gzip")},
		{"GET", "/resources/fresh", browser()},
		{"GET", "/resources/bench?xpath=//item[", browser()},
	}
}

// A resource feed's ETag hashes its key, whose form must not change when
// the code building it does: every cached copy readers hold would turn
// stale on upgrade. The key of a version permalink with date rules, built
// here with fmt as it used to be.
func TestFeedKeyForm(t *testing.T) {
	store := newFDStore()
	for v := range 3 {
		store.Save(benchDoc("bench", fdT0.Add(time.Duration(v)*time.Hour), 2*v, 5))
	}
	poller := &svcPoller{At: fdNow, List: []ResourceStatus{{ID: "bench", Policy: "flat", Interval: 20 * time.Minute, NextPoll: fdNow.Add(time.Minute)}}}
	paris := schematest.Location(t, "Europe/Paris")
	dates := schema.DateRules{Layout: "02/01/2006", Location: paris}
	s := newFDServer(t, store, func(o *Options) {
		o.Poller = poller
		o.DateRules = func(string) schema.DateRules { return dates }
	})
	for _, tc := range []struct {
		target, key string
	}{
		{"/resources/bench?max=20&foo=bar", "resource\x00" + fdBase + "\x00rss2\x00max=20\x00bench\x00/resources/bench\x003\x003\x0020\x0002/01/2006\x00Europe/Paris"},
		{"/resources/bench/versions/2?type=atom&title=a%20b", "resource\x00" + fdBase + "\x00atom\x00index=2&title=a+b&type=atom\x00bench\x00/resources/bench/versions/2\x003\x003\x0020\x0002/01/2006\x00Europe/Paris"},
	} {
		sum := sha256.Sum256([]byte(tc.key))
		want := `"` + hex.EncodeToString(sum[:16]) + `"`
		rec := fdDo(s, http.MethodGet, tc.target)
		if rec.Code != http.StatusOK || rec.Header().Get("ETag") != want {
			t.Errorf("%s: %d, ETag %s, want %s", tc.target, rec.Code, rec.Header().Get("ETag"), want)
		}
	}
}

// headerValue reads a header map directly: its keys must be canonical.
func TestHeaderValueKeys(t *testing.T) {
	for _, k := range []string{headerETag, headerCacheControl, headerLink, headerIfNoneMatch,
		echo.HeaderAccept, echo.HeaderAcceptEncoding, echo.HeaderIfModifiedSince, echo.HeaderLastModified,
		echo.HeaderVary, echo.HeaderContentType, echo.HeaderContentEncoding, echo.HeaderContentLength} {
		if c := http.CanonicalHeaderKey(k); c != k {
			t.Errorf("%q is not canonical (%q)", k, c)
		}
	}
}
