package fetch

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Render outcomes (dynamo_fetch_renders_total{outcome}).
const (
	RenderOK        = "ok"
	RenderTimeout   = "timeout"
	RenderTooLarge  = "too_large"
	RenderNoBrowser = "no_browser"
	RenderError     = "error"
)

// RenderMetrics are the render metrics: made once per Registerer by
// [NewRenderMetrics] and shared by the renderers that follow one another
// (a reload that changes the browser settings builds a new one). Safe for
// concurrent use.
type RenderMetrics struct {
	renders  *prometheus.CounterVec
	seconds  prometheus.Histogram
	restarts prometheus.Counter
}

// NewRenderMetrics makes the render metrics and registers them on reg (nil:
// kept unregistered).
func NewRenderMetrics(reg prometheus.Registerer) (*RenderMetrics, error) {
	m := &RenderMetrics{
		renders: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "dynamo_fetch_renders_total",
			Help: "Browser renders (fetch: browser) by outcome: ok, timeout, too_large, no_browser, error.",
		}, []string{"outcome"}),
		seconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "dynamo_fetch_render_seconds",
			Help:    "Time of one browser render, waiting for a tab excluded.",
			Buckets: prometheus.ExponentialBuckets(0.05, 2, 11),
		}),
		restarts: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "dynamo_fetch_browser_restarts_total",
			Help: "Browsers started again after the last one died.",
		}),
	}
	for _, o := range []string{RenderOK, RenderTimeout, RenderTooLarge, RenderNoBrowser, RenderError} {
		m.renders.WithLabelValues(o) // zeros exported, so rates work from the start
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.renders, m.seconds, m.restarts} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("register fetch metrics: %w", err)
		}
	}
	return m, nil
}

// observe counts one render.
func (m *RenderMetrics) observe(err error, d time.Duration) {
	m.renders.WithLabelValues(renderOutcome(err)).Inc()
	m.seconds.Observe(d.Seconds())
}

func renderOutcome(err error) string {
	switch {
	case err == nil:
		return RenderOK
	case errors.Is(err, ErrRenderTimeout), errors.Is(err, context.DeadlineExceeded):
		return RenderTimeout
	case errors.Is(err, ErrTooLarge):
		return RenderTooLarge
	case errors.Is(err, ErrNoBrowser):
		return RenderNoBrowser
	default:
		return RenderError
	}
}

// fetchMetrics are a fetcher's own collectors (the renders' are
// [RenderMetrics]). Their names keep the poller's prefix: they were the
// poller's before fetching moved here, and dashboards use them.
type fetchMetrics struct {
	bytes          prometheus.Counter
	articleSeconds prometheus.Histogram
}

func newFetchMetrics(reg prometheus.Registerer) (*fetchMetrics, error) {
	m := &fetchMetrics{
		bytes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "dynamo_poller_fetch_bytes_total", Help: "Response body bytes fetched.",
		}),
		articleSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "dynamo_poller_article_seconds", Help: "Time to fetch and extract one article (content: full).",
			Buckets: prometheus.ExponentialBuckets(0.01, 2.5, 10),
		}),
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.bytes, m.articleSeconds} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("register fetch metrics: %w", err)
		}
	}
	return m, nil
}
