package poller

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/dynamo-rss/dynamo/config"
	"github.com/dynamo-rss/dynamo/storage/badger"
)

// utcProgress puts p's progress times in UTC, as a decoded progress has
// them (the JSON state keeps a time's offset; the instant is the same).
func utcProgress(p persisted) persisted {
	if !p.LastPoll.IsZero() {
		p.LastPoll = p.LastPoll.UTC()
	}
	if !p.NextPoll.IsZero() {
		p.NextPoll = p.NextPoll.UTC()
	}
	return p
}

// A state stored in two parts, the rest and the progress, decodes to what
// the whole state decodes to (with the progress's strings as they were,
// even where they are not UTF-8).
func TestProgressSplitDecodesAsWhole(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	tested := 0
	for i := range 20000 {
		p := randomState(rng)
		p.Progress = false // a whole state
		whole, err := p.marshal()
		if err != nil {
			continue // a value JSON cannot hold (see TestAppendStateAsEncodingJSON)
		}
		want, err := unmarshalState(whole)
		if err != nil {
			t.Fatalf("state %d: %v", i, err)
		}
		rest := p.withoutProgress()
		b, err := rest.marshal()
		if err != nil {
			t.Fatalf("state %d: the rest does not encode: %v", i, err)
		}
		got, err := unmarshalState(b)
		if err != nil {
			t.Fatalf("state %d: %v", i, err)
		}
		if err := got.loadSplit(b, appendProgress(nil, &p)); err != nil {
			t.Fatalf("state %d: %v", i, err)
		}
		got.restHash = 0
		// JSON replaces invalid UTF-8; the progress keeps the bytes.
		want.LastOutcome, want.LastError, want.Validators = p.LastOutcome, p.LastError, p.Validators
		if want = utcProgress(want); !reflect.DeepEqual(got, want) {
			t.Fatalf("state %d: two parts decode to\n%+v\nwant\n%+v", i, got, want)
		}
		tested++
	}
	if tested < 15000 {
		t.Fatalf("only %d of 20000 random states encodable", tested)
	}
}

// The progress does not hold what most polls leave alone: a state that
// differs only in its progress has the same rest.
func TestProgressLeavesTheRest(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	p := randomState(rng)
	p.Policy.Alpha = 0.5
	q := p
	q.LastPoll, q.NextPoll = time.Unix(1e9, 0), time.Unix(2e9, 5)
	q.LastOutcome, q.LastError = OutcomeUnchanged, "a long error message"
	q.Polls, q.Changes, q.Errors, q.Failures = p.Polls+1, p.Changes+1, p.Errors+1, p.Failures+1
	q.BodyHash = p.BodyHash + 1
	q.Validators = validators{ETag: `"v2"`, LastModified: "Mon, 23 Nov 2026 10:00:00 GMT"}
	q.Policy.Wait, q.Policy.Unchanged = p.Policy.Wait*2, p.Policy.Unchanged+1
	q.HistorySeq, q.HistoryVersions = p.HistorySeq+1, p.HistoryVersions+1
	a, b := p.withoutProgress(), q.withoutProgress()
	ab, err := a.marshal()
	if err != nil {
		t.Fatal(err)
	}
	bb, err := b.marshal()
	if err != nil {
		t.Fatal(err)
	}
	if string(ab) != string(bb) {
		t.Errorf("rests differ:\n%s\n%s", ab, bb)
	}
	if len(appendProgress(nil, &q)) > 150 {
		t.Errorf("progress of %d bytes, want a small one", len(appendProgress(nil, &q)))
	}
}

// An undecodable progress is refused and leaves the state as it was.
func TestProgressMalformed(t *testing.T) {
	p := persisted{Polls: 7, LastOutcome: OutcomeChanged}
	good := appendProgress(nil, &persisted{Polls: 9, LastPoll: time.Unix(5, 6)})
	// A time whose nanoseconds are a whole second (the encoder never writes one).
	last := appendProgress(nil, &persisted{Polls: 9, LastPoll: time.Unix(5, 999_999_999)})
	wholeSecond := bytes.Replace(last, binary.AppendUvarint(nil, 999_999_999), binary.AppendUvarint(nil, 1e9), 1)
	if bytes.Equal(wholeSecond, last) {
		t.Fatal("the nanoseconds not found in the encoded progress")
	}
	for _, b := range [][]byte{nil, {}, {2}, good[:len(good)-1], append(good[:len(good):len(good)], 0), {1, 7}, wholeSecond} {
		q := p
		if err := q.applyProgress(b); err == nil {
			t.Errorf("progress %v decoded", b)
		}
		if !reflect.DeepEqual(q, p) {
			t.Errorf("progress %v changed the state to %+v", b, q)
		}
	}
}

// No bytes make the progress decoder panic, and what it decodes encodes
// to bytes that decode the same.
func FuzzProgress(f *testing.F) {
	f.Add(appendProgress(nil, &persisted{}))
	f.Add(appendProgress(nil, &persisted{Polls: 3, LastPoll: time.Unix(1e9, 1), LastError: "x", HistorySeq: 1 << 60}))
	f.Add([]byte{1, 1, 0x80})
	f.Fuzz(func(t *testing.T, b []byte) {
		var p persisted
		if p.applyProgress(b) != nil {
			return
		}
		var q persisted
		if err := q.applyProgress(appendProgress(nil, &p)); err != nil {
			t.Fatalf("re-encoded progress undecodable: %v", err)
		}
		if !reflect.DeepEqual(p, q) {
			t.Fatalf("decoded %+v, then %+v", p, q)
		}
	})
}

// newsOnBadger serves body as the page of resource news, declared by
// resources (a YAML tail whose %q takes the page's URL), over a Badger store.
func newsOnBadger(t *testing.T, body, resources string) (*origin, *fakeClock, *config.Config, *badger.DB) {
	t.Helper()
	o := newOrigin(t)
	o.set(body)
	cfg := testConfig(t, baseYAML(fmt.Sprintf(resources, o.url("/news.html"))))
	db, err := badger.Open(t.TempDir(), badger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return o, newFakeClock(t0), cfg, db
}

const newsResource = "resources:\n  - {id: news, url: %q}\n"

// With Badger, a poll that finds the page as it was writes the state's
// progress only; a restart, one by one or in one pass, resumes from both
// parts; a change writes the rest again.
func TestUnchangedPollWritesProgressOnly(t *testing.T) {
	o, clk, cfg, db := newsOnBadger(t, page("News", "one", "two"), newsResource)
	ctx := t.Context()
	stored := func() (string, string) {
		t.Helper()
		st, pr, err := db.PollStateProgress(ctx, "news")
		if err != nil || pr == nil {
			t.Fatalf("state %s, progress %v, %v", st, pr, err)
		}
		return string(st), string(pr)
	}

	e := newTestEngine(t, cfg, db, clk)
	pollAtNext(t, e, clk, "news") // changed: a first version
	st1, pr1 := stored()
	pollAtNext(t, e, clk, "news") // the same bytes
	s := pollAtNext(t, e, clk, "news")
	if s.LastOutcome != OutcomeUnchanged || s.Polls != 3 {
		t.Fatalf("status %+v, want the third poll unchanged", s)
	}
	st3, pr3 := stored()
	if st3 != st1 {
		t.Errorf("unchanged polls rewrote the state:\n%s\n%s", st1, st3)
	}
	if pr3 == pr1 {
		t.Error("unchanged polls did not write their progress")
	}

	e.mu.Lock()
	want := e.resources["news"].st
	e.mu.Unlock()
	want = utcProgress(want)
	want.V = stateVersion // set by decoding
	e2 := newTestEngine(t, cfg, db, clk)
	e2.mu.Lock()
	got := e2.resources["news"].st
	e2.mu.Unlock()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("restarted with\n%+v\nwant\n%+v", got, want)
	}
	loaded := map[string]persisted{}
	if err := newStateReader(db, e2.log).loadBulk(ctx, []string{"news"}, loaded); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(loaded["news"], want) {
		t.Errorf("read in one pass\n%+v\nwant\n%+v", loaded["news"], want)
	}

	o.set(page("News", "one", "two", "three"))
	if s := pollAtNext(t, e2, clk, "news"); s.LastOutcome != OutcomeChanged || s.Polls != 4 {
		t.Fatalf("status %+v, want a fourth poll that changed", s)
	}
	if st4, _ := stored(); st4 == st3 {
		t.Error("a change did not write the state")
	}
}

// A budget resource's polls that add no postings leave the stored rest as
// it was (its rate state moves at every poll, but an older snapshot
// resumes the same); a poll that adds postings stores it.
func TestBudgetUnchangedPollWritesProgressOnly(t *testing.T) {
	o, clk, cfg, db := newsOnBadger(t, datedPage("Site", "one", t0.Add(-time.Hour)), `  budget: {polls_per_day: 48, max_interval: 24h}
resources:
  - {id: news, url: %q, policy: {kind: budget}}
`)
	rest := func() string {
		t.Helper()
		st, _, err := db.PollStateProgress(t.Context(), "news")
		if err != nil {
			t.Fatal(err)
		}
		return string(st)
	}
	e := newTestEngine(t, cfg, db, clk)
	pollAtNext(t, e, clk, "news")
	first := rest()
	if !strings.Contains(first, `"rate":`) {
		t.Fatalf("no rate state stored: %s", first)
	}
	for range 3 {
		if s := pollAtNext(t, e, clk, "news"); s.LastOutcome != OutcomeUnchanged {
			t.Fatalf("outcome %s, want unchanged", s.LastOutcome)
		}
	}
	if got := rest(); got != first {
		t.Errorf("polls without postings rewrote the state:\n%s\n%s", first, got)
	}
	o.set(datedPage("Site", "two", clk.Now()))
	if s := pollAtNext(t, e, clk, "news"); s.LastOutcome != OutcomeChanged {
		t.Fatalf("outcome %s, want changed", s.LastOutcome)
	}
	if got := rest(); got == first {
		t.Error("a poll that added postings did not store the rate state")
	}
}

// A version that does not know the progress writes the whole state and
// leaves a progress stored before; the whole state wins.
func TestProgressIgnoredBesideAWholeState(t *testing.T) {
	_, clk, cfg, db := newsOnBadger(t, page("News", "one"), newsResource)
	e := newTestEngine(t, cfg, db, clk)
	pollAtNext(t, e, clk, "news")
	pollAtNext(t, e, clk, "news")
	_, stale, err := db.PollStateProgress(t.Context(), "news")
	if err != nil || stale == nil {
		t.Fatalf("progress %v, %v", stale, err)
	}
	// What an older version writes after more polls: the whole state, and
	// nothing about the progress (rewritten here as it was).
	e.mu.Lock()
	whole := e.resources["news"].st
	e.mu.Unlock()
	whole.Polls, whole.NextPoll = 10, clk.Now().Add(3*time.Hour)
	b, err := whole.marshal()
	if err != nil {
		t.Fatal(err)
	}
	if err := db.SavePollStateRecords(t.Context(), "news", b, stale, whole.HistorySeq+1, [][]byte{[]byte("{}")}, historyMax); err != nil {
		t.Fatal(err)
	}
	e2 := newTestEngine(t, cfg, db, clk)
	if s, _ := e2.Status("news"); s.Polls != 10 || !s.NextPoll.Equal(whole.NextPoll) {
		t.Errorf("restarted with %d polls, next %v; want the whole state's 10, %v", s.Polls, s.NextPoll, whole.NextPoll)
	}
}
