package poller

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are an engine's Prometheus collectors; registered on
// Options.Registerer when it is not nil, else kept unregistered.
type metrics struct {
	polls    *prometheus.CounterVec // by outcome
	versions prometheus.Counter
	bytes    prometheus.Counter
	latency  prometheus.Histogram
	tau      *prometheus.GaugeVec // by resource
	interval *prometheus.GaugeVec // by resource
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		polls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "dynamo_poller_polls_total", Help: "Polls by outcome.",
		}, []string{"outcome"}),
		versions: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "dynamo_poller_versions_stored_total", Help: "Changed versions stored.",
		}),
		bytes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "dynamo_poller_fetch_bytes_total", Help: "Response body bytes fetched.",
		}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "dynamo_poller_poll_duration_seconds", Help: "Time to poll one resource (fetch, extract, store).",
			Buckets: prometheus.ExponentialBuckets(0.001, 2.5, 12),
		}),
		tau: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "dynamo_poller_tau_seconds", Help: "Smart policy estimate τ of the time between updates.",
		}, []string{"resource"}),
		interval: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "dynamo_poller_interval_seconds", Help: "Wait the policy chose before the next poll.",
		}, []string{"resource"}),
	}
	for _, o := range Outcomes() {
		m.polls.WithLabelValues(o) // export zeros so rates work from the start
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.polls, m.versions, m.bytes, m.latency, m.tau, m.interval} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("register poller metrics: %w", err)
		}
	}
	return m, nil
}
