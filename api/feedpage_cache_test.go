package api

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// A cached page says how old the feed is as a page rendered now would: while
// its age reads the same (the text counts whole seconds), it is answered from
// the render cache, counted as hits; once the text reads otherwise, each
// coding's entry is a miss, rendered again and replaced under its key (two
// entries whatever the clock did), and the answer is the page a server that
// caches nothing renders, with the new age.
func TestCachedPageShowsCurrentAge(t *testing.T) {
	store := newFDStore()
	store.Save(benchDoc("bench", fdT0, 0, 20)) // the feed's update time: fdT0
	now := fdT0.Add(3*time.Minute + 20*time.Second + 100*time.Millisecond)
	build := func(cacheBytes int64) *Server {
		return newFDServer(t, store, func(o *Options) {
			o.Now = func() time.Time { return now }
			o.CacheBytes = cacheBytes
		})
	}
	cached, rendered := build(0), build(-1)
	get := func(s *Server, enc string) []byte {
		t.Helper()
		rec := fdDo(s, http.MethodGet, "/resources/bench?max=20", "Accept", acceptFirefox, "Accept-Encoding", enc)
		if rec.Code != http.StatusOK || rec.Header().Get("Content-Length") != strconv.Itoa(rec.Body.Len()) {
			t.Fatalf("status %d, Content-Length %s for %d bytes", rec.Code, rec.Header().Get("Content-Length"), rec.Body.Len())
		}
		if enc == "" {
			return rec.Body.Bytes()
		}
		if ce := rec.Header().Get("Content-Encoding"); ce != "gzip" {
			t.Fatalf("Content-Encoding %q, want gzip", ce)
		}
		zr, err := gzip.NewReader(rec.Body)
		if err != nil {
			t.Fatal(err)
		}
		plain, err := io.ReadAll(zr)
		if err != nil {
			t.Fatalf("gunzip: %v", err)
		}
		return plain
	}
	check := func(when, age string) {
		t.Helper()
		for _, enc := range []string{"", "gzip"} {
			got, want := get(cached, enc), get(rendered, enc)
			if !bytes.Contains(got, []byte(`title="2026-03-01 10:00:00 UTC">`+age+"</time>")) {
				t.Errorf("%s, %q: the page does not say updated %s", when, enc, age)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s, %q: the cached page differs from one rendered now", when, enc)
			}
		}
	}
	counts := func() (hits, misses float64) {
		return testutil.ToFloat64(cached.feeds.cache.hits), testutil.ToFloat64(cached.feeds.cache.misses)
	}
	check("first render", "3m20s ago")
	for _, step := range []struct {
		move time.Duration
		age  string
		hit  bool // the age reads the same: answered from the cache
	}{
		{300 * time.Millisecond, "3m20s ago", true}, // 3m20.4s rounds to 3m20s
		{200 * time.Millisecond, "3m21s ago", false},
		{800 * time.Millisecond, "3m21s ago", true}, // 3m21.4s
		{40 * time.Second, "4m1s ago", false},
		{time.Hour, "1h4m ago", false},
		{30 * time.Second, "1h4m ago", true}, // past an hour, no seconds: 1h4m31.4s
		{3 * 24 * time.Hour, "3d1h ago", false},
		{time.Hour, "3d2h ago", false},
		{50 * time.Minute, "3d2h ago", true},                              // past a day, no minutes
		{-3*24*time.Hour - 2*time.Hour - 55*time.Minute, "in 29s", false}, // a clock set back: -28.6s
	} {
		now = now.Add(step.move)
		when := "at " + now.Sub(fdT0).String()
		hits, misses := counts()
		check(when, step.age)
		h, m := counts()
		if step.hit && (h-hits != 2 || m != misses) {
			t.Errorf("%s: %v hits, %v misses for the two codings, want 2 hits", when, h-hits, m-misses)
		}
		if !step.hit && m-misses != 2 {
			t.Errorf("%s: %v misses for the two codings, want 2: a page whose age changed came from the cache", when, m-misses)
		}
		if n := cached.feeds.cache.len(); n != 2 {
			t.Errorf("%s: %d cached entries, want the page's two codings", when, n)
		}
	}
}

// Answers of one cached page made concurrently while the clock moves (its
// entries rendered again and replaced as the age changes, while other
// requests answer from them) are each whole: the length they announce, a
// gzip member whose CRC and size hold, an age.
func TestFeedPageAgeUnderConcurrentAnswers(t *testing.T) {
	store := newFDStore()
	store.Save(benchDoc("bench", fdT0, 0, 20))
	var clock atomic.Int64
	clock.Store(fdNow.UnixNano())
	s := newFDServer(t, store, func(o *Options) {
		o.Now = func() time.Time { return time.Unix(0, clock.Add(int64(700*time.Millisecond))) }
	})
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 100 {
				enc := ""
				if (g+i)%2 == 0 {
					enc = "gzip"
				}
				rec := fdDo(s, http.MethodGet, "/resources/bench?max=20", "Accept", acceptFirefox, "Accept-Encoding", enc)
				if n := rec.Header().Get("Content-Length"); rec.Code != http.StatusOK || n != strconv.Itoa(rec.Body.Len()) {
					t.Errorf("%d, Content-Length %s for %d bytes", rec.Code, n, rec.Body.Len())
					return
				}
				body := rec.Body.Bytes()
				if enc == "gzip" {
					zr, err := gzip.NewReader(bytes.NewReader(body))
					if err == nil {
						body, err = io.ReadAll(zr)
					}
					if err != nil {
						t.Errorf("gunzip: %v", err)
						return
					}
				}
				if !bytes.Contains(body, []byte(" ago</time>")) {
					t.Error("no age in the page")
					return
				}
			}
		})
	}
	wg.Wait()
}
