package poller

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/dynamo-rss/dynamo/config"
	"github.com/dynamo-rss/dynamo/storage/badger"
)

const benchResources = 2000

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchPolls runs rounds of 2,000 due resources through Run (8 workers,
// politeness and robots off) against a loopback origin, on real Badger
// (poll state written after every poll, versions on change), and
// reports sustained polls/s and CPU per poll (the whole process: origin,
// client, extractor, storage).
// What the origin answers in a benchmark of polls.
type benchOrigin int

const (
	originChanging    benchOrigin = iota // a new story on every fetch
	originNotModified                    // ETag, then 304s
	originSame200                        // 200 with the same bytes, no validators
	originNoisy200                       // 200 whose bytes differ (a counter in a comment) but whose content does not
)

func benchPolls(b *testing.B, mode benchOrigin, noSync bool) {
	var n atomic.Int64
	body := page("Bench", "one", "two", "three", "four", "five")
	changing := mode == originChanging
	origin := ""
	if mode == originSame200 || mode == originNoisy200 {
		// Out of process, so that CPU per poll is dynamo's alone (an
		// origin is another machine); it serves realisticPage(20), since
		// what a 200 without validators costs depends on the page.
		origin = startOriginProcess(b, mode)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		switch mode {
		case originChanging:
			fmt.Fprint(w, page("Bench", fmt.Sprintf("story %d", n.Add(1)), "two", "three", "four", "five"))
			return
		}
		w.Header().Set("ETag", `"same"`)
		if r.Header.Get("If-None-Match") == `"same"` {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		fmt.Fprint(w, body)
	}))
	defer srv.Close()
	if origin == "" {
		origin = srv.URL
	}
	db, err := badger.Open(b.TempDir(), badger.Options{NoSyncWrites: noSync})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close() //nolint:errcheck // benchmark teardown
	var sb strings.Builder
	sb.WriteString("resources:\n")
	for i := range benchResources {
		fmt.Fprintf(&sb, "  - {id: r%d, url: \"%s/p%d\", policy: {kind: flat, interval: 1h}}\n", i, origin, i)
	}
	cfg, err := config.Parse([]byte(strings.Replace(baseYAML(sb.String()), "workers: 2", "workers: "+benchWorkers(), 1)))
	if err != nil {
		b.Fatal(err)
	}
	clk := newFakeClock(t0)
	e, err := New(context.Background(), cfg, db, Options{Clock: clk})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close() //nolint:errcheck // test cleanup
	var done atomic.Int64
	target := make(chan struct{}, 1)
	var want atomic.Int64
	e.afterPoll = func(s Status) {
		if done.Add(1) == want.Load() {
			target <- struct{}{}
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	runDone := make(chan error, 1)
	go func() { runDone <- e.Run(ctx) }()
	defer func() { cancel(); <-runDone }()

	round := func() {
		want.Add(benchResources)
		clk.Advance(2 * time.Hour) // every resource is due
		e.poke()
		<-target
	}
	if !changing {
		round() // warm-up: the first 200s set the validators
	}
	b.ResetTimer()
	start, cpu0 := time.Now(), cpuTime()
	polls := 0
	for b.Loop() {
		round()
		polls += benchResources
	}
	wall, cpu := time.Since(start), cpuTime()-cpu0
	b.ReportMetric(float64(polls)/wall.Seconds(), "polls/s")
	b.ReportMetric(float64(cpu.Microseconds())/float64(polls), "cpu-µs/poll")
	b.ReportMetric(0, "ns/op")
	outcome := map[benchOrigin]string{originChanging: OutcomeChanged, originNotModified: OutcomeNotModified,
		originSame200: OutcomeUnchanged, originNoisy200: OutcomeUnchanged}[mode]
	for _, s := range e.Statuses()[:10] {
		if s.LastOutcome != outcome {
			b.Fatalf("%s: outcome %q (%s), want %q", s.ID, s.LastOutcome, s.LastError, outcome)
		}
	}
}

func BenchmarkPollChanged(b *testing.B)     { benchPolls(b, originChanging, false) }
func BenchmarkPollNotModified(b *testing.B) { benchPolls(b, originNotModified, false) }

// Unchanged 200s: the same bytes (hash match: no extraction, no storage)
// beside bytes that differ but say the same (the full path: extraction and
// a save that finds the content unchanged), in one run.
func BenchmarkPollSame200(b *testing.B)  { benchPolls(b, originSame200, false) }
func BenchmarkPollNoisy200(b *testing.B) { benchPolls(b, originNoisy200, false) }

// The same with Badger's per-commit sync off (badger.Options.NoSyncWrites).
func BenchmarkPollChangedNoSync(b *testing.B)     { benchPolls(b, originChanging, true) }
func BenchmarkPollNotModifiedNoSync(b *testing.B) { benchPolls(b, originNotModified, true) }

// BenchmarkQueue1M: one op = a Pop of the earliest and a Push of it later
// (what the scheduler does per poll), with 1,000,000 scheduled resources.
func BenchmarkQueue1M(b *testing.B) { benchQueue(b, 1_000_000) }

// BenchmarkQueue1K is the same with 1,000 resources (all in cache), for comparison.
func BenchmarkQueue1K(b *testing.B) { benchQueue(b, 1_000) }

func benchQueue(b *testing.B, n int) {
	var q Queue
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range n {
		q.Push(fmt.Sprintf("resource-%07d", i), t0.Add(time.Duration(rng.Int64N(int64(24*time.Hour)))))
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu0, ops := cpuTime(), 0
	for b.Loop() {
		id, at, _ := q.Pop()
		q.Push(id, at.Add(time.Duration(rng.Int64N(int64(24*time.Hour)))))
		ops++
	}
	// CPU time consumed, unlike ns/op, does not count waiting for a core
	// on a shared machine.
	b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(ops), "cpu-ns/op")
	if q.Len() != n {
		b.Fatal(q.Len())
	}
}

// BenchmarkQueueUpdate1M: rescheduling an arbitrary queued resource (reload,
// PollNow) with 1,000,000 scheduled.
func BenchmarkQueueUpdate1M(b *testing.B) {
	const n = 1_000_000
	var q Queue
	rng := rand.New(rand.NewPCG(7, 8))
	ids := make([]string, n)
	for i := range n {
		ids[i] = fmt.Sprintf("resource-%07d", i)
		q.Push(ids[i], t0.Add(time.Duration(rng.Int64N(int64(24*time.Hour)))))
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu0, ops := cpuTime(), 0
	for b.Loop() {
		q.Update(ids[rng.IntN(n)], t0.Add(time.Duration(rng.Int64N(int64(24*time.Hour)))))
		ops++
	}
	b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(ops), "cpu-ns/op")
}

// benchWorkers is poller.workers for the poll benchmarks: 8, or
// $DYNAMO_BENCH_WORKERS.
func benchWorkers() string {
	if w := os.Getenv("DYNAMO_BENCH_WORKERS"); w != "" {
		return w
	}
	return "8"
}

// realisticPage is a news page of n items with a date, a link and a
// description with markup each, about 1 KB of HTML per item.
func realisticPage(n int) string {
	var b strings.Builder
	b.WriteString(`<html><head><title>Town news</title></head><body><table><tr><td>
<h1><!-- <channel:title> -->Town news<!-- </channel:title> --></h1>
<p><!-- <channel:description> -->What the council did this week<!-- </channel:description> --></p></td></tr>
`)
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, `<tr><td class="news"><b><!-- <item:title index="%d"> -->Story %d: the council approves the budget<!-- </item:title> --></b><br>
<span class="date"><!-- <item:extension index="%d" uri="http://purl.org/dc/elements/1.1/" prefix="dc" localName="date"> -->2026-11-%02dT10:%02d:00Z<!-- </item:extension> --></span>
<!-- <item:link index="%d"> --><a href="/news/%d.html"><!-- </item:link> -->read</a>
<!-- <item:description index="%d"> -->The council met on <i>Tuesday</i> and approved the <a href="/budget/%d">budget</a> for next year,
after a long debate about roads, schools&nbsp;and the library, which the mayor called "overdue". <img src="/img/p%d.jpg" alt="photo"> More at eleven.<!-- </item:description> -->
</td><td><a href="/ads/%d"><img src="/ads/%d.gif" width="120" height="60"></a></td></tr>
`, i, i, i, i%28+1, i%60, i, i, i, i, i, i, i)
	}
	b.WriteString("</table></body></html>\n")
	return b.String()
}

// originProcessEnv makes the test binary serve as a benchmark origin (see
// startOriginProcess); its value is the benchOrigin to serve.
const originProcessEnv = "DYNAMO_BENCH_ORIGIN_PROCESS"

// startOriginProcess runs this test binary as an origin serving mode
// (same or noisy 200s of realisticPage(20)) and returns its base URL; the
// process ends with the benchmark.
func startOriginProcess(b *testing.B, mode benchOrigin) string {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d", originProcessEnv, mode))
	stdin, err := cmd.StdinPipe() // closed at the end: the origin exits
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = stdin.Close(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		b.Fatalf("origin process: %v", err)
	}
	return strings.TrimSpace(line)
}

// serveOriginProcess is the origin process: it prints its base URL, serves
// until its stdin closes, then exits.
func serveOriginProcess(mode string) {
	body := realisticPage(20)
	var n atomic.Int64
	noisy := mode == fmt.Sprint(int(originNoisy200))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if noisy {
			fmt.Fprintf(w, "%s<!-- served %d -->\n", body, n.Add(1))
			return
		}
		fmt.Fprint(w, body)
	})}
	go func() { _, _ = io.Copy(io.Discard, os.Stdin); _ = srv.Close() }()
	fmt.Printf("http://%s\n", ln.Addr())
	_ = srv.Serve(ln)
}
