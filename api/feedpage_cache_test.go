package api

import (
	"bytes"
	"compress/gzip"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// A cached page is its render cut where its age goes, the age made per
// answer: at every age (now, seconds, days, in the future), plain and
// gunzipped, it must be the page rendered whole with that age, as a page
// whose content holds the marker is (rendered each time, never cached).
func TestFeedPageCutMatchesWholeRender(t *testing.T) {
	store := newFDStore()
	store.save(benchDoc("bench", fdT0, 0, 20))
	now := fdNow
	build := func() *Server {
		return newFDServer(t, store, func(o *Options) { o.Now = func() time.Time { return now } })
	}
	cut, whole := build(), build()
	whole.feeds.pageMark = "Headline number" // in every item title: the page cannot be cut
	const target = "/resources/bench?max=20"
	gunzip := func(rec *http.Response, body []byte) []byte {
		t.Helper()
		if rec.Header.Get("Content-Encoding") != "gzip" {
			t.Fatalf("Content-Encoding %q, want gzip", rec.Header.Get("Content-Encoding"))
		}
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		zr.Multistream(false)
		plain, err := io.ReadAll(zr) // checks the trailer's CRC-32 and size
		if err != nil {
			t.Fatalf("gunzip: %v", err)
		}
		if rest, _ := io.ReadAll(zr); len(rest) > 0 {
			t.Fatal("more than one gzip member")
		}
		return plain
	}
	updated := fdT0 // the feed's update time: its only version's
	for _, age := range []time.Duration{0, time.Second, 59 * time.Second, time.Hour + 2*time.Second, 3*24*time.Hour + 4*time.Hour + 5*time.Minute + 6*time.Second, -5 * time.Minute, 999 * 24 * time.Hour} {
		now = updated.Add(age).Add(300 * time.Millisecond)
		wantAge := "<time datetime=\"2026-03-01T10:00:00Z\" title=\"2026-03-01 10:00:00 UTC\">" + string(appendRelative(nil, relativeSeconds(updated, now))) + "</time>"
		for _, enc := range []string{"", "gzip"} {
			got := fdDo(cut, http.MethodGet, target, "Accept", acceptFirefox, "Accept-Encoding", enc)
			want := fdDo(whole, http.MethodGet, target, "Accept", acceptFirefox, "Accept-Encoding", enc)
			if got.Code != http.StatusOK || want.Code != http.StatusOK {
				t.Fatalf("age %v %s: status %d, whole %d", age, enc, got.Code, want.Code)
			}
			if n := got.Header().Get("Content-Length"); n != strconv.Itoa(got.Body.Len()) {
				t.Errorf("age %v %s: Content-Length %s, body %d bytes", age, enc, n, got.Body.Len())
			}
			gotBody, wantBody := got.Body.Bytes(), want.Body.Bytes()
			if enc == "gzip" {
				gotBody, wantBody = gunzip(got.Result(), gotBody), gunzip(want.Result(), wantBody)
			}
			if !bytes.Equal(gotBody, wantBody) {
				t.Errorf("age %v %s: the cut page differs from the whole one\n%s", age, enc, firstDiff(gotBody, wantBody))
			}
			if !bytes.Contains(gotBody, []byte(wantAge)) {
				t.Errorf("age %v %s: the page does not say %s", age, enc, wantAge)
			}
		}
	}
	if n := cut.feeds.cache.len(); n != 2 {
		t.Errorf("%d cached entries, want the page's two codings", n)
	}
	if n := whole.feeds.cache.len(); n != 0 {
		t.Errorf("%d cached entries for a page that cannot be cut, want none", n)
	}
}

// firstDiff shows where a and b part.
func firstDiff(a, b []byte) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	from := max(0, i-60)
	return "got:  …" + string(a[from:min(len(a), i+60)]) + "\nwant: …" + string(b[from:min(len(b), i+60)])
}

// crc32Shift and crc32Mul combine CRCs as hash/crc32 computes them over
// the concatenation, at every length around the powers of two.
func TestCRC32Combine(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	data := make([]byte, 70000)
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	check := func(a, b []byte) {
		t.Helper()
		want := crc32.ChecksumIEEE(append(a[:len(a):len(a)], b...))
		if got := crc32Mul(crc32Shift(len(b)), crc32.ChecksumIEEE(a)) ^ crc32.ChecksumIEEE(b); got != want {
			t.Fatalf("len %d + %d: %08x, want %08x", len(a), len(b), got, want)
		}
	}
	for n := 1; n < len(data); n *= 2 {
		for _, m := range []int{n - 1, n, n + 1} {
			check(data[:r.IntN(100)], data[100:100+m])
			check(nil, data[:m])
		}
	}
	for range 200 {
		i := r.IntN(len(data))
		j := i + r.IntN(len(data)-i)
		check(data[:i], data[i:j])
	}
}

// Answers of one cached page made concurrently while the clock moves (the
// age, its Content-Length and gzip trailer are remade each second and
// shared) are each whole: the length they announce, a gzip member whose CRC
// and size hold, an age.
func TestFeedPageAgeUnderConcurrentAnswers(t *testing.T) {
	store := newFDStore()
	store.save(benchDoc("bench", fdT0, 0, 20))
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
