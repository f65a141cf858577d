package fetch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	cdpfetch "github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// maxParallelRequests bounds the requests of one render in flight at once.
const maxParallelRequests = 6

// interceptor answers the paused requests of one render through the
// guarded client. Safe for concurrent use.
type interceptor struct {
	client    *http.Client // the guarded client, redirects handed back to the browser
	userAgent string
	maxBytes  int64
	page      *url.URL
	headers   http.Header
	slots     chan struct{}

	mu       sync.Mutex
	inflight int
	last     time.Time                   // the last request paused or answered
	main     error                       // the page's own document refused or failed
	left     map[cdpfetch.RequestID]bool // requests whose redirect chain left the page's origin
	doc      document                    // the main frame's last document answered
	served   int
	refused  int
}

func newInterceptor(o BrowserOptions, page *url.URL, headers http.Header) *interceptor {
	c := *o.Client
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &interceptor{
		client:    &c,
		userAgent: o.UserAgent,
		maxBytes:  o.MaxBytes,
		page:      page,
		headers:   headers,
		slots:     make(chan struct{}, maxParallelRequests),
		left:      make(map[cdpfetch.RequestID]bool),
		last:      time.Now(),
	}
}

// start subscribes to the tab's paused requests, enables interception of
// every request (pattern *, request stage) and serves them on a goroutine
// counted in wg, which ends with run.
func (ic *interceptor) start(run context.Context, wg *sync.WaitGroup) error {
	paused := chromedp.Events(run, cdpfetch.RequestPaused)
	if _, err := chromedp.Call(run, cdpfetch.Enable, cdpfetch.EnableParams{
		Patterns: []*cdpfetch.RequestPattern{{URLPattern: "*", RequestStage: cdpfetch.RequestStageRequest}},
	}); err != nil {
		return err
	}
	mainFrame := string(chromedp.FromContext(run).Target.TargetID)
	wg.Add(1)
	go func() {
		defer wg.Done()
		var reqs sync.WaitGroup
		defer reqs.Wait()
		for ev, err := range paused {
			if err != nil {
				return
			}
			ic.begin()
			select {
			case ic.slots <- struct{}{}:
			case <-run.Done():
				ic.end()
				return
			}
			reqs.Add(1)
			go func() {
				defer reqs.Done()
				defer func() { <-ic.slots }()
				defer ic.end()
				isMain := ev.ResourceType == network.ResourceTypeDocument && string(ev.FrameID) == mainFrame
				ic.serve(run, &ev, isMain)
			}()
		}
	}()
	return nil
}

func (ic *interceptor) begin() {
	ic.mu.Lock()
	ic.inflight++
	ic.last = time.Now()
	ic.mu.Unlock()
}

func (ic *interceptor) end() {
	ic.mu.Lock()
	ic.inflight--
	ic.last = time.Now()
	ic.mu.Unlock()
}

// waitIdle returns once no request has been in flight for idle.
func (ic *interceptor) waitIdle(ctx context.Context, idle time.Duration) error {
	tick := time.NewTicker(idle / 5)
	defer tick.Stop()
	for {
		ic.mu.Lock()
		quiet := ic.inflight == 0 && time.Since(ic.last) >= idle
		ic.mu.Unlock()
		if quiet {
			return nil
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (ic *interceptor) mainError() error {
	ic.mu.Lock()
	defer ic.mu.Unlock()
	return ic.main
}

// document is a main frame's document as the origin answered it.
type document struct {
	body        []byte
	contentType string
	url         string
	status      int // 0: none answered yet
}

// document is the main frame's last document answered: after redirects,
// the one the tab shows.
func (ic *interceptor) document() document {
	ic.mu.Lock()
	defer ic.mu.Unlock()
	return ic.doc
}

func (ic *interceptor) result(dom []byte) Rendered {
	ic.mu.Lock()
	defer ic.mu.Unlock()
	return Rendered{HTML: dom, URL: ic.page.String(), Requests: ic.served, Refused: ic.refused}
}

// serve answers one paused request: refused when it is not http(s),
// else made by the guarded client and the answer handed to the browser.
func (ic *interceptor) serve(ctx context.Context, ev *cdpfetch.EventRequestPaused, isMain bool) {
	resp, body, err := ic.do(ctx, ev)
	if err != nil {
		ic.mu.Lock()
		ic.refused++
		if isMain && ic.main == nil {
			ic.main = err
		}
		ic.mu.Unlock()
		// The tab may be closing; a failure to answer changes nothing.
		_, _ = chromedp.Call(ctx, cdpfetch.FailRequest, cdpfetch.FailRequestParams{RequestID: ev.RequestID, ErrorReason: failReason(ctx)})
		return
	}
	ic.mu.Lock()
	ic.served++
	if isMain { // kept before the browser has it: the navigation may end as soon as it has
		ic.doc = document{body: body, contentType: resp.Header.Get("Content-Type"), url: ev.Request.URL, status: resp.StatusCode}
	}
	ic.mu.Unlock()
	_, err = chromedp.Call(ctx, cdpfetch.FulfillRequest, cdpfetch.FulfillRequestParams{
		RequestID:       ev.RequestID,
		ResponseCode:    int64(resp.StatusCode),
		ResponsePhrase:  reasonPhrase(resp),
		ResponseHeaders: responseHeaders(resp.Header),
		Body:            body,
	})
	if err != nil && ctx.Err() == nil {
		// The browser refused the answer: fail the request rather than
		// leave it paused (the page would wait for it until the timeout).
		ic.mu.Lock()
		ic.served--
		ic.refused++
		if isMain && ic.main == nil {
			ic.main = fmt.Errorf("render request %s: the browser refused the answer (HTTP %d): %w", shown(ev.Request.URL), resp.StatusCode, err)
		}
		ic.mu.Unlock()
		_, _ = chromedp.Call(ctx, cdpfetch.FailRequest, cdpfetch.FailRequestParams{RequestID: ev.RequestID, ErrorReason: network.ErrorReasonFailed})
	}
}

// reasonPhrase is the status line's text the origin sent (Go's client keeps
// it in Status), else the standard one: the browser has no phrase of its
// own for a code outside the standard ones (299, 599) and refuses the
// answer without one.
func reasonPhrase(resp *http.Response) string {
	code := strconv.Itoa(resp.StatusCode)
	if p := strings.TrimSpace(strings.TrimPrefix(resp.Status, code)); p != "" && p != resp.Status {
		return p
	}
	if p := http.StatusText(resp.StatusCode); p != "" {
		return p
	}
	return "Status " + code
}

// hopHeaders are never forwarded either way: the connection's business,
// the client's (it negotiates and decodes gzip itself), or cookies, which a
// render neither sends nor keeps beyond the resource's headers.
var hopHeaders = map[string]bool{
	"connection": true, "keep-alive": true, "proxy-connection": true, "transfer-encoding": true,
	"upgrade": true, "te": true, "trailer": true, "host": true, "content-length": true,
	"accept-encoding": true, "content-encoding": true, "cookie": true, "set-cookie": true,
	"user-agent": true,
}

// do makes ev's request through the guarded client.
func (ic *interceptor) do(ctx context.Context, ev *cdpfetch.EventRequestPaused) (*http.Response, []byte, error) {
	u, err := url.Parse(ev.Request.URL)
	if err != nil {
		return nil, nil, fmt.Errorf("request %q: %w", shown(ev.Request.URL), err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, nil, fmt.Errorf("request %s: only http and https are fetched", u.Scheme+":")
	}
	var body io.Reader
	if ev.Request.HasPostData {
		var b bytes.Buffer
		for _, e := range ev.Request.PostDataEntries {
			b.Write(e.Bytes)
		}
		body = &b
	}
	req, err := http.NewRequestWithContext(ctx, ev.Request.Method, u.String(), body)
	if err != nil {
		return nil, nil, fmt.Errorf("request %s: %w", shown(u.String()), err)
	}
	for k, v := range ev.Request.Headers {
		if hopHeaders[strings.ToLower(k)] {
			continue
		}
		req.Header.Set(k, fmt.Sprint(v))
	}
	if ic.userAgent != "" {
		req.Header.Set("User-Agent", ic.userAgent)
	}
	if ic.staysHome(ev, u) {
		for k, vs := range ic.headers {
			req.Header[http.CanonicalHeaderKey(k)] = vs
		}
	}
	resp, err := ic.client.Do(req)
	if err != nil {
		return nil, nil, fmt.Errorf("render request %s %s: %w", req.Method, shown(u.String()), classify(err))
	}
	defer resp.Body.Close() //nolint:errcheck // read-only body
	if resp.ContentLength > ic.maxBytes {
		return nil, nil, fmt.Errorf("render request %s: %d bytes > max_body %d: %w", shown(u.String()), resp.ContentLength, ic.maxBytes, ErrTooLarge)
	}
	b, err := io.ReadAll(http.MaxBytesReader(nil, resp.Body, ic.maxBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, nil, fmt.Errorf("render request %s: body > max_body %d: %w", shown(u.String()), ic.maxBytes, ErrTooLarge)
		}
		return nil, nil, fmt.Errorf("render request %s: read body: %w", shown(u.String()), err)
	}
	return resp, b, nil
}

// staysHome reports whether ev's request, at u, gets the resource's
// headers: u is of the page's origin ([sameOrigin]) and no earlier hop of
// its redirect chain left it. The browser follows a render's redirects
// itself, each hop paused apart and naming the hop before it
// (RedirectedRequestID), so a chain that ever left the origin is
// remembered by the id of its every later hop.
func (ic *interceptor) staysHome(ev *cdpfetch.EventRequestPaused, u *url.URL) bool {
	ic.mu.Lock()
	defer ic.mu.Unlock()
	home := sameOrigin(u, ic.page) && !ic.left[ev.RedirectedRequestID]
	if !home {
		ic.left[ev.RequestID] = true
	}
	return home
}

func responseHeaders(h http.Header) []*cdpfetch.HeaderEntry {
	out := make([]*cdpfetch.HeaderEntry, 0, len(h))
	for k, vs := range h {
		if hopHeaders[strings.ToLower(k)] {
			continue
		}
		for _, v := range vs {
			out = append(out, &cdpfetch.HeaderEntry{Name: k, Value: v})
		}
	}
	return out
}

// failReason is what the browser is told of a request dynamo did not
// make: refused (the guard, a scheme, a size), or aborted when the render
// itself ended (its timeout, a cancelled poll), which is no refusal.
func failReason(ctx context.Context) network.ErrorReason {
	if ctx.Err() != nil {
		return network.ErrorReasonAborted
	}
	return network.ErrorReasonAccessDenied
}
