package api

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dynamo-rss/dynamo/websub"
)

// countingHub accepts every request and counts them.
type countingHub struct{ n atomic.Int64 }

func (h *countingHub) Request(context.Context, url.Values) error {
	h.n.Add(1)
	return nil
}

// clientFrom is an HTTP client whose connections come from the loopback
// address ip (127.0.0.0/8 is all loopback on Linux): a second client
// address without leaving the machine. The test is skipped where ip is
// not configured.
func clientFrom(t *testing.T, ip string) *http.Client {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Skipf("loopback address %s not usable here (only 127.0.0.1 is, outside Linux): %v", ip, err)
	}
	_ = ln.Close()
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	tr := &http.Transport{DialContext: d.DialContext}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

func postWebSubForm(t *testing.T, c *http.Client, base string) *http.Response {
	t.Helper()
	form := "hub.mode=subscribe&hub.callback=" + url.QueryEscape("https://reader.example/cb") + "&hub.topic=" + url.QueryEscape(fdBase+"/resources/news")
	resp, err := c.Post(base+"/websub", "application/x-www-form-urlencoded", strings.NewReader(form))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

// TestWebSubLimitPerClient: POST /websub lets one client address make a
// burst of requests, then one a second; past that it answers 429 with
// Retry-After and the hub never sees the request (no verification GET is
// sent on its behalf). Other addresses are not affected.
func TestWebSubLimitPerClient(t *testing.T) {
	clock := &testClock{At: fdNow}
	hub := &countingHub{}
	s := newFDServer(t, fdFixture(), withHub, func(o *Options) { o.Now = clock.Now; o.Hub = hub })
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	a, b := clientFrom(t, "127.0.0.1"), clientFrom(t, "127.0.0.2")

	for i := range webSubBurst {
		if resp := postWebSubForm(t, a, srv.URL); resp.StatusCode != http.StatusAccepted {
			t.Fatalf("request %d of the burst: %d", i+1, resp.StatusCode)
		}
	}
	resp := postWebSubForm(t, a, srv.URL)
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "1" {
		t.Fatalf("past the burst: %d, Retry-After %q; want 429, 1", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	if n := hub.n.Load(); n != webSubBurst {
		t.Errorf("the hub got %d requests, want %d: a limited one reached it", n, webSubBurst)
	}
	if resp := postWebSubForm(t, b, srv.URL); resp.StatusCode != http.StatusAccepted {
		t.Errorf("another client address: %d, want 202", resp.StatusCode)
	}
	clock.Advance(webSubEvery)
	if resp := postWebSubForm(t, a, srv.URL); resp.StatusCode != http.StatusAccepted {
		t.Errorf("one interval later: %d, want 202", resp.StatusCode)
	}
	if resp := postWebSubForm(t, a, srv.URL); resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("a second request in the same interval: %d, want 429", resp.StatusCode)
	}
}

// TestWebSubLimitPerCallbackHost: a request the hub refuses because its
// callback host has had its share of verifications is a 429 whose
// Retry-After is the hub's wait, rounded up to whole seconds.
func TestWebSubLimitPerCallbackHost(t *testing.T) {
	s := newFDServer(t, fdFixture(), withHub)
	hub, err := websub.New(websub.Options{URL: fdHub, Topics: s, Store: &websub.MemoryStore{}, Client: &http.Client{},
		CallbackEvery: time.Minute, CallbackBurst: 1})
	if err != nil {
		t.Fatal(err)
	}
	s.SetHub(hub) // not running: accepted requests wait in its queue
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	c := clientFrom(t, "127.0.0.1")
	if resp := postWebSubForm(t, c, srv.URL); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("first request: %d", resp.StatusCode)
	}
	resp := postWebSubForm(t, c, srv.URL)
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "60" {
		t.Errorf("second request for the same callback host: %d, Retry-After %q; want 429, 60", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
}

// TestTrustedProxies: behind a configured proxy, the per-client limit is
// the client's that X-Forwarded-For names, not the proxy's (every client
// would share one bucket); a client cannot escape it by putting addresses
// of its own before the proxy's; and without trusted proxies the header is
// ignored, so a client cannot pick its bucket by forging it.
func TestTrustedProxies(t *testing.T) {
	post := func(t *testing.T, base, xff string) int {
		t.Helper()
		form := "hub.mode=subscribe&hub.callback=" + url.QueryEscape("https://reader.example/cb") + "&hub.topic=" + url.QueryEscape(fdBase+"/resources/news")
		req, _ := http.NewRequest(http.MethodPost, base+"/websub", strings.NewReader(form))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if xff != "" {
			req.Header.Set("X-Forwarded-For", xff)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	serve := func(t *testing.T, proxies ...netip.Prefix) string {
		clock := &testClock{At: fdNow}
		s := newFDServer(t, fdFixture(), withHub, func(o *Options) {
			o.Now, o.Hub, o.TrustedProxies = clock.Now, &countingHub{}, proxies
		})
		srv := httptest.NewServer(s)
		t.Cleanup(srv.Close)
		return srv.URL
	}
	t.Run("behind a trusted proxy", func(t *testing.T) {
		base := serve(t, netip.MustParsePrefix("127.0.0.0/8"))
		for i := range webSubBurst {
			if code := post(t, base, "203.0.113.7"); code != http.StatusAccepted {
				t.Fatalf("request %d of 203.0.113.7's burst: %d", i+1, code)
			}
		}
		if code := post(t, base, "203.0.113.7"); code != http.StatusTooManyRequests {
			t.Errorf("203.0.113.7 past its burst: %d, want 429", code)
		}
		if code := post(t, base, "198.51.100.1, 203.0.113.7"); code != http.StatusTooManyRequests {
			t.Errorf("203.0.113.7 naming another address before its own: %d, want 429", code)
		}
		if code := post(t, base, "203.0.113.8"); code != http.StatusAccepted {
			t.Errorf("another client through the same proxy: %d, want 202", code)
		}
	})
	t.Run("no trusted proxy", func(t *testing.T) {
		base := serve(t)
		for i := range webSubBurst {
			if code := post(t, base, "203.0.113.7"); code != http.StatusAccepted {
				t.Fatalf("request %d of the burst: %d", i+1, code)
			}
		}
		if code := post(t, base, "203.0.113.8"); code != http.StatusTooManyRequests {
			t.Errorf("the same connection's address naming another client: %d, want 429 (a forged header must not pick the bucket)", code)
		}
	})
}
