package api

import (
	"bytes"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
)

// dispatchCase is one request of the dispatch comparison.
type dispatchCase struct {
	method, target string
	header         []string // name, value pairs
}

// dispatchCases covers what the routes answer: cached feeds in every format,
// compressed or not, HEAD, 304 by either validator, a feed shown as a page,
// bad parameters, unknown resources and versions, pages, health, metrics,
// admin with and without the token, an unknown path, a wrong method (405)
// and OPTIONS.
func dispatchCases(etag string) []dispatchCase {
	const feed = "/resources/bench?max=20"
	cs := []dispatchCase{
		{"GET", feed, nil},
		{"GET", feed, []string{"Accept-Encoding", "gzip"}},
		{"GET", feed, []string{"Accept-Encoding", "gzip;q=0"}},
		{"HEAD", feed, nil},
		{"HEAD", feed, []string{"Accept-Encoding", "gzip"}},
		{"GET", feed, []string{"If-None-Match", etag}},
		{"GET", feed, []string{"If-None-Match", `"nope"`}},
		{"HEAD", feed, []string{"If-None-Match", etag, "Accept-Encoding", "gzip"}},
		{"GET", feed, []string{"If-Modified-Since", fdNow.Format(http.TimeFormat)}},
		{"GET", feed, []string{"Accept", "application/atom+xml"}},
		{"GET", feed, []string{"Accept", "text/html,application/xhtml+xml;q=0.9,*/*;q=0.8", "Accept-Encoding", "gzip"}},
		{"GET", "/resources/bench", nil},
		{"GET", "/resources/bench?max=20;index=1", nil},
		{"GET", "/resources/bench/versions/1", []string{"Accept-Encoding", "gzip"}},
		{"GET", "/resources/bench/versions/9", nil},
		{"GET", "/resources/bench/versions/x", nil},
		{"GET", "/resources/bench?max=abc", nil},
		{"GET", "/resources/bench?type=nope", nil},
		{"GET", "/resources/bench?index=99", nil},
		{"GET", "/resources/nobody?max=20", nil},
		{"GET", "/resources/a%25zz", nil},
		{"GET", "/resources", []string{"Accept-Encoding", "gzip"}},
		{"GET", "/resources.opml", []string{"Accept-Encoding", "gzip"}},
		{"GET", "/", []string{"Accept-Encoding", "gzip"}},
		{"GET", "/view/bench", nil},
		{"GET", "/healthz", nil},
		{"HEAD", "/readyz", nil},
		{"GET", "/metrics", nil},
		{"GET", "/admin/resources", nil},
		{"GET", "/admin/resources", []string{"Authorization", "Bearer " + dispatchToken}},
		{"GET", "/admin/debug/pprof", []string{"Authorization", "Bearer " + dispatchToken}},
		{"GET", "/admin/debug/pprof/nothing", []string{"Authorization", "Bearer " + dispatchToken}},
		{"GET", "/no/such/page", nil},
		{"POST", "/healthz", nil},
		{"DELETE", "/resources/bench", nil},
		{"OPTIONS", "/resources/bench", nil},
		{"PATCH", "/admin/resources/bench", nil},
	}
	for _, f := range fdFormats {
		cs = append(cs,
			dispatchCase{"GET", feed + "&type=" + f, nil},
			dispatchCase{"GET", feed + "&type=" + f, []string{"Accept-Encoding", "gzip"}})
	}
	return cs
}

const dispatchToken = "dispatch-test-token-0123456789abcdef"

// Routes registered with handle have their middleware applied once, and
// ServeHTTP routes itself; the answers, the metrics and the access log must
// be those of echo applying the same middleware (e.Use and route middleware)
// on every request.
func TestDispatchMatchesEcho(t *testing.T) {
	store := newFDStore()
	for v := range 3 {
		store.Save(benchDoc("bench", fdT0.Add(time.Duration(v)*time.Hour), 2*v, 20))
	}
	reg := prometheus.NewRegistry()
	var logs bytes.Buffer
	bytesVary := false // the size of /metrics changes with what it counts
	s := newFDServer(t, store, func(o *Options) {
		o.Registerer, o.Gatherer = reg, reg
		o.AdminToken = dispatchToken
		o.AccessLog = true
		o.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{
			ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
				if a.Key == slog.TimeKey || a.Key == "duration" || a.Key == "bytes" && bytesVary {
					return slog.Attr{}
				}
				return a
			},
		}))
	})
	// The reference: the same handlers, registered on an echo that applies
	// the middleware itself, per request.
	ref := echo.New()
	ref.HTTPErrorHandler = s.httpError
	ref.IPExtractor = s.e.IPExtractor
	ref.Use(s.chain...)
	refAdd := func(method, path string, h echo.HandlerFunc, mw ...echo.MiddlewareFunc) {
		ref.Add(method, path, h, mw...)
	}
	s.routes(refAdd)
	s.opts.Pages.Routes(s, refAdd) // the pages' routes, mounted as New mounts them

	etag := fdDo(s, http.MethodGet, "/resources/bench?max=20").Header().Get("ETag")
	cases := dispatchCases(etag)
	do := func(h http.Handler, tc dispatchCase) *httptest.ResponseRecorder {
		req := httptest.NewRequest(tc.method, tc.target, nil)
		for i := 0; i+1 < len(tc.header); i += 2 {
			req.Header.Set(tc.header[i], tc.header[i+1])
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	for _, tc := range cases { // renders and caches, so that both see the same cache
		do(s, tc)
	}
	for _, tc := range cases {
		name := tc.method + " " + tc.target + " " + strings.Join(tc.header, " ")
		bytesVary = tc.target == "/metrics"
		before := dispatchMetrics(t, reg)
		logs.Reset()
		want := do(ref, tc)
		wantLog := logs.String()
		mid := dispatchMetrics(t, reg)
		logs.Reset()
		got := do(s, tc)
		gotLog := logs.String()
		after := dispatchMetrics(t, reg)

		if got.Code != want.Code {
			t.Errorf("%s: status %d, echo %d", name, got.Code, want.Code)
		}
		if !maps.EqualFunc(got.Header(), want.Header(), slices.Equal) {
			t.Errorf("%s: headers\n%v\necho's\n%v", name, got.Header(), want.Header())
		}
		if tc.target != "/metrics" && !bytes.Equal(got.Body.Bytes(), want.Body.Bytes()) {
			t.Errorf("%s: body\n%.300s\necho's\n%.300s", name, got.Body, want.Body)
		}
		if gotLog != wantLog {
			t.Errorf("%s: access log\n%s\necho's\n%s", name, gotLog, wantLog)
		}
		if d1, d2 := dispatchDelta(before, mid), dispatchDelta(mid, after); !maps.Equal(d1, d2) {
			t.Errorf("%s: metrics moved by\n%v\necho's\n%v", name, d2, d1)
		}
	}
}

// dispatchMetrics reads the request and render-cache metrics: counters and
// gauges by value, histograms by sample count (their sums are durations).
func dispatchMetrics(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		if !strings.HasPrefix(mf.GetName(), "dynamo_http_") && !strings.HasPrefix(mf.GetName(), "dynamo_feed_") {
			continue
		}
		for _, m := range mf.GetMetric() {
			key := mf.GetName()
			for _, l := range m.GetLabel() {
				key += "{" + l.GetName() + "=" + l.GetValue() + "}"
			}
			switch {
			case m.Counter != nil:
				out[key] = m.GetCounter().GetValue()
			case m.Gauge != nil:
				out[key] = m.GetGauge().GetValue()
			case m.Histogram != nil:
				out[key] = float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return out
}

// dispatchDelta is what moved from a to b.
func dispatchDelta(a, b map[string]float64) map[string]float64 {
	d := map[string]float64{}
	for k, v := range b {
		if v != a[k] {
			d[k] = v - a[k]
		}
	}
	return d
}
