package websub

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are a hub's Prometheus collectors, registered on
// Options.Registerer when it is not nil.
type metrics struct {
	requests      *prometheus.CounterVec // POST /websub by outcome
	verifications *prometheus.CounterVec // by mode and outcome
	deliveries    *prometheus.CounterVec // attempts by outcome
	expired       prometheus.Counter
	denied        prometheus.Counter   // subscriptions ended because their resource was deleted
	latency       prometheus.Histogram // notification to the subscriber's 2xx
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "dynamo_websub_requests_total", Help: "Subscription requests at the hub by outcome (accepted, invalid, unknown_topic, busy, limited).",
		}, []string{"outcome"}),
		verifications: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "dynamo_websub_verifications_total", Help: "Verifications of intent by mode and outcome (verified, refused, error).",
		}, []string{"mode", "outcome"}),
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "dynamo_websub_deliveries_total", Help: "Content distribution attempts by outcome.",
		}, []string{"outcome"}),
		expired: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "dynamo_websub_subscriptions_expired_total", Help: "Subscriptions removed at the end of their lease.",
		}),
		denied: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "dynamo_websub_subscriptions_denied_total", Help: "Subscriptions removed, and their subscribers sent a denial, because their resource was deleted.",
		}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "dynamo_websub_delivery_latency_seconds", Help: "Time from a notification to the subscriber's 2xx, retries included.",
			Buckets: prometheus.ExponentialBuckets(0.001, 4, 12),
		}),
	}
	for _, o := range deliveryOutcomes() {
		m.deliveries.WithLabelValues(o) // export zeros so rates work from the start
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.requests, m.verifications, m.deliveries, m.expired, m.denied, m.latency} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("register websub metrics: %w", err)
		}
	}
	return m, nil
}
