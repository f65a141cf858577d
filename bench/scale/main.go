// Command scale measures how dynamo's cost grows with the number of
// resources: it runs the real binary against a loopback origin with 1,000 to
// 1,000,000 generated resources and reports, per size, resident memory and
// bytes per resource, start-up time to ready (fresh, and again with every
// resource's poll state stored), disk bytes per stored version, and poll
// throughput and CPU per poll for polls that store a version and for polls
// that find the same bytes. Run it through bench/scale.sh, which builds the
// binary; results go to a JSON file and a PNG plot.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	bin := flag.String("dynamo", "", "path of the dynamo binary (required)")
	sizesFlag := flag.String("sizes", "1000,10000,100000,1000000", "numbers of resources, comma-separated")
	window := flag.Duration("window", 15*time.Second, "how long each poll-throughput window lasts")
	roundCap := flag.Duration("round-cap", 90*time.Second, "longest wait for a first round of polls (larger sizes are measured on the polls done by then)")
	out := flag.String("out", "bench/scale/results.json", "results file")
	plot := flag.String("plot", "bench/scale/scale.png", "plot file")
	workDir := flag.String("dir", "", "working directory (default: a temporary one, removed at the end)")
	flag.Parse()
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
	org, err := startOrigin()
	if err != nil {
		log.Fatal(err)
	}
	defer org.close()

	base, err := measure(*bin, filepath.Join(dir, "n0"), org, 0, *window, *roundCap)
	if err != nil {
		log.Fatalf("baseline: %v", err)
	}
	results := []result{base}
	for _, n := range sizes {
		r, err := measure(*bin, filepath.Join(dir, "n"+strconv.Itoa(n)), org, n, *window, *roundCap)
		if err != nil {
			log.Fatalf("%d resources: %v", n, err)
		}
		r.BytesPerIdleResource = float64(r.RSSReady-base.RSSReady) / float64(n)
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

// result is one size's figures.
type result struct {
	Resources            int     `json:"resources"`
	StartFresh           float64 `json:"start_fresh_seconds"`  // to /readyz, no poll state stored
	StartStored          float64 `json:"start_stored_seconds"` // to /readyz, every resource's state stored
	RSSReady             int64   `json:"rss_ready_bytes"`      // after start-up, before polling much
	RSSStored            int64   `json:"rss_after_restart_bytes"`
	BytesPerIdleResource float64 `json:"bytes_per_idle_resource"`
	Versions             int64   `json:"versions_stored"`
	DiskBytes            int64   `json:"disk_bytes"`
	DiskPerVersion       float64 `json:"disk_bytes_per_version"`
	ChangedPolls         float64 `json:"changed_polls_per_second"`
	ChangedCPU           float64 `json:"changed_cpu_us_per_poll"`
	SamePolls            float64 `json:"same_polls_per_second"`
	SameCPU              float64 `json:"same_cpu_us_per_poll"`
	FirstRoundComplete   bool    `json:"first_round_complete"`
}

func printResult(r result) {
	fmt.Printf("%9d resources: start %.2fs fresh / %.2fs stored; RSS %s (%.0f B/resource idle); %d versions, %.0f B/version on disk; changed %.0f polls/s (%.0f µs CPU/poll), same-bytes %.0f polls/s (%.0f µs CPU/poll)\n",
		r.Resources, r.StartFresh, r.StartStored, mib(r.RSSReady), r.BytesPerIdleResource, r.Versions, r.DiskPerVersion,
		r.ChangedPolls, r.ChangedCPU, r.SamePolls, r.SameCPU)
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

// measure runs one size: a fresh start, a first round of polls (each stores
// a version), a restart with the stored state, a window of same-bytes polls.
func measure(bin, dir string, org *origin, n int, window, roundCap time.Duration) (result, error) {
	r := result{Resources: n}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return r, err
	}
	cfg := filepath.Join(dir, "dynamo.yaml")
	if err := writeConfig(cfg, filepath.Join(dir, "data"), org.base, n); err != nil {
		return r, err
	}
	org.reset()
	p, err := start(bin, cfg, dir)
	if err != nil {
		return r, err
	}
	r.StartFresh = p.ready.Seconds()
	r.RSSReady = p.rss()
	if n > 0 {
		// First round: every poll stores a first version.
		c0, t0 := org.hits.Load(), time.Now()
		cpu0 := p.cpu()
		deadline := t0.Add(roundCap)
		for org.hits.Load() < int64(n) && time.Now().Before(deadline) {
			time.Sleep(200 * time.Millisecond)
		}
		// The throughput is measured where the scheduler is saturated:
		// the last window of the round, or all of it when short.
		polls := org.hits.Load() - c0
		el := time.Since(t0)
		r.ChangedPolls = float64(polls) / el.Seconds()
		if polls > 0 {
			r.ChangedCPU = (p.cpu() - cpu0).Seconds() * 1e6 / float64(polls)
		}
		r.FirstRoundComplete = org.hits.Load() >= int64(n)
	}
	if err := p.stop(); err != nil {
		return r, err
	}
	r.Versions = min(org.hits.Load(), int64(n))
	r.DiskBytes = du(filepath.Join(dir, "data"))
	if r.Versions > 0 {
		r.DiskPerVersion = float64(r.DiskBytes) / float64(r.Versions)
	}
	// Restart: every polled resource has its state stored.
	p, err = start(bin, cfg, dir)
	if err != nil {
		return r, err
	}
	r.StartStored = p.ready.Seconds()
	r.RSSStored = p.rss()
	if n > 0 {
		// Overdue resources are polled within the first minute; the origin
		// answers the same bytes, so each poll ends at the body hash.
		time.Sleep(2 * time.Second)
		c0, cpu0, t0 := org.hits.Load(), p.cpu(), time.Now()
		time.Sleep(window)
		polls := org.hits.Load() - c0
		r.SamePolls = float64(polls) / time.Since(t0).Seconds()
		if polls > 0 {
			r.SameCPU = (p.cpu() - cpu0).Seconds() * 1e6 / float64(polls)
		}
	}
	return r, p.stop()
}

// writeConfig writes a configuration of n resources on the origin, spread
// over loopback addresses so per-host politeness is off the critical path.
func writeConfig(path, data, originBase string, n int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	fmt.Fprintf(w, `listen: "127.0.0.1:0"
storage: {path: %q, sync_writes: false}
log: {level: warn}
poller:
  workers: 32
  per_host_interval: 0s
  robots: false
  allow_private: true
  policy: {kind: flat, interval: 2m}
resources:
`, data)
	for i := range n {
		fmt.Fprintf(w, "  - {id: r%d, url: \"%s/p/%d\"}\n", i, originBase, i)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return f.Close()
}

// proc is a running dynamo.
type proc struct {
	cmd   *exec.Cmd
	ready time.Duration
}

func start(bin, cfg, dir string) (*proc, error) {
	cmd := exec.Command(bin, "serve", "--config", cfg)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	errLog, err := os.Create(filepath.Join(dir, "dynamo.err"))
	if err != nil {
		return nil, err
	}
	cmd.Stderr = errLog
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	// "dynamo: listening on URL" tells the port; then /readyz says when
	// the store is open and the poller runs.
	sc := bufio.NewScanner(stdout)
	var base string
	for sc.Scan() {
		if u, ok := strings.CutPrefix(sc.Text(), "dynamo: listening on "); ok {
			base = u
			break
		}
	}
	go func() {
		for sc.Scan() {
		}
	}()
	if base == "" {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, errors.New("dynamo exited before listening; see dynamo.err")
	}
	for {
		resp, err := http.Get(base + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Since(t0) > 10*time.Minute {
			return nil, errors.New("not ready after 10 minutes")
		}
		time.Sleep(20 * time.Millisecond)
	}
	return &proc{cmd: cmd, ready: time.Since(t0)}, nil
}

func (p *proc) stop() error {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return fmt.Errorf("dynamo exited: %w", err)
		}
		return err
	case <-time.After(2 * time.Minute):
		_ = p.cmd.Process.Kill()
		return errors.New("dynamo did not stop within 2 minutes")
	}
}

// rss is the process's resident memory (VmRSS).
func (p *proc) rss() int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(rest)
			if kb, err := strconv.ParseInt(f[0], 10, 64); err == nil {
				return kb << 10
			}
		}
	}
	return 0
}

// cpu is the CPU time the process used so far (user + system).
func (p *proc) cpu() time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * time.Second / 100 // USER_HZ
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

// origin serves annotated pages /p/{i}: the same bytes for a page every
// time (no validators), so a second poll finds nothing new.
type origin struct {
	srv  *http.Server
	base string
	hits atomic.Int64
}

func startOrigin() (*origin, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	o := &origin{base: "http://" + ln.Addr().String()}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /p/{i}", func(w http.ResponseWriter, r *http.Request) {
		o.hits.Add(1)
		i := r.PathValue("i")
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, page, i, i, i, i, i, i, i, i)
	})
	o.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = o.srv.Serve(ln) }()
	return o, nil
}

func (o *origin) reset() { o.hits.Store(0) }

func (o *origin) close() { _ = o.srv.Shutdown(context.Background()) }

// page is a small annotated legacy page with three items.
const page = `<html><head><title>Page %s</title></head><body>
<!-- <channel:title> -->Page %s news<!-- </channel:title> -->
<table>
<tr><td><!-- <item:title index="1"> -->First story of page %s<!-- </item:title> --></td>
<td><!-- <item:description index="1"> -->The council met on Tuesday to discuss the harbour budget and the new school.<!-- </item:description> --></td>
<td><!-- <item:link index="1"> --><a href="/s/%s/1">more</a><!-- </item:link> --></td></tr>
<tr><td><!-- <item:title index="2"> -->Second story of page %s<!-- </item:title> --></td>
<td><!-- <item:description index="2"> -->Roadworks on the main street will last until the end of the month.<!-- </item:description> --></td>
<td><!-- <item:link index="2"> --><a href="/s/%s/2">more</a><!-- </item:link> --></td></tr>
<tr><td><!-- <item:title index="3"> -->Third story of page %s<!-- </item:title> --></td>
<td><!-- <item:description index="3"> -->The library opens on Sundays from next week.<!-- </item:description> --></td>
<td><!-- <item:link index="3"> --><a href="/s/%s/3">more</a><!-- </item:link> --></td></tr>
</table></body></html>`
