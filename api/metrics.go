package api

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// httpMetrics counts and times requests by route pattern (never by raw path,
// which would let clients create unbounded label values).
type httpMetrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	inFlight prometheus.Gauge

	// series keeps the counter and histogram of the labels answers had, so
	// that the next answer with them neither formats its code nor hashes
	// its labels twice. Routes are the registered ones (or "unmatched")
	// and methods are methodLabel's, so the label sets are bounded; past
	// maxSeries, the others are looked up each time.
	mu     sync.RWMutex
	series map[seriesKey]requestSeries
}

type seriesKey struct {
	route, method string
	code          int
}

type requestSeries struct {
	requests prometheus.Counter
	duration prometheus.Observer
}

// maxSeries bounds httpMetrics.series.
const maxSeries = 1024

// newHTTPMetrics builds the metrics and registers them on reg (nil: unregistered,
// still usable).
func newHTTPMetrics(reg prometheus.Registerer) (*httpMetrics, error) {
	m := &httpMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "dynamo_http_requests_total",
			Help: "HTTP requests answered, by route pattern, method and status code.",
		}, []string{"route", "method", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "dynamo_http_request_duration_seconds",
			Help:    "Time to answer HTTP requests, by route pattern and method.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"route", "method"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "dynamo_http_requests_in_flight",
			Help: "HTTP requests being answered.",
		}),
		series: make(map[seriesKey]requestSeries),
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.requests, m.duration, m.inFlight} {
		if err := reg.Register(c); err != nil {
			var are prometheus.AlreadyRegisteredError
			if errors.As(err, &are) {
				return nil, fmt.Errorf("http metrics already registered: %w", err)
			}
			return nil, err
		}
	}
	return m, nil
}

// methodLabel is the method's label: a method a client makes up is
// "other", so that requests cannot add series to the metrics.
func methodLabel(method string) string {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodDelete,
		http.MethodOptions, http.MethodPatch:
		return method
	}
	return "other"
}

// observe records one answered request.
func (m *httpMetrics) observe(route, method string, code int, d time.Duration) {
	method = methodLabel(method)
	k := seriesKey{route, method, code}
	m.mu.RLock()
	ser, ok := m.series[k]
	m.mu.RUnlock()
	if !ok {
		ser = requestSeries{
			requests: m.requests.WithLabelValues(route, method, strconv.Itoa(code)),
			duration: m.duration.WithLabelValues(route, method),
		}
		m.mu.Lock()
		if len(m.series) < maxSeries {
			m.series[k] = ser
		}
		m.mu.Unlock()
	}
	ser.requests.Inc()
	ser.duration.Observe(d.Seconds())
}

// metricsHandler serves the Prometheus text format from Options.Gatherer.
// The gzip middleware compresses it, so promhttp's own compression is off
// (two layers would double-compress).
func (s *Server) metricsHandler() echo.HandlerFunc {
	return echo.WrapHandler(promhttp.HandlerFor(s.opts.Gatherer, promhttp.HandlerOpts{
		DisableCompression: true,
		ErrorHandling:      promhttp.ContinueOnError,
	}))
}
