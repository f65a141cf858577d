package fetch

import (
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/temoto/robotstxt"
)

func TestServerHints(t *testing.T) {
	now := time.Date(2026, 11, 21, 8, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name       string
		header     http.Header
		maxAge     time.Duration
		retryAfter time.Duration
	}{
		{"none", http.Header{}, 0, 0},
		{"max-age", http.Header{"Cache-Control": {"public, max-age=600"}}, 10 * time.Minute, 0},
		{"no-cache wins", http.Header{"Cache-Control": {"max-age=600, no-cache"}}, 0, 0},
		{"huge max-age capped", http.Header{"Cache-Control": {"max-age=99999999"}}, MaxHint, 0},
		{"bad max-age", http.Header{"Cache-Control": {"max-age=soon"}}, 0, 0},
		{"retry-after seconds", http.Header{"Retry-After": {"120"}}, 0, 2 * time.Minute},
		{"retry-after date", http.Header{"Retry-After": {now.Add(time.Hour).Format(http.TimeFormat)}}, 0, time.Hour},
		{"retry-after past date", http.Header{"Retry-After": {now.Add(-time.Hour).Format(http.TimeFormat)}}, 0, 0},
		{"retry-after garbage", http.Header{"Retry-After": {"later"}}, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := maxAge(tc.header); got != tc.maxAge {
				t.Errorf("maxAge = %v, want %v", got, tc.maxAge)
			}
			if got := retryAfter(tc.header, now); got != tc.retryAfter {
				t.Errorf("retryAfter = %v, want %v", got, tc.retryAfter)
			}
		})
	}
}

// TestHostGate: a host's slots are per_host_interval apart, or its
// Crawl-delay's when longer; a Crawl-delay learned after a booking pushes
// the booked next slot, and is capped at MaxHint.
func TestHostGate(t *testing.T) {
	var g hostGate
	t0 := time.Date(2026, 11, 21, 8, 0, 0, 0, time.UTC)
	if d := g.reserve("a.example", t0, 10*time.Second); d != 0 {
		t.Fatalf("first reserve waits %v, want 0", d)
	}
	if d := g.reserve("a.example", t0.Add(4*time.Second), 10*time.Second); d != 6*time.Second {
		t.Errorf("reserve 4s later waits %v, want 6s", d)
	}
	if d := g.reserve("b.example", t0, 10*time.Second); d != 0 {
		t.Errorf("another host waits %v, want 0", d)
	}
	g.setCrawlDelay("a.example", 30*time.Second)
	if d := g.reserve("a.example", t0.Add(10*time.Second), 10*time.Second); d != 20*time.Second {
		t.Errorf("after Crawl-delay 30s, reserve at 10s waits %v, want 20s", d)
	}
	if d := g.reserve("a.example", t0.Add(30*time.Second), 10*time.Second); d != 0 {
		t.Errorf("reserve at 30s waits %v, want 0", d)
	}
	g.setCrawlDelay("b.example", 1000*time.Hour)
	if d := g.reserve("b.example", t0.Add(time.Minute), 0); d != MaxHint-time.Minute {
		t.Errorf("a huge Crawl-delay: wait %v, want it capped at MaxHint (%v)", d, MaxHint-time.Minute)
	}
}

// TestReasonPhrase checks the phrase a rendered page's answers carry: the
// origin's own, else the standard one, else "Status N" (the browser
// refuses an answer without one for a code it has no phrase for).
func TestReasonPhrase(t *testing.T) {
	for _, tc := range []struct {
		code         int
		status, want string
	}{
		{200, "200 OK", "OK"},
		{299, "299 Custom Thing", "Custom Thing"},
		{299, "299 status code 299", "status code 299"},
		{404, "404", "Not Found"},
		{404, "", "Not Found"},
		{599, "599", "Status 599"},
		{599, "Weird", "Status 599"}, // a Status not starting with its code
	} {
		if got := reasonPhrase(&http.Response{StatusCode: tc.code, Status: tc.status}); got != tc.want {
			t.Errorf("reasonPhrase(%d, %q) = %q, want %q", tc.code, tc.status, got, tc.want)
		}
	}
}

// TestRobotsPath: a URL is tested against robots.txt by its path and query,
// as RFC 9309 says: a rule on a query disallows that query only.
func TestRobotsPath(t *testing.T) {
	data, err := robotstxt.FromString("User-agent: *\nDisallow: /search?\nDisallow: /*?print=\nDisallow: /admin\n")
	if err != nil {
		t.Fatal(err)
	}
	rules := robotsRules{group: data.FindGroup("dynamo")}
	for raw, want := range map[string]bool{
		"https://news.example":                 true, // the root, "/"
		"https://news.example/search":          true,
		"https://news.example/search?q=budget": false,
		"https://news.example/story?print=1":   false,
		"https://news.example/story":           true,
		"https://news.example/story?page=2":    true,
		"https://news.example/admin/":          false,
		"https://news.example/a%20b?x=1":       true,
	} {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := rules.allows(u); got != want {
			t.Errorf("allows(%s) = %v, want %v (tested as %q)", raw, got, want, robotsPath(u))
		}
	}
	for raw, want := range map[string]string{"https://a.example": "/", "https://a.example/x": "/x", "https://a.example/x?": "/x", "https://a.example/?q=1": "/?q=1", "https://a.example/a%2Fb": "/a%2Fb"} {
		u, _ := url.Parse(raw)
		if got := robotsPath(u); got != want {
			t.Errorf("robotsPath(%s) = %q, want %q", raw, got, want)
		}
	}
}
