package api

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestFeedPageValidators checks the HTTP semantics of a feed opened in a
// browser: the page shows times relative to now, so its bytes change while
// the feed does not, and its ETag is weak (RFC 9110 §8.8.1: a strong one
// promises identical bytes); it still revalidates, weak tag or not, and it
// is compressed when the browser accepts gzip, varying by Accept and
// Accept-Encoding.
func TestFeedPageValidators(t *testing.T) {
	db := openFixtureDB(t)
	var now atomic.Int64
	now.Store(fdNow.UnixNano())
	s := newFDServer(t, db, func(o *Options) { o.Now = func() time.Time { return time.Unix(0, now.Load()) } })
	const target = "/resources/news"
	first := fdDo(s, http.MethodGet, target, "Accept", acceptFirefox)
	now.Add(int64(time.Hour))
	later := fdDo(s, http.MethodGet, target, "Accept", acceptFirefox)
	if first.Code != http.StatusOK || later.Code != http.StatusOK {
		t.Fatalf("GET %s = %d, %d", target, first.Code, later.Code)
	}
	etag := first.Header().Get("ETag")
	if etag != later.Header().Get("ETag") {
		t.Fatalf("ETag moved with the clock: %s, then %s", etag, later.Header().Get("ETag"))
	}
	if first.Body.String() != later.Body.String() && !strings.HasPrefix(etag, "W/") {
		t.Errorf("the page's bytes changed an hour later under the strong ETag %s", etag)
	}
	for _, inm := range []string{etag, strings.TrimPrefix(etag, "W/"), `"x", ` + etag} {
		if got := fdDo(s, http.MethodGet, target, "Accept", acceptFirefox, "If-None-Match", inm).Code; got != http.StatusNotModified {
			t.Errorf("If-None-Match: %s = %d, want 304", inm, got)
		}
	}

	gz := fdDo(s, http.MethodGet, target, "Accept", acceptFirefox, "Accept-Encoding", "gzip, deflate, br")
	if gz.Code != http.StatusOK || gz.Header().Get("Content-Encoding") != "gzip" {
		t.Fatalf("GET %s with gzip = %d, Content-Encoding %q, want a compressed page", target, gz.Code, gz.Header().Get("Content-Encoding"))
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz.Body.Bytes()))
	if err != nil {
		t.Fatalf("gzip: %v", err)
	}
	plain, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("gunzip: %v", err)
	}
	if string(plain) != later.Body.String() {
		t.Error("the compressed page is not the page")
	}
	vary := strings.Join(gz.Header().Values("Vary"), ", ")
	if !strings.Contains(vary, "Accept-Encoding") || !strings.Contains(strings.ReplaceAll(vary, "Accept-Encoding", ""), "Accept") {
		t.Errorf("Vary = %q, want Accept and Accept-Encoding", vary)
	}
	if got := gz.Header().Get("ETag"); got != etag || !strings.HasPrefix(got, "W/") {
		t.Errorf("compressed page ETag = %q, want the weak %s (a weak tag may name both codings)", got, etag)
	}
	// A feed reader still gets the feed, compressed by the feed's own code.
	feed := fdDo(s, http.MethodGet, target, "Accept-Encoding", "gzip")
	if !strings.HasSuffix(feed.Header().Get("ETag"), `-gzip"`) || len(feed.Header().Values("Content-Encoding")) != 1 {
		t.Errorf("feed: ETag %q, Content-Encoding %q", feed.Header().Get("ETag"), feed.Header().Values("Content-Encoding"))
	}
}

// TestVersionPageSubscribesToItems: the page of a version's permalink,
// even with ?max= (which a version's feed takes), offers the resource's
// items feed to subscribe to, not the snapshot of that version in each
// format.
func TestVersionPageSubscribesToItems(t *testing.T) {
	s := newFDServer(t, fdFixture())
	rec := fdDo(s, http.MethodGet, "/resources/news/versions/2?max=2", "Accept", acceptFirefox)
	body := rec.Body.String()
	if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") {
		t.Fatalf("version page = %d %s", rec.Code, rec.Header().Get("Content-Type"))
	}
	for _, f := range feedFormats {
		if href := s.FeedHref("news", f.name, false); !strings.Contains(body, `href="`+strings.ReplaceAll(href, "&", "&amp;")+`"`) {
			t.Errorf("no subscribe link %s", href)
		}
	}
	if strings.Contains(body, "versions/2?max=2&amp;type=") {
		t.Error("the page offers the version's snapshot to subscribe to")
	}
}
