package api

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	s := newSvcServer(t, Options{Registerer: reg, Gatherer: reg})
	for range 3 {
		svcDo(s, http.MethodGet, "/healthz", nil)
	}
	svcDo(s, http.MethodGet, "/no/such/route/123", nil)
	svcDo(s, http.MethodGet, "/no/such/route/456", nil)

	if got := testutil.ToFloat64(s.metrics.requests.WithLabelValues("/healthz", "GET", "200")); got != 3 {
		t.Errorf("requests{/healthz,GET,200} = %v, want 3", got)
	}
	if got := testutil.ToFloat64(s.metrics.requests.WithLabelValues("unmatched", "GET", "404")); got != 2 {
		t.Errorf("requests{unmatched,GET,404} = %v, want 2 (raw paths never become labels)", got)
	}
	rec := svcDo(s, http.MethodGet, "/metrics", nil)
	if rec.Code != http.StatusOK {
		t.Fatalf("/metrics: %d", rec.Code)
	}
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("Content-Type = %q, want the Prometheus text format", ct)
	}
	body := rec.Body.String()
	for _, want := range []string{
		`dynamo_http_requests_total{code="200",method="GET",route="/healthz"} 3`,
		`dynamo_http_request_duration_seconds_bucket{method="GET",route="/healthz",le="+Inf"} 3`,
		`dynamo_http_requests_in_flight 1`, // the /metrics request itself
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if strings.Contains(body, "/no/such/route") {
		t.Error("a raw path became a label value")
	}
}

func TestMetricsOff(t *testing.T) {
	s := newSvcServer(t, Options{}) // no Gatherer, no Registerer: still serves
	svcProblem(t, svcDo(s, http.MethodGet, "/metrics", nil), http.StatusNotFound)
	if rec := svcDo(s, http.MethodGet, "/healthz", nil); rec.Code != http.StatusOK {
		t.Errorf("healthz %d", rec.Code)
	}
}

func TestMetricsRegisterTwice(t *testing.T) {
	reg := prometheus.NewRegistry()
	newSvcServer(t, Options{Registerer: reg})
	if _, err := New(Options{Store: &svcStore{}, Registerer: reg}); err == nil {
		t.Error("a second server registered the same metrics on one registry without error")
	}
}

// Methods come from clients: one a client makes up is labelled "other",
// so no request can add series to the metrics (nor to the answers' series
// kept beside them).
func TestMetricsMethodsBounded(t *testing.T) {
	reg := prometheus.NewRegistry()
	s := newSvcServer(t, Options{Registerer: reg, Gatherer: reg})
	for i := range 50 {
		svcDo(s, fmt.Sprintf("M%d", i), "/healthz", nil)
	}
	svcDo(s, http.MethodHead, "/healthz", nil)
	if got := testutil.ToFloat64(s.metrics.requests.WithLabelValues("/healthz", "other", "405")); got != 50 {
		t.Errorf("requests{/healthz,other,405} = %v, want 50", got)
	}
	if got := testutil.ToFloat64(s.metrics.requests.WithLabelValues("/healthz", "HEAD", "200")); got != 1 {
		t.Errorf("requests{/healthz,HEAD,200} = %v, want 1", got)
	}
	if n := testutil.CollectAndCount(s.metrics.requests); n > 3 {
		t.Errorf("%d request series after 50 made-up methods, want at most 3", n)
	}
}

// TestMetricsRouteOf404: a 404 on a real route (a feed reader asking for a
// resource that does not exist) is counted under that route, not under
// "unmatched", which is for requests no route matched.
func TestMetricsRouteOf404(t *testing.T) {
	reg := prometheus.NewRegistry()
	s := newFDServer(t, fdFixture(), func(o *Options) { o.Registerer, o.Gatherer = reg, reg })
	if rec := fdDo(s, http.MethodGet, "/resources/nope"); rec.Code != http.StatusNotFound {
		t.Fatalf("GET /resources/nope = %d", rec.Code)
	}
	fdDo(s, http.MethodGet, "/no/such/route")
	if got := testutil.ToFloat64(s.metrics.requests.WithLabelValues("/resources/:rssId", "GET", "404")); got != 1 {
		t.Errorf("requests{/resources/:rssId,GET,404} = %v, want 1", got)
	}
	if got := testutil.ToFloat64(s.metrics.requests.WithLabelValues("unmatched", "GET", "404")); got != 1 {
		t.Errorf("requests{unmatched,GET,404} = %v, want 1 (the unrouted request only)", got)
	}
}
