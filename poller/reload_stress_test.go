package poller

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dynamo-rss/dynamo/config"
	"github.com/dynamo-rss/dynamo/storage"
)

// stressPolicies are the policies the stress test switches between.
var stressPolicies = []string{
	"policy: {kind: flat, interval: 1m}",
	"policy: {kind: flat, interval: 4m}",
	"policy: {kind: smart, alpha: 0.3}",
	"policy: {kind: smart, alpha: auto, min: 2m}",
	"policy: {kind: budget}",
	"policy: {kind: budget}, weight: 3",
}

// stressConfig is a configuration of the file resources in ids, each with
// a policy picked by rng, and a budget of perDay polls.
func stressConfig(t *testing.T, o *raceOrigin, rng *rand.Rand, ids []string, perDay int) *config.Config {
	t.Helper()
	var b strings.Builder
	for _, id := range ids {
		fmt.Fprintf(&b, "  - {id: %s, url: %q, %s}\n", id, o.url("/"+id), stressPolicies[rng.IntN(len(stressPolicies))])
	}
	y := strings.Replace(raceYAML(b.String()), "workers: 2", "workers: 4", 1)
	y = strings.Replace(y, "polls_per_day: 2000", fmt.Sprintf("polls_per_day: %d", perDay), 1)
	return testConfig(t, y)
}

// fileIDs lists the engine's resources from the file, sorted.
func fileIDs(e *Engine) []string {
	var out []string
	for _, d := range e.Definitions() {
		if d.Source == SourceFile {
			out = append(out, d.Resource.ID)
		}
	}
	return out
}

// quiesce waits until no poll is in flight or due: every resource queued
// later than now, no busy token held.
func quiesce(t *testing.T, e *Engine) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		e.mu.Lock()
		var busy []string
		for id := range e.retired {
			busy = append(busy, id+" (retired)")
		}
		now := e.clock.Now()
		for id, r := range e.resources {
			at, queued := e.queue.At(id)
			if !queued || !at.After(now) || len(r.busy) > 0 {
				busy = append(busy, fmt.Sprintf("%s (queued %v at %v, busy %d)", id, queued, at.Sub(now), len(r.busy)))
			}
		}
		e.mu.Unlock()
		if len(busy) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("polls still in flight after 20s: %v", busy)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// Polls store versions while the configuration is reloaded over and over
// (resources added and removed, policies switched flat/smart/budget,
// intervals and the budget changed, invalid configurations in between),
// resources are registered and deleted through the admin API, polled on
// demand and their feeds read. Then: no page was polled twice at once,
// every version the origin served was stored exactly once with contiguous
// sequence numbers, deleted resources are gone and their numbers were not
// reused, removed ones are no longer polled, and the store checks clean.
func TestStressReloadWhilePolling(t *testing.T) {
	o := newRaceOrigin(t)
	clk := newFakeClock(t0)
	db := tempBadger(t)
	store := newSaveLog(db)
	files := []string{"f0", "f1", "f2", "f3", "f4", "f5"}
	apis := []string{"a0", "a1", "a2", "a3"}
	o.mu.Lock()
	for i, id := range append(slices.Clone(files), apis...) {
		o.page("/" + id).bumpEach = 2 + i%3
		o.page("/" + id).delay = time.Duration(1+i%3) * time.Millisecond
	}
	o.mu.Unlock()
	rng := rand.New(rand.NewPCG(1, 2))
	e := newTestEngineOpts(t, stressConfig(t, o, rng, files, 2000), store, Options{Clock: clk, Registry: db})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	ran := make(chan error, 1)
	go func() { ran <- e.Run(ctx) }()

	var (
		wg       sync.WaitGroup
		failMu   sync.Mutex
		failures []string
	)
	fail := func(format string, args ...any) {
		failMu.Lock()
		defer failMu.Unlock()
		failures = append(failures, fmt.Sprintf(format, args...))
	}
	const rounds = 60
	var stop sync.WaitGroup // the churn goroutines; the clock runs until they end
	churn := func(seed uint64, fn func(rng *rand.Rand, i int)) {
		stop.Add(1)
		wg.Go(func() {
			defer stop.Done()
			rng := rand.New(rand.NewPCG(seed, seed))
			for i := range rounds {
				fn(rng, i)
			}
		})
	}
	// Reloads.
	churn(10, func(rng *rand.Rand, i int) {
		if i%7 == 6 {
			before, cfgBefore := fileIDs(e), e.currentConfig()
			bad := stressConfig(t, o, rng, files[:2], 2000)
			bad.Resources[1].Policy.Kind = "sometimes" // refused by Validate
			if err := e.Apply(ctx, bad); err == nil {
				fail("reload %d: an invalid configuration was accepted", i)
			}
			if after := fileIDs(e); !slices.Equal(before, after) || e.currentConfig() != cfgBefore {
				fail("reload %d: a refused configuration changed the resources: %v → %v", i, before, after)
			}
			return
		}
		ids := []string{"f0"}
		for _, id := range files[1:] {
			if rng.IntN(3) > 0 {
				ids = append(ids, id)
			}
		}
		if err := e.Apply(ctx, stressConfig(t, o, rng, ids, 500+rng.IntN(3)*1000)); err != nil {
			fail("reload %d: %v", i, err)
		}
	})
	// Admin PUT and DELETE.
	var regMu sync.Mutex
	registered := map[string]bool{}
	churn(20, func(rng *rand.Rand, i int) {
		id := apis[rng.IntN(len(apis))]
		regMu.Lock()
		defer regMu.Unlock()
		if registered[id] && rng.IntN(2) == 0 {
			if err := e.Unregister(ctx, id); err != nil {
				fail("DELETE %s: %v", id, err)
			}
			registered[id] = false
			if _, err := db.Resource(ctx, id); !errors.Is(err, storage.ErrGone) {
				fail("after DELETE %s: Resource: %v, want ErrGone", id, err)
			}
			return
		}
		entry, err := config.ParseResource(fmt.Appendf(nil, `{"url": %q, "policy": %s}`, o.url("/"+id),
			[]string{`{"kind": "flat", "interval": "2m"}`, `{"kind": "smart"}`, `{"kind": "budget"}`}[rng.IntN(3)]), id, e.currentConfig().Poller)
		if err != nil {
			fail("PUT %s: %v", id, err)
			return
		}
		if _, err := e.Register(ctx, entry); err != nil {
			fail("PUT %s: %v", id, err)
		}
		registered[id] = true
	})
	// Polls on demand.
	churn(30, func(rng *rand.Rand, _ int) {
		all := append(slices.Clone(files), apis...)
		id := all[rng.IntN(len(all))]
		if _, err := e.PollNow(ctx, id); err != nil && !errors.Is(err, ErrUnknownResource) {
			fail("poll %s: %v", id, err)
		}
	})
	// Feeds and status pages read meanwhile.
	churn(40, func(rng *rand.Rand, _ int) {
		all := append(slices.Clone(files), apis...)
		id := all[rng.IntN(len(all))]
		if _, err := db.Versions(ctx, id, 0, 0); err != nil && !errors.Is(err, storage.ErrNotFound) {
			fail("versions of %s: %v", id, err)
		}
		if _, _, err := db.Version(ctx, id, 1); err != nil && !errors.Is(err, storage.ErrNotFound) {
			fail("latest of %s: %v", id, err)
		}
		_ = e.Statuses()
		_ = e.Definitions()
	})
	// Time passes while they run.
	churning := make(chan struct{})
	go func() { stop.Wait(); close(churning) }()
	wg.Go(func() {
		for {
			select {
			case <-churning:
				return
			default:
			}
			clk.Advance(20 * time.Second)
			time.Sleep(time.Millisecond) // lets the workers poll between steps; nothing depends on it
		}
	})
	wg.Wait()
	for _, f := range failures {
		t.Error(f)
	}

	// A last reload keeps f0–f2: the others must no longer be polled.
	if err := e.Apply(ctx, stressConfig(t, o, rng, files[:3], 2000)); err != nil {
		t.Fatal(err)
	}
	quiesce(t, e)
	removedHits := map[string]int{}
	for _, id := range files[3:] {
		removedHits[id] = o.hitCount("/" + id)
	}
	for range 30 {
		clk.Advance(5 * time.Minute)
		quiesce(t, e)
	}
	for id, n := range removedHits {
		if got := o.hitCount("/" + id); got != n {
			t.Errorf("%s removed by the reload: polled %d more times", id, got-n)
		}
	}
	cancel()
	if err := <-ran; err != nil {
		t.Fatal(err)
	}

	if ov := o.overlaps(); len(ov) > 0 {
		t.Errorf("pages requested twice at once: %v", ov)
	}
	ack := store.acknowledged()
	total, hits := 0, 0
	for _, seqs := range ack {
		total += len(seqs)
	}
	for _, id := range append(slices.Clone(files), apis...) {
		hits += o.hitCount("/" + id)
	}
	t.Logf("%d page requests, %d versions stored", hits, total)
	for id, seqs := range ack {
		for i, s := range seqs {
			if s != uint64(i+1) {
				t.Errorf("%s: acknowledged seqs %v: a number skipped or reused", id, seqs)
				break
			}
		}
	}
	o.mu.Lock()
	served := map[string][]int{}
	for _, id := range append(slices.Clone(files), apis...) {
		served[id] = slices.Sorted(maps.Keys(o.page("/" + id).served))
	}
	o.mu.Unlock()
	for _, id := range files {
		seqs, gens := versionsOf(t, db, id)
		if !slices.Equal(seqs, ack[id]) {
			t.Errorf("%s: stored seqs %v, acknowledged %v", id, seqs, ack[id])
		}
		if !slices.Equal(gens, served[id]) {
			t.Errorf("%s: stored generations %v, the origin served %v", id, gens, served[id])
		}
	}
	for _, id := range apis {
		seqs, gens := versionsOf(t, db, id)
		if !slices.IsSorted(gens) || len(slices.Compact(slices.Clone(gens))) != len(gens) {
			t.Errorf("%s: generations %v stored out of order or twice", id, gens)
		}
		if n := len(ack[id]); len(seqs) > 0 && (n == 0 || seqs[len(seqs)-1] != ack[id][n-1]) {
			t.Errorf("%s: stored seqs %v, acknowledged %v", id, seqs, ack[id])
		}
		_, polled := e.Status(id)
		_, err := db.Resource(t.Context(), id)
		switch {
		case registered[id] && !polled:
			t.Errorf("%s registered but not polled", id)
		case !registered[id] && polled:
			t.Errorf("%s deleted but still polled", id)
		case !registered[id] && len(ack[id]) > 0 && !errors.Is(err, storage.ErrGone):
			t.Errorf("%s deleted: Resource: %v, want ErrGone", id, err)
		}
	}
	if err := db.Check(t.Context()); err != nil {
		t.Errorf("store check: %v", err)
	}
}
