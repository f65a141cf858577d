package poller

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dynamo-rss/dynamo/config"
	"github.com/dynamo-rss/dynamo/storage/badger"
)

// policyPage serves one page at /p with an ETag (so that a poll with the
// validators kept is a 304), or 500 while failing is set.
type policyPage struct {
	o       *origin
	failing atomic.Bool
	maxAge  atomic.Int64 // seconds of Cache-Control max-age; 0: none
}

func newPolicyPage(t *testing.T) *policyPage {
	p := &policyPage{o: newOrigin(t)}
	p.o.handle("/p", func(w http.ResponseWriter, r *http.Request) {
		if p.failing.Load() {
			http.Error(w, "down", http.StatusInternalServerError)
			return
		}
		if s := p.maxAge.Load(); s > 0 {
			w.Header().Set("Cache-Control", fmt.Sprintf("max-age=%d", s))
		}
		w.Header().Set("ETag", `"v1"`)
		if r.Header.Get("If-None-Match") == `"v1"` {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, page("Site", "first"))
	})
	return p
}

// policyYAML is a configuration of resource r (the page at url) whose
// resource line ends with res (its policy, retention…) under the default
// policy def (which may go on with more poller lines).
func policyYAML(url, def, res string) string {
	y := baseYAML(fmt.Sprintf("resources:\n  - {id: r, url: %q%s}\n", url, res))
	return strings.Replace(y, "policy: {kind: smart, alpha: 0.5, initial: 10m, min: 1m, max: 1h}", "policy: "+def, 1)
}

// badgerAt opens the Badger store in dir (closeBadger closes it).
func badgerAt(t *testing.T, dir string) *badger.DB {
	t.Helper()
	db, err := badger.Open(dir, badger.Options{})
	if err != nil {
		t.Fatalf("badger.Open: %v", err)
	}
	return db
}

func closeBadger(t *testing.T, db *badger.DB) {
	t.Helper()
	if err := db.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
}

// A poll policy changed in the configuration file while the service was
// stopped applies at the start as a reload applies it: the next poll is
// placed from the last one by the new policy (a shorter interval does not
// wait out the old one; a new budget re-places a budget resource), the
// validators are kept (the first poll is a 304), and what a reload leaves
// alone stays: an error back-off in force, the schedule of a resource whose
// policy did not change (a retention change, a server's max-age floor under
// the same policy). Each case runs once with a reload and once with a
// restart on a Badger store, from the same polls at the same times, and
// both must schedule the next poll alike.
func TestPolicyChangeAtRestartAsOnReload(t *testing.T) {
	const defSmart = "{kind: smart, alpha: 0.5, initial: 10m, min: 1m, max: 1h}"
	for _, tc := range []struct {
		name          string
		defA, defB    string // the default policy before and after (and what follows it in poller)
		resA, resB    string // the resource line's end before and after
		errors        int    // failed polls after the first, before the change
		maxAge        time.Duration
		after         time.Duration // the change comes this long after the last poll
		wantNext      time.Duration // from the last poll
		wantUnchanged bool          // the next poll is where it was before the change
	}{
		{name: "interval shorter", resA: ", policy: {kind: flat, interval: 1h}", resB: ", policy: {kind: flat, interval: 5m}", after: time.Minute, wantNext: 5 * time.Minute},
		{name: "interval longer", resA: ", policy: {kind: flat, interval: 5m}", resB: ", policy: {kind: flat, interval: 1h}", after: time.Minute, wantNext: time.Hour},
		{name: "default interval shorter", defA: "{kind: flat, interval: 1h}", defB: "{kind: flat, interval: 5m}", after: time.Minute, wantNext: 5 * time.Minute},
		{name: "flat to smart", resA: ", policy: {kind: flat, interval: 1h}", resB: ", policy: {kind: smart, initial: 20m}", after: time.Minute, wantNext: 20 * time.Minute},
		{name: "smart bounds", resB: ", policy: {max: 5m, initial: 5m}", after: time.Minute, wantNext: 5 * time.Minute},
		{name: "budget polls_per_day", defA: defSmart + "\n  budget: {polls_per_day: 24}", defB: defSmart + "\n  budget: {polls_per_day: 96}", resA: ", policy: {kind: budget}", resB: ", policy: {kind: budget}", after: time.Minute, wantNext: 15 * time.Minute},
		{name: "error back-off kept", resA: ", policy: {kind: flat, interval: 5m}", resB: ", policy: {kind: flat, interval: 1m}", errors: 3, after: 10 * time.Second, wantUnchanged: true},
		{name: "retention only", resA: ", policy: {kind: flat, interval: 1h}", resB: ", policy: {kind: flat, interval: 1h}, retention: {max_versions: 3}", after: time.Minute, wantUnchanged: true},
		{name: "same policy keeps a max-age floor", resA: ", policy: {kind: flat, interval: 5m}", resB: ", policy: {kind: flat, interval: 5m}", maxAge: 30 * time.Minute, after: time.Minute, wantUnchanged: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			next := map[bool]time.Duration{}
			for _, restart := range []bool{false, true} {
				how := map[bool]string{false: "reload", true: "restart"}[restart]
				p := newPolicyPage(t)
				p.maxAge.Store(int64(tc.maxAge / time.Second))
				clk := newFakeClock(t0)
				cfgOf := func(def, res string) *config.Config {
					return testConfig(t, policyYAML(p.o.url("/p"), cmp.Or(def, defSmart), res))
				}
				cfgA, cfgB := cfgOf(tc.defA, tc.resA), cfgOf(tc.defB, tc.resB)
				dir := t.TempDir()
				db := badgerAt(t, dir)
				e := newTestEngine(t, cfgA, db, clk)
				if st := pollAtNext(t, e, clk, "r"); st.LastOutcome != OutcomeChanged {
					t.Fatalf("first poll: %+v", st)
				}
				p.failing.Store(tc.errors > 0)
				for range tc.errors {
					if st := pollAtNext(t, e, clk, "r"); st.LastOutcome != OutcomeError {
						t.Fatalf("failing poll: %+v", st)
					}
				}
				p.failing.Store(false)
				before, _ := e.Status("r")
				clk.Set(before.LastPoll.Add(tc.after))
				if restart {
					closeBadger(t, db)
					db = badgerAt(t, dir)
					e = newTestEngine(t, cfgB, db, clk)
				} else if err := e.Apply(context.Background(), cfgB); err != nil {
					t.Fatal(err)
				}
				st, _ := e.Status("r")
				switch {
				case tc.wantUnchanged:
					if st.NextPoll != before.NextPoll {
						t.Errorf("%s: next poll at +%v from the last, want +%v as before the change", how, st.NextPoll.Sub(st.LastPoll), before.NextPoll.Sub(before.LastPoll))
					}
				case st.NextPoll != before.LastPoll.Add(tc.wantNext):
					t.Errorf("%s: next poll at +%v from the last, want +%v", how, st.NextPoll.Sub(st.LastPoll), tc.wantNext)
				}
				next[restart] = st.NextPoll.Sub(st.LastPoll)
				// The validators were kept: the page is asked for conditionally.
				if st := pollAtNext(t, e, clk, "r"); st.LastOutcome != OutcomeNotModified {
					t.Errorf("%s: first poll after the change: %s %s, want a 304", how, st.LastOutcome, st.LastError)
				}
				closeBadger(t, db)
			}
			if next[false] != next[true] {
				t.Errorf("next poll +%v after the reload, +%v after the restart", next[false], next[true])
			}
		})
	}
}

// A start under a new policy that makes the resource overdue places it as
// a start places every overdue resource, within the first minute (a reload
// makes it due at once), and the state records the policy its next poll
// was placed under: the next start under the same policy keeps what the
// polls since decided (here a server's max-age floor) instead of placing
// it again, and a start under the first policy again places it again.
func TestPolicyChangeAtRestartOverdueThenKept(t *testing.T) {
	p := newPolicyPage(t)
	clk := newFakeClock(t0)
	cfgOf := func(interval string) *config.Config {
		return testConfig(t, policyYAML(p.o.url("/p"), "{kind: flat, interval: 1h}", ", policy: {kind: flat, interval: "+interval+"}"))
	}
	dir := t.TempDir()
	db := badgerAt(t, dir)
	e := newTestEngine(t, cfgOf("1h"), db, clk)
	first := pollAtNext(t, e, clk, "r")
	closeBadger(t, db)

	clk.Set(first.LastPoll.Add(10 * time.Minute))
	db = badgerAt(t, dir)
	e = newTestEngine(t, cfgOf("5m"), db, clk)
	st, _ := e.Status("r")
	if now := clk.Now(); st.NextPoll.Before(now) || !st.NextPoll.Before(now.Add(firstPollWindow)) {
		t.Fatalf("overdue under the new policy: next poll at +%v from the start, want within the first %v", st.NextPoll.Sub(now), firstPollWindow)
	}
	p.maxAge.Store(int64((30 * time.Minute) / time.Second))
	st = pollAtNext(t, e, clk, "r")
	if st.LastOutcome != OutcomeNotModified || st.NextPoll != st.LastPoll.Add(30*time.Minute) {
		t.Fatalf("poll under the new policy: %s, next at +%v; want a 304 and the server's 30m floor", st.LastOutcome, st.NextPoll.Sub(st.LastPoll))
	}
	closeBadger(t, db)

	clk.Advance(time.Minute)
	db = badgerAt(t, dir)
	e = newTestEngine(t, cfgOf("5m"), db, clk)
	if again, _ := e.Status("r"); again.NextPoll != st.NextPoll {
		t.Fatalf("restarted under the same policy: next poll at +%v from the last, want +%v as stored", again.NextPoll.Sub(again.LastPoll), st.NextPoll.Sub(st.LastPoll))
	}
	closeBadger(t, db)

	// Back to the first policy: the state's is the second one's now.
	db = badgerAt(t, dir)
	defer closeBadger(t, db)
	e = newTestEngine(t, cfgOf("1h"), db, clk)
	if back, _ := e.Status("r"); back.NextPoll != st.LastPoll.Add(time.Hour) {
		t.Fatalf("restarted under the first policy again: next poll at +%v from the last, want +1h", back.NextPoll.Sub(back.LastPoll))
	}
}

// Every field of a resolved policy is part of its key (a reload compares
// them all), so a field added to config.Policy without being hashed fails
// here; the budget's settings are part of a budget policy's key only.
func TestPolicyKeyCoversEveryField(t *testing.T) {
	base := PolicyConfig{Kind: KindSmart, Interval: time.Hour, Alpha: 0.5, Initial: 10 * time.Minute, Min: time.Minute, Max: time.Hour, Weight: 1}
	bs := BudgetSettings{Total: 100, PerResource: 24, MaxInterval: 48 * time.Hour}
	k := policyKey(base, bs)
	v := reflect.ValueOf(&base).Elem()
	for i := range v.NumField() {
		c := base
		f := reflect.ValueOf(&c).Elem().Field(i)
		switch f.Kind() {
		case reflect.String:
			f.SetString(KindFlat)
		case reflect.Int64:
			f.SetInt(f.Int() + 1)
		case reflect.Float64:
			f.SetFloat(f.Float() + 0.25)
		case reflect.Bool:
			f.SetBool(!f.Bool())
		default:
			t.Fatalf("field %s of kind %s: extend this test and policyKey", v.Type().Field(i).Name, f.Kind())
		}
		if policyKey(c, bs) == k {
			t.Errorf("a change of %s leaves the key as it was", v.Type().Field(i).Name)
		}
	}
	other := bs
	other.MaxInterval = 24 * time.Hour
	if policyKey(base, other) != k {
		t.Error("the budget's settings change a smart policy's key")
	}
	bud := base
	bud.Kind = KindBudget
	if policyKey(bud, other) == policyKey(bud, bs) {
		t.Error("the budget's settings leave a budget policy's key as it was")
	}
}
