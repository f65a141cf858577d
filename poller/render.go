package poller

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/dynamo-rss/dynamo/config"
	"github.com/dynamo-rss/dynamo/fetch"
)

// browsers holds an engine's renderer for the resources with fetch:
// browser: built at the first render, built again when poller.browser or
// the guarded client changed (a reload), closed by [Engine.Close] and when
// Run returns. Safe for concurrent use.
type browsers struct {
	m   *fetch.RenderMetrics
	log *slog.Logger

	mu     sync.Mutex
	r      *fetch.Renderer
	set    config.BrowserConfig
	client *http.Client
	maxB   int64
	ua     string
}

func newBrowsers(reg prometheus.Registerer, log *slog.Logger) (*browsers, error) {
	m, err := fetch.NewRenderMetrics(reg)
	if err != nil {
		return nil, err
	}
	return &browsers{m: m, log: log}, nil
}

// renderer returns the renderer for these settings and this client.
func (b *browsers) renderer(p config.PollerConfig, client *http.Client) (*fetch.Renderer, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.r != nil && b.set == p.Browser && b.client == client && b.maxB == int64(p.MaxBody) && b.ua == p.UserAgent {
		return b.r, nil
	}
	if b.r != nil {
		// Renders in flight on the old browser fail; their polls back off
		// and run again on the new one.
		_ = b.r.Close() // Close reports nothing
	}
	r, err := fetch.NewRenderer(fetch.BrowserOptions{
		Exec:      p.Browser.Exec,
		URL:       p.Browser.URL,
		MaxTabs:   p.Browser.MaxTabs,
		Timeout:   p.Browser.Timeout.D(),
		MaxBytes:  int64(p.MaxBody),
		UserAgent: p.UserAgent,
		Client:    client,
		Metrics:   b.m,
		Logger:    b.log,
	})
	if err != nil {
		return nil, err
	}
	b.r, b.set, b.client, b.maxB, b.ua = r, p.Browser, client, int64(p.MaxBody), p.UserAgent
	return r, nil
}

func (b *browsers) close() {
	if b == nil { // an engine New did not build
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.r != nil {
		_ = b.r.Close() // Close reports nothing
		b.r = nil
	}
}

// Close ends the browser the engine started for fetch: browser resources,
// if any (Run's return does too); a later render starts one again.
func (e *Engine) Close() error {
	e.browsers.close()
	return nil
}

// render fetches u by rendering it (fetch: browser): robots.txt and the
// host's politeness were checked by the poll, as for a GET. A render is
// never conditional: its DOM's hash tells an unchanged page.
func (e *Engine) render(ctx context.Context, f *retriever, u *url.URL, entry *config.ResourceEntry, p config.PollerConfig) (fetchResult, error) {
	r, err := e.browsers.renderer(p, f.client)
	if err != nil {
		return fetchResult{}, err
	}
	var headers http.Header
	for name, value := range entry.Headers { // validated: no Host, hop-by-hop or conditional header
		if headers == nil {
			headers = make(http.Header, len(entry.Headers))
		}
		headers.Set(name, value)
	}
	out, err := r.Render(ctx, fetch.RenderRequest{URL: u.String(), WaitFor: entry.WaitFor, Headers: headers})
	if err != nil {
		return fetchResult{}, err
	}
	return fetchResult{
		Body:        out.HTML,
		ContentType: "text/html; charset=utf-8", // the DOM, serialized by the browser as UTF-16 and read back as UTF-8
		URL:         out.URL,
		Bytes:       int64(len(out.HTML)),
	}, nil
}
