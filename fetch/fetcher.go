package fetch

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/dynamo-rss/dynamo/config"
)

// Options configure a [Fetcher]; the zero value is valid.
type Options struct {
	// Transport replaces the guarded transport (tests). The SSRF guard
	// lives in the default transport's dialer, so a replacement must
	// provide its own.
	Transport http.RoundTripper
	Resolver  Resolver // nil: the system resolver
	// HostAddrs gives this host's own addresses, which the SSRF guard
	// refuses like private ones (read again when older than 30 s on
	// Clock, so that a new interface is covered); nil: the addresses of
	// the host's interfaces (net.InterfaceAddrs). Tests say "this host
	// has address X" with it.
	HostAddrs  func() ([]netip.Addr, error)
	Clock      Clock                 // nil: the real clock
	Logger     *slog.Logger          // nil: discard
	Registerer prometheus.Registerer // nil: metrics not registered
}

// Fetcher is how every page, robots.txt, rendered page and article of the
// poller is fetched: one guarded HTTP client (built again when the
// settings it is built from change), one robots.txt cache, one per-host
// politeness gate and one browser renderer, started at the first render,
// that the plain GETs, the renders and the articles share. It decides how
// to fetch; when is its caller's (the poller's schedule). Its methods are
// safe for concurrent use.
type Fetcher struct {
	opts   Options
	clock  Clock
	log    *slog.Logger
	m      *fetchMetrics
	rm     *RenderMetrics
	robots robotsCache
	gate   hostGate
	host   *hostAddrs // this host's addresses, refused by the guard
	bufs   sync.Pool  // *bytes.Buffer for bodies: a poll reads one without growing it

	mu       sync.Mutex
	c        *client
	robotsOn bool
	interval time.Duration
	browser  config.BrowserConfig
	renderer *Renderer // nil: none started since the last change
}

// New returns a fetcher with the poller settings p (see [Fetcher.Configure]).
func New(p config.PollerConfig, opts Options) (*Fetcher, error) {
	m, err := newFetchMetrics(opts.Registerer)
	if err != nil {
		return nil, err
	}
	rm, err := NewRenderMetrics(opts.Registerer)
	if err != nil {
		return nil, err
	}
	f := &Fetcher{opts: opts, clock: opts.Clock, log: opts.Logger, m: m, rm: rm}
	if f.clock == nil {
		f.clock = realClock{}
	}
	f.host = newHostAddrs(opts.HostAddrs, f.clock)
	if f.log == nil {
		f.log = slog.New(slog.DiscardHandler)
	}
	f.Configure(p)
	return f, nil
}

// Configure switches to the poller settings p (a reload): the timeouts,
// max_body, max_redirects, user agent and allow_private build another
// client when they changed (the old one's idle connections are closed;
// requests in flight finish on it); robots, per_host_interval and browser
// apply to the next request. The robots.txt cache and the host gate are
// kept. A change of the client or of the browser settings ends the
// browser: renders in flight on it fail (their polls back off) and the
// next render starts another.
func (f *Fetcher) Configure(p config.PollerConfig) {
	set := clientSettingsOf(p)
	var old *client
	var ended *Renderer
	f.mu.Lock()
	f.robotsOn, f.interval = p.Robots, p.PerHostInterval.D()
	changed := f.c == nil || f.c.set != set
	if changed {
		old, f.c = f.c, newClient(set, f.opts.Transport, f.opts.Resolver, f.host)
	}
	if changed || f.browser != p.Browser {
		ended, f.renderer = f.renderer, nil
	}
	f.browser = p.Browser
	f.mu.Unlock()
	// Outside the lock: a browser takes a while to end, and requests
	// meanwhile go on with the new settings.
	if old != nil {
		old.closeIdle()
	}
	if ended != nil {
		_ = ended.Close() // Close reports nothing
	}
}

// Close closes the idle connections and ends the browser, if one was
// started. The fetcher stays usable: a later request connects again, a
// later render starts a browser again.
func (f *Fetcher) Close() error {
	f.mu.Lock()
	c, ended := f.c, f.renderer
	f.renderer = nil
	f.mu.Unlock()
	c.closeIdle()
	if ended != nil {
		_ = ended.Close() // Close reports nothing
	}
	return nil
}

// Client is the guarded client of the current settings: for requests of
// its own a caller makes through the guard (the renderer's are made with it).
func (f *Fetcher) Client() *http.Client { return f.client().http }

func (f *Fetcher) client() *client {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.c
}

func (f *Fetcher) politeness() (robots bool, interval time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.robotsOn, f.interval
}

// Reserve books a request to host (lower-cased) now when its politeness
// slot is free (per_host_interval, or the host's robots.txt Crawl-delay
// when longer) and returns 0; else it returns how long until the slot and
// books nothing: the caller decides what to do meanwhile (the poller
// requeues the resource).
func (f *Fetcher) Reserve(host string) time.Duration {
	_, interval := f.politeness()
	return f.gate.reserve(host, f.clock.Now(), interval)
}

// Wait is how long until host's (lower-cased) politeness slot is free,
// without booking it (0: free now), unlike [Fetcher.Reserve].
func (f *Fetcher) Wait(host string) time.Duration {
	return f.gate.wait(host, f.clock.Now())
}

// WaitSlot waits for host's next politeness slot (see [Fetcher.Reserve])
// and takes it; it fails only when ctx ends.
func (f *Fetcher) WaitSlot(ctx context.Context, host string) error {
	for {
		d := f.Reserve(host)
		if d == 0 {
			return nil
		}
		t := f.clock.NewTimer(d)
		select {
		case <-t.C():
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
	}
}

// Robots tells from the cache whether robots.txt lets u be fetched:
// known=true and allowed when poller.robots is off, known=true and the
// answer when u's host's robots.txt is cached (its Crawl-delay then raises
// the host's interval), known=false when it must be fetched first with
// [Fetcher.FetchRobots] (a request to the host: the caller takes its slot).
func (f *Fetcher) Robots(u *url.URL) (allowed, known bool) {
	if on, _ := f.politeness(); !on {
		return true, true
	}
	rules, ok := f.robots.lookup(u, f.clock.Now())
	if !ok {
		return false, false
	}
	// Every read sets it: a site that drops its Crawl-delay (or its
	// robots.txt) is back at per_host_interval.
	f.gate.setCrawlDelay(strings.ToLower(u.Host), rules.group.CrawlDelay)
	return rules.allows(u), true
}

// FetchRobots fetches and caches u's host's robots.txt for an hour and
// tells whether it lets u be fetched (per RFC 9309, a 4xx answer allows
// everything, a 5xx one nothing); its Crawl-delay raises the host's
// interval. A network error is returned, and not cached.
func (f *Fetcher) FetchRobots(ctx context.Context, u *url.URL) (allowed bool, err error) {
	rules, err := f.robots.fetch(ctx, f.client(), u, f.clock.Now())
	if err != nil {
		return false, classify(err)
	}
	// Every read sets it: a site that drops its Crawl-delay (or its
	// robots.txt) is back at per_host_interval.
	f.gate.setCrawlDelay(strings.ToLower(u.Host), rules.group.CrawlDelay)
	return rules.allows(u), nil
}

// allowed checks robots.txt for u, fetching it when not cached; with
// slot, in the host's politeness slot (waited for).
func (f *Fetcher) allowed(ctx context.Context, u *url.URL, slot bool) error {
	ok, known := f.Robots(u)
	if !known {
		if slot {
			if err := f.WaitSlot(ctx, strings.ToLower(u.Host)); err != nil {
				return err
			}
		}
		var err error
		if ok, err = f.FetchRobots(ctx, u); err != nil {
			return fmt.Errorf("robots.txt of %s: %w", u.Host, err)
		}
	}
	if !ok {
		return fmt.Errorf("fetch %s: %w", shown(u.String()), ErrRobotsDenied)
	}
	return nil
}

// Get fetches one page: a conditional GET, or with req.Browser a render
// in the browser. Robots.txt and the host's slot are the caller's, taken
// before ([Fetcher.Robots], [Fetcher.Reserve]); a render, its requests to
// the page's host included, is one visit in that slot, and the host's
// next slot counts from the render's end. Non-2xx answers are
// *[StatusError]; a body over max_body wraps [ErrTooLarge], a timeout
// [ErrTimeout]. The body is valid until [Fetcher.Release], which the
// caller calls once done with it, whatever the error.
func (f *Fetcher) Get(ctx context.Context, req Request) (Result, error) {
	var res Result
	var err error
	if req.Browser {
		res, err = f.render(ctx, req)
		f.visited(req.URL)
	} else {
		res, err = f.get(ctx, f.client(), req.URL, req.Validators, f.clock.Now(), req.Headers)
	}
	f.m.bytes.Add(float64(res.Bytes))
	if err != nil {
		return res, classify(err)
	}
	return res, nil
}

// visited ends a render of rawURL: the render, its requests to the page's
// host included, was one visit in the slot the caller took, so the host's
// next slot counts from its end.
func (f *Fetcher) visited(rawURL string) {
	if u, err := url.Parse(rawURL); err == nil {
		_, interval := f.politeness()
		f.gate.extend(strings.ToLower(u.Host), f.clock.Now(), interval)
	}
}

// Release takes back the buffer of r's body, which must no longer be used.
func (f *Fetcher) Release(r *Result) {
	if r.buf != nil && r.buf.Cap() <= maxPooledBody {
		f.bufs.Put(r.buf)
	}
	r.buf, r.Body = nil, nil
}

// render renders req.URL in the browser, started at the first render
// after a change (see Configure).
func (f *Fetcher) render(ctx context.Context, req Request) (Result, error) {
	r, err := f.rendererFor()
	if err != nil {
		return Result{}, err
	}
	var headers http.Header
	for name, value := range req.Headers { // validated: no Host, hop-by-hop or conditional header
		if headers == nil {
			headers = make(http.Header, len(req.Headers))
		}
		headers.Set(name, value)
	}
	out, err := r.Render(ctx, RenderRequest{URL: req.URL, WaitFor: req.WaitFor, Headers: headers})
	if err != nil {
		return Result{}, err
	}
	return Result{
		Body:        out.HTML,
		ContentType: "text/html; charset=utf-8", // the DOM, serialized by the browser as UTF-16 and read back as UTF-8
		URL:         out.URL,
		Bytes:       int64(len(out.HTML)),
	}, nil
}

func (f *Fetcher) rendererFor() (*Renderer, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.renderer != nil {
		return f.renderer, nil
	}
	r, err := NewRenderer(BrowserOptions{
		Exec:      f.browser.Exec,
		URL:       f.browser.URL,
		MaxTabs:   f.browser.MaxTabs,
		Timeout:   f.browser.Timeout.D(),
		MaxBytes:  f.c.set.MaxBody,
		UserAgent: f.c.set.UserAgent,
		Client:    f.c.http,
		Metrics:   f.rm,
		Logger:    f.log,
	})
	if err != nil {
		return nil, err
	}
	f.renderer = r
	return r, nil
}

// Article fetches an article's link as a poll fetches its page and returns
// its main text, sanitized ([ExtractArticle]): robots.txt (fetched in the
// host's slot when not cached), the host's slot waited for, then a GET
// with headers (sent to link's host only) through the guard and limits.
func (f *Fetcher) Article(ctx context.Context, link string, headers map[string]string) (string, error) {
	u, err := url.Parse(link)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("article link %q is not an http(s) URL", shown(link))
	}
	if err := f.allowed(ctx, u, true); err != nil {
		return "", err
	}
	if err := f.WaitSlot(ctx, strings.ToLower(u.Host)); err != nil {
		return "", err
	}
	t0 := time.Now() // on the wall clock, whatever the fetcher's clock
	res, err := f.Get(ctx, Request{URL: u.String(), Headers: headers})
	defer f.Release(&res)
	if err != nil {
		return "", err
	}
	page := res.URL
	if page == "" {
		page = u.String()
	}
	a, err := ExtractArticle(res.Body, page)
	f.m.articleSeconds.Observe(time.Since(t0).Seconds())
	if err != nil {
		return "", err
	}
	return a.HTML, nil
}

// Once fetches rawURL once, outside any schedule, as a poll would: the
// guard (a refused address wraps [ErrForbiddenAddress]), the timeouts,
// max_body ([ErrTooLarge]), max_redirects, the user agent, robots.txt when
// poller.robots ([ErrRobotsDenied]; fetched without waiting for the host's
// slot), and the host's slot, waited for. The api's /new page checks a
// page a webmaster registers so, with the engine's fetcher.
func (f *Fetcher) Once(ctx context.Context, rawURL string) (Page, error) {
	return f.once(ctx, Request{URL: rawURL})
}

// Render renders rawURL once in the browser (fetch: browser), outside any
// schedule, as a poll of a rendered resource would: as [Fetcher.Once], but
// the DOM once the scripts ran, read once waitFor (a CSS selector; "" =
// once the network is quiet) matches. The api's /new renders pages so.
func (f *Fetcher) Render(ctx context.Context, rawURL, waitFor string) (Page, error) {
	return f.once(ctx, Request{URL: rawURL, Browser: true, WaitFor: waitFor})
}

// Picture draws rawURL once in the browser, outside any schedule, as
// [Fetcher.Render] renders it (the guard, the limits, robots.txt, the
// host's slot waited for; the picture is one visit of its host): see
// [Renderer.Picture]. With scripts, the page is read once waitFor (a CSS
// selector; "" = once the network is quiet) matches; without, its scripts
// never run and Document is the page as the server sent it. The api's
// /new draws pages so, for "point at the list".
func (f *Fetcher) Picture(ctx context.Context, rawURL, waitFor string, scripts bool) (Picture, error) {
	if err := f.onceAllowed(ctx, rawURL); err != nil {
		return Picture{}, err
	}
	r, err := f.rendererFor()
	if err != nil {
		return Picture{}, err
	}
	pic, err := r.Picture(ctx, PictureRequest{URL: rawURL, WaitFor: waitFor, Scripts: scripts})
	f.visited(rawURL)
	f.m.bytes.Add(float64(len(pic.Document)))
	if err != nil {
		return Picture{}, classify(err)
	}
	return pic, nil
}

// onceAllowed checks rawURL for a fetch outside any schedule ([Fetcher.Once],
// [Fetcher.Render], [Fetcher.Picture]): an http(s) URL that robots.txt
// allows, once its host's slot, waited for, is taken.
func (f *Fetcher) onceAllowed(ctx context.Context, rawURL string) error {
	u, err := url.Parse(rawURL)
	if err != nil || !u.IsAbs() || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("fetch %q: not an http or https URL", shown(rawURL))
	}
	if err := f.allowed(ctx, u, false); err != nil {
		return err
	}
	return f.WaitSlot(ctx, strings.ToLower(u.Host))
}

// once is [Fetcher.Once] and [Fetcher.Render]: req fetched once.
func (f *Fetcher) once(ctx context.Context, req Request) (Page, error) {
	rawURL := req.URL
	if err := f.onceAllowed(ctx, rawURL); err != nil {
		return Page{}, err
	}
	res, err := f.Get(ctx, req)
	if err != nil {
		f.Release(&res)
		return Page{}, err
	}
	final := res.URL
	if final == "" {
		final = rawURL
	}
	// res's buffer is not released: the page's body outlives the call.
	return Page{Body: res.Body, ContentType: res.ContentType, URL: final}, nil
}

// Once fetches rawURL once with a fetcher of its own for the poller
// settings p (see [Fetcher.Once]): the command line reads a page given as
// a URL so (`dynamo extract https://…`).
func Once(ctx context.Context, p config.PollerConfig, rawURL string, opts Options) (Page, error) {
	f, err := New(p, opts)
	if err != nil {
		return Page{}, err
	}
	defer f.Close() //nolint:errcheck // Close reports nothing
	return f.Once(ctx, rawURL)
}
