package fetch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	neturl "net/url"
	"strconv"
	"strings"
	"time"

	"github.com/dynamo-rss/dynamo/config"
)

// ErrTooManyRedirects is wrapped when a fetch exceeds poller.max_redirects.
var ErrTooManyRedirects = errors.New("fetch: too many redirects")

// ErrTimeout is wrapped when a request exceeds a configured timeout, so
// that the cause reads plainly.
var ErrTimeout = errors.New("fetch: timeout")

// MaxHint caps how far a server's hint (Retry-After, Cache-Control
// max-age, a robots.txt Crawl-delay) can push the next request to it: a
// misconfigured origin must not silence itself for a year.
const MaxHint = 24 * time.Hour

// StatusError is an HTTP answer that cannot be used as a page: anything but
// 200 and 304 for a GET, anything but 2xx for a rendered page. RetryAfter
// is the server's Retry-After, if any (a GET's only).
type StatusError struct {
	URL        string
	Code       int
	RetryAfter time.Duration
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("GET %s: HTTP %d %s", shown(e.URL), e.Code, http.StatusText(e.Code))
}

// Validators are the conditional-GET values of a page's last 200: the
// poller keeps them in its poll state (the JSON names are stored).
type Validators struct {
	ETag         string `json:"etag,omitempty"`
	LastModified string `json:"last_modified,omitempty"`
}

// Request is one page to fetch with [Fetcher.Get].
type Request struct {
	URL        string
	Validators Validators // a GET's conditions; a render is never conditional (its DOM's hash tells an unchanged page)
	// Headers are the resource's own headers (config headers), validated
	// (no Host, hop-by-hop or conditional header, no line break). They are
	// sent to URL's origin only (scheme, host and port): never after a
	// redirect to another origin, so never over http after https.
	Headers map[string]string
	Browser bool   // render the page in the browser (fetch: browser) instead of a GET
	WaitFor string // with Browser: the CSS selector the DOM is read after (wait_for)
}

// Result is one page fetched. Its Body is valid until [Fetcher.Release].
type Result struct {
	NotModified bool
	Body        []byte
	ContentType string
	URL         string // the final URL, after redirects
	Validators  Validators
	MaxAge      time.Duration // Cache-Control max-age, a floor for the next poll
	Bytes       int64

	buf *bytes.Buffer // holds Body; see Fetcher.Release
}

// Page is a page fetched once, outside any schedule ([Once], [Fetcher.Once]).
type Page struct {
	Body        []byte
	ContentType string
	URL         string // after redirects
}

// clientSettings are the parts of config.PollerConfig the HTTP client is
// built from: a change of any of them builds another (see Fetcher.Configure).
type clientSettings struct {
	Timeout, ConnectTimeout, HeaderTimeout time.Duration
	MaxBody                                int64
	MaxRedirects                           int
	UserAgent                              string
	AllowPrivate                           bool
}

func clientSettingsOf(p config.PollerConfig) clientSettings {
	return clientSettings{
		Timeout:        p.Timeout.D(),
		ConnectTimeout: p.ConnectTimeout.D(),
		HeaderTimeout:  p.HeaderTimeout.D(),
		MaxBody:        int64(p.MaxBody),
		MaxRedirects:   p.MaxRedirects,
		UserAgent:      p.UserAgent,
		AllowPrivate:   p.AllowPrivate,
	}
}

// client is the one http.Client of a Fetcher's settings.
type client struct {
	set       clientSettings
	http      *http.Client
	transport *http.Transport // nil when a test injected its own RoundTripper
	dialer    *Dialer         // the transport's; nil with an injected RoundTripper
}

func newClient(set clientSettings, rt http.RoundTripper, res Resolver, host *hostAddrs) *client {
	c := &client{set: set}
	if rt == nil {
		dl := newDialer(set.AllowPrivate, set.ConnectTimeout, res, host)
		c.dialer = dl
		c.transport = &http.Transport{
			Proxy:                 nil, // a proxy would dial for us and bypass the SSRF guard
			DialContext:           dl.DialContext,
			TLSHandshakeTimeout:   set.ConnectTimeout,
			ResponseHeaderTimeout: set.HeaderTimeout,
			MaxIdleConns:          256,
			MaxIdleConnsPerHost:   8,
			IdleConnTimeout:       90 * time.Second,
			ForceAttemptHTTP2:     true,
			// DisableCompression stays false: the transport asks for gzip and
			// decompresses, and MaxBytesReader then bounds the decoded size.
		}
		rt = c.transport
	}
	c.http = &http.Client{
		Transport: rt,
		Timeout:   set.Timeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > set.MaxRedirects {
				return fmt.Errorf("%w (%d)", ErrTooManyRedirects, set.MaxRedirects)
			}
			// A resource's headers are for its page's origin: not sent
			// on to another, nor back home once a redirect left it (the
			// client copies them to every redirect).
			if ph, ok := req.Context().Value(pageHeadersKey{}).(pageHeaders); ok && !chainStaysHome(ph.page, req, via) {
				for _, name := range ph.names {
					req.Header.Del(name)
				}
			}
			return nil
		},
	}
	return c
}

func (c *client) closeIdle() {
	if c.transport != nil {
		c.transport.CloseIdleConnections()
	}
}

// pageHeaders are the names of a resource's headers and the page whose
// origin they are for: a redirect to another origin does not carry them
// (see newClient).
type pageHeaders struct {
	page  *neturl.URL // nil: an unreadable URL, whose request fails anyway
	names []string
}

type pageHeadersKey struct{}

// maxPooledBody: a buffer that grew past this for a huge page is left to
// the collector rather than kept.
const maxPooledBody = 1 << 20

// get GETs url conditionally with c. Non-200/304 answers are *StatusError;
// now dates a Retry-After given as an HTTP date.
func (f *Fetcher) get(ctx context.Context, c *client, url string, v Validators, now time.Time, headers map[string]string) (Result, error) {
	if len(headers) > 0 {
		ph := pageHeaders{}
		for name := range headers {
			ph.names = append(ph.names, name)
		}
		if u, err := neturl.Parse(url); err == nil {
			ph.page = u
		}
		ctx = context.WithValue(ctx, pageHeadersKey{}, ph)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return Result{}, fmt.Errorf("new request: %w", err)
	}
	req.Header.Set("User-Agent", c.set.UserAgent)
	req.Header.Set("Accept", "text/html,application/xhtml+xml;q=0.9,*/*;q=0.5")
	for name, value := range headers { // validated: no Host, hop-by-hop or conditional header, no line break
		req.Header.Set(name, value)
	}
	if v.ETag != "" {
		req.Header.Set("If-None-Match", v.ETag)
	}
	if v.LastModified != "" {
		req.Header.Set("If-Modified-Since", v.LastModified)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return Result{}, err
	}
	defer resp.Body.Close() //nolint:errcheck // read-only body; nothing to report
	res := Result{URL: resp.Request.URL.String(), MaxAge: maxAge(resp.Header)}
	switch resp.StatusCode {
	case http.StatusNotModified:
		if v.ETag == "" && v.LastModified == "" {
			// Not modified since nothing: a 304 to a request without
			// validators is a broken origin, not an unchanged page.
			return res, &StatusError{URL: res.URL, Code: resp.StatusCode}
		}
		res.NotModified = true
		res.Validators = v
		return res, nil
	case http.StatusOK:
	default:
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // drain a little so the connection can be reused
		// Named by the URL that answered, after redirects.
		return res, &StatusError{URL: res.URL, Code: resp.StatusCode, RetryAfter: retryAfter(resp.Header, now)}
	}
	if resp.ContentLength > c.set.MaxBody {
		return res, fmt.Errorf("GET %s: %d bytes > max_body %d: %w", shown(url), resp.ContentLength, c.set.MaxBody, ErrTooLarge)
	}
	buf, _ := f.bufs.Get().(*bytes.Buffer)
	if buf == nil {
		buf = new(bytes.Buffer)
	}
	buf.Reset()
	res.buf = buf
	_, err = buf.ReadFrom(http.MaxBytesReader(nil, resp.Body, c.set.MaxBody))
	body := buf.Bytes()
	res.Bytes = int64(len(body))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return res, fmt.Errorf("GET %s: body > max_body %d: %w", shown(url), c.set.MaxBody, ErrTooLarge)
		}
		return res, fmt.Errorf("GET %s: read body: %w", shown(url), err)
	}
	res.Body = body
	res.ContentType = resp.Header.Get("Content-Type")
	res.Validators = Validators{ETag: resp.Header.Get("ETag"), LastModified: resp.Header.Get("Last-Modified")}
	return res, nil
}

// classify wraps timeouts in ErrTimeout so the cause reads plainly, and
// hides the credentials of the URL an HTTP client's error names.
func classify(err error) error {
	var ue *neturl.Error
	if errors.As(err, &ue) {
		ue.URL = shown(ue.URL)
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() && !errors.Is(err, ErrTimeout) {
		return fmt.Errorf("%w: %w", ErrTimeout, err)
	}
	return err
}

// maxAge reads Cache-Control max-age (0 when absent, or with no-cache/no-store).
func maxAge(h http.Header) time.Duration {
	var age time.Duration
	for _, v := range h.Values("Cache-Control") {
		for _, d := range strings.Split(v, ",") {
			d = strings.TrimSpace(strings.ToLower(d))
			switch {
			case d == "no-cache" || d == "no-store":
				return 0
			case strings.HasPrefix(d, "max-age="):
				if n, err := strconv.ParseInt(strings.Trim(d[len("max-age="):], `"`), 10, 64); err == nil && n > 0 {
					age = time.Duration(min(n, int64(MaxHint/time.Second))) * time.Second
				}
			}
		}
	}
	return age
}

// retryAfter reads Retry-After as seconds or an HTTP date relative to now.
func retryAfter(h http.Header, now time.Time) time.Duration {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n <= 0 {
			return 0
		}
		return time.Duration(min(n, int64(MaxHint/time.Second))) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return min(t.Sub(now), MaxHint)
	}
	return 0
}
