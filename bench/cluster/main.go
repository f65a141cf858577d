// Command cluster measures dynamo on PostgreSQL beside Badger, and several
// nodes sharing one database: polls per second with one node and with
// three, the time the survivors take to poll the pages of a node killed
// with SIGKILL, and cached-feed requests per second from a PostgreSQL node
// and from a Badger node in the same run. bench/cluster.sh starts a
// throwaway PostgreSQL and runs it.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dynamo-rss/dynamo/bench/internal/node"
	"github.com/dynamo-rss/dynamo/bench/internal/origin"
)

const token = "cluster-bench-token"

func main() {
	bin := flag.String("dynamo", "", "path of the dynamo binary (required)")
	dsn := flag.String("dsn", "", "PostgreSQL DSN of an empty database (required)")
	n := flag.Int("resources", 2000, "resources registered")
	window := flag.Duration("window", 15*time.Second, "length of each throughput window")
	flag.Parse()
	if *bin == "" || *dsn == "" {
		log.Fatal("--dynamo and --dsn are required")
	}
	dir, err := os.MkdirTemp("", "dynamo-cluster-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	org, err := origin.Start()
	if err != nil {
		log.Fatal(err)
	}
	defer org.Close()
	b := bench{bin: *bin, dsn: *dsn, dir: dir, org: org, n: *n, window: *window}
	if err := b.run(); err != nil {
		log.Fatal(err)
	}
}

type bench struct {
	bin, dsn, dir string
	org           *origin.Origin
	n             int
	window        time.Duration
}

// config writes a node's configuration: every resource flat every 2 s,
// so the nodes are saturated and polls/s measures their capacity.
func (b bench) config(name, storage string) (string, error) {
	path := filepath.Join(b.dir, name+".yaml")
	return path, os.WriteFile(path, fmt.Appendf(nil, `listen: "127.0.0.1:0"
public_url: "http://feeds.bench"
node_id: %s
storage: %s
admin: {token: %q}
log: {level: warn}
poller:
  workers: 32
  timeout: 5s
  per_host_interval: 0s
  robots: false
  allow_private: true
  user_agent: "dynamo-bench (%s)"
`, name, storage, token, name), 0o600)
}

func (b bench) start(name, storage string) (*node.Proc, error) {
	cfg, err := b.config(name, storage)
	if err != nil {
		return nil, err
	}
	return node.Start(b.bin, cfg, b.dir, name, 2*time.Minute)
}

func (b bench) body(i int) string {
	return fmt.Sprintf(`{"url": "%s/p/%d", "policy": {"kind": "flat", "interval": "2s"}}`, b.org.HostURL(i), i)
}

// rate counts origin requests over the window.
func (b bench) rate() float64 {
	c0, t0 := b.org.Hits.Load(), time.Now()
	time.Sleep(b.window)
	return float64(b.org.Hits.Load()-c0) / time.Since(t0).Seconds()
}

func (b bench) run() error {
	pg := fmt.Sprintf("{driver: postgres, dsn: %q, path: %q}", b.dsn, filepath.Join(b.dir, "data"))

	// One node registers everything, polls it, and gives its polls/s.
	n1, err := b.start("n1", pg)
	if err != nil {
		return err
	}
	if err := n1.RegisterAll(b.n, 16, token, b.body); err != nil {
		return err
	}
	for b.org.Hits.Load() < int64(b.n) {
		time.Sleep(100 * time.Millisecond)
	}
	one := b.rate()
	fmt.Printf("postgres, 1 node, %d resources due every 2 s: %.0f polls/s\n", b.n, one)

	// Three nodes on the same database.
	n2, err := b.start("n2", pg)
	if err != nil {
		return err
	}
	n3, err := b.start("n3", pg)
	if err != nil {
		return err
	}
	time.Sleep(3 * time.Second) // the new nodes read the registry and the states
	three := b.rate()
	fmt.Printf("postgres, 3 nodes: %.0f polls/s (%.2f× one node)\n", three, three/one)

	// Cached feed requests per second from the PostgreSQL node.
	pgRate, pgP99 := load(n1.Base+"/resources/r1?max=20", 64, b.window/3)

	// Takeover: kill n2 mid-run; how long until each page it polled last
	// is polled by another node.
	killed := time.Now()
	n2.Kill()
	time.Sleep(30 * time.Second)
	delays := takeover(b.org.Requests(), "(n2)", killed)
	slices.Sort(delays)
	if len(delays) > 0 {
		fmt.Printf("takeover after SIGKILL (lease = 2 × 5 s timeout): %d pages, median %.1f s, max %.1f s\n",
			len(delays), delays[len(delays)/2].Seconds(), delays[len(delays)-1].Seconds())
	}
	for _, p := range []*node.Proc{n1, n3} {
		if err := p.Stop(); err != nil {
			return err
		}
	}

	// The same cached feed from a Badger node, in the same run.
	bd, err := b.start("badger", fmt.Sprintf("{driver: badger, path: %q}", filepath.Join(b.dir, "badger")))
	if err != nil {
		return err
	}
	if err := bd.RegisterAll(10, 4, token, b.body); err != nil {
		return err
	}
	for {
		code, _, _ := bd.Do(context.Background(), http.MethodGet, "/resources/r1?max=20", "", "")
		if code == http.StatusOK {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	bdRate, bdP99 := load(bd.Base+"/resources/r1?max=20", 64, b.window/3)
	fmt.Printf("cached feed, 64 connections: postgres %.0f req/s (p99 %.1f ms), badger %.0f req/s (p99 %.1f ms): postgres %.2f× badger\n",
		pgRate, pgP99, bdRate, bdP99, pgRate/bdRate)
	return bd.Stop()
}

// takeover returns, for each page whose last poll before killed was by
// the node whose User-Agent contains victim, the delay after killed of its
// next poll (by a survivor).
func takeover(log []origin.Request, victim string, killed time.Time) []time.Duration {
	lastBy := map[int]string{}
	next := map[int]time.Time{}
	for _, r := range log {
		switch {
		case r.At.Before(killed):
			lastBy[r.Page] = r.Agent
		case next[r.Page].IsZero() && !strings.Contains(r.Agent, victim):
			next[r.Page] = r.At
		}
	}
	var out []time.Duration
	for p, agent := range lastBy {
		if strings.Contains(agent, victim) && !next[p].IsZero() {
			out = append(out, next[p].Sub(killed))
		}
	}
	return out
}

// load runs conc clients requesting url for d and returns requests per
// second and the p99 latency in ms.
func load(url string, conc int, d time.Duration) (float64, float64) {
	var count atomic.Int64
	var mu sync.Mutex
	var lat []time.Duration
	stop := time.Now().Add(d)
	var wg sync.WaitGroup
	tr := &http.Transport{MaxIdleConnsPerHost: conc}
	c := &http.Client{Transport: tr}
	for range conc {
		wg.Go(func() {
			var mine []time.Duration
			for time.Now().Before(stop) {
				t0 := time.Now()
				resp, err := c.Get(url)
				if err != nil {
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
				mine = append(mine, time.Since(t0))
				count.Add(1)
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		})
	}
	wg.Wait()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	p99 := 0.0
	if len(lat) > 0 {
		p99 = float64(lat[len(lat)*99/100]) / 1e6
	}
	return float64(count.Load()) / d.Seconds(), p99
}
