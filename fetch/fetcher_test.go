package fetch_test

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dynamo-rss/dynamo/config"
	"github.com/dynamo-rss/dynamo/fetch"
	"github.com/dynamo-rss/dynamo/internal/syncbuf"
)

// stepClock is a manual fetch.Clock whose timers fire at once, moving the
// clock to their end: a wait for a politeness slot is seen as the time it
// moved, without sleeping.
type stepClock struct {
	mu  sync.Mutex
	now time.Time
}

func newStepClock() *stepClock {
	return &stepClock{now: time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)}
}

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *stepClock) NewTimer(d time.Duration) fetch.Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	ch := make(chan time.Time, 1)
	ch <- c.now
	return stepTimer(ch)
}

type stepTimer chan time.Time

func (t stepTimer) C() <-chan time.Time { return t }
func (t stepTimer) Stop() bool          { return false }

// origin serves robots.txt (Disallow /private/, Crawl-delay 30), an
// article at /article, a page at /page and a redirect to it at /moved,
// counting the requests by path.
type origin struct {
	*httptest.Server
	mu   sync.Mutex
	hits map[string]int
}

const article = `<html><head><title>A story</title></head><body>
<nav><a href="/">Home</a> <a href="/about">About</a></nav>
<article><h1>A story</h1>
<p>The first paragraph of the story is long enough for readability to take it as the main text of the page, which it needs to be.</p>
<p>The second paragraph of the story goes on with more words, so that there is no doubt at all about where the article is on this page.</p>
<p>A third paragraph ends it, with yet more text in it, as real articles have several paragraphs of text and not a single line.</p>
</article><footer>© somebody</footer></body></html>`

func newOrigin(t *testing.T) *origin {
	o := &origin{hits: map[string]int{}}
	o.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o.mu.Lock()
		o.hits[r.URL.Path]++
		o.mu.Unlock()
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprint(w, "User-agent: *\nDisallow: /private/\nCrawl-delay: 30\n")
		case "/article", "/private/article":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, article)
		case "/page":
			w.Header().Set("Content-Type", "text/html")
			w.Header().Set("ETag", `"v1"`)
			if r.Header.Get("If-None-Match") == `"v1"` {
				w.WriteHeader(http.StatusNotModified)
				return
			}
			fmt.Fprint(w, "<p>hello</p>")
		case "/dated": // Last-Modified only, no ETag
			w.Header().Set("Content-Type", "text/html")
			w.Header().Set("Last-Modified", "Wed, 25 Nov 2026 10:00:00 GMT")
			if r.Header.Get("If-Modified-Since") == "Wed, 25 Nov 2026 10:00:00 GMT" {
				w.WriteHeader(http.StatusNotModified)
				return
			}
			fmt.Fprint(w, "<p>dated</p>")
		case "/moved":
			http.Redirect(w, r, "/page", http.StatusFound)
		case "/story": // an article moved into a folder, with a relative link
			http.Redirect(w, r, "/2026/11/story", http.StatusMovedPermanently)
		case "/2026/11/story":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, strings.Replace(article, "<p>A third paragraph", `<p>See <a href="notes">the notes</a>. A third paragraph`, 1))
		case "/busy":
			w.Header().Set("Retry-After", "120")
			w.WriteHeader(http.StatusServiceUnavailable)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(o.Close)
	return o
}

func (o *origin) hit(path string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.hits[path]
}

func pollerConfig(allowPrivate bool) config.PollerConfig {
	p := config.Default().Poller
	p.AllowPrivate = allowPrivate
	return p
}

func newFetcher(t *testing.T, p config.PollerConfig, clk fetch.Clock) *fetch.Fetcher {
	t.Helper()
	f, err := fetch.New(p, fetch.Options{Clock: clk})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = f.Close() })
	return f
}

func TestGetConditionalAndStatus(t *testing.T) {
	o := newOrigin(t)
	f := newFetcher(t, pollerConfig(true), newStepClock())
	res, err := f.Get(t.Context(), fetch.Request{URL: o.URL + "/moved"})
	if err != nil || string(res.Body) != "<p>hello</p>" || res.URL != o.URL+"/page" || res.Validators.ETag != `"v1"` {
		t.Fatalf("Get: %+v, %v", res, err)
	}
	v := res.Validators
	f.Release(&res)
	if res.Body != nil {
		t.Errorf("Release left the body")
	}
	res, err = f.Get(t.Context(), fetch.Request{URL: o.URL + "/page", Validators: v})
	if err != nil || !res.NotModified || res.Validators != v {
		t.Errorf("conditional Get: %+v, %v; want not modified with the same validators", res, err)
	}
	f.Release(&res)
	// An origin that dates its page only: If-Modified-Since.
	res, err = f.Get(t.Context(), fetch.Request{URL: o.URL + "/dated"})
	if err != nil || res.Validators.LastModified == "" || res.Validators.ETag != "" {
		t.Fatalf("Get /dated: %+v, %v", res.Validators, err)
	}
	v = res.Validators
	f.Release(&res)
	res, err = f.Get(t.Context(), fetch.Request{URL: o.URL + "/dated", Validators: v})
	if err != nil || !res.NotModified {
		t.Errorf("conditional Get with Last-Modified only: %+v, %v; want not modified", res, err)
	}
	f.Release(&res)
	_, err = f.Get(t.Context(), fetch.Request{URL: o.URL + "/busy"})
	var se *fetch.StatusError
	if !errors.As(err, &se) || se.Code != http.StatusServiceUnavailable || se.RetryAfter != 2*time.Minute {
		t.Errorf("Get of a 503: %v; want a StatusError with Retry-After 2m", err)
	}
}

// TestRobotsCachedAndCrawlDelay: robots.txt is fetched once, then answers
// from the cache; its Crawl-delay spaces the host's slots.
func TestRobotsCachedAndCrawlDelay(t *testing.T) {
	o := newOrigin(t)
	clk := newStepClock()
	f := newFetcher(t, pollerConfig(true), clk)
	u, _ := url.Parse(o.URL + "/private/x")
	if _, known := f.Robots(u); known {
		t.Fatalf("robots.txt known before it was fetched")
	}
	allowed, err := f.FetchRobots(t.Context(), u)
	if err != nil || allowed {
		t.Fatalf("FetchRobots(/private/x) = %v, %v; want disallowed", allowed, err)
	}
	ok, _ := url.Parse(o.URL + "/page")
	if allowed, known := f.Robots(ok); !allowed || !known {
		t.Errorf("Robots(/page) = %v, %v; want allowed from the cache", allowed, known)
	}
	if n := o.hit("/robots.txt"); n != 1 {
		t.Errorf("robots.txt fetched %d times, want 1", n)
	}
	host := strings.ToLower(u.Host)
	if d := f.Reserve(host); d != 0 {
		t.Fatalf("first Reserve waits %v", d)
	}
	if d := f.Reserve(host); d != 30*time.Second {
		t.Errorf("second Reserve waits %v, want the Crawl-delay 30s", d)
	}
	t0 := clk.Now()
	if err := f.WaitSlot(t.Context(), host); err != nil {
		t.Fatal(err)
	}
	if waited := clk.Now().Sub(t0); waited != 30*time.Second {
		t.Errorf("WaitSlot waited %v, want 30s", waited)
	}

	p := pollerConfig(true)
	p.Robots = false
	f.Configure(p)
	if allowed, known := f.Robots(u); !allowed || !known {
		t.Errorf("robots off: Robots(/private/x) = %v, %v; want allowed", allowed, known)
	}
}

// TestConfigureKeepsRobotsAndGate: a reload that builds another client
// keeps what was learned of the hosts.
func TestConfigureKeepsRobotsAndGate(t *testing.T) {
	o := newOrigin(t)
	f := newFetcher(t, pollerConfig(true), newStepClock())
	u, _ := url.Parse(o.URL + "/page")
	if _, err := f.FetchRobots(t.Context(), u); err != nil {
		t.Fatal(err)
	}
	host := strings.ToLower(u.Host)
	f.Reserve(host)
	old := f.Client()
	p := pollerConfig(true)
	p.UserAgent = "dynamo/2.0"
	f.Configure(p)
	if f.Client() == old {
		t.Errorf("a new user agent kept the client")
	}
	if _, known := f.Robots(u); !known {
		t.Errorf("robots.txt forgotten by Configure")
	}
	if d := f.Reserve(host); d == 0 {
		t.Errorf("host slot forgotten by Configure")
	}
	same := f.Client()
	f.Configure(p)
	if f.Client() != same {
		t.Errorf("the same settings built another client")
	}
}

func TestOnce(t *testing.T) {
	o := newOrigin(t)
	page, err := fetch.Once(t.Context(), pollerConfig(true), o.URL+"/moved", fetch.Options{Clock: newStepClock()})
	if err != nil || string(page.Body) != "<p>hello</p>" || page.URL != o.URL+"/page" || page.ContentType != "text/html" {
		t.Fatalf("Once: %+v, %v", page, err)
	}
	if _, err := fetch.Once(t.Context(), pollerConfig(true), o.URL+"/private/article", fetch.Options{}); !errors.Is(err, fetch.ErrRobotsDenied) {
		t.Errorf("Once of a disallowed page: %v; want ErrRobotsDenied", err)
	}
	if _, err := fetch.Once(t.Context(), pollerConfig(false), o.URL+"/page", fetch.Options{}); !errors.Is(err, fetch.ErrForbiddenAddress) {
		t.Errorf("Once of loopback without allow_private: %v; want ErrForbiddenAddress", err)
	}
	for _, raw := range []string{"file:///etc/passwd", "ftp://example.org/", "example.org/news", "https:///news", "::"} {
		if _, err := fetch.Once(t.Context(), pollerConfig(true), raw, fetch.Options{}); err == nil || !strings.Contains(err.Error(), "not an http or https URL") {
			t.Errorf("Once(%q): %v, want it refused as not an http or https URL", raw, err)
		}
	}
}

// TestOnceWaitsForTheHost: a page fetched once takes its host's slot like
// a poll, after one already taken.
func TestOnceWaitsForTheHost(t *testing.T) {
	o := newOrigin(t)
	clk := newStepClock()
	p := pollerConfig(true)
	p.Robots = false
	f := newFetcher(t, p, clk)
	u, _ := url.Parse(o.URL)
	f.Reserve(strings.ToLower(u.Host))
	t0 := clk.Now()
	if _, err := f.Once(t.Context(), o.URL+"/page"); err != nil {
		t.Fatal(err)
	}
	if waited := clk.Now().Sub(t0); waited != p.PerHostInterval.D() {
		t.Errorf("Once waited %v, want per_host_interval %v", waited, p.PerHostInterval.D())
	}
}

func TestArticle(t *testing.T) {
	o := newOrigin(t)
	clk := newStepClock()
	f := newFetcher(t, pollerConfig(true), clk)
	t0 := clk.Now()
	html, err := f.Article(t.Context(), o.URL+"/article", nil)
	if err != nil || !strings.Contains(html, "The first paragraph") || strings.Contains(html, "About") {
		t.Fatalf("Article: %q, %v", html, err)
	}
	// robots.txt in the host's slot, then the article 30s (Crawl-delay) later.
	if waited := clk.Now().Sub(t0); waited != 30*time.Second {
		t.Errorf("Article waited %v, want 30s", waited)
	}
	// Its links resolve against where the article was read, after a redirect.
	html, err = f.Article(t.Context(), o.URL+"/story", nil)
	if err != nil || !strings.Contains(html, `href="`+o.URL+`/2026/11/notes"`) {
		t.Errorf("Article through a redirect: %q, %v; want its link resolved in /2026/11/", html, err)
	}
	if _, err := f.Article(t.Context(), o.URL+"/private/article", nil); !errors.Is(err, fetch.ErrRobotsDenied) {
		t.Errorf("a disallowed article: %v; want ErrRobotsDenied", err)
	}
	for _, link := range []string{"mailto:someone@example.com", "https:///article", "ftp://example.org/a", "file:///etc/passwd", "::"} {
		if _, err := f.Article(t.Context(), link, nil); err == nil || !strings.Contains(err.Error(), "is not an http(s) URL") {
			t.Errorf("article link %q: %v; want it refused as no http(s) URL", link, err)
		}
	}
	if n := o.hit("/private/article"); n != 0 {
		t.Errorf("the disallowed article was fetched %d times", n)
	}
}

// TestHeadersStayOnTheirHost: a request's headers go to its URL's host, not
// to the host a redirect leads to.
func TestHeadersStayOnTheirHost(t *testing.T) {
	var got atomic.Value
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Store(r.Header.Get("Cookie") + "|" + r.Header.Get("X-Api-Key"))
		fmt.Fprint(w, "elsewhere")
	}))
	t.Cleanup(other.Close)
	first := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Cookie") != "s=1" || r.Header.Get("X-Api-Key") != "secret" {
			http.Error(w, "no cookie", http.StatusForbidden)
			return
		}
		// localhost is another host than 127.0.0.1, whatever the port.
		http.Redirect(w, r, strings.Replace(other.URL, "127.0.0.1", "localhost", 1), http.StatusFound)
	}))
	t.Cleanup(first.Close)
	f := newFetcher(t, pollerConfig(true), newStepClock())
	// Go's client drops a cookie on its way to another host by itself; a
	// header of the site's own (an API key) only dynamo drops.
	res, err := f.Get(t.Context(), fetch.Request{URL: first.URL, Headers: map[string]string{"Cookie": "s=1", "X-Api-Key": "secret"}})
	if err != nil || string(res.Body) != "elsewhere" {
		t.Fatalf("Get: %q, %v", res.Body, err)
	}
	f.Release(&res)
	if h, _ := got.Load().(string); h != "|" {
		t.Errorf("the other host got the headers %q (cookie|key)", h)
	}

	// A redirect on the same host keeps them.
	same := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Header.Get("Cookie") != "s=1":
			http.Error(w, "no cookie", http.StatusForbidden)
		case r.URL.Path == "/":
			http.Redirect(w, r, "/there", http.StatusFound)
		default:
			fmt.Fprint(w, "there")
		}
	}))
	t.Cleanup(same.Close)
	res, err = f.Get(t.Context(), fetch.Request{URL: same.URL + "/", Headers: map[string]string{"Cookie": "s=1"}})
	if err != nil || string(res.Body) != "there" {
		t.Errorf("a redirect on the same host: %q, %v; want the headers kept", res.Body, err)
	}
	f.Release(&res)
}

// TestRobotsStatus: per RFC 9309, a robots.txt answered 4xx allows
// everything, 5xx nothing; a network error is an error, not cached.
func TestRobotsStatus(t *testing.T) {
	var code atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(int(code.Load()))
	}))
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL + "/page")
	for _, tc := range []struct {
		code    int
		allowed bool
	}{{http.StatusNotFound, true}, {499, true}, {http.StatusInternalServerError, false}, {http.StatusServiceUnavailable, false}} {
		code.Store(int32(tc.code))
		f := newFetcher(t, pollerConfig(true), newStepClock())
		if allowed, err := f.FetchRobots(t.Context(), u); err != nil || allowed != tc.allowed {
			t.Errorf("robots.txt answered %d: allowed %v, %v; want %v", tc.code, allowed, err, tc.allowed)
		}
	}
	f := newFetcher(t, pollerConfig(false), newStepClock()) // loopback refused: a dial error
	if _, err := f.FetchRobots(t.Context(), u); !errors.Is(err, fetch.ErrForbiddenAddress) {
		t.Errorf("robots.txt on a refused address: %v; want ErrForbiddenAddress", err)
	}
	if _, known := f.Robots(u); known {
		t.Errorf("a failed robots.txt fetch was cached")
	}
}

// TestConfigureRestartsTheRenderer: a render after a reload that changed
// poller.browser uses the new settings, not the browser of the old ones.
func TestConfigureRestartsTheRenderer(t *testing.T) {
	chromium(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "<html><body><p>rendered</p></body></html>")
	}))
	t.Cleanup(srv.Close)
	p := pollerConfig(true)
	p.Browser.Exec = "/nonexistent/chromium"
	f := newFetcher(t, p, newStepClock())
	if _, err := f.Get(t.Context(), fetch.Request{URL: srv.URL, Browser: true}); !errors.Is(err, fetch.ErrNoBrowser) {
		t.Fatalf("render with a missing browser: %v; want ErrNoBrowser", err)
	}
	p.Browser.Exec = ""
	f.Configure(p)
	res, err := f.Get(t.Context(), fetch.Request{URL: srv.URL, Browser: true})
	if err != nil || !strings.Contains(string(res.Body), "<p>rendered</p>") {
		t.Fatalf("render after the reload: %q, %v", res.Body, err)
	}
	f.Release(&res)
}

// TestMaxBodyAndRedirectsBounds: a body of exactly max_body bytes is read,
// one byte more is ErrTooLarge, with a Content-Length and without one; a
// chain of exactly max_redirects redirects is followed, one more is not.
func TestMaxBodyAndRedirectsBounds(t *testing.T) {
	const max = 1000
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if hops, _ := strconv.Atoi(q.Get("hops")); hops > 0 {
			http.Redirect(w, r, "/?hops="+strconv.Itoa(hops-1), http.StatusFound)
			return
		}
		n, _ := strconv.Atoi(q.Get("n"))
		if q.Get("chunked") == "" {
			w.Header().Set("Content-Length", strconv.Itoa(n))
		}
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(strings.Repeat("x", n)))
		if f, ok := w.(http.Flusher); ok && q.Get("chunked") != "" {
			f.Flush()
		}
	}))
	t.Cleanup(srv.Close)
	p := pollerConfig(true)
	p.MaxBody = max
	p.MaxRedirects = 3
	f := newFetcher(t, p, newStepClock())
	for _, chunked := range []string{"", "1"} {
		for _, n := range []int{max, max + 1} {
			res, err := f.Get(t.Context(), fetch.Request{URL: srv.URL + "/?n=" + strconv.Itoa(n) + "&chunked=" + chunked})
			if n <= max && (err != nil || len(res.Body) != n) || n > max && !errors.Is(err, fetch.ErrTooLarge) {
				t.Errorf("a body of %d bytes (chunked %q) under max_body %d: %d bytes, %v", n, chunked, max, len(res.Body), err)
			}
			f.Release(&res)
		}
	}
	for _, hops := range []int{3, 4} {
		res, err := f.Get(t.Context(), fetch.Request{URL: srv.URL + "/?n=1&hops=" + strconv.Itoa(hops)})
		if hops <= 3 && err != nil || hops > 3 && err == nil {
			t.Errorf("%d redirects under max_redirects 3: %v", hops, err)
		}
		f.Release(&res)
	}
}

// TestRenderedGetSendsHeaders: a resource's headers go with a rendered
// page's request too (and with none, none is added).
func TestRenderedGetSendsHeaders(t *testing.T) {
	chromium(t)
	var cookies []string
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		cookies = append(cookies, r.Header.Get("Cookie"))
		mu.Unlock()
		fmt.Fprint(w, "<html><body><p>rendered</p></body></html>")
	}))
	t.Cleanup(srv.Close)
	f := newFetcher(t, pollerConfig(true), newStepClock())
	for _, h := range []map[string]string{{"Cookie": "consent=1"}, nil} {
		res, err := f.Get(t.Context(), fetch.Request{URL: srv.URL + "/", Browser: true, Headers: h})
		if err != nil || !strings.Contains(string(res.Body), "<p>rendered</p>") {
			t.Fatalf("render with headers %v: %q, %v", h, res.Body, err)
		}
		f.Release(&res)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(cookies) < 2 || cookies[0] != "consent=1" || cookies[len(cookies)-1] != "" {
		t.Errorf("cookies the origin saw: %q; want consent=1, then none", cookies)
	}
}

// TestFetcherLogsBrowserRestart: the operator's log (the Fetcher's) says
// when a browser that died is started again for a rendered page.
func TestFetcherLogsBrowserRestart(t *testing.T) {
	chromium(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "<html><body><p>rendered</p></body></html>")
	}))
	t.Cleanup(srv.Close)
	var logged syncbuf.Buffer
	f, err := fetch.New(pollerConfig(true), fetch.Options{Clock: newStepClock(), Logger: slog.New(slog.NewTextHandler(&logged, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	render := func() {
		t.Helper()
		res, err := f.Get(t.Context(), fetch.Request{URL: srv.URL + "/", Browser: true})
		if err != nil || !strings.Contains(string(res.Body), "<p>rendered</p>") {
			t.Fatalf("render: %q, %v", res.Body, err)
		}
		f.Release(&res)
	}
	render()
	if strings.Contains(logged.String(), "browser died") {
		t.Fatalf("a restart logged before the browser died:\n%s", logged.String())
	}
	if err := fetch.KillBrowser(fetch.RendererOf(f)); err != nil {
		t.Fatal(err)
	}
	render()
	if n := strings.Count(logged.String(), "browser died; starting it again"); n != 1 {
		t.Errorf("%d restart lines after the browser died once, want 1:\n%s", n, logged.String())
	}
}

// TestCrawlDelayDropped: a site that removes its Crawl-delay (or its
// robots.txt) is polled at per_host_interval again once robots.txt is read
// again, not at the delay it once asked for.
func TestCrawlDelayDropped(t *testing.T) {
	var robots atomic.Value
	robots.Store("User-agent: *\nCrawl-delay: 30\n")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			if s := robots.Load().(string); s != "" {
				fmt.Fprint(w, s)
				return
			}
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(srv.Close)
	clk := newStepClock()
	p := pollerConfig(true)
	f := newFetcher(t, p, clk)
	u, _ := url.Parse(srv.URL + "/page")
	host := strings.ToLower(u.Host)
	interval := p.PerHostInterval.D()
	for _, step := range []struct {
		robots string
		want   time.Duration
	}{
		{"User-agent: *\nCrawl-delay: 30\n", 30 * time.Second},
		{"User-agent: *\nDisallow: /private/\n", interval},
		{"User-agent: *\nCrawl-delay: 30\n", 30 * time.Second},
		{"", interval}, // robots.txt gone: 404
	} {
		robots.Store(step.robots)
		clk.NewTimer(2 * time.Hour) // past the cached robots.txt and every slot
		if allowed, err := f.FetchRobots(t.Context(), u); err != nil || !allowed {
			t.Fatalf("FetchRobots with %q: %v, %v", step.robots, allowed, err)
		}
		if d := f.Reserve(host); d != 0 {
			t.Fatalf("with %q, the first Reserve waits %v", step.robots, d)
		}
		if d := f.Reserve(host); d != step.want {
			t.Errorf("with robots.txt %q, the next slot is %v away, want %v", step.robots, d, step.want)
		}
	}
}

// TestIdleConnectionsClosed: a reload that changes the client's settings
// closes the old client's idle connections, and so does Close: an origin
// is not left holding connections dynamo will never use again.
func TestIdleConnectionsClosed(t *testing.T) {
	closed := make(chan struct{}, 8)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "<p>hello</p>")
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateClosed {
			closed <- struct{}{}
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	p := pollerConfig(true)
	f := newFetcher(t, p, newStepClock())
	get := func() {
		t.Helper()
		res, err := f.Get(t.Context(), fetch.Request{URL: srv.URL + "/"})
		if err != nil {
			t.Fatal(err)
		}
		f.Release(&res)
	}
	waitClosed := func(what string) {
		t.Helper()
		select {
		case <-closed:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: the idle connection is still open after 10 s", what)
		}
	}
	get()
	p.UserAgent = "dynamo-test/2" // another client
	f.Configure(p)
	waitClosed("a reload with another user agent")
	get()
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	waitClosed("Close")
}

// TestRenderIsOneVisitOfItsHost: a render, its same-host requests
// included, is one visit of its page's host, in the slot its caller took:
// the host's next slot is per_host_interval after the render's end, not
// after its start.
func TestRenderIsOneVisitOfItsHost(t *testing.T) {
	chromium(t)
	clk := newStepClock()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/data" {
			clk.NewTimer(4 * time.Second) // the render's request takes four seconds of the fetcher's time
			fmt.Fprint(w, "<li>data</li>")
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<ul id=l></ul><script>fetch('/data').then(r => r.text()).then(t => { document.getElementById('l').innerHTML = t })</script>`)
	}))
	t.Cleanup(srv.Close)
	f, p, host := politeFetcher(t, srv.URL, clk)
	if d := f.Reserve(host); d != 0 {
		t.Fatalf("first Reserve waits %v", d)
	}
	res, err := f.Get(t.Context(), fetch.Request{URL: srv.URL + "/", Browser: true, WaitFor: "#l li"})
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	f.Release(&res)
	if d := f.Reserve(host); d != p.PerHostInterval.D() {
		t.Errorf("after a render, the host's next slot is %v away, want per_host_interval %v from the render's end", d, p.PerHostInterval.D())
	}
}

// politeFetcher is a fetcher on clk that allows loopback and does not ask
// robots.txt, with its settings and the host of page, whose slot it keeps.
func politeFetcher(t *testing.T, page string, clk fetch.Clock) (*fetch.Fetcher, config.PollerConfig, string) {
	t.Helper()
	p := pollerConfig(true)
	p.Robots = false
	u, err := url.Parse(page)
	if err != nil {
		t.Fatal(err)
	}
	return newFetcher(t, p, clk), p, strings.ToLower(u.Host)
}
