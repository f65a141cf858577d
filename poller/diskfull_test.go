package poller

import (
	"bytes"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/dynamo-rss/dynamo/extractor"
	"github.com/dynamo-rss/dynamo/storage/badger"
)

// A full disk is an outcome, not a crash: the poll reports disk_full, the
// policy learns nothing, the page is retried within diskFullRetry, and the
// next poll after space returns stores the version.
func TestDiskFullOutcomeAndResume(t *testing.T) {
	var free atomic.Uint64
	free.Store(1 << 40)
	db, err := badger.Open(t.TempDir(), badger.Options{
		MemTableSize: 8 << 20,
		MinFree:      1 << 30,
		FreeSpace:    func(string) (uint64, error) { return free.Load(), nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() }) // closed after the engine's cleanups
	o := newOrigin(t)
	clk := newFakeClock(t0)
	cfg := testConfig(t, baseYAML("resources:\n  - {id: r, url: \""+o.url("/")+"\", policy: {kind: smart, initial: 30m, min: 1m, max: 6h}}\n"))
	var logs bytes.Buffer
	e, err := New(t.Context(), cfg, db, Options{Clock: clk, Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })

	if st := pollAtNext(t, e, clk, "r"); st.LastOutcome != OutcomeChanged {
		t.Fatalf("first poll %+v", st)
	}
	before, _ := e.Status("r")

	free.Store(1 << 20)
	o.set(page("Site", "second"))
	st := pollAtNext(t, e, clk, "r")
	if st.LastOutcome != OutcomeDiskFull || !strings.Contains(st.LastError, "disk full") {
		t.Fatalf("poll on a full disk: %+v", st)
	}
	if got := st.NextPoll.Sub(st.LastPoll); got <= 0 || got > diskFullRetry {
		t.Fatalf("retry in %v, want within %v", got, diskFullRetry)
	}
	if st.Tau != before.Tau || st.Changes != before.Changes || st.Errors != before.Errors {
		t.Fatalf("disk full changed what the policy learned: before %+v after %+v", before, st)
	}
	if got := testutil.ToFloat64(e.m.polls.WithLabelValues(OutcomeDiskFull)); got != 1 {
		t.Fatalf("disk_full polls counted %v, want 1", got)
	}
	if info, _ := db.Resource(t.Context(), "r"); info.Versions != 1 {
		t.Fatalf("versions %d while the disk was full, want 1", info.Versions)
	}

	free.Store(1 << 40)
	if st := pollAtNext(t, e, clk, "r"); st.LastOutcome != OutcomeChanged {
		t.Fatalf("poll after space returned: %+v", st)
	}
	if info, _ := db.Resource(t.Context(), "r"); info.Versions != 2 {
		t.Fatalf("versions %d after space returned, want 2", info.Versions)
	}
	for _, want := range []string{"level=WARN msg=\"version not stored: disk full\"", "level=INFO msg=\"version stored\""} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, logs.String())
		}
	}
}

// An origin without validators that answers the same bytes: the poll is
// "unchanged" without extracting; other bytes are extracted again.
func TestSameBodySkipsExtraction(t *testing.T) {
	o := newOrigin(t)
	clk := newFakeClock(t0)
	var extracts atomic.Int64
	cfg := testConfig(t, baseYAML("resources:\n  - {id: r, url: \""+o.url("/")+"\", policy: {kind: flat, interval: 10m}}\n"))
	e := newTestEngineOpts(t, cfg, newMemStore(), Options{Clock: clk, Extract: func(r io.Reader, opts extractor.Options) (*extractor.Result, error) {
		extracts.Add(1)
		return extractor.Extract(r, opts)
	}})
	for i, want := range []struct {
		body     string
		outcome  string
		extracts int64
	}{
		{page("Site", "a"), OutcomeChanged, 1},
		{page("Site", "a"), OutcomeUnchanged, 1},                // same bytes: not extracted
		{page("Site", "a") + "<!-- x -->", OutcomeUnchanged, 2}, // other bytes, same content
		{page("Site", "a") + "<!-- x -->", OutcomeUnchanged, 2},
		{page("Site", "b"), OutcomeChanged, 3},
		// A page without a document: its diagnostics are read at every poll,
		// and the stored document's page, back, is read again for its own.
		{"<html><body>no annotations</body></html>", OutcomeNotAnnotated, 4},
		{"<html><body>no annotations</body></html>", OutcomeNotAnnotated, 5},
		{page("Site", "b"), OutcomeUnchanged, 6},
	} {
		o.set(want.body)
		st := pollAtNext(t, e, clk, "r")
		if st.LastOutcome != want.outcome || extracts.Load() != want.extracts {
			t.Fatalf("poll %d: outcome %s with %d extractions, want %s with %d", i+1, st.LastOutcome, extracts.Load(), want.outcome, want.extracts)
		}
	}
}
