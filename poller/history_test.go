package poller

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dynamo-rss/dynamo/config"
	"github.com/dynamo-rss/dynamo/storage/badger"
)

func TestHistoryRecordsEveryPoll(t *testing.T) {
	o := newOrigin(t)
	clk := newFakeClock(t0)
	ms := newMemStore()
	cfg := testConfig(t, baseYAML(fmt.Sprintf("resources:\n  - {id: news, url: %q}\n", o.url("/news.html"))))
	e := newTestEngine(t, cfg, ms, clk)

	steps := []struct {
		body     string
		outcome  string
		versions int
	}{
		{page("Site", "first"), OutcomeChanged, 1},
		{page("Site", "first"), OutcomeUnchanged, 1},
		{page("Site", "second", "first"), OutcomeChanged, 2},
		{"<html><body>no annotations</body></html>", OutcomeNotAnnotated, 2}, // did not save: the count carries over
	}
	var starts []time.Time
	for _, s := range steps {
		o.set(s.body)
		before, _ := e.Status("news")
		starts = append(starts, before.NextPoll)
		pollAtNext(t, e, clk, "news")
	}
	e.mu.Lock()
	inMemory := len(e.resources["news"].st.History)
	e.mu.Unlock()
	if inMemory != 0 {
		t.Errorf("the engine keeps %d polls of history in memory; it belongs in the stored state only", inMemory)
	}
	h, ok := e.History(t.Context(), "news")
	if !ok {
		t.Fatal("History(news): unknown")
	}
	if len(h) != len(steps) {
		t.Fatalf("history has %d polls, want %d: %+v", len(h), len(steps), h)
	}
	for i, s := range steps {
		r := h[i]
		if r.Outcome != s.outcome || r.Versions != s.versions {
			t.Errorf("poll %d: %s with %d versions, want %s with %d", i+1, r.Outcome, r.Versions, s.outcome, s.versions)
		}
		if !r.Time.Equal(starts[i].Truncate(time.Second)) {
			t.Errorf("poll %d at %v, want %v", i+1, r.Time, starts[i])
		}
		if r.Wait <= 0 {
			t.Errorf("poll %d: wait %v, want the next poll's wait", i+1, r.Wait)
		}
	}
	st, _ := e.Status("news")
	if last := h[len(h)-1]; last.Tau != st.Tau || last.Wait != st.NextPoll.Sub(clk.Now()) {
		t.Errorf("last record τ %v wait %v, status τ %v next in %v", last.Tau, last.Wait, st.Tau, st.NextPoll.Sub(clk.Now()))
	}
	if _, ok := e.History(t.Context(), "nope"); ok {
		t.Error("History of an unknown id: ok")
	}

	// The history is part of the persisted state: a new engine on the same store has it.
	e2 := newTestEngine(t, cfg, ms, clk)
	h2, _ := e2.History(t.Context(), "news")
	if len(h2) != len(h) || h2[0] != h[0] {
		t.Errorf("after restart: %+v, want %+v", h2, h)
	}
}

func TestHistoryBounds(t *testing.T) {
	var h pollHistory
	start := t0
	for i := range historyMax + 10 {
		h = h.add(PollRecord{Time: start.Add(time.Duration(i) * time.Minute), Outcome: OutcomeUnchanged})
	}
	if len(h) != historyMax {
		t.Fatalf("%d records, want the last %d", len(h), historyMax)
	}
	if want := start.Add(10 * time.Minute); !h[0].Time.Equal(want) {
		t.Errorf("oldest kept %v, want %v", h[0].Time, want)
	}
	// A poll five weeks later drops everything older than four weeks.
	late := start.Add(35 * 24 * time.Hour)
	h = h.add(PollRecord{Time: late, Outcome: OutcomeChanged})
	if len(h) != 1 || !h[0].Time.Equal(late) {
		t.Errorf("after a five-week gap: %d records, want only the new one", len(h))
	}
}

func TestPollRecordJSON(t *testing.T) {
	in := pollHistory{
		{Time: t0, Outcome: OutcomeChanged, Wait: 90 * time.Second, Tau: time.Hour, Versions: 3},
		{Time: t0.Add(time.Minute), Outcome: OutcomeError, Wait: 30 * time.Second, Versions: 3},
	}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var out pollHistory
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("unmarshal %s: %v", b, err)
	}
	for i := range in {
		if !out[i].Time.Equal(in[i].Time) || out[i].Outcome != in[i].Outcome || out[i].Wait != in[i].Wait || out[i].Tau != in[i].Tau || out[i].Versions != in[i].Versions {
			t.Errorf("record %d: %+v, want %+v", i, out[i], in[i])
		}
	}
	if err := json.Unmarshal([]byte(`[[1,"changed"]]`), &out); err == nil {
		t.Error("a short record decoded without error")
	}
}

// TestHistoryJSON checks that the fast history encoding round-trips, that
// the scanner and encoding/json read the same, and that a history written
// in another layout (spaces, escapes) is still read.
func TestHistoryJSON(t *testing.T) {
	var h pollHistory
	for i := range 50 {
		h = h.add(PollRecord{Time: t0.Add(time.Duration(i) * time.Minute), Outcome: Outcomes()[i%len(Outcomes())],
			Wait: time.Duration(i) * time.Second, Tau: time.Duration(2*i) * time.Second, Versions: i / 3})
	}
	b, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	var back pollHistory
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, h) {
		t.Fatalf("round trip: %v\n%+v\n%+v", err, back, h)
	}
	var generic []PollRecord // the per-record decoder, which knows nothing of the scanner
	if err := json.Unmarshal(b, &generic); err != nil || !reflect.DeepEqual(pollHistory(generic), h) {
		t.Fatalf("the per-record decoder reads the fast encoding differently: %v", err)
	}
	for _, in := range []string{
		`[ [1764000000, "changed", 60, 0, 1] ]`,
		`[[1764000000,"chan\u0067ed",60,0,1]]`,
		`[]`,
	} {
		var got pollHistory
		if err := json.Unmarshal([]byte(in), &got); err != nil {
			t.Errorf("%s: %v", in, err)
			continue
		}
		if in != `[]` && (len(got) != 1 || got[0].Outcome != "changed" || got[0].Wait != time.Minute) {
			t.Errorf("%s: read %+v", in, got)
		}
	}
	var bad pollHistory
	if err := json.Unmarshal([]byte(`[[1,"x",2]]`), &bad); err == nil {
		t.Error("a short record was accepted")
	}
}

// The history is the last member of the stored state and read back from it
// alone, whatever the other members hold.
func TestHistoryOfState(t *testing.T) {
	at := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	var h pollHistory
	for i := range 3 {
		h = h.add(PollRecord{Time: at.Add(time.Duration(i) * time.Hour), Outcome: OutcomeUnchanged, Wait: time.Hour, Versions: 1})
	}
	for _, st := range []persisted{
		{URL: "https://example.org/", History: h},
		{URL: "https://example.org/", LastError: `trap ,"history":[[1,"error",0,0,0]]}`, History: h},
		{URL: "https://example.org/", LastError: `no history here ,"history":`},
	} {
		b, err := st.marshal()
		if err != nil {
			t.Fatal(err)
		}
		got, err := historyOf(b)
		if err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if !reflect.DeepEqual(got, st.History) {
			t.Errorf("%s:\nhistory %+v, want %+v", b, got, st.History)
		}
		back, err := unmarshalState(b)
		if err != nil || back.LastError != st.LastError || back.History != nil {
			t.Errorf("%s: state read back %+v, %v", b, back, err)
		}
	}
	if _, err := historyOf([]byte(`{"v":1,"history":[[1,"error",0,0,0]]`)); err == nil {
		t.Error("a truncated state: no error")
	}
}

// recordPoll (for tests) appends the poll that just ended to st's history: started at
// start, ending in outcome, followed by wait; versions is the number of
// versions stored after it (0 when the poll did not save, so did not learn
// it: then the previous record's count carries over).
func recordPoll(st *persisted, start time.Time, outcome string, wait time.Duration, versions int) {
	if versions <= 0 && len(st.History) > 0 {
		versions = st.History[len(st.History)-1].Versions
	}
	st.History = st.History.add(PollRecord{
		Time:     start.UTC().Truncate(time.Second),
		Outcome:  outcome,
		Wait:     wait,
		Tau:      st.Policy.Tau,
		Versions: versions,
	})
}

// appendRecord, on the encoded history, gives what add and MarshalJSON give
// on the decoded one, over long random runs (gaps beyond four weeks, polls
// that did not save) and on encodings it must decode instead.
func TestAppendRecordSameAsAdd(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	outcomes := Outcomes()
	for run := range 20 {
		var (
			h   pollHistory
			raw []byte
			at  = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		)
		for i := range 600 {
			gap := time.Duration(rng.IntN(6*3600)) * time.Second
			if rng.IntN(100) == 0 {
				gap = time.Duration(20+rng.IntN(20)) * 24 * time.Hour
			}
			at = at.Add(gap)
			rec := PollRecord{Time: at, Outcome: outcomes[rng.IntN(len(outcomes))], Wait: time.Duration(rng.IntN(9000)) * time.Second,
				Tau: time.Duration(rng.IntN(9000)) * time.Second, Versions: rng.IntN(3) * rng.IntN(1000)}
			want := rec
			if want.Versions <= 0 && len(h) > 0 {
				want.Versions = h[len(h)-1].Versions
			}
			h = h.add(want)
			wantRaw, _ := h.MarshalJSON()
			raw = appendRecord(raw, rec)
			if !bytes.Equal(raw, wantRaw) {
				t.Fatalf("run %d, poll %d:\n got %s\nwant %s", run, i, raw, wantRaw)
			}
		}
	}
	rec := PollRecord{Time: time.Unix(1000, 0).UTC(), Outcome: OutcomeChanged, Versions: 0}
	for _, tc := range []struct{ raw, want string }{
		{``, `[[1000,"changed",0,0,0]]`},
		{`[]`, `[[1000,"changed",0,0,0]]`},
		{`[[900,"unchanged",60,0,7]]`, `[[900,"unchanged",60,0,7],[1000,"changed",0,0,7]]`},
		{`[ [900, "unchanged", 60, 0, 7] ]`, `[[900,"unchanged",60,0,7],[1000,"changed",0,0,7]]`}, // spaced: decoded
		{`[[900,"unchanged",60,0,7],]`, `[[900,"unchanged",60,0,7],[1000,"changed",0,0,7]]`},
		{`not json`, `[[1000,"changed",0,0,0]]`},
		{`[[900,"a\"b",60,0,7]]`, `[[900,"a\"b",60,0,7],[1000,"changed",0,0,7]]`},
		{`[[900,"a,b,c,d"]]`, `[[1000,"changed",0,0,0]]`}, // undecodable: a new history
		{`[[900,"x",a,b,c]]`, `[[1000,"changed",0,0,0]]`},
		{`[[900, "unchanged", 60, 0, 7]]`, `[[900,"unchanged",60,0,7],[1000,"changed",0,0,7]]`}, // spaced: decoded
		{`[[900,"unchanged",60,0,]]`, `[[1000,"changed",0,0,0]]`},                               // a number missing at the end
		{`[[900,"unchanged",60,,7]]`, `[[1000,"changed",0,0,0]]`},                               // or inside
		{`[[900,"unchanged",60,0,-3]]`, `[[900,"unchanged",60,0,-3],[1000,"changed",0,0,-3]]`},  // a negative count carried as add carries it
	} {
		if got := appendRecord([]byte(tc.raw), rec); string(got) != tc.want {
			t.Errorf("appendRecord(%s) = %s, want %s", tc.raw, got, tc.want)
		}
	}
}

// flakyStates fails PollState while fail is set.
type flakyStates struct {
	*memStore
	fail atomic.Bool
}

func (f *flakyStates) PollState(ctx context.Context, id string) ([]byte, error) {
	if f.fail.Load() {
		return nil, errors.New("disk hiccup")
	}
	return f.memStore.PollState(ctx, id)
}

// A poll whose stored history cannot be read does not replace it with
// itself alone.
func TestHistoryKeptWhenUnreadable(t *testing.T) {
	o := newOrigin(t)
	clk := newFakeClock(t0)
	fs := &flakyStates{memStore: newMemStore()}
	cfg := testConfig(t, baseYAML(fmt.Sprintf("resources:\n  - {id: news, url: %q}\n", o.url("/news.html"))))
	e := newTestEngine(t, cfg, fs, clk)
	pollAtNext(t, e, clk, "news")
	pollAtNext(t, e, clk, "news")
	fs.fail.Store(true)
	pollAtNext(t, e, clk, "news")
	fs.fail.Store(false)
	if h, _ := e.History(t.Context(), "news"); len(h) != 2 {
		t.Fatalf("history after an unreadable one: %d polls, want the 2 stored before", len(h))
	}
	pollAtNext(t, e, clk, "news")
	if h, _ := e.History(t.Context(), "news"); len(h) != 3 {
		t.Fatalf("history: %d polls, want 3", len(h))
	}
}

// Many resources start from their stored states read in one pass (a store
// with PollStates), as they would one by one: from bulkLoadMin resources
// on, and one by one below.
func TestStatesLoadedInOnePass(t *testing.T) {
	for _, n := range []int{bulkLoadMin, bulkLoadMin - 1, bulkLoadMin + 44} {
		t.Run(fmt.Sprint(n), func(t *testing.T) { statesLoadedInOnePass(t, n) })
	}
}

func statesLoadedInOnePass(t *testing.T, n int) {
	db, err := badger.Open(t.TempDir(), badger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var sb strings.Builder
	sb.WriteString("resources:\n")
	for i := range n {
		fmt.Fprintf(&sb, "  - {id: r%d, url: \"http://127.0.0.1:9/p%d\", policy: {kind: flat, interval: 1h}}\n", i, i)
		if i%2 == 0 { // half have a stored state
			st := persisted{URL: fmt.Sprintf("http://127.0.0.1:9/p%d", i), Kind: KindFlat, Polls: int64(i + 1), NextPoll: t0.Add(time.Duration(i) * time.Minute)}
			b, err := st.marshal()
			if err != nil {
				t.Fatal(err)
			}
			if err := db.SavePollState(t.Context(), fmt.Sprint("r", i), b); err != nil {
				t.Fatal(err)
			}
		}
	}
	clk := newFakeClock(t0)
	cs := &countingStates{DB: db}
	e := newTestEngine(t, testConfig(t, baseYAML(sb.String())), cs, clk)
	want := int64(0)
	if n < bulkLoadMin {
		want = int64(n)
	}
	if r := cs.reads.Load(); r != want {
		t.Errorf("%d resources: %d states read one by one at start-up, want %d", n, r, want)
	}
	for i := range n {
		s, ok := e.Status(fmt.Sprint("r", i))
		if !ok {
			t.Fatalf("r%d unknown", i)
		}
		if want := int64(0); i%2 == 0 && s.Polls != int64(i+1) || i%2 == 1 && s.Polls != want {
			t.Errorf("r%d: %d polls, want the stored state's", i, s.Polls)
		}
	}
}

// countingStates counts the states read one by one.
type countingStates struct {
	*badger.DB
	reads atomic.Int64
}

func (c *countingStates) PollState(ctx context.Context, id string) ([]byte, error) {
	c.reads.Add(1)
	return c.DB.PollState(ctx, id)
}

// PollStateProgress is how an engine on a store that keeps histories of
// their own (Badger) reads a state one by one.
func (c *countingStates) PollStateProgress(ctx context.Context, id string) (state, progress []byte, err error) {
	c.reads.Add(1)
	return c.DB.PollStateProgress(ctx, id)
}

// With Badger (a historyStore) each poll appends its own record, written
// with the state and never read back; a history that an older version kept
// inside the state moves out with the first poll.
func TestHistoryRecordsOfTheirOwn(t *testing.T) {
	o := newOrigin(t)
	clk := newFakeClock(t0)
	cfg := testConfig(t, baseYAML(fmt.Sprintf("resources:\n  - {id: news, url: %q}\n", o.url("/news.html"))))

	// Two polls on a store without records: the history is in the state.
	db := badgerWithLegacyHistory(t, o, cfg, clk, 2)

	e := newTestEngine(t, cfg, db, clk)
	if h, _ := e.History(t.Context(), "news"); len(h) != 2 {
		t.Fatalf("before the first poll: %d polls, want the 2 in the state", len(h))
	}
	pollAtNext(t, e, clk, "news")                     // unchanged
	o.set("<html><body>no annotations</body></html>") // did not save: the count carries over
	pollAtNext(t, e, clk, "news")
	h, _ := e.History(t.Context(), "news")
	var got []string
	for _, r := range h {
		got = append(got, fmt.Sprint(r.Outcome, "/", r.Versions))
	}
	want := []string{OutcomeChanged + "/1", OutcomeUnchanged + "/1", OutcomeUnchanged + "/1", OutcomeNotAnnotated + "/1"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("history %v, want %v", got, want)
	}
	state, err := db.PollState(t.Context(), "news")
	if err != nil {
		t.Fatal(err)
	}
	if raw, _ := rawHistory(state); raw != nil {
		t.Errorf("the state still holds a history: %s", raw)
	}
	recs, err := db.PollRecords(t.Context(), "news")
	if err != nil || len(recs) != 4 {
		t.Fatalf("%d records stored, %v; want 4", len(recs), err)
	}
	// A restarted engine reads the same history.
	e2 := newTestEngine(t, cfg, db, clk)
	if h2, _ := e2.History(t.Context(), "news"); !reflect.DeepEqual(h2, h) {
		t.Errorf("after restart %+v, want %+v", h2, h)
	}
}

// failingRecords is Badger whose SavePollStateRecords fails while fail is set.
type failingRecords struct {
	*badger.DB
	fail atomic.Bool
}

func (f *failingRecords) SavePollStateRecords(ctx context.Context, id string, state, progress []byte, first uint64, recs [][]byte, keep uint64) error {
	if f.fail.Load() {
		return errors.New("disk hiccup")
	}
	return f.DB.SavePollStateRecords(ctx, id, state, progress, first, recs, keep)
}

// A failed save of the poll that moves the history out of the state loses
// nothing: the next poll moves it again, with both polls' records.
func TestHistoryKeptWhenTheMoveFails(t *testing.T) {
	o := newOrigin(t)
	clk := newFakeClock(t0)
	cfg := testConfig(t, baseYAML(fmt.Sprintf("resources:\n  - {id: news, url: %q}\n", o.url("/news.html"))))
	db := badgerWithLegacyHistory(t, o, cfg, clk, 3)
	fr := &failingRecords{DB: db}
	e := newTestEngine(t, cfg, fr, clk)
	fr.fail.Store(true)
	pollAtNext(t, e, clk, "news") // its save fails: the state keeps the old history
	fr.fail.Store(false)
	pollAtNext(t, e, clk, "news")
	pollAtNext(t, e, clk, "news")
	h, _ := e.History(t.Context(), "news")
	// 3 old polls, then the two saved ones (the failed poll's record is lost
	// with its save, as any state of a failed save is).
	if len(h) != 5 {
		t.Fatalf("history has %d polls, want 5: %+v", len(h), h)
	}
	recs, err := db.PollRecords(t.Context(), "news")
	if err != nil || len(recs) != 5 {
		t.Fatalf("%d records, %v; want 5 numbered without a gap", len(recs), err)
	}
}

// badgerWithLegacyHistory polls "news" n times on a store without history
// records, so that its history is inside the state as an older version kept
// it, and returns a Badger store holding that state (closed with the test).
func badgerWithLegacyHistory(t *testing.T, o *origin, cfg *config.Config, clk *fakeClock, n int) *badger.DB {
	t.Helper()
	ms := newMemStore()
	old := newTestEngine(t, cfg, ms, clk)
	o.set(page("Site", "first"))
	for range n {
		pollAtNext(t, old, clk, "news")
	}
	legacy, err := ms.PollState(t.Context(), "news")
	if err != nil {
		t.Fatal(err)
	}
	db, err := badger.Open(t.TempDir(), badger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.SavePollState(t.Context(), "news", legacy); err != nil {
		t.Fatal(err)
	}
	return db
}

// TestRecordPollEmptyLegacy: a state whose history was stored in it, but
// empty ("history":[]), gives the first record its number 1 and keeps the
// versions the record says.
func TestRecordPollEmptyLegacy(t *testing.T) {
	var p persisted
	first, recs := p.recordPoll([]byte("[]"), PollRecord{Time: t0, Outcome: OutcomeChanged, Versions: 3})
	if first != 1 || len(recs) != 1 || p.HistorySeq != 1 || p.HistoryVersions != 3 {
		t.Errorf("first %d, %d records, seq %d, versions %d; want 1, 1, 1, 3", first, len(recs), p.HistorySeq, p.HistoryVersions)
	}
}

// TestScanHistoryFastPath checks the small scanner a start-up reads every
// history with: it takes what MarshalJSON writes, and JSON's whitespace
// anywhere, giving what encoding/json gives; it refuses (for encoding/json
// to read, or to refuse) anything else, never reading it wrongly.
func TestScanHistoryFastPath(t *testing.T) {
	for _, in := range []string{
		`[]`, ` [ ] `, "[\n]\t",
		`[[1000,"changed",60,0,7]]`,
		`[[1000,"changed",60,0,7],[-5,"error",0,-1,0]]`,
		" [ [ 1000 , \"unchanged\" , 60 , 30 , 7 ] ,\n\t[\r1060,\"not-modified\",60,30,7]\n] ",
		`[[1000,"some-new-word",1,2,3]]`,
		`[[9223372036,"robots-denied",9223372036,9223372036,2147483647]]`,
	} {
		got, ok := scanHistory([]byte(in))
		var want []PollRecord
		if err := json.Unmarshal([]byte(in), &want); err != nil {
			t.Fatalf("%s: encoding/json: %v", in, err)
		}
		if !ok {
			t.Errorf("scanHistory(%q) refused what encoding/json reads", in)
			continue
		}
		if len(got) != len(want) {
			t.Errorf("scanHistory(%q) = %v, want %v", in, got, want)
			continue
		}
		for i := range want {
			if !got[i].Time.Equal(want[i].Time) || got[i].Outcome != want[i].Outcome || got[i].Wait != want[i].Wait ||
				got[i].Tau != want[i].Tau || got[i].Versions != want[i].Versions {
				t.Errorf("scanHistory(%q)[%d] = %+v, want %+v", in, i, got[i], want[i])
			}
		}
	}
	for _, in := range []string{
		``, `[`, `]`, `[]x`, `[] ]`, `[[]]`, `{}`,
		`[[1000,"changed",60,0,7]`, `[[1000,"changed",60,0,7]]]`, `[[1000,"changed",60,0,7],]`, `[[1000,"changed",60,0,7] [1,"x",1,1,1]]`,
		`[[1000,"changed",60,0]]`, `[[1000,"changed",60,0,7,8]]`, `[[1000;"changed",60,0,7]]`, `[[1000,"changed";60,0,7]]`,
		`[[1000,"changed",60;0,7]]`, `[[1000,"changed",60,0;7]]`, `[[1000,changed,60,0,7]]`, `[[1000,"changed,60,0,7]]`,
		`[[1000,"a\"b",60,0,7]]`, "[[1000,\"a\x01b\",60,0,7]]", `[[,"changed",60,0,7]]`, `[[1000,"changed",,0,7]]`,
		`[[1000,"changed",60,,7]]`, `[[1000,"changed",60,0,]]`, `[[1.5,"changed",60,0,7]]`, `[[1000,"changed",60,0,7)]`,
		`[[1000,"changed",60,0,99999999999999999999]]`,
	} {
		if got, ok := scanHistory([]byte(in)); ok {
			t.Errorf("scanHistory(%q) = %v, want it refused", in, got)
		}
	}
}

// TestPollsDoNotReadTheirState: on Badger a poll appends its own history
// record, so from the second poll on it never reads its stored state back
// (the first moves a history that an older version kept in the state).
func TestPollsDoNotReadTheirState(t *testing.T) {
	db, err := badger.Open(t.TempDir(), badger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	o := newOrigin(t)
	clk := newFakeClock(t0)
	cs := &countingStates{DB: db}
	e := newTestEngine(t, testConfig(t, baseYAML(fmt.Sprintf("resources:\n  - {id: news, url: %q}\n", o.url("/news.html")))), cs, clk)
	pollAtNext(t, e, clk, "news")
	before := cs.reads.Load()
	for i := range 3 {
		o.set(page("Site", fmt.Sprint("item ", i)))
		if st := pollAtNext(t, e, clk, "news"); st.LastOutcome != OutcomeChanged {
			t.Fatalf("poll %d: %q (%s)", i+2, st.LastOutcome, st.LastError)
		}
	}
	if n := cs.reads.Load() - before; n != 0 {
		t.Errorf("%d stored states read back by 3 polls, want none", n)
	}
	if h, _ := e.History(t.Context(), "news"); len(h) != 4 {
		t.Errorf("history of %d polls, want 4", len(h))
	}
}

// recordStore is a state store that keeps records of their own (a
// historyStore), for the histories part alone.
type recordStore struct {
	*memStore
	recs  map[string][][]byte
	err   error // PollRecords fails with it
	saved []uint64
}

func (r *recordStore) SavePollStateRecords(_ context.Context, id string, state, _ []byte, first uint64, recs [][]byte, keep uint64) error {
	r.saved = append(r.saved, first, keep)
	r.states[id] = state
	r.recs[id] = append(r.recs[id], recs...)
	return nil
}

func (r *recordStore) PollRecords(_ context.Context, id string) ([][]byte, error) {
	return r.recs[id], r.err
}

func (r *recordStore) PollStateProgress(ctx context.Context, id string) (state, progress []byte, err error) {
	b, err := r.PollState(ctx, id)
	return b, nil, err
}

// stateWithHistory is a stored flat state whose history is rec.
func stateWithHistory(t *testing.T, rec PollRecord) []byte {
	t.Helper()
	st := persisted{V: stateVersion, Kind: KindFlat}
	b, err := st.marshalWith(appendRecord(nil, rec))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The history part reads a history from the stored state, without an engine.
func TestHistoriesInTheState(t *testing.T) {
	ctx := t.Context()
	store := newMemStore()
	h := newHistories(store, slog.New(slog.DiscardHandler))
	if h.ownRecords() {
		t.Fatal("a plain state store keeps records of their own")
	}
	if got := h.read(ctx, "none"); got != nil {
		t.Errorf("history of an unknown id: %v", got)
	}
	if raw, err := h.raw(ctx, "none"); raw != nil || err != nil {
		t.Errorf("raw history of an unknown id: %q, %v", raw, err)
	}
	rec := PollRecord{Time: t0, Outcome: OutcomeChanged, Wait: time.Hour, Versions: 1}
	store.states["a"] = stateWithHistory(t, rec)
	if got := h.read(ctx, "a"); !reflect.DeepEqual(got, pollHistory{rec}) {
		t.Errorf("history %v, want %v", got, pollHistory{rec})
	}
	raw, err := h.raw(ctx, "a")
	if err != nil || string(raw) != string(appendRecord(nil, rec)) {
		t.Errorf("raw history %q, %v", raw, err)
	}

	fs := &flakyStates{memStore: store}
	fs.fail.Store(true)
	h = newHistories(fs, slog.New(slog.DiscardHandler))
	if raw, err := h.raw(ctx, "a"); raw != nil || err == nil {
		t.Errorf("unreadable state: raw history %q, error %v; want an error", raw, err)
	}
	if got := h.read(ctx, "a"); got != nil {
		t.Errorf("unreadable state: history %v, want none", got)
	}
}

// With a store that keeps records, the history part reads them (the newest
// four weeks), falls back to the state's history while there are none, and
// saves records with the bound.
func TestHistoriesOfTheirOwn(t *testing.T) {
	ctx := t.Context()
	store := &recordStore{memStore: newMemStore(), recs: map[string][][]byte{}}
	h := newHistories(store, slog.New(slog.DiscardHandler))
	if !h.ownRecords() {
		t.Fatal("a historyStore does not keep records of their own")
	}
	legacy := PollRecord{Time: t0, Outcome: OutcomeUnchanged, Wait: time.Hour}
	b := stateWithHistory(t, legacy)
	store.states["a"] = b
	if got := h.read(ctx, "a"); !reflect.DeepEqual(got, pollHistory{legacy}) {
		t.Errorf("before any record: %v, want the state's %v", got, pollHistory{legacy})
	}
	old := PollRecord{Time: t0.Add(-historyAge - time.Hour), Outcome: OutcomeError}
	recs := [][]byte{appendRecordJSON(nil, old), []byte("not a record"), appendRecordJSON(nil, legacy)}
	if err := h.save(ctx, "a", b, nil, 1, recs); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(store.saved, []uint64{1, historyMax}) {
		t.Errorf("saved from %v, want record 1 and the bound %d", store.saved, historyMax)
	}
	if got := h.read(ctx, "a"); !reflect.DeepEqual(got, pollHistory{legacy}) {
		t.Errorf("records: %v, want %v (the old one and the undecodable one left out)", got, pollHistory{legacy})
	}
	store.err = errors.New("disk hiccup")
	if got := h.read(ctx, "a"); !reflect.DeepEqual(got, pollHistory{legacy}) {
		t.Errorf("records unreadable: %v, want the state's %v", got, pollHistory{legacy})
	}
}
