package poller

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestRunPollsWithBoundedWorkers drives Run with the fake clock: every
// resource is polled as it falls due, at most `workers` at once, never one
// resource twice at once; Run returns when ctx is done.
func TestRunPollsWithBoundedWorkers(t *testing.T) {
	o := newOrigin(t)
	var inFlight, peak atomic.Int64
	var mu sync.Mutex
	active := map[string]bool{}
	var overlap atomic.Bool
	o.handle("/", nil)
	for i := range 6 {
		path := fmt.Sprintf("/p%d", i)
		o.handle(path, func(w http.ResponseWriter, r *http.Request) {
			n := inFlight.Add(1)
			defer inFlight.Add(-1)
			for {
				p := peak.Load()
				if n <= p || peak.CompareAndSwap(p, n) {
					break
				}
			}
			mu.Lock()
			if active[path] {
				overlap.Store(true)
			}
			active[path] = true
			mu.Unlock()
			fmt.Fprint(w, page("Site", path))
			mu.Lock()
			active[path] = false
			mu.Unlock()
		})
	}
	var b strings.Builder
	b.WriteString("resources:\n")
	for i := range 6 {
		fmt.Fprintf(&b, "  - {id: r%d, url: %q, policy: {kind: flat, interval: 10m}}\n", i, o.url(fmt.Sprintf("/p%d", i)))
	}
	clk := newFakeClock(t0)
	e := newTestEngine(t, testConfig(t, baseYAML(b.String())), newMemStore(), clk)
	polls := make(chan Status, 100)
	e.afterPoll = func(s Status) { polls <- s }

	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()

	// Move time only while no poll is in flight (all six queued), to the
	// timer the scheduler waits on, until the next poll is past the horizon:
	// three rounds of 10 minutes (flat), every resource polled three times.
	horizon := t0.Add(30 * time.Minute)
	finished := func() bool {
		e.mu.Lock()
		idle := e.queue.Len() == 6
		_, next, _ := e.queue.Peek()
		e.mu.Unlock()
		if !idle {
			return false
		}
		if !next.Before(horizon) {
			return true
		}
		clk.AdvanceToTimer()
		return false
	}
	count := map[string]int{}
	deadline := time.After(20 * time.Second)
	for stop := false; !stop; {
		select {
		case s := <-polls:
			if s.LastPoll.Before(horizon) {
				count[s.ID]++
			}
			stop = finished()
		case <-clk.added:
			stop = finished()
		case <-deadline:
			t.Fatalf("stuck: %v", count)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if len(count) != 6 {
		t.Errorf("polled %v", count)
	}
	for id, n := range count {
		if n != 3 {
			t.Errorf("%s polled %d times, want 3 (%v)", id, n, count)
		}
	}
	if p := peak.Load(); p > 2 {
		t.Errorf("%d requests at once with workers: 2", p)
	}
	if overlap.Load() {
		t.Error("one resource polled twice at once")
	}
}

func TestPollNowWhileRunning(t *testing.T) {
	o := newOrigin(t)
	clk := newFakeClock(t0)
	e := newTestEngine(t, testConfig(t, baseYAML(fmt.Sprintf("resources:\n  - {id: r, url: %q}\n", o.url("/")))), newMemStore(), clk)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	defer func() { cancel(); <-done }()
	for i := range 3 {
		st, err := e.PollNow(t.Context(), "r")
		if err != nil {
			t.Fatal(err)
		}
		if st.Polls != int64(i+1) {
			t.Fatalf("PollNow %d: polls %d", i, st.Polls)
		}
	}
	if n := o.hit("/"); n != 3 {
		t.Fatalf("origin hit %d times, want 3", n)
	}
	if _, err := e.PollNow(t.Context(), "zzz"); err == nil {
		t.Fatal("unknown id accepted")
	}
}

func TestMetrics(t *testing.T) {
	o := newOrigin(t)
	o.setETag(`"x"`)
	clk := newFakeClock(t0)
	reg := prometheus.NewRegistry()
	e, err := New(context.Background(), testConfig(t, baseYAML(fmt.Sprintf("resources:\n  - {id: r, url: %q}\n", o.url("/")))), newMemStore(), Options{Clock: clk, Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close() //nolint:errcheck // test cleanup
	pollAtNext(t, e, clk, "r")
	pollAtNext(t, e, clk, "r")
	for _, tc := range []struct {
		c    prometheus.Collector
		want float64
	}{
		{e.m.polls.WithLabelValues(OutcomeChanged), 1},
		{e.m.polls.WithLabelValues(OutcomeNotModified), 1},
		{e.m.versions, 1},
	} {
		if got := testutil.ToFloat64(tc.c); got != tc.want {
			t.Errorf("%v = %v, want %v", tc.c, got, tc.want)
		}
	}
	// The estimates are read from the engine at scrape time.
	want := `
# HELP dynamo_poller_interval_seconds Wait the policy chose before the next poll (per resource, up to 10,000 resources).
# TYPE dynamo_poller_interval_seconds gauge
dynamo_poller_interval_seconds{resource="r"} 900
# HELP dynamo_poller_resources Resources scheduled, by policy kind.
# TYPE dynamo_poller_resources gauge
dynamo_poller_resources{policy="smart"} 1
# HELP dynamo_poller_tau_seconds Smart policy estimate τ of the time between updates (per resource, up to 10,000 resources).
# TYPE dynamo_poller_tau_seconds gauge
dynamo_poller_tau_seconds{resource="r"} 600
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "dynamo_poller_tau_seconds", "dynamo_poller_interval_seconds", "dynamo_poller_resources"); err != nil {
		t.Error(err) // interval: 10m × 1.5 after the unchanged (304) poll
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var fetched float64
	for _, mf := range mfs {
		if mf.GetName() == "dynamo_poller_fetch_bytes_total" {
			fetched = mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	if fetched <= 0 {
		t.Error("no bytes counted") // by the engine's fetcher, on the engine's registry
	}
	if n, err := testutil.GatherAndCount(reg, "dynamo_poller_poll_duration_seconds"); err != nil || n != 1 {
		t.Errorf("latency histogram: %d %v", n, err)
	}
	// A second engine on the same registry is refused, not silently merged.
	if _, err := New(context.Background(), testConfig(t, baseYAML("")), newMemStore(), Options{Registerer: reg}); err == nil {
		t.Error("duplicate registration accepted")
	}
}

func TestRunStopsWithSlowPollInFlight(t *testing.T) {
	o := newOrigin(t)
	started := make(chan struct{}, 1)
	o.handle("/", func(w http.ResponseWriter, r *http.Request) {
		started <- struct{}{}
		<-r.Context().Done()
	})
	clk := newFakeClock(t0)
	e := newTestEngine(t, testConfig(t, baseYAML(fmt.Sprintf("resources:\n  - {id: r, url: %q}\n", o.url("/")))), newMemStore(), clk)
	e.mu.Lock()
	e.queue.Update("r", t0)
	e.resources["r"].st.NextPoll = t0
	e.mu.Unlock()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	<-started
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	st, _ := e.Status("r")
	if st.Polls != 0 || st.NextPoll != t0 {
		t.Fatalf("an interrupted poll was recorded or unscheduled: %+v", st)
	}
	if _, ok := e.queue.At("r"); !ok {
		t.Fatal("interrupted resource left the queue")
	}
}
