package poller

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/dynamo-rss/dynamo/schema"
	"github.com/dynamo-rss/dynamo/storage"
)

// readFailingStore is a memStore whose reads of stored versions and whose
// prunes fail (or, healthy, find no version and prune nothing).
type readFailingStore struct {
	*memStore
	fail bool
}

func (s *readFailingStore) Version(context.Context, string, int) (*schema.Document, storage.VersionInfo, error) {
	if s.fail {
		return nil, storage.VersionInfo{}, errors.New("read error on the versions' disk")
	}
	return nil, storage.VersionInfo{}, storage.ErrNotFound
}

func (s *readFailingStore) Prune(ctx context.Context, id string, r storage.Retention, now time.Time) (int, error) {
	if s.fail {
		return 0, errors.New("prune interrupted")
	}
	return s.memStore.Prune(ctx, id, r, now)
}

// TestStoreFailuresLogged: a version stored whose pruning fails, and
// relative dates that cannot be compared with the stored version, are each
// told to the operator once, with the resource and the error; the poll
// still stores its version. A healthy store logs neither.
func TestStoreFailuresLogged(t *testing.T) {
	for _, fail := range []bool{true, false} {
		t.Run(fmt.Sprint("fail=", fail), func(t *testing.T) {
			o := newOrigin(t)
			o.set(`<html><head><title>News</title></head><body><ul><li><a href="/a">a</a> <span class="when">2 hours ago</span></li></ul></body></html>`)
			var logs bytes.Buffer
			clk := newFakeClock(t0)
			cfg := testConfig(t, baseYAML(fmt.Sprintf("resources:\n  - {id: news, url: %q, retention: {max_versions: 2}, "+
				"select: {item: \"li\", title: \"a\", link: \"a @href\", date: \"span.when\"}}\n", o.url("/news.html"))))
			store := &readFailingStore{memStore: newMemStore(), fail: fail}
			e := newTestEngineOpts(t, cfg, store, Options{Clock: clk, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			if st := pollAtNext(t, e, clk, "news"); st.LastOutcome != OutcomeChanged {
				t.Fatalf("outcome %q (%s), want the version stored", st.LastOutcome, st.LastError)
			}
			for _, msg := range []string{`msg="prune failed" resource=news error="prune interrupted"`, `msg="relative dates read again" resource=news error="read the latest version for its dates: read error on the versions' disk"`} {
				n := strings.Count(logs.String(), msg)
				if fail && n != 1 || !fail && n != 0 {
					t.Errorf("%q logged %d times, want %d; logs:\n%s", msg, n, map[bool]int{true: 1}[fail], logs.String())
				}
			}
			if !fail && strings.Contains(logs.String(), "level=WARN") {
				t.Errorf("warnings from a healthy store:\n%s", logs.String())
			}
		})
	}
}

// fullStore is a memStore whose disk is full while full is set.
type fullStore struct {
	*memStore
	full bool
}

func (s *fullStore) Save(ctx context.Context, doc *schema.Document) (storage.SaveResult, error) {
	if s.full {
		return storage.SaveResult{}, fmt.Errorf("save: %w", storage.ErrDiskFull)
	}
	return s.memStore.Save(ctx, doc)
}

// TestOutcomeWaits: after a poll that could not store for lack of disk
// space the page is retried at its policy's wait, but within 5 minutes;
// after a poll that robots.txt denies, at the policy's wait.
func TestOutcomeWaits(t *testing.T) {
	for _, tc := range []struct {
		name, policy, robots string
		full                 bool
		first, second        time.Duration // waits after the first and the second poll
	}{
		{"disk full at once", "{kind: flat, interval: 2m}", "", true, 2 * time.Minute, 2 * time.Minute},
		{"disk full at once, long interval", "{kind: flat, interval: 1h}", "", true, diskFullRetry, diskFullRetry},
		{"disk full, short interval", "{kind: flat, interval: 2m}", "", false, 2 * time.Minute, 2 * time.Minute},
		{"disk full, long interval", "{kind: flat, interval: 1h}", "", false, time.Hour, diskFullRetry},
		{"robots denied at once", "{kind: flat, interval: 7m}", "Disallow: /", false, 7 * time.Minute, 7 * time.Minute},
		{"robots denied, smart", "{kind: smart, initial: 9m, min: 1m, max: 1h}", "Disallow: /", false, 9 * time.Minute, 9 * time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := newOrigin(t)
			o.handle("/robots.txt", func(w http.ResponseWriter, r *http.Request) {
				fmt.Fprintf(w, "User-agent: *\n%s\n", tc.robots)
			})
			clk := newFakeClock(t0)
			yaml := strings.Replace(baseYAML(fmt.Sprintf("resources:\n  - {id: r, url: %q, policy: %s}\n", o.url("/r.html"), tc.policy)), "robots: false", "robots: true", 1)
			store := &fullStore{memStore: newMemStore(), full: tc.full}
			e := newTestEngine(t, testConfig(t, yaml), store, clk)
			st := pollAtNext(t, e, clk, "r")
			if got := st.NextPoll.Sub(st.LastPoll); got != tc.first {
				t.Errorf("after the first poll (%s): next in %v, want %v", st.LastOutcome, got, tc.first)
			}
			store.full = true
			o.set(page("Site", "second"))
			st = pollAtNext(t, e, clk, "r")
			if got := st.NextPoll.Sub(st.LastPoll); got != tc.second {
				t.Errorf("after the second poll (%s): next in %v, want %v", st.LastOutcome, got, tc.second)
			}
		})
	}
}

// TestResourceSeriesBound: the per-resource τ and interval series are
// exported up to maxResourceSeries resources, none past it; the count per
// policy always.
func TestResourceSeriesBound(t *testing.T) {
	e := newTestEngine(t, testConfig(t, baseYAML("resources: []\n")), newMemStore(), newFakeClock(t0))
	count := func() (perResource, kinds int) {
		ch := make(chan prometheus.Metric, 1024)
		go func() { estimates{e.eachState}.Collect(ch); close(ch) }()
		for m := range ch {
			if strings.Contains(m.Desc().String(), "dynamo_poller_resources") {
				kinds++
			} else {
				perResource++
			}
		}
		return
	}
	e.mu.Lock()
	for i := range maxResourceSeries {
		id := fmt.Sprint("r", i)
		e.resources[id] = &resource{id: id, st: persisted{Kind: KindFlat}}
	}
	e.mu.Unlock()
	if per, kinds := count(); per != 2*maxResourceSeries || kinds != 1 {
		t.Errorf("%d resources: %d per-resource series and %d policy counts, want %d and 1", maxResourceSeries, per, kinds, 2*maxResourceSeries)
	}
	e.mu.Lock()
	e.resources["one-more"] = &resource{id: "one-more", st: persisted{Kind: KindSmart}}
	e.mu.Unlock()
	if per, kinds := count(); per != 0 || kinds != 2 {
		t.Errorf("%d resources: %d per-resource series and %d policy counts, want none and 2", maxResourceSeries+1, per, kinds)
	}
}

// TestHistoryUndecodableLogged: a stored state whose history cannot be
// cut out is told once, and the history starts again from the poll; a
// readable one is read without a word.
func TestHistoryUndecodableLogged(t *testing.T) {
	o := newOrigin(t)
	var logs bytes.Buffer
	clk := newFakeClock(t0)
	ms := newMemStore()
	cfg := testConfig(t, baseYAML(fmt.Sprintf("resources:\n  - {id: news, url: %q, policy: {kind: flat, interval: 1h}}\n", o.url("/news.html"))))
	e := newTestEngineOpts(t, cfg, ms, Options{Clock: clk, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	pollAtNext(t, e, clk, "news")
	pollAtNext(t, e, clk, "news")
	if h, _ := e.History(t.Context(), "news"); len(h) != 2 || strings.Contains(logs.String(), "level=WARN") {
		t.Fatalf("two healthy polls: a history of %d, logs:\n%s", len(h), logs.String())
	}
	ms.mu.Lock()
	ms.states["news"] = bytes.TrimSuffix(bytes.TrimSpace(ms.states["news"]), []byte("}"))
	ms.mu.Unlock()
	pollAtNext(t, e, clk, "news")
	if n := strings.Count(logs.String(), `msg="poll history undecodable; starting a new one" resource=news`); n != 1 {
		t.Errorf("an undecodable history logged %d times, want once:\n%s", n, logs.String())
	}
	if h, _ := e.History(t.Context(), "news"); len(h) != 1 {
		t.Errorf("after an undecodable history: %d polls in it, want the last one", len(h))
	}
}
