// Command scale measures how dynamo's cost grows with the number of
// resources: it runs the real binary against a loopback origin, registers
// 1,000 to 1,000,000 generated resources through the admin API, and
// reports, per size, the registration rate, resident memory and bytes per
// resource, start-up time to ready with every resource registered (and
// again once each has its poll state stored), disk bytes per stored
// version, and poll throughput and CPU per poll for polls that store a
// version and for polls that find the same bytes. Run it through
// bench/scale.sh, which builds the binary; results go to a JSON file and a
// PNG plot.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"log"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/dynamo-rss/dynamo/bench/internal/node"
	"github.com/dynamo-rss/dynamo/bench/internal/origin"
)

func main() {
	bin := flag.String("dynamo", "", "path of the dynamo binary (required)")
	sizesFlag := flag.String("sizes", "1000,10000,100000,1000000", "numbers of resources, comma-separated")
	window := flag.Duration("window", 15*time.Second, "how long the same-bytes poll window lasts")
	roundCap := flag.Duration("round-cap", 3*time.Minute, "longest wait for the first round of polls after registering (larger sizes are measured on the polls done by then)")
	clients := flag.Int("clients", 16, "concurrent registration clients")
	out := flag.String("out", "bench/scale/results.json", "results file")
	plot := flag.String("plot", "bench/scale/scale.png", "plot file")
	profiles := flag.String("profiles", "", "directory to keep a heap profile of each size in, taken after the restart (default: none)")
	workDir := flag.String("dir", "", "working directory (default: a temporary one, removed at the end)")
	replot := flag.Bool("replot", false, "only draw the plot again from the results file (--out)")
	flag.Parse()
	if *replot {
		if err := replotFrom(*out, *plot); err != nil {
			log.Fatal(err)
		}
		return
	}
	if *bin == "" {
		log.Fatal("--dynamo is required")
	}
	var sizes []int
	for f := range strings.SplitSeq(*sizesFlag, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			log.Fatalf("bad size %q", f)
		}
		sizes = append(sizes, n)
	}
	dir := *workDir
	if dir == "" {
		d, err := os.MkdirTemp("", "dynamo-scale-")
		if err != nil {
			log.Fatal(err)
		}
		defer os.RemoveAll(d)
		dir = d
	}
	org, err := origin.Start()
	if err != nil {
		log.Fatal(err)
	}
	defer org.Close()

	m := measurer{bin: *bin, org: org, window: *window, roundCap: *roundCap, clients: *clients, profiles: *profiles}
	base, err := m.run(filepath.Join(dir, "n0"), 0)
	if err != nil {
		log.Fatalf("baseline: %v", err)
	}
	fmt.Printf("baseline (no resource): RSS %s after restart\n", mib(base.RSSStored))
	results := []result{base}
	for _, n := range sizes {
		r, err := m.run(filepath.Join(dir, "n"+strconv.Itoa(n)), n)
		if err != nil {
			log.Fatalf("%d resources: %v", n, err)
		}
		r.BytesPerIdleResource = float64(r.RSSStored-base.RSSStored) / float64(n)
		if r.HeapLive > 0 && base.HeapLive > 0 { // -1: the metric was missing
			r.LivePerResource = float64(r.HeapLive-base.HeapLive) / float64(n)
		}
		results = append(results, r)
		_ = os.RemoveAll(filepath.Join(dir, "n"+strconv.Itoa(n)))
		printResult(r)
	}
	b, _ := json.MarshalIndent(results, "", "  ")
	if err := os.WriteFile(*out, append(b, '\n'), 0o644); err != nil {
		log.Fatal(err)
	}
	if err := plotResults(*plot, results[1:]); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("results in %s, plot in %s\n", *out, *plot)
}

// replotFrom draws the plot of a results file written before (its first
// entry is the baseline, as main writes it).
func replotFrom(results, plot string) error {
	b, err := os.ReadFile(results)
	if err != nil {
		return err
	}
	var rs []result
	if err := json.Unmarshal(b, &rs); err != nil {
		return fmt.Errorf("%s: %w", results, err)
	}
	if len(rs) < 2 {
		return fmt.Errorf("%s: no size measured", results)
	}
	return plotResults(plot, rs[1:])
}

// result is one size's figures.
type result struct {
	Resources            int     `json:"resources"`
	RegistrationsPerSec  float64 `json:"registrations_per_second"`
	StartStored          float64 `json:"start_seconds"`               // to /readyz, every resource registered and polled once
	RSSStored            int64   `json:"rss_after_start_bytes"`       // right after that start, before polls fall due
	BytesPerIdleResource float64 `json:"bytes_per_idle_resource"`     // (RSS − RSS with no resource) ÷ resources
	RSSAnon              int64   `json:"rss_anon_after_start_bytes"`  // of RSSStored: anonymous memory
	RSSFile              int64   `json:"rss_file_after_start_bytes"`  // of RSSStored: mapped files
	HeapLive             int64   `json:"heap_live_after_start_bytes"` // what a GC kept, once the start-up's compactions settled
	HeapLiveAtReady      int64   `json:"heap_live_at_ready_bytes"`    // what a GC kept right at ready
	LivePerResource      float64 `json:"heap_live_per_resource"`      // (live heap − live heap with no resource) ÷ resources
	PollsDuringMemory    int64   `json:"polls_while_memory_read"`     // polls between ready and the heap read (0: idle resources)
	RSSPolled            int64   `json:"rss_after_first_round_bytes"`
	Versions             int64   `json:"versions_stored"`
	DiskBytes            int64   `json:"disk_bytes"`
	DiskPerVersion       float64 `json:"disk_bytes_per_version"`
	ChangedPolls         float64 `json:"changed_polls_per_second"`
	ChangedCPU           float64 `json:"changed_cpu_us_per_poll"`
	SamePolls            float64 `json:"same_polls_per_second"`
	SameCPU              float64 `json:"same_cpu_us_per_poll"`
	FirstRoundComplete   bool    `json:"first_round_complete"`
	Max20P99             float64 `json:"max20_p99_ms"`
	KeywordP99           float64 `json:"keyword_p99_ms"`
}

func printResult(r result) {
	fmt.Printf("%9d resources: %.0f registrations/s; start %.2fs; RSS %s (%.0f B/resource idle; anon %s, files %s, live Go heap %s, %.0f B/resource, %s at ready; %d polls meanwhile), %s after a first round; %d versions, %.0f B/version on disk; changed %.0f polls/s (%.0f µs CPU/poll), same-bytes %.0f polls/s (%.0f µs CPU/poll); max=20 p99 %.2f ms, keyword p99 %.2f ms\n",
		r.Resources, r.RegistrationsPerSec, r.StartStored, mib(r.RSSStored), r.BytesPerIdleResource, mib(r.RSSAnon), mib(r.RSSFile), mib(r.HeapLive), r.LivePerResource, mib(r.HeapLiveAtReady), r.PollsDuringMemory, mib(r.RSSPolled), r.Versions, r.DiskPerVersion,
		r.ChangedPolls, r.ChangedCPU, r.SamePolls, r.SameCPU, r.Max20P99, r.KeywordP99)
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

const token = "scale-token"

type measurer struct {
	bin              string
	org              *origin.Origin
	window, roundCap time.Duration
	clients          int
	profiles         string
}

// run measures one size: register n resources (each is polled at once and
// stores a first version), restart with everything stored, then a window
// of polls that find the same bytes.
func (m measurer) run(dir string, n int) (result, error) {
	r := result{Resources: n}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return r, err
	}
	cfg := filepath.Join(dir, "dynamo.yaml")
	if err := writeConfig(cfg, filepath.Join(dir, "data")); err != nil {
		return r, err
	}
	m.org.Reset()
	p, err := node.Start(m.bin, cfg, dir, "first", 10*time.Minute)
	if err != nil {
		return r, err
	}
	if n > 0 {
		c0, cpu0, t0 := m.org.Hits.Load(), p.CPU(), time.Now()
		every := interval(n).String()
		body := func(i int) string {
			return fmt.Sprintf(`{"url": "%s/p/%d", "policy": {"kind": "flat", "interval": %q}}`, m.org.HostURL(i), i, every)
		}
		if err := p.RegisterAll(n, m.clients, token, body); err != nil {
			p.Kill()
			return r, err
		}
		r.RegistrationsPerSec = float64(n) / time.Since(t0).Seconds()
		deadline := time.Now().Add(m.roundCap)
		for m.org.Hits.Load() < int64(n) && time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
		}
		polls := m.org.Hits.Load() - c0
		r.ChangedPolls = float64(polls) / time.Since(t0).Seconds()
		if polls > 0 {
			r.ChangedCPU = (p.CPU() - cpu0).Seconds() * 1e6 / float64(polls) // registration included
		}
		r.FirstRoundComplete = m.org.Hits.Load() >= int64(n)
		r.RSSPolled = p.RSS()
	}
	if err := p.Stop(); err != nil {
		return r, err
	}
	r.Versions = min(m.org.Hits.Load(), int64(n))
	r.DiskBytes = du(filepath.Join(dir, "data"))
	if r.Versions > 0 {
		r.DiskPerVersion = float64(r.DiskBytes) / float64(r.Versions)
	}
	// Restart: every resource is registered and has its state stored.
	p, err = node.Start(m.bin, cfg, dir, "second", 10*time.Minute)
	if err != nil {
		return r, err
	}
	r.StartStored = p.Ready.Seconds()
	hits := m.org.Hits.Load()
	r.RSSStored, r.RSSAnon, r.RSSFile = p.RSS(), p.RSSAnon(), p.RSSFile()
	// A heap profile with gc=1 collects first: the live heap read after it
	// is what the resources hold, not what the start-up left to collect.
	// The start-up also leaves Badger compacting what the first run wrote,
	// and its table builders' buffers (tens of MiB) are live while it
	// does: the idle heap is the lowest of a few reads 3 s apart, until two
	// agree within 1 % (at most 15 s; the first polls fall due later).
	var prof []byte
	for i := range 6 {
		if i > 0 {
			time.Sleep(3 * time.Second)
		}
		code, b, err := p.Do(context.Background(), http.MethodGet, "/admin/debug/pprof/heap?gc=1", token, "")
		if err != nil || code != http.StatusOK {
			p.Kill()
			return r, fmt.Errorf("heap profile: status %d, %v", code, err)
		}
		live := int64(p.Metric("go_gc_heap_live_bytes"))
		if i == 0 {
			r.HeapLiveAtReady = live
		}
		prev := r.HeapLive
		if i == 0 || live < r.HeapLive {
			r.HeapLive, prof = live, b
		}
		if i > 0 && math.Abs(float64(live-prev)) <= 0.01*float64(prev) {
			break
		}
	}
	if m.profiles != "" {
		if err := os.WriteFile(filepath.Join(m.profiles, fmt.Sprintf("heap-%d.pb.gz", n)), prof, 0o644); err != nil {
			p.Kill()
			return r, err
		}
	}
	r.PollsDuringMemory = m.org.Hits.Load() - hits
	if n > 0 {
		r.Max20P99 = p99(p, "/resources/r1?max=20", 200)
		r.KeywordP99 = p99(p, "/resources/r1?max=20&title=story", 200)
		// Polls fall due one interval after the first ones; the origin
		// answers the same bytes, so each poll ends at the body hash. The
		// window opens once they have started.
		start := m.org.Hits.Load()
		for wait := time.Now().Add(interval(n) + time.Minute); m.org.Hits.Load()-start < int64(min(n/20, 200)) && time.Now().Before(wait); {
			time.Sleep(100 * time.Millisecond)
		}
		c0, cpu0, t0 := m.org.Hits.Load(), p.CPU(), time.Now()
		time.Sleep(m.window)
		polls := m.org.Hits.Load() - c0
		r.SamePolls = float64(polls) / time.Since(t0).Seconds()
		if polls > 0 {
			r.SameCPU = (p.CPU() - cpu0).Seconds() * 1e6 / float64(polls)
		}
	}
	return r, p.Stop()
}

// interval is the flat poll interval of n resources. It is long enough
// that none falls due before the restart's memory and latencies are read
// (registering takes ≈ 1 ms a resource at 100,000 and ≈ 1.7 ms at
// 1,000,000, each registration polls at once, and the restart takes
// ≈ 30–55 µs a resource), so what is measured there is idle resources;
// and no longer than that, since the same-bytes window waits for it.
func interval(n int) time.Duration {
	return max(2*time.Minute, time.Duration(n)*2*time.Millisecond).Round(time.Second)
}

// p99 requests path k times and returns the 99th percentile in ms.
func p99(p *node.Proc, path string, k int) float64 {
	ds := make([]time.Duration, 0, k)
	for range k {
		t0 := time.Now()
		code, _, err := p.Do(context.Background(), http.MethodGet, path, "", "")
		if err != nil || code != http.StatusOK {
			return -1
		}
		ds = append(ds, time.Since(t0))
	}
	slices.Sort(ds)
	return float64(ds[len(ds)*99/100]) / 1e6
}

// writeConfig writes the configuration: resources come from the admin API.
func writeConfig(path, data string) error {
	return os.WriteFile(path, fmt.Appendf(nil, `listen: "127.0.0.1:0"
storage: {path: %q, sync_writes: false}
admin: {token: %q}
log: {level: warn}
poller:
  workers: 32
  per_host_interval: 0s
  robots: false
  allow_private: true
`, data, token), 0o600)
}

func du(dir string) int64 {
	var total int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if info, err := d.Info(); err == nil {
				if st, ok := info.Sys().(*syscall.Stat_t); ok {
					total += st.Blocks * 512
				} else {
					total += info.Size()
				}
			}
		}
		return nil
	})
	return total
}
