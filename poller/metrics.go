package poller

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are an engine's Prometheus collectors; registered on
// Options.Registerer when it is not nil, else kept unregistered.
type metrics struct {
	polls     *prometheus.CounterVec // by outcome
	discarded *prometheus.CounterVec // by reason: see Discard reasons
	versions  prometheus.Counter
	latency   prometheus.Histogram
	// content: full (article.go); the bytes fetched and the time of an
	// article's fetch are counted by the fetcher (fetch.Fetcher).
	articles *prometheus.CounterVec // by result: fetched, failed
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		polls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "dynamo_poller_polls_total", Help: "Polls by outcome.",
		}, []string{"outcome"}),
		discarded: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "dynamo_poller_polls_discarded_total",
			Help: "Polls whose result was thrown away, by reason: removed (the resource was deleted or removed from the configuration during the poll), lease_lost (another node took the resource over meanwhile).",
		}, []string{"reason"}),
		versions: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "dynamo_poller_versions_stored_total", Help: "Changed versions stored.",
		}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "dynamo_poller_poll_duration_seconds", Help: "Time to poll one resource (fetch, extract, store).",
			Buckets: prometheus.ExponentialBuckets(0.001, 2.5, 12),
		}),
		articles: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "dynamo_poller_articles_total", Help: "content: full article fetches by result: fetched (stored as the item's content), failed (the item keeps its summary).",
		}, []string{"result"}),
	}
	for _, r := range []string{"fetched", "failed"} {
		m.articles.WithLabelValues(r)
	}
	for _, o := range Outcomes() {
		m.polls.WithLabelValues(o) // export zeros so rates work from the start
	}
	for _, r := range []string{DiscardRemoved, DiscardLeaseLost} {
		m.discarded.WithLabelValues(r)
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.polls, m.discarded, m.versions, m.latency, m.articles} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("register poller metrics: %w", err)
		}
	}
	return m, nil
}

// Why a poll's result was thrown away (dynamo_poller_polls_discarded_total).
const (
	DiscardRemoved   = "removed"    // the resource was removed during its poll
	DiscardLeaseLost = "lease_lost" // this node's lease ended during the poll
)

// maxResourceSeries bounds the per-resource series (τ and the interval)
// an engine exports: past it, a scrape would carry millions of lines and
// the time series database a cardinality it cannot afford, so only the
// per-policy counts are exported. The admin API and /view show every
// resource's estimates whatever the number.
const maxResourceSeries = 10_000

var (
	tauDesc = prometheus.NewDesc("dynamo_poller_tau_seconds",
		"Smart policy estimate τ of the time between updates (per resource, up to 10,000 resources).", []string{"resource"}, nil)
	intervalDesc = prometheus.NewDesc("dynamo_poller_interval_seconds",
		"Wait the policy chose before the next poll (per resource, up to 10,000 resources).", []string{"resource"}, nil)
	resourcesDesc = prometheus.NewDesc("dynamo_poller_resources",
		"Resources scheduled, by policy kind.", []string{"policy"}, nil)
)

// estimates exports every resource's interval estimates at scrape time,
// read from the engine's resources through each: no series is kept per
// resource between scrapes, so an idle resource costs the metrics nothing.
type estimates struct {
	// each calls fn with the number of resources, then for each of them,
	// under the lock that guards their states (fn must not keep st).
	each func(count func(n int), fn func(id string, st *persisted))
}

func (c estimates) Describe(ch chan<- *prometheus.Desc) {
	ch <- tauDesc
	ch <- intervalDesc
	ch <- resourcesDesc
}

func (c estimates) Collect(ch chan<- prometheus.Metric) {
	type est struct {
		id        string
		tau, wait float64
	}
	kinds := map[string]int{}
	var per []est
	each := false
	c.each(func(n int) { each = n <= maxResourceSeries }, func(id string, st *persisted) {
		kinds[st.Kind]++
		if each {
			per = append(per, est{id, st.Policy.Tau.Seconds(), st.Policy.Wait.Seconds()})
		}
	})
	for kind, n := range kinds {
		ch <- prometheus.MustNewConstMetric(resourcesDesc, prometheus.GaugeValue, float64(n), kind)
	}
	for _, x := range per {
		ch <- prometheus.MustNewConstMetric(tauDesc, prometheus.GaugeValue, x.tau, x.id)
		ch <- prometheus.MustNewConstMetric(intervalDesc, prometheus.GaugeValue, x.wait, x.id)
	}
}
