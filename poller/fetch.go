package poller

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	neturl "net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dynamo-rss/dynamo/config"
	"github.com/dynamo-rss/dynamo/fetch"
)

// ErrTooLarge is wrapped when a body exceeds poller.max_body: the page is
// refused, never truncated.
var ErrTooLarge = errors.New("poller: response body too large")

// ErrTooManyRedirects is wrapped when a fetch exceeds poller.max_redirects.
var ErrTooManyRedirects = errors.New("poller: too many redirects")

// StatusError is an HTTP answer the retriever cannot use (anything but 200
// and 304). RetryAfter is the server's Retry-After, if any.
type StatusError struct {
	URL        string
	Code       int
	RetryAfter time.Duration
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("GET %s: HTTP %d %s", e.URL, e.Code, http.StatusText(e.Code))
}

// fetchSettings are the parts of config.PollerConfig the retriever uses.
type fetchSettings struct {
	Timeout, ConnectTimeout, HeaderTimeout time.Duration
	MaxBody                                int64
	MaxRedirects                           int
	UserAgent                              string
	AllowPrivate                           bool
}

func fetchSettingsOf(p config.PollerConfig) fetchSettings {
	return fetchSettings{
		Timeout:        p.Timeout.D(),
		ConnectTimeout: p.ConnectTimeout.D(),
		HeaderTimeout:  p.HeaderTimeout.D(),
		MaxBody:        int64(p.MaxBody),
		MaxRedirects:   p.MaxRedirects,
		UserAgent:      p.UserAgent,
		AllowPrivate:   p.AllowPrivate,
	}
}

// retriever owns the one shared http.Client of an engine (rebuilt only when
// the fetch settings change on reload).
type retriever struct {
	set       fetchSettings
	client    *http.Client
	transport *http.Transport // nil when a test injected its own RoundTripper
	bufs      sync.Pool       // *bytes.Buffer for bodies: a poll reads one without growing it
}

// maxPooledBody: a buffer that grew past this for a huge page is left to
// the collector rather than kept.
const maxPooledBody = 1 << 20

// recycle takes back the buffer of fr's body, which must no longer be used.
func (r *retriever) recycle(fr *fetchResult) {
	if fr.buf != nil && fr.buf.Cap() <= maxPooledBody {
		r.bufs.Put(fr.buf)
	}
	fr.buf, fr.Body = nil, nil
}

func newRetriever(set fetchSettings, opts Options) *retriever {
	r := &retriever{set: set}
	var rt http.RoundTripper
	if opts.Transport != nil {
		rt = opts.Transport
	} else {
		dl := fetch.NewDialer(set.AllowPrivate, set.ConnectTimeout, opts.Resolver)
		r.transport = &http.Transport{
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
		rt = r.transport
	}
	r.client = &http.Client{
		Transport: rt,
		Timeout:   set.Timeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > set.MaxRedirects {
				return fmt.Errorf("%w (%d)", ErrTooManyRedirects, set.MaxRedirects)
			}
			// A resource's headers are for its page's host: not sent on
			// to another (the client copies them to every redirect).
			if ph, ok := req.Context().Value(pageHeadersKey{}).(pageHeaders); ok && !strings.EqualFold(req.URL.Hostname(), ph.host) {
				for _, name := range ph.names {
					req.Header.Del(name)
				}
			}
			return nil
		},
	}
	return r
}

func (r *retriever) close() {
	if r.transport != nil {
		r.transport.CloseIdleConnections()
	}
}

// validators are the conditional-GET values of the last 200.
type validators struct {
	ETag         string `json:"etag,omitempty"`
	LastModified string `json:"last_modified,omitempty"`
}

// fetchResult is one page fetch.
type fetchResult struct {
	NotModified bool
	Body        []byte
	ContentType string
	URL         string // final URL after redirects
	Validators  validators
	MaxAge      time.Duration // Cache-Control max-age, a floor for the next poll
	Bytes       int64

	buf *bytes.Buffer // holds Body; see retriever.recycle
}

// fetch GETs url conditionally. Non-200/304 answers are *StatusError; now
// (the engine's clock) dates a Retry-After given as an HTTP date.
func (r *retriever) fetch(ctx context.Context, url string, v validators, now time.Time) (fetchResult, error) {
	return r.fetchWith(ctx, url, v, now, nil)
}

// pageHeaders are a resource's headers and the host they are for: a
// redirect to another host does not carry them (see newRetriever).
type pageHeaders struct {
	host  string
	names []string
}

type pageHeadersKey struct{}

// fetchWith is fetch with a resource's own headers (config headers), sent
// to the page's host only.
func (r *retriever) fetchWith(ctx context.Context, url string, v validators, now time.Time, headers map[string]string) (fetchResult, error) {
	if len(headers) > 0 {
		ph := pageHeaders{}
		for name := range headers {
			ph.names = append(ph.names, name)
		}
		if u, err := neturl.Parse(url); err == nil {
			ph.host = u.Hostname()
		}
		ctx = context.WithValue(ctx, pageHeadersKey{}, ph)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fetchResult{}, fmt.Errorf("new request: %w", err)
	}
	req.Header.Set("User-Agent", r.set.UserAgent)
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
	resp, err := r.client.Do(req)
	if err != nil {
		return fetchResult{}, err
	}
	defer resp.Body.Close() //nolint:errcheck // read-only body; nothing to report
	res := fetchResult{URL: resp.Request.URL.String(), MaxAge: maxAge(resp.Header)}
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
	if resp.ContentLength > r.set.MaxBody {
		return res, fmt.Errorf("GET %s: %d bytes > max_body %d: %w", url, resp.ContentLength, r.set.MaxBody, ErrTooLarge)
	}
	buf, _ := r.bufs.Get().(*bytes.Buffer)
	if buf == nil {
		buf = new(bytes.Buffer)
	}
	buf.Reset()
	res.buf = buf
	_, err = buf.ReadFrom(http.MaxBytesReader(nil, resp.Body, r.set.MaxBody))
	body := buf.Bytes()
	res.Bytes = int64(len(body))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return res, fmt.Errorf("GET %s: body > max_body %d: %w", url, r.set.MaxBody, ErrTooLarge)
		}
		return res, fmt.Errorf("GET %s: read body: %w", url, err)
	}
	res.Body = body
	res.ContentType = resp.Header.Get("Content-Type")
	res.Validators = validators{ETag: resp.Header.Get("ETag"), LastModified: resp.Header.Get("Last-Modified")}
	return res, nil
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
					age = time.Duration(min(n, int64(MaxHintFloor/time.Second))) * time.Second
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
		return time.Duration(min(n, int64(MaxHintFloor/time.Second))) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return min(t.Sub(now), MaxHintFloor)
	}
	return 0
}
