package poller

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/dynamo-rss/dynamo/config"
	"github.com/dynamo-rss/dynamo/storage/badger"
)

// BenchmarkIdleResources reports the heap an engine keeps per idle resource
// (scheduled, never polled; configuration and metrics included) and the
// time New takes per resource, at 100,000 resources on an in-memory store.
func BenchmarkIdleResources(b *testing.B) {
	const n = 100_000
	var sb strings.Builder
	sb.WriteString("resources:\n")
	for i := range n {
		fmt.Fprintf(&sb, "  - {id: r%d, url: \"http://127.0.0.%d/p/%d\", policy: {kind: flat, interval: 1h}}\n", i, 1+i%250, i)
	}
	yaml := baseYAML(sb.String())
	db, err := badger.Open("", badger.Options{InMemory: true})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close() //nolint:errcheck // benchmark teardown
	for b.Loop() {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		cfg, err := config.Parse([]byte(yaml))
		if err != nil {
			b.Fatal(err)
		}
		e, err := New(context.Background(), cfg, db, Options{Registerer: prometheus.NewRegistry()})
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
		e.fetcher.close()
	}
}
