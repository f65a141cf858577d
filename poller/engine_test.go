package poller

import (
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dynamo-rss/dynamo/config"
	"github.com/dynamo-rss/dynamo/storage"
	"github.com/dynamo-rss/dynamo/storage/badger"
)

func TestVersionsStoredOnlyOnChange(t *testing.T) {
	o := newOrigin(t)
	clk := newFakeClock(t0)
	ms := newMemStore()
	cfg := testConfig(t, baseYAML(fmt.Sprintf("resources:\n  - {id: news, url: %q, retention: {max_versions: 10}}\n", o.url("/news.html"))))
	e := newTestEngine(t, cfg, ms, clk)

	steps := []struct {
		body    string
		outcome string
		want    int // versions stored after the poll
	}{
		{page("Site", "first"), OutcomeChanged, 1},
		{page("Site", "first"), OutcomeUnchanged, 1},
		{page("Site", "second", "first"), OutcomeChanged, 2},
		{page("Site", "second", "first"), OutcomeUnchanged, 2},
		{"<html><body>no annotations</body></html>", OutcomeNotAnnotated, 2},
	}
	for i, s := range steps {
		o.set(s.body)
		st := pollAtNext(t, e, clk, "news")
		if st.LastOutcome != s.outcome {
			t.Fatalf("poll %d: outcome %q (%s), want %q", i+1, st.LastOutcome, st.LastError, s.outcome)
		}
		if v, _ := ms.count("news"); v != s.want {
			t.Fatalf("poll %d: %d versions stored, want %d", i+1, v, s.want)
		}
		if st.Polls != int64(i+1) {
			t.Fatalf("poll %d: Polls = %d", i+1, st.Polls)
		}
	}
	st, _ := e.Status("news")
	if st.Changes != 2 {
		t.Errorf("Changes = %d, want 2", st.Changes)
	}
	if len(ms.prunes) != 2 || ms.prunes[0].MaxVersions != 10 {
		t.Errorf("prunes after changed saves = %+v, want 2 with max_versions 10", ms.prunes)
	}
}

func TestNotModified(t *testing.T) {
	o := newOrigin(t)
	o.setETag(`"v1"`)
	clk := newFakeClock(t0)
	ms := newMemStore()
	cfg := testConfig(t, baseYAML(fmt.Sprintf("resources:\n  - {id: news, url: %q}\n", o.url("/news.html"))))
	e := newTestEngine(t, cfg, ms, clk)

	if st := pollAtNext(t, e, clk, "news"); st.LastOutcome != OutcomeChanged {
		t.Fatalf("first poll: %q %s", st.LastOutcome, st.LastError)
	}
	_, saves := ms.count("news")
	st := pollAtNext(t, e, clk, "news")
	if st.LastOutcome != OutcomeNotModified {
		t.Fatalf("second poll: %q %s, want not-modified", st.LastOutcome, st.LastError)
	}
	if _, s := ms.count("news"); s != saves {
		t.Errorf("a 304 called Save (%d → %d)", saves, s)
	}
	// A new ETag: a full fetch again.
	o.setETag(`"v2"`)
	o.set(page("Site", "new"))
	if st := pollAtNext(t, e, clk, "news"); st.LastOutcome != OutcomeChanged {
		t.Fatalf("third poll: %q %s", st.LastOutcome, st.LastError)
	}
}

func TestSmartBacksOffToMaxWhenUnchanged(t *testing.T) {
	o := newOrigin(t)
	clk := newFakeClock(t0)
	cfg := testConfig(t, baseYAML(fmt.Sprintf("resources:\n  - {id: news, url: %q}\n", o.url("/"))))
	e := newTestEngine(t, cfg, newMemStore(), clk)
	var st Status
	for i := range 12 {
		st = pollAtNext(t, e, clk, "news")
		if i > 0 && st.LastOutcome != OutcomeUnchanged {
			t.Fatalf("poll %d: %q", i, st.LastOutcome)
		}
	}
	if st.Interval != time.Hour {
		t.Fatalf("after hours unchanged, interval = %v, want max 1h", st.Interval)
	}
	if got := st.NextPoll.Sub(st.LastPoll); got != time.Hour {
		t.Fatalf("next poll in %v, want 1h", got)
	}
	if st.Tau != 10*time.Minute {
		t.Errorf("τ = %v: unchanged polls must not rewrite the estimate", st.Tau)
	}
}

func TestSmartComesDownWhenPageGrowsEveryMinute(t *testing.T) {
	o := newOrigin(t)
	clk := newFakeClock(t0)
	cfg := testConfig(t, baseYAML(fmt.Sprintf("resources:\n  - {id: news, url: %q}\n", o.url("/"))))
	e := newTestEngine(t, cfg, newMemStore(), clk)
	for range 12 { // quiet for hours: at max
		pollAtNext(t, e, clk, "news")
	}
	st, _ := e.Status("news")
	if st.Interval != time.Hour {
		t.Fatalf("setup: interval %v", st.Interval)
	}
	start := st.NextPoll.Add(-time.Hour)
	o.handle("/", func(w http.ResponseWriter, r *http.Request) {
		// Since an hour before the next poll, a story a minute; the page
		// shows the latest 20, so the first poll undercounts them.
		n := int(clk.Now().Sub(start) / time.Minute)
		items := []string{}
		for i := n; i >= max(n-19, 0); i-- {
			items = append(items, fmt.Sprintf("story %d", i))
		}
		fmt.Fprint(w, page("Site", items...))
	})
	var polls int
	for polls = 1; polls <= 10; polls++ {
		st := pollAtNext(t, e, clk, "news")
		t.Logf("poll %d: %s τ %v interval %v", polls, st.LastOutcome, st.Tau, st.Interval)
		if st.LastOutcome != OutcomeChanged {
			t.Fatalf("poll %d: %q", polls, st.LastOutcome)
		}
		if st.Interval <= 2*time.Minute {
			break
		}
	}
	if polls > 8 {
		t.Fatalf("interval still above 2m after %d polls", polls)
	}
	t.Logf("interval down to ≤ 2m after %d polls", polls)
}

// TestSmartSeesOnlyWhatThePageShows: a page whose single item is replaced at
// every request shows one update per poll, so τ settles at the polling
// interval (no ÷ shrink any more; see doc.go).
func TestSmartSeesOnlyWhatThePageShows(t *testing.T) {
	o := newOrigin(t)
	clk := newFakeClock(t0)
	cfg := testConfig(t, baseYAML(fmt.Sprintf("resources:\n  - {id: news, url: %q, policy: {initial: 20m}}\n", o.url("/"))))
	e := newTestEngine(t, cfg, newMemStore(), clk)
	var n atomic.Int64
	o.handle("/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, page("Site", fmt.Sprintf("story %d", n.Add(1))))
	})
	for range 5 {
		st := pollAtNext(t, e, clk, "news")
		if st.Tau != 20*time.Minute || st.Interval != 20*time.Minute {
			t.Fatalf("τ %v interval %v, want 20m", st.Tau, st.Interval)
		}
	}
}

func TestSmartUsesPublicationTimes(t *testing.T) {
	o := newOrigin(t)
	clk := newFakeClock(t0)
	cfg := testConfig(t, baseYAML(fmt.Sprintf("resources:\n  - {id: news, url: %q, policy: {alpha: 0}}\n", o.url("/"))))
	e := newTestEngine(t, cfg, newMemStore(), clk)
	// The page's items are dated 7 minutes apart, whatever our polling.
	pub := t0.Add(-time.Hour)
	for i := range 3 {
		pub = pub.Add(7 * time.Minute)
		o.set(datedPage("Site", fmt.Sprintf("story %d", i), pub))
		st := pollAtNext(t, e, clk, "news")
		if st.LastOutcome != OutcomeChanged {
			t.Fatalf("poll %d: %q %s", i, st.LastOutcome, st.LastError)
		}
	}
	st, _ := e.Status("news")
	if st.Tau != 7*time.Minute {
		t.Fatalf("τ = %v, want the publication interval 7m (α = 0)", st.Tau)
	}
}

func TestSlowOriginTimesOut(t *testing.T) {
	o := newOrigin(t)
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	o.handle("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	clk := newFakeClock(t0)
	ms := newMemStore()
	yaml := strings.Replace(baseYAML(fmt.Sprintf("resources:\n  - {id: slow, url: %q}\n", o.url("/slow"))), "timeout: 5s", "timeout: 150ms", 1)
	e := newTestEngine(t, testConfig(t, yaml), ms, clk)
	st := pollAtNext(t, e, clk, "slow")
	if st.LastOutcome != OutcomeError || !strings.Contains(st.LastError, "timeout") {
		t.Fatalf("outcome %q error %q, want error with timeout", st.LastOutcome, st.LastError)
	}
	if _, saves := ms.count("slow"); saves != 0 {
		t.Errorf("saves = %d", saves)
	}
}

func TestTooLargeBodyStoresNothing(t *testing.T) {
	o := newOrigin(t)
	big := strings.Repeat("x", 1<<20)
	for _, tc := range []struct{ name, path string }{{"chunked", "/big"}, {"content-length", "/big-cl"}} {
		t.Run(tc.name, func(t *testing.T) {
			o.handle(tc.path, func(w http.ResponseWriter, r *http.Request) {
				if tc.path == "/big-cl" {
					w.Header().Set("Content-Length", fmt.Sprint(20<<20))
				}
				fmt.Fprint(w, page("Big", "item"))
				for range 20 {
					if _, err := fmt.Fprint(w, big); err != nil {
						return
					}
				}
			})
			clk := newFakeClock(t0)
			ms := newMemStore()
			e := newTestEngine(t, testConfig(t, baseYAML(fmt.Sprintf("resources:\n  - {id: big, url: %q}\n", o.url(tc.path)))), ms, clk)
			st := pollAtNext(t, e, clk, "big")
			if st.LastOutcome != OutcomeError || !strings.Contains(st.LastError, "too large") {
				t.Fatalf("outcome %q error %q, want error: too large", st.LastOutcome, st.LastError)
			}
			if v, saves := ms.count("big"); v != 0 || saves != 0 {
				t.Errorf("stored %d versions (%d saves)", v, saves)
			}
		})
	}
}

func TestRedirectLoop(t *testing.T) {
	o := newOrigin(t)
	o.handle("/loop", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/loop", http.StatusFound)
	})
	clk := newFakeClock(t0)
	e := newTestEngine(t, testConfig(t, baseYAML(fmt.Sprintf("resources:\n  - {id: loop, url: %q}\n", o.url("/loop")))), newMemStore(), clk)
	st := pollAtNext(t, e, clk, "loop")
	if st.LastOutcome != OutcomeError || !strings.Contains(st.LastError, "too many redirects") {
		t.Fatalf("outcome %q error %q", st.LastOutcome, st.LastError)
	}
	if n := o.hit("/loop"); n != 6 { // the request and max_redirects (5) follow-ups
		t.Errorf("origin saw %d requests, want 6", n)
	}
}

// An error status after a redirect names the URL that answered it.
func TestErrorAfterRedirectNamesTheURL(t *testing.T) {
	o := newOrigin(t)
	o.handle("/moved", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/gone", http.StatusFound)
	})
	o.handle("/gone", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no", http.StatusForbidden)
	})
	clk := newFakeClock(t0)
	e := newTestEngine(t, testConfig(t, baseYAML(fmt.Sprintf("resources:\n  - {id: m, url: %q}\n", o.url("/moved")))), newMemStore(), clk)
	st := pollAtNext(t, e, clk, "m")
	if st.LastOutcome != OutcomeError || !strings.Contains(st.LastError, o.url("/gone")+": HTTP 403") {
		t.Fatalf("outcome %q error %q, want the 403 of %s", st.LastOutcome, st.LastError, o.url("/gone"))
	}
}

// A 304 to a request that sent no validators is a broken origin: an error,
// not an unchanged page.
func TestNotModifiedWithoutValidatorsIsAnError(t *testing.T) {
	o := newOrigin(t)
	o.handle("/", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNotModified) })
	clk := newFakeClock(t0)
	e := newTestEngine(t, testConfig(t, baseYAML(fmt.Sprintf("resources:\n  - {id: n, url: %q}\n", o.url("/")))), newMemStore(), clk)
	st := pollAtNext(t, e, clk, "n")
	if st.LastOutcome != OutcomeError || !strings.Contains(st.LastError, "HTTP 304") {
		t.Fatalf("outcome %q error %q, want an error naming the 304", st.LastOutcome, st.LastError)
	}
}

func TestErrorsBackOffThenRecover(t *testing.T) {
	o := newOrigin(t)
	var failing atomic.Bool
	failing.Store(true)
	o.handle("/", func(w http.ResponseWriter, r *http.Request) {
		if failing.Load() {
			http.Error(w, "boom", http.StatusInternalServerError)
			return
		}
		fmt.Fprint(w, page("Site", "back"))
	})
	clk := newFakeClock(t0)
	e := newTestEngine(t, testConfig(t, baseYAML(fmt.Sprintf("resources:\n  - {id: s, url: %q}\n", o.url("/")))), newMemStore(), clk)
	var waits []time.Duration
	for range 5 {
		st := pollAtNext(t, e, clk, "s")
		if st.LastOutcome != OutcomeError || !strings.Contains(st.LastError, "500") {
			t.Fatalf("outcome %q %q", st.LastOutcome, st.LastError)
		}
		waits = append(waits, st.NextPoll.Sub(st.LastPoll))
	}
	for i, w := range waits {
		base := errBackoffBase << i
		if w < base*9/10 || w > base*11/10 {
			t.Errorf("back-off %d = %v, want %v ±10%%", i+1, w, base)
		}
	}
	st, _ := e.Status("s")
	if st.Tau != 10*time.Minute || st.Interval != 10*time.Minute || st.Errors != 5 {
		t.Errorf("errors changed what the policy learned: %+v", st)
	}
	failing.Store(false)
	st = pollAtNext(t, e, clk, "s")
	if st.LastOutcome != OutcomeChanged || st.LastError != "" {
		t.Fatalf("recovery: %q %q", st.LastOutcome, st.LastError)
	}
	if got := st.NextPoll.Sub(st.LastPoll); got != 10*time.Minute {
		t.Errorf("after recovery next poll in %v, want the policy's 10m", got)
	}
}

func TestRetryAfterIsAFloor(t *testing.T) {
	o := newOrigin(t)
	o.handle("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "7200")
		http.Error(w, "slow down", http.StatusTooManyRequests)
	})
	clk := newFakeClock(t0)
	e := newTestEngine(t, testConfig(t, baseYAML(fmt.Sprintf("resources:\n  - {id: s, url: %q}\n", o.url("/")))), newMemStore(), clk)
	st := pollAtNext(t, e, clk, "s")
	if got := st.NextPoll.Sub(st.LastPoll); got != 2*time.Hour {
		t.Fatalf("next poll in %v, want Retry-After 2h", got)
	}
}

func TestCacheControlMaxAgeIsAFloor(t *testing.T) {
	o := newOrigin(t)
	o.handle("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=1800")
		fmt.Fprint(w, page("Site", "a"))
	})
	clk := newFakeClock(t0)
	e := newTestEngine(t, testConfig(t, baseYAML(fmt.Sprintf("resources:\n  - {id: s, url: %q}\n", o.url("/")))), newMemStore(), clk)
	st := pollAtNext(t, e, clk, "s")
	if got := st.NextPoll.Sub(st.LastPoll); got != 30*time.Minute {
		t.Fatalf("next poll in %v, want max-age 30m (policy says 10m)", got)
	}
}

func TestRobots(t *testing.T) {
	o := newOrigin(t)
	o.handle("/robots.txt", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "User-agent: *\nDisallow: /private/\nCrawl-delay: 30\n")
	})
	clk := newFakeClock(t0)
	yaml := strings.Replace(baseYAML(fmt.Sprintf(`resources:
  - {id: denied, url: %q, policy: {kind: flat, interval: 10m}}
  - {id: a, url: %q, policy: {kind: flat, interval: 10m}}
  - {id: b, url: %q, policy: {kind: flat, interval: 10m}}
`, o.url("/private/page.html"), o.url("/a.html"), o.url("/b.html"))), "robots: false", "robots: true", 1)
	e := newTestEngine(t, testConfig(t, yaml), newMemStore(), clk)
	// Bring every first poll to now, then poll whatever is due repeatedly.
	for _, id := range []string{"denied", "a", "b"} {
		e.mu.Lock()
		e.queue.Update(id, t0)
		e.mu.Unlock()
	}
	var polled []string
	e.afterPoll = func(s Status) {
		polled = append(polled, fmt.Sprintf("%s@%s=%s", s.ID, s.LastPoll.Sub(t0), s.LastOutcome))
	}
	for range 6 {
		e.runDue(t.Context())
		_, at, _ := e.queue.Peek()
		if at.Sub(t0) > 5*time.Minute {
			break
		}
		clk.Set(at)
	}
	st, _ := e.Status("denied")
	if st.LastOutcome != OutcomeRobotsDenied {
		t.Fatalf("denied: %q %q", st.LastOutcome, st.LastError)
	}
	if n := o.hit("/private/page.html"); n != 0 {
		t.Errorf("a disallowed page was fetched %d times", n)
	}
	if n := o.hit("/robots.txt"); n != 1 {
		t.Errorf("robots.txt fetched %d times, want 1 (cached)", n)
	}
	// robots.txt at 0s, then a and b, each 30s (Crawl-delay) apart.
	sa, _ := e.Status("a")
	sb, _ := e.Status("b")
	if sa.LastOutcome != OutcomeChanged || sb.LastOutcome != OutcomeChanged {
		t.Fatalf("a %q %q, b %q %q; polls %v", sa.LastOutcome, sa.LastError, sb.LastOutcome, sb.LastError, polled)
	}
	times := []time.Duration{sa.LastPoll.Sub(t0), sb.LastPoll.Sub(t0)}
	if times[0] > times[1] {
		times[0], times[1] = times[1], times[0]
	}
	if times[0] < 30*time.Second || times[1]-times[0] < 30*time.Second {
		t.Errorf("requests at %v after robots.txt at 0s: closer than Crawl-delay 30s (%v)", times, polled)
	}
}

func TestPerHostInterval(t *testing.T) {
	o := newOrigin(t)
	clk := newFakeClock(t0)
	yaml := strings.Replace(baseYAML(fmt.Sprintf(`resources:
  - {id: a, url: %q}
  - {id: b, url: %q}
  - {id: c, url: %q}
`, o.url("/a"), o.url("/b"), o.url("/c"))), "per_host_interval: 0s", "per_host_interval: 10s", 1)
	e := newTestEngine(t, testConfig(t, yaml), newMemStore(), clk)
	for _, id := range []string{"a", "b", "c"} {
		e.mu.Lock()
		e.queue.Update(id, t0)
		e.mu.Unlock()
	}
	var at []time.Duration
	e.afterPoll = func(s Status) { at = append(at, s.LastPoll.Sub(t0)) }
	for len(at) < 3 {
		e.runDue(t.Context())
		_, next, _ := e.queue.Peek()
		clk.Set(next)
	}
	want := []time.Duration{0, 10 * time.Second, 20 * time.Second}
	for i := range want {
		if at[i] != want[i] {
			t.Fatalf("requests to one host at %v, want %v", at, want)
		}
	}
}

// fakeResolver maps names to addresses, for the SSRF tests.
type fakeResolver map[string]string

func (f fakeResolver) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	ip, ok := f[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return []net.IPAddr{{IP: net.ParseIP(ip)}}, nil
}

func TestSSRFGuardDialPath(t *testing.T) {
	o := newOrigin(t)
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(o.srv.URL, "http://"))
	res := fakeResolver{
		"loop.test":     "127.0.0.1",
		"intranet.test": "10.0.0.1",
		"metadata.test": "169.254.169.254",
	}
	for _, tc := range []struct {
		name, url string
		allow     bool
		wantErr   bool
	}{
		{"loopback literal refused", o.url("/"), false, true},
		{"name resolving to loopback refused", "http://loop.test:" + port + "/", false, true},
		{"name resolving to 10.x refused", "http://intranet.test:" + port + "/", false, true},
		{"name resolving to 169.254.x refused", "http://metadata.test/latest/", false, true},
		{"loopback allowed", o.url("/"), true, false},
		{"name resolving to loopback allowed", "http://loop.test:" + port + "/", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			yaml := strings.Replace(baseYAML(fmt.Sprintf("resources:\n  - {id: r, url: %q}\n", tc.url)), "allow_private: true", fmt.Sprintf("allow_private: %v", tc.allow), 1)
			clk := newFakeClock(t0)
			before := o.hit("/")
			e, err := New(context.Background(), testConfig(t, yaml), newMemStore(), Options{Clock: clk, Resolver: res})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close() //nolint:errcheck // test cleanup
			st := pollAtNext(t, e, clk, "r")
			if tc.wantErr {
				if st.LastOutcome != OutcomeError || !strings.Contains(st.LastError, "address not allowed") {
					t.Fatalf("outcome %q error %q, want the guard's refusal", st.LastOutcome, st.LastError)
				}
				if o.hit("/") != before {
					t.Fatal("the origin was reached")
				}
				return
			}
			if st.LastOutcome != OutcomeChanged {
				t.Fatalf("outcome %q error %q", st.LastOutcome, st.LastError)
			}
		})
	}
}

func TestApplySwitchesPolicyLive(t *testing.T) {
	o := newOrigin(t)
	clk := newFakeClock(t0)
	yamlFor := func(policy string) string {
		return baseYAML(fmt.Sprintf("resources:\n  - {id: r, url: %q, policy: %s}\n", o.url("/"), policy))
	}
	ms := newMemStore()
	e := newTestEngine(t, testConfig(t, yamlFor("{kind: flat, interval: 5m}")), ms, clk)
	var n atomic.Int64
	o.handle("/", func(w http.ResponseWriter, r *http.Request) {
		// Two new items per request: τ learns half the wait.
		i := n.Add(1)
		fmt.Fprint(w, page("Site", fmt.Sprintf("a%d", i), fmt.Sprintf("b%d", i)))
	})
	for range 3 {
		if st := pollAtNext(t, e, clk, "r"); st.NextPoll.Sub(st.LastPoll) != 5*time.Minute {
			t.Fatalf("flat: next in %v", st.NextPoll.Sub(st.LastPoll))
		}
	}
	// flat → smart: τ starts from initial, the next poll is recomputed now.
	if err := e.Apply(context.Background(), testConfig(t, yamlFor("{kind: smart, alpha: 0.5, initial: 20m, min: 1m, max: 1h}"))); err != nil {
		t.Fatal(err)
	}
	st, _ := e.Status("r")
	if st.Policy != KindSmart || st.NextPoll != st.LastPoll.Add(20*time.Minute) {
		t.Fatalf("after switch to smart: %+v", st)
	}
	for range 2 {
		st = pollAtNext(t, e, clk, "r")
	}
	learned := st.Tau
	if learned == 20*time.Minute {
		t.Fatalf("τ did not move: %v", learned)
	}
	// smart → flat → smart: τ survives.
	if err := e.Apply(context.Background(), testConfig(t, yamlFor("{kind: flat, interval: 2m}"))); err != nil {
		t.Fatal(err)
	}
	st, _ = e.Status("r")
	if st.Policy != KindFlat || st.NextPoll != st.LastPoll.Add(2*time.Minute) {
		t.Fatalf("after switch to flat: %+v", st)
	}
	pollAtNext(t, e, clk, "r")
	if err := e.Apply(context.Background(), testConfig(t, yamlFor("{kind: smart, alpha: 0.5, initial: 20m, min: 1m, max: 1h}"))); err != nil {
		t.Fatal(err)
	}
	st, _ = e.Status("r")
	if st.Tau != learned {
		t.Fatalf("τ after smart → flat → smart = %v, want %v", st.Tau, learned)
	}
}

func TestApplyAddsAndRemoves(t *testing.T) {
	o := newOrigin(t)
	clk := newFakeClock(t0)
	ms := newMemStore()
	one := baseYAML(fmt.Sprintf("resources:\n  - {id: a, url: %q}\n", o.url("/a")))
	two := baseYAML(fmt.Sprintf("resources:\n  - {id: b, url: %q}\n", o.url("/b")))
	e := newTestEngine(t, testConfig(t, one), ms, clk)
	pollAtNext(t, e, clk, "a")
	if err := e.Apply(context.Background(), testConfig(t, two)); err != nil {
		t.Fatal(err)
	}
	if _, ok := e.Status("a"); ok {
		t.Fatal("removed resource still has a status")
	}
	if e.queue.Len() != 1 {
		t.Fatalf("queue has %d entries, want 1", e.queue.Len())
	}
	if v, _ := ms.count("a"); v != 1 {
		t.Fatalf("history of a removed resource: %d versions, want kept", v)
	}
	if _, err := e.PollNow(t.Context(), "a"); !errors.Is(err, ErrUnknownResource) {
		t.Fatalf("PollNow(removed) = %v", err)
	}
	st, err := e.PollNow(t.Context(), "b")
	if err != nil || st.LastOutcome != OutcomeChanged {
		t.Fatalf("PollNow(b) = %+v, %v", st, err)
	}
	// A bad config changes nothing.
	bad := &config.Config{}
	*bad = *testConfig(t, two)
	bad.Resources = append(bad.Resources, config.ResourceEntry{ID: "b", URL: o.url("/c")})
	if err := e.Apply(context.Background(), bad); err == nil {
		t.Fatal("Apply accepted duplicate ids")
	}
	if len(e.Statuses()) != 1 {
		t.Fatalf("statuses after refused apply: %+v", e.Statuses())
	}
}

func TestStartSpreadsFirstPolls(t *testing.T) {
	clk := newFakeClock(t0)
	var b strings.Builder
	b.WriteString("resources:\n")
	for i := range 50 {
		fmt.Fprintf(&b, "  - {id: r%d, url: \"http://example.invalid/%d\", policy: {kind: flat, interval: 10m}}\n", i, i)
	}
	e := newTestEngine(t, testConfig(t, baseYAML(b.String())), newMemStore(), clk)
	e2 := newTestEngine(t, testConfig(t, baseYAML(b.String())), newMemStore(), clk)
	distinct := map[time.Time]bool{}
	for _, st := range e.Statuses() {
		off := st.NextPoll.Sub(t0)
		if off < 0 || off >= firstPollWindow {
			t.Fatalf("%s first poll at +%v, outside the first-poll window", st.ID, off)
		}
		distinct[st.NextPoll] = true
		if s2, _ := e2.Status(st.ID); s2.NextPoll != st.NextPoll {
			t.Fatalf("offset of %s not stable: %v vs %v", st.ID, st.NextPoll, s2.NextPoll)
		}
	}
	if len(distinct) < 45 {
		t.Fatalf("only %d distinct first-poll times for 50 resources", len(distinct))
	}
}

func restartTest(t *testing.T, open func() Store, closeStore func(Store)) {
	o := newOrigin(t)
	var n atomic.Int64
	o.handle("/", func(w http.ResponseWriter, r *http.Request) {
		// Two new items per request: τ learns half the wait.
		i := n.Add(1)
		fmt.Fprint(w, page("Site", fmt.Sprintf("a%d", i), fmt.Sprintf("b%d", i)))
	})
	o.setETag("")
	clk := newFakeClock(t0)
	cfg := testConfig(t, baseYAML(fmt.Sprintf("resources:\n  - {id: r, url: %q, policy: {alpha: 0.3}}\n", o.url("/"))))
	s1 := open()
	e1 := newTestEngine(t, cfg, s1, clk)
	var before Status
	for range 4 {
		before = pollAtNext(t, e1, clk, "r")
	}
	if before.Tau == 10*time.Minute {
		t.Fatal("τ not learned")
	}
	closeStore(s1)
	clk.Advance(time.Minute) // restarted a minute later, before the next poll
	s2 := open()
	defer closeStore(s2)
	e2 := newTestEngine(t, cfg, s2, clk)
	after, _ := e2.Status("r")
	if after.Tau != before.Tau || after.NextPoll != before.NextPoll || after.Polls != before.Polls || after.Changes != before.Changes {
		t.Fatalf("after restart %+v, want τ, next poll and counters of %+v", after, before)
	}
}

func TestRestartResumesFromStore(t *testing.T) {
	ms := newMemStore()
	restartTest(t, func() Store { return ms }, func(Store) {})
}

func TestRestartResumesFromBadger(t *testing.T) {
	dir := t.TempDir()
	restartTest(t, func() Store {
		db, err := badger.Open(dir, badger.Options{})
		if err != nil {
			t.Fatalf("badger.Open: %v", err)
		}
		return db
	}, func(s Store) {
		if err := s.(*badger.DB).Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
}

func TestGzipAndCharsetReachTheExtractor(t *testing.T) {
	o := newOrigin(t)
	latin1 := "<html><body><h1><!-- <channel:title> -->Caf\xe9<!-- </channel:title> --></h1></body></html>"
	o.handle("/", func(w http.ResponseWriter, r *http.Request) {
		if !strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			http.Error(w, "want gzip", http.StatusBadRequest)
			return
		}
		if ua := r.Header.Get("User-Agent"); ua != "dynamo-test/1" {
			http.Error(w, "bad agent "+ua, http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=ISO-8859-1")
		w.Header().Set("Content-Encoding", "gzip")
		zw := gzip.NewWriter(w)
		fmt.Fprint(zw, latin1)
		_ = zw.Close() // the test fails below if the body is incomplete
	})
	clk := newFakeClock(t0)
	ms := newMemStore()
	yaml := strings.Replace(baseYAML(fmt.Sprintf("resources:\n  - {id: r, url: %q}\n", o.url("/"))), "workers: 2", "workers: 2\n  user_agent: dynamo-test/1", 1)
	e := newTestEngine(t, testConfig(t, yaml), ms, clk)
	st := pollAtNext(t, e, clk, "r")
	if st.LastOutcome != OutcomeChanged {
		t.Fatalf("%q %q", st.LastOutcome, st.LastError)
	}
	ms.mu.Lock()
	title := ms.versions["r"][0].Channel.Title
	ms.mu.Unlock()
	if title != "Café" {
		t.Fatalf("title %q: gzip or charset lost", title)
	}
}

func TestRestartKeepsGrownWait(t *testing.T) {
	o := newOrigin(t)
	clk := newFakeClock(t0)
	ms := newMemStore()
	cfg := testConfig(t, baseYAML(fmt.Sprintf("resources:\n  - {id: r, url: %q}\n", o.url("/"))))
	e1 := newTestEngine(t, cfg, ms, clk)
	var st Status
	for range 4 { // unchanged polls grow the wait past τ
		st = pollAtNext(t, e1, clk, "r")
	}
	if st.Interval <= st.Tau {
		t.Fatalf("setup: interval %v τ %v", st.Interval, st.Tau)
	}
	e2 := newTestEngine(t, cfg, ms, clk)
	st2, _ := e2.Status("r")
	if st2.Interval != st.Interval || st2.NextPoll != st.NextPoll {
		t.Fatalf("restart reset the wait: %v → %v, next %v → %v", st.Interval, st2.Interval, st.NextPoll, st2.NextPoll)
	}
}

// TestRedirectedPageResolvesLinksWhereItIs: after a redirect, relative links
// resolve against the page's final URL, not the configured one.
func TestRedirectedPageResolvesLinksWhereItIs(t *testing.T) {
	o := newOrigin(t)
	o.handle("/news", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/news/", http.StatusMovedPermanently)
	})
	o.handle("/news/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<html><body><!-- <channel:title> -->News<!-- </channel:title> -->
<!-- <item:title index="1"> -->Story<!-- </item:title> -->
<!-- <item:link index="1"> --><a href="story1.html"><!-- </item:link> -->more</a></body></html>`)
	})
	store := newMemStore()
	clk := newFakeClock(t0)
	e := newTestEngine(t, testConfig(t, baseYAML(fmt.Sprintf("resources:\n  - {id: n, url: %q}\n", o.url("/news")))), store, clk)
	if st := pollAtNext(t, e, clk, "n"); st.LastOutcome != OutcomeChanged {
		t.Fatalf("outcome %q %q", st.LastOutcome, st.LastError)
	}
	store.mu.Lock()
	defer store.mu.Unlock()
	docs := store.versions["n"]
	if len(docs) != 1 || len(docs[0].Items) != 1 {
		t.Fatalf("stored %d versions", len(docs))
	}
	if got, want := docs[0].Items[0].Link, o.url("/news/story1.html"); got != want {
		t.Errorf("item link %q, want %q (resolved against the final URL)", got, want)
	}
}

// TestRetentionChangeWhilePolling: Apply may change a resource's retention
// while a poll of it runs (run with -race).
func TestRetentionChangeWhilePolling(t *testing.T) {
	o := newOrigin(t)
	var n atomic.Int64
	o.handle("/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, page("Site", fmt.Sprintf("story %d", n.Add(1))))
	})
	clk := newFakeClock(t0)
	yaml := func(max int) string {
		return baseYAML(fmt.Sprintf("resources:\n  - {id: s, url: %q, retention: {max_versions: %d}}\n", o.url("/"), max))
	}
	e := newTestEngine(t, testConfig(t, yaml(3)), newMemStore(), clk)
	cfgs := []*config.Config{testConfig(t, yaml(2)), testConfig(t, yaml(3)), testConfig(t, yaml(4))}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if err := e.Apply(context.Background(), cfgs[i%len(cfgs)]); err != nil {
				t.Errorf("Apply: %v", err)
				return
			}
		}
	}()
	for range 30 {
		if _, err := e.PollNow(context.Background(), "s"); err != nil {
			t.Errorf("PollNow: %v", err)
			break
		}
	}
	close(stop)
	<-done
}

// TestRetentionAppliedPerField: a resource with only max_age, or only
// max_versions, or both, is pruned after each changed save with its
// retention (the poller default's fields filling in); one with neither is
// never asked to prune.
func TestRetentionAppliedPerField(t *testing.T) {
	for _, tc := range []struct {
		name, retention string
		want            storage.Retention // zero: no prune at all
	}{
		{"max_age only", ", retention: {max_age: 1h}", storage.Retention{MaxAge: time.Hour}},
		{"max_versions only", ", retention: {max_versions: 3}", storage.Retention{MaxVersions: 3}},
		{"both", ", retention: {max_versions: 3, max_age: 1h}", storage.Retention{MaxVersions: 3, MaxAge: time.Hour}},
		{"neither", "", storage.Retention{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := newOrigin(t)
			clk := newFakeClock(t0)
			ms := newMemStore()
			cfg := testConfig(t, baseYAML(fmt.Sprintf("resources:\n  - {id: news, url: %q%s}\n", o.url("/news.html"), tc.retention)))
			e := newTestEngine(t, cfg, ms, clk)
			o.set(page("Site", "first"))
			if st := pollAtNext(t, e, clk, "news"); st.LastOutcome != OutcomeChanged {
				t.Fatalf("outcome %q (%s)", st.LastOutcome, st.LastError)
			}
			switch {
			case tc.want == (storage.Retention{}) && len(ms.prunes) != 0:
				t.Errorf("prunes %+v, want none", ms.prunes)
			case tc.want != (storage.Retention{}) && (len(ms.prunes) != 1 || ms.prunes[0] != tc.want):
				t.Errorf("prunes %+v, want one with %+v", ms.prunes, tc.want)
			}
		})
	}
}

// TestBackoffBounds checks the wait after the n-th error in a row: 30 s
// doubling from the first error, capped at an hour (from the eighth, and
// far past the shift's range), each within ±10 % jitter that is stable for
// an id and an n and differs between ids.
func TestBackoffBounds(t *testing.T) {
	for n := range 70 {
		want := time.Hour
		if n <= 7 {
			want = 30 * time.Second << max(n-1, 0)
		}
		ids := []string{"a", "news", "forum.example.org-threads"}
		seen := map[time.Duration]bool{}
		for _, id := range ids {
			got := backoff(id, n)
			if got < want*9/10 || got >= want*11/10 {
				t.Errorf("backoff(%q, %d) = %v, want %v ±10%%", id, n, got, want)
			}
			if again := backoff(id, n); again != got {
				t.Errorf("backoff(%q, %d) = %v, then %v", id, n, got, again)
			}
			seen[got] = true
		}
		if len(seen) == 1 {
			t.Errorf("backoff(·, %d): every id waits %v; the jitter should spread them", n, want)
		}
	}
	// Over many ids the jitter spans the whole ±10 %, evenly.
	lo, hi, below := 2.0, 0.0, 0
	const ids = 400
	for i := range ids {
		r := float64(backoff(fmt.Sprint("feed-", i), 3)) / float64(2*time.Minute)
		lo, hi = min(lo, r), max(hi, r)
		if r < 1 {
			below++
		}
	}
	if lo > 0.91 || hi < 1.09 || below < ids/3 || below > 2*ids/3 {
		t.Errorf("jitter over %d ids: from %.3f to %.3f, %d below 1; want 0.9–1.1 covered, about half below", ids, lo, hi, below)
	}
}

// TestRobotsUnreachable: a robots.txt that cannot be read (the connection
// drops) fails the poll as an error that names robots.txt, counted and
// retried after the error back-off; the page is not fetched.
func TestRobotsUnreachable(t *testing.T) {
	o := newOrigin(t)
	o.handle("/robots.txt", func(w http.ResponseWriter, r *http.Request) {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			_ = conn.Close()
		}
	})
	clk := newFakeClock(t0)
	yaml := strings.Replace(baseYAML(fmt.Sprintf("resources:\n  - {id: a, url: %q, policy: {kind: flat, interval: 10m}}\n", o.url("/a.html"))), "robots: false", "robots: true", 1)
	e := newTestEngine(t, testConfig(t, yaml), newMemStore(), clk)
	st := pollAtNext(t, e, clk, "a")
	if st.LastOutcome != OutcomeError || st.Errors != 1 || st.Polls != 1 {
		t.Fatalf("after an unreadable robots.txt: outcome %q, %d errors, %d polls; want an error, counted", st.LastOutcome, st.Errors, st.Polls)
	}
	if !strings.Contains(st.LastError, "robots.txt") {
		t.Errorf("error %q does not say it was robots.txt", st.LastError)
	}
	if n := o.hit("/a.html"); n != 0 {
		t.Errorf("the page was fetched %d times without its robots.txt", n)
	}
	if got, want := st.NextPoll.Sub(st.LastPoll), backoff("a", 1); got != want {
		t.Errorf("next poll %v after the error, want the back-off's %v", got, want)
	}
}

// TestRobotsCancelled: an engine stopped while a robots.txt is being read
// does not count the poll as an error; the resource stays queued at the
// poll it was due for.
func TestRobotsCancelled(t *testing.T) {
	o := newOrigin(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	o.handle("/robots.txt", func(w http.ResponseWriter, r *http.Request) {
		cancel()
		<-r.Context().Done()
	})
	clk := newFakeClock(t0)
	yaml := strings.Replace(baseYAML(fmt.Sprintf("resources:\n  - {id: a, url: %q, policy: {kind: flat, interval: 10m}}\n", o.url("/a.html"))), "robots: false", "robots: true", 1)
	e := newTestEngine(t, testConfig(t, yaml), newMemStore(), clk)
	before, _ := e.Status("a")
	clk.Set(before.NextPoll)
	r, _ := e.due()
	if r == nil {
		t.Fatal("a not due at its next poll")
	}
	e.work(ctx, r) // once: runDue would take it again, due still
	st, _ := e.Status("a")
	if st.Polls != 0 || st.Errors != 0 || st.LastOutcome != "" {
		t.Errorf("a poll cancelled while reading robots.txt: %d polls, %d errors, outcome %q; want none", st.Polls, st.Errors, st.LastOutcome)
	}
	if at, ok := e.queue.At("a"); !ok || !at.Equal(before.NextPoll) {
		t.Errorf("after the cancelled poll: queued %v at %v, want at %v", ok, at, before.NextPoll)
	}
}

// TestDueWait: with nothing queued the scheduler is told to wait for a
// wake-up only (a negative wait: no timer, no spinning); with a resource
// queued, until its poll.
func TestDueWait(t *testing.T) {
	clk := newFakeClock(t0)
	e := newTestEngine(t, testConfig(t, baseYAML("resources: []\n")), newMemStore(), clk)
	if r, wait := e.due(); r != nil || wait >= 0 {
		t.Errorf("nothing queued: %v, wait %v; want none and a negative wait", r, wait)
	}
	e.mu.Lock()
	e.queue.Push("x", t0.Add(90*time.Second))
	e.mu.Unlock()
	if r, wait := e.due(); r != nil || wait != 90*time.Second {
		t.Errorf("one resource in 90s: %v, wait %v", r, wait)
	}
}
