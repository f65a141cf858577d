package poller

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/dynamo-rss/dynamo/config"
	"github.com/dynamo-rss/dynamo/storage/badger"
)

// BenchmarkIdleResources reports the heap an engine keeps per idle resource
// (scheduled, never polled; configuration and metrics included) and the
// time New takes per resource, at 100,000 resources on an in-memory store.
func BenchmarkIdleResources(b *testing.B) { benchIdle(b, false) }

// BenchmarkIdleResourcesPolled is BenchmarkIdleResources with every
// resource polled before, as after weeks of running: its stored state has
// validators, the last version's 20 item ids, 50 observed intervals and a
// full history, which New reads back.
func BenchmarkIdleResourcesPolled(b *testing.B) { benchIdle(b, true) }

func benchIdle(b *testing.B, polled bool) {
	const n = 100_000
	var sb strings.Builder
	sb.WriteString("resources:\n")
	for i := range n {
		fmt.Fprintf(&sb, "  - {id: r%d, url: \"http://127.0.0.%d/p/%d\", policy: {kind: flat, interval: 1h}}\n", i, 1+i%250, i)
	}
	yaml := baseYAML(sb.String())
	var store Store
	if polled {
		// The states in a map (all sharing one encoding), outside the
		// measured heap growth: Badger in memory would hold 100,000 of them.
		ms, state := newMemStore(), polledState(b)
		for i := range n {
			ms.states[fmt.Sprint("r", i)] = state
		}
		store = ms
	} else {
		db, err := badger.Open("", badger.Options{InMemory: true})
		if err != nil {
			b.Fatal(err)
		}
		defer db.Close() //nolint:errcheck // benchmark teardown
		store = db
	}
	for b.Loop() {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		cfg, err := config.Parse([]byte(yaml))
		if err != nil {
			b.Fatal(err)
		}
		e, err := New(context.Background(), cfg, store, Options{Registerer: prometheus.NewRegistry()})
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, "heap-B/resource")
		if path := os.Getenv("DYNAMO_IDLE_HEAP_PROFILE"); path != "" {
			f, err := os.Create(path)
			if err != nil {
				b.Fatal(err)
			}
			if err := pprof.WriteHeapProfile(f); err != nil {
				b.Fatal(err)
			}
			_ = f.Close()
		}
		runtime.KeepAlive(e)
		runtime.KeepAlive(cfg)
		_ = e.Close()
	}
}

// polledState is the encoded state of a resource polled for weeks.
func polledState(b *testing.B) []byte {
	st := persisted{
		URL: "http://127.0.0.1/p/1", Kind: KindFlat,
		Policy:     PolicyState{Tau: time.Hour, Alpha: 0.5, LastUpdate: t0, Wait: time.Hour, Kind: KindFlat},
		Validators: validators{ETag: `"5f3a-61b2c9e4d8a00"`, LastModified: "Mon, 23 Nov 2026 09:12:44 GMT"},
		LastPoll:   t0, NextPoll: t0.Add(time.Hour), LastOutcome: OutcomeUnchanged,
		Polls: 5000, Changes: 400, BodyHash: 0x9e3779b97f4a7c15, Since: t0.Add(-60 * 24 * time.Hour),
		Last: &lastVersion{Newest: t0},
	}
	for i := range HistoryWindow {
		st.Policy.Intervals = append(st.Policy.Intervals, time.Duration(i+1)*time.Minute)
	}
	for i := range 20 {
		st.Last.Items = append(st.Last.Items, uint64(i)*0x9e3779b97f4a7c15)
	}
	for i := range historyMax {
		recordPoll(&st, t0.Add(time.Duration(i-historyMax)*time.Hour), OutcomeUnchanged, time.Hour, 40)
	}
	data, err := st.marshal()
	if err != nil {
		b.Fatal(err)
	}
	return data
}
