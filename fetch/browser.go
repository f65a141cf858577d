package fetch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"
	"github.com/prometheus/client_golang/prometheus"
)

// ErrNoBrowser is wrapped when no browser can be started: none on PATH, or
// the configured one missing or not executable.
var ErrNoBrowser = errors.New("fetch: no browser to render with")

// ErrTooLarge is wrapped when a body, or a rendered DOM, exceeds its limit:
// the page is refused, never truncated.
var ErrTooLarge = errors.New("fetch: response too large")

// ErrRenderTimeout is wrapped when a render is still going at its timeout.
var ErrRenderTimeout = errors.New("fetch: render timed out")

// ErrClosed is returned by [Renderer.Render] after [Renderer.Close].
var ErrClosed = errors.New("fetch: renderer closed")

// browserNames are the binaries looked for on PATH, in order.
var browserNames = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome"}

// FindBrowser returns the browser binary a [Renderer] would start: path
// itself when set (it must exist and be executable), else the first of
// chromium, chromium-browser, google-chrome, google-chrome-stable and
// chrome found on PATH. Its error wraps [ErrNoBrowser] and says what was
// looked for and how to configure one.
func FindBrowser(path string) (string, error) {
	if path != "" {
		fi, err := os.Stat(path)
		if err != nil {
			return "", fmt.Errorf("%w: poller.browser.exec %s: %w; correct the path, or leave it empty to look on PATH, or set poller.browser.url to the DevTools endpoint of a running browser", ErrNoBrowser, path, err)
		}
		if fi.IsDir() || fi.Mode().Perm()&0o111 == 0 {
			return "", fmt.Errorf("%w: poller.browser.exec %s is not an executable file; point it at a Chromium binary, or set poller.browser.url to the DevTools endpoint of a running browser", ErrNoBrowser, path)
		}
		return path, nil
	}
	for _, name := range browserNames {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w: none of %s found on PATH; install Chromium (Debian: apt-get install chromium), or set poller.browser.exec to a Chromium binary or poller.browser.url to the DevTools endpoint of a running browser",
		ErrNoBrowser, strings.Join(browserNames, ", "))
}

// BrowserOptions configure a [Renderer]. Only Client is required.
type BrowserOptions struct {
	// Exec is the Chromium binary to start (poller.browser.exec); empty:
	// looked for on PATH (see [FindBrowser]).
	Exec string
	// URL is the DevTools endpoint of a running browser
	// (poller.browser.url, ws:// or http://); when set, nothing is started
	// and Exec is not used.
	URL string
	// MaxTabs bounds the renders at once (default 2).
	MaxTabs int
	// Timeout bounds one render in its tab (default 30 s); starting the
	// browser, when a render has to, is bounded apart (60 s).
	Timeout time.Duration
	// MaxBytes bounds the rendered DOM and every response the page gets
	// (default 5 MiB), as max_body bounds a poll's body.
	MaxBytes int64
	// UserAgent is sent with every request of a render.
	UserAgent string
	// Client makes every request a page makes: the guarded client of the
	// polls (SSRF guard at dial time, timeouts, no proxy). Redirects are
	// not followed by it but handed back to the browser, so that each hop
	// is a request of its own, seen and guarded.
	Client *http.Client
	// Metrics counts the renders; nil: made by NewRenderMetrics(Registerer).
	Metrics *RenderMetrics
	// Registerer takes the render metrics when Metrics is nil; nil: kept
	// unregistered.
	Registerer prometheus.Registerer
	// Logger; nil: discarded.
	Logger *slog.Logger
	// Idle is how long the network must stay quiet after the load event
	// before the DOM is read, when the request has no WaitFor (default
	// 500 ms).
	Idle time.Duration
}

// RenderRequest is one page to render.
type RenderRequest struct {
	URL string
	// WaitFor, when set, is a CSS selector the DOM is read once it matches
	// (wait_for); else the DOM is read once the page has loaded and its
	// network stayed quiet for BrowserOptions.Idle.
	WaitFor string
	// Headers are added to every request to the page's host (the page,
	// its same-host scripts and XHR), never to another host's.
	Headers http.Header
}

// Rendered is the outcome of a render.
type Rendered struct {
	HTML     []byte // document.documentElement.outerHTML once rendered
	URL      string // the document's URL (after redirects)
	Requests int    // requests of the page fulfilled through the client
	Refused  int    // requests refused or failed (the page went on without them)
}

// Renderer renders pages in a headless Chromium through the DevTools
// protocol. The browser is started on the first render (or attached to at
// BrowserOptions.URL) and started again when it died. Each render gets a
// fresh incognito browser context and tab, closed after it. Every request
// the page makes is paused (DevTools Fetch domain) and made by the
// guarded client instead; see the package documentation for the security
// model. Its methods are safe for concurrent use; Close ends the browser.
type Renderer struct {
	opts BrowserOptions
	tabs chan struct{} // a slot per render at once (MaxTabs)
	m    *RenderMetrics
	log  *slog.Logger

	mu      sync.Mutex
	closed  bool
	root    context.Context    // the browser's context; nil: not started
	stop    context.CancelFunc // ends the browser (and waits for it)
	browser *chromedp.Browser
}

// Defaults of BrowserOptions.
const (
	DefaultMaxTabs  = 2
	DefaultTimeout  = 30 * time.Second
	DefaultMaxBytes = 5 << 20
	defaultIdle     = 500 * time.Millisecond
	startTimeout    = 60 * time.Second // a browser's start (not counted in Timeout)
)

// NewRenderer returns a renderer; it starts no browser yet.
func NewRenderer(o BrowserOptions) (*Renderer, error) {
	if o.Client == nil {
		return nil, errors.New("fetch: NewRenderer needs the guarded client")
	}
	if o.MaxTabs <= 0 {
		o.MaxTabs = DefaultMaxTabs
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.Idle <= 0 {
		o.Idle = defaultIdle
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	m := o.Metrics
	if m == nil {
		var err error
		if m, err = NewRenderMetrics(o.Registerer); err != nil {
			return nil, err
		}
	}
	return &Renderer{opts: o, tabs: make(chan struct{}, o.MaxTabs), m: m, log: o.Logger}, nil
}

// Close ends the browser this renderer started (or detaches from a remote
// one) and waits for it; renders after Close fail with [ErrClosed].
func (r *Renderer) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	r.stopLocked()
	return nil
}

func (r *Renderer) stopLocked() {
	if r.stop != nil {
		r.stop()
	}
	r.root, r.stop, r.browser = nil, nil, nil
}

// blackHole is the proxy every browser context is given: a request that
// ever escaped interception (a worker's, say) would go to it and fail,
// rather than to the network. Port 1 (tcpmux) on loopback refuses at once.
const blackHole = "http://127.0.0.1:1"

// execFlags are the flags of a started Chromium: headless, no sandbox (it
// runs as root in containers), nothing in the background that reaches the
// network, frames kept in their page's process so that the page's Fetch
// interception sees their requests, and no UDP (WebRTC, QUIC).
func execFlags(path string) []chromedp.ExecAllocatorOption {
	return []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("disable-breakpad", true),
		chromedp.Flag("disable-client-side-phishing-detection", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-site-isolation-trials", true),
		// IsolateSandboxedIframes off: a sandboxed frame stays in its
		// page's process too, where the render's init script reaches it.
		chromedp.Flag("disable-features", "IsolateOrigins,site-per-process,IsolateSandboxedIframes,Translate,OptimizationHints,MediaRouter"),
		// WebRTC is removed from every frame by noUDPScript; its policy
		// (UDP only through a proxy, and ours refuses) and no QUIC are a
		// second wall.
		chromedp.Flag("force-webrtc-ip-handling-policy", "disable_non_proxied_udp"),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("proxy-server", blackHole),
		chromedp.Flag("proxy-bypass-list", "<-loopback>"),
		chromedp.Flag("metrics-recording-only", true),
		chromedp.Flag("mute-audio", true),
		chromedp.Flag("password-store", "basic"),
		chromedp.Flag("use-mock-keychain", true),
		// No user-data-dir: chromedp makes a fresh temporary one per
		// start and removes it when the browser ends.
	}
}

// browserContext returns the running browser's context, starting the
// browser when there is none or the last one died. ctx bounds the start.
func (r *Renderer) browserContext(ctx context.Context) (context.Context, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, ErrClosed
	}
	if r.root != nil {
		if r.alive() {
			return r.root, nil
		}
		r.log.WarnContext(ctx, "browser died; starting it again")
		r.m.restarts.Inc()
		r.stopLocked()
	}
	var (
		actx    context.Context
		acancel context.CancelFunc
	)
	if r.opts.URL != "" {
		actx, acancel = remote.NewAllocator(context.Background(), r.opts.URL)
	} else {
		path, err := FindBrowser(r.opts.Exec)
		if err != nil {
			return nil, err
		}
		actx, acancel = chromedp.NewExecAllocator(context.Background(), execFlags(path)...)
	}
	bctx, bcancel := chromedp.NewContext(actx)
	stop := func() { bcancel(); acancel() }
	// The browser lives as long as bctx, so it is started on bctx itself,
	// never on a context with the render's deadline; the deadline is
	// watched beside it.
	started := make(chan error, 1)
	go func() { started <- chromedp.Do(bctx) }()
	select {
	case err := <-started:
		if err != nil {
			stop()
			if r.opts.URL != "" {
				return nil, fmt.Errorf("attach to the browser at poller.browser.url: %w", err)
			}
			return nil, fmt.Errorf("start the browser: %w", err)
		}
	case <-ctx.Done():
		stop()
		<-started
		return nil, fmt.Errorf("start the browser: %w", ctx.Err())
	}
	r.root, r.stop = bctx, stop
	if c := chromedp.FromContext(bctx); c != nil {
		r.browser = c.Browser
	}
	return r.root, nil
}

// alive reports whether the browser of r.root still answers; r.mu held.
func (r *Renderer) alive() bool {
	if r.root.Err() != nil {
		return false
	}
	if r.browser != nil {
		select {
		case <-r.browser.LostConnection:
			return false
		default:
		}
	}
	return true
}

// Render renders req.URL and returns its DOM. It waits for a tab slot
// (MaxTabs), starts the browser if needed, and the render in its tab is
// bounded by BrowserOptions.Timeout; ctx bounds all of it. A sub-request the guard
// refuses fails only that request; the page's own document refused, or
// answered with an HTTP error, fails the render.
func (r *Renderer) Render(ctx context.Context, req RenderRequest) (out Rendered, err error) {
	t0 := time.Now()
	defer func() { r.m.observe(err, time.Since(t0)) }()
	return r.render(ctx, req, &t0)
}

// render renders req; it sets *t0 to when its tab slot was had, so that
// the time spent waiting for one is not counted as the render's.
func (r *Renderer) render(ctx context.Context, req RenderRequest, t0 *time.Time) (Rendered, error) {
	var out Rendered
	err := r.inTab(ctx, req.URL, req.Headers, t0, func(ctx context.Context, t *tab) error {
		var err error
		out, err = r.renderTab(ctx, t, req)
		return err
	})
	return out, err
}

// tab is one render's tab, set up by [Renderer.openTab].
type tab struct {
	run  context.Context // the tab's context, ended with the render
	ic   *interceptor
	page *url.URL
}

// inTab runs do in a fresh tab set up for rawURL (see [Renderer.openTab]).
// It waits for a tab slot (MaxTabs), starts the browser if needed, and
// bounds do by BrowserOptions.Timeout (ctx by its own deadline); it sets
// *t0 to when its tab slot was had, so that the time spent waiting for
// one is not counted as the render's.
func (r *Renderer) inTab(ctx context.Context, rawURL string, headers http.Header, t0 *time.Time, do func(ctx context.Context, t *tab) error) error {
	page, err := url.Parse(rawURL)
	if err != nil {
		return fmt.Errorf("render %q: %w", shown(rawURL), err)
	}
	if page.Scheme != "http" && page.Scheme != "https" {
		return fmt.Errorf("render %s: only http and https pages are rendered", shown(rawURL))
	}
	select {
	case r.tabs <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-r.tabs }()
	*t0 = time.Now()
	sctx, cancelStart := context.WithTimeout(ctx, startTimeout)
	root, err := r.browserContext(sctx)
	cancelStart()
	if err != nil {
		return err
	}
	dctx, cancel := context.WithTimeout(ctx, r.opts.Timeout)
	defer cancel()
	t, closeTab, err := r.openTab(dctx, root, page, headers)
	if err == nil {
		err = do(dctx, t)
		closeTab()
	}
	if err != nil && errors.Is(dctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
		return fmt.Errorf("render %s: still going after poller.browser.timeout %s: %w", shown(rawURL), r.opts.Timeout, ErrRenderTimeout)
	}
	return err
}

// openTab opens a fresh tab, in an incognito browser context of its own,
// of the browser whose context is root, and sets it up for page before
// anything is loaded: downloads denied, WebRTC removed from its every
// frame, and every request paused and made by the guarded client
// (headers sent to page's origin). ctx carries the render's deadline; the
// tab ends with it, or with closeTab, which waits for the tab's goroutines
// and must be called once done when err is nil.
func (r *Renderer) openTab(ctx, root context.Context, page *url.URL, headers http.Header) (t *tab, closeTab func(), err error) {
	bctx, closeBrowserContext := chromedp.NewContext(root, chromedp.WithNewBrowserContext(func(p *target.CreateBrowserContextParams) {
		p.ProxyServer = blackHole
		p.ProxyBypassList = "<-loopback>"
		dispose := true
		p.DisposeOnDetach = &dispose
	}))
	// A tab's context descends from the browser's, not from ctx: ctx's end
	// cancels it through run.
	run, cancelRun := context.WithCancel(bctx)
	stopWatch := context.AfterFunc(ctx, cancelRun)
	var wg sync.WaitGroup
	closeTab = func() {
		stopWatch()
		cancelRun()
		wg.Wait()
		closeBrowserContext()
	}
	t = &tab{run: run, ic: newInterceptor(r.opts, page, headers), page: page}
	fail := func(what string, err error) (*tab, func(), error) {
		closeTab()
		return nil, nil, fmt.Errorf("render %s: %s: %w", shown(page.String()), what, r.ctxErr(ctx, err))
	}
	if err := chromedp.Do(run); err != nil { // opens the tab
		return fail("open a tab", err)
	}
	bcID := chromedp.FromContext(run).BrowserContextID
	if _, err := chromedp.CallBrowser(run, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
		Behavior: browser.SetDownloadBehaviorBehaviorDeny, BrowserContextID: bcID,
	}); err != nil {
		return fail("deny downloads", err)
	}
	if err := addNoUDPScript(run); err != nil {
		return fail("turn WebRTC off", err)
	}
	if err := scrubChildTargets(run, &wg); err != nil {
		return fail("turn WebRTC off in child frames", err)
	}
	if err := t.ic.start(run, &wg); err != nil {
		return fail("intercept requests", err)
	}
	return t, closeTab, nil
}

// navigate loads t's page in its tab, until its load event: the page's
// own document refused, or answered with an HTTP error, is an error.
func (r *Renderer) navigate(ctx context.Context, t *tab) error {
	resp, err := chromedp.Run(t.run, chromedp.NavigateResponse(t.page.String()))
	if mainErr := t.ic.mainError(); mainErr != nil {
		return mainErr
	}
	if err != nil {
		return fmt.Errorf("render %s: %w", shown(t.page.String()), r.ctxErr(ctx, err))
	}
	if resp != nil && (resp.Status < 200 || resp.Status > 299) {
		return &StatusError{URL: resp.URL, Code: int(resp.Status)}
	}
	return nil
}

// settle waits until the page is ready to be read: until waitFor (a CSS
// selector) matches, or, without one, until its network stayed quiet for
// BrowserOptions.Idle.
func (r *Renderer) settle(ctx context.Context, t *tab, waitFor string) error {
	if waitFor != "" {
		if err := waitSelector(t.run, waitFor); err != nil {
			return fmt.Errorf("render %s: wait_for %q: %w", shown(t.page.String()), waitFor, r.ctxErr(ctx, err))
		}
	} else if err := t.ic.waitIdle(t.run, r.opts.Idle); err != nil {
		return fmt.Errorf("render %s: %w", shown(t.page.String()), r.ctxErr(ctx, err))
	}
	return nil
}

// renderTab renders req in the fresh tab t; ctx carries the render's
// deadline.
func (r *Renderer) renderTab(ctx context.Context, t *tab, req RenderRequest) (Rendered, error) {
	if err := r.navigate(ctx, t); err != nil {
		return t.ic.result(nil), err
	}
	if err := r.settle(ctx, t, req.WaitFor); err != nil {
		return t.ic.result(nil), err
	}
	dom, err := chromedp.Run(t.run, chromedp.Evaluate[string](`document.documentElement.outerHTML`))
	if err != nil {
		return t.ic.result(nil), fmt.Errorf("render %s: read the DOM: %w", shown(t.page.String()), r.ctxErr(ctx, err))
	}
	if err := r.checkDOM(t, "DOM", len(dom)); err != nil {
		return t.ic.result(nil), err
	}
	out := t.ic.result([]byte(dom))
	if loc, err := chromedp.Run(t.run, chromedp.Evaluate[string](`document.URL`)); err == nil && loc != "" {
		out.URL = loc
	}
	return out, nil
}

// checkDOM refuses a DOM (what: which) of n bytes over MaxBytes.
func (r *Renderer) checkDOM(t *tab, what string, n int) error {
	if int64(n) > r.opts.MaxBytes {
		return fmt.Errorf("render %s: %s of %d bytes > max_body %d: %w", shown(t.page.String()), what, n, r.opts.MaxBytes, ErrTooLarge)
	}
	return nil
}

// waitPoll is how often wait_for's selector is tried.
const waitPoll = 100 * time.Millisecond

// waitSelector returns once the CSS selector sel matches in the tab's
// document. It asks the page itself (document.querySelector), so it holds
// across the page's own changes and navigations; a selector the page
// cannot parse fails at once.
func waitSelector(ctx context.Context, sel string) error {
	q, err := json.Marshal(sel)
	if err != nil {
		return err
	}
	expr := `document.querySelector(` + string(q) + `) !== null`
	return waitUntil(ctx, func(ctx context.Context) (bool, error) {
		return chromedp.Run(ctx, chromedp.Evaluate[bool](expr))
	})
}

// waitUntil evaluates matched every waitPoll until it reports true. A
// JavaScript exception ends the wait (the page refuses the selector);
// another error (no document to evaluate in while one replaces another)
// is tried again, until ctx ends.
func waitUntil(ctx context.Context, matched func(context.Context) (bool, error)) error {
	tick := time.NewTicker(waitPoll)
	defer tick.Stop()
	for {
		ok, err := matched(ctx)
		if err != nil {
			var ex *chromedp.ExceptionError
			if errors.As(err, &ex) {
				return fmt.Errorf("not a CSS selector the page accepts: %w", err)
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			// A document being replaced has no context to evaluate in
			// for a moment: try again.
		} else if ok {
			return nil
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// ctxErr prefers ctx's own error (a deadline, a cancellation) to the
// protocol error it caused.
func (r *Renderer) ctxErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}
