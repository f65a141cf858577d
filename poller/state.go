package poller

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/dynamo-rss/dynamo/storage"
)

// stateVersion is the version of the persisted poll-state encoding.
const stateVersion = 1

// persisted is a resource's poll state, stored as JSON through
// [StateStore.SavePollState] after every poll and read back at start-up and
// when a resource is added, so a restart keeps τ, validators and the schedule.
type persisted struct {
	V           int         `json:"v"`
	URL         string      `json:"url"`
	Kind        string      `json:"kind"` // policy kind in force when saved
	Policy      PolicyState `json:"policy"`
	Validators  validators  `json:"validators"`
	LastPoll    time.Time   `json:"last_poll,omitzero"`
	NextPoll    time.Time   `json:"next_poll,omitzero"`
	LastOutcome string      `json:"last_outcome,omitempty"`
	LastError   string      `json:"last_error,omitempty"`
	Polls       int64       `json:"polls"`
	Changes     int64       `json:"changes"`
	Errors      int64       `json:"errors"`
	Failures    int         `json:"failures,omitempty"` // consecutive errors, for the back-off
	// BodyHash is a hash of the last page body whose document is stored:
	// the same bytes again need no extraction (0: none).
	BodyHash uint64 `json:"body_hash,omitempty"`
	// Extraction is the [extractionKey] of the definition the validators
	// and the body hash were learned under (0: the page's annotations read
	// as they come, which a state saved before this was recorded is taken
	// for). A definition that reads the page otherwise (another node's, or
	// this one's before a restart) does not take them over.
	Extraction uint64 `json:"extraction,omitempty"`
	// PolicyKey is the [policyKey] of the policy the next poll was placed
	// under (0: unknown, a state saved before it was recorded). A start
	// under another policy places it again, as a reload does.
	PolicyKey uint64 `json:"policy_key,omitempty"`
	// Since is when the engine first scheduled the resource (its
	// registration, as far as polling is concerned); empty feeds are dated by it.
	Since time.Time `json:"since,omitzero"`
	// Diagnostics are the last extraction's diagnostics (the first few), for
	// the status pages: a selector that matched nothing, an unreadable date…
	Diagnostics []string `json:"diagnostics,omitempty"`
	// Last describes the last extracted version, to tell which items the
	// next one adds; nil when unknown (nothing extracted yet, or a state
	// saved before it was recorded). It is replaced, never modified in place.
	Last *lastVersion `json:"last_version,omitempty"`
	// History is the recent polls, oldest first (see history.go). It is
	// stored with the state, last, but not kept in memory between polls:
	// a poll reads it back, appends to it and writes it again. With a
	// historyStore the polls are stored as records of their own instead:
	// HistorySeq is the last one's number (0: none yet, the history is
	// still in the state if anywhere) and HistoryVersions its versions.
	History         pollHistory `json:"-"`
	HistorySeq      uint64      `json:"history_seq,omitempty"`
	HistoryVersions int         `json:"history_versions,omitempty"`
	// Progress marks a stored state whose progress fields are stored apart
	// (progress.go); false in memory. A version that does not know it
	// rewrites the whole state without it, so a progress left over from
	// before is then ignored.
	Progress bool `json:"progress,omitempty"`
	// restHash is a hash of the state's rest as last stored beside a
	// progress (0: unknown); never encoded.
	restHash uint64
}

// maxItemIDs bounds how many item ids a [lastVersion] keeps (the first ones
// in document order).
const maxItemIDs = 500

// lastVersion is what the poller remembers of a version's items.
type lastVersion struct {
	Items  []uint64  `json:"items,omitempty"` // FNV-1a 64 hashes of the item ids, at most maxItemIDs
	Newest time.Time `json:"newest,omitzero"` // the newest item publication date; zero for none
}

// UnmarshalJSON reads the hashes as appendState writes them (base64 of
// 8-byte big-endian values under "ids", less than half the size of the
// numbers) or, from states written before, as numbers under "items".
func (l *lastVersion) UnmarshalJSON(b []byte) error {
	var aux struct {
		Items  []uint64  `json:"items"`
		IDs    []byte    `json:"ids"` // base64 in JSON
		Newest time.Time `json:"newest"`
	}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	if len(aux.IDs)%8 != 0 {
		return fmt.Errorf("last version: %d bytes of item hashes, not a multiple of 8", len(aux.IDs))
	}
	l.Items, l.Newest = aux.Items, aux.Newest
	for i := 0; i < len(aux.IDs); i += 8 {
		l.Items = append(l.Items, binary.BigEndian.Uint64(aux.IDs[i:]))
	}
	return nil
}

func (p *persisted) marshal() ([]byte, error) {
	var h []byte
	if len(p.History) > 0 {
		h, _ = p.History.MarshalJSON() // never fails
	}
	return p.marshalWith(h)
}

// marshalWith encodes p with the encoded history h (nil: none) in place of
// p.History.
func (p *persisted) marshalWith(h []byte) ([]byte, error) {
	b, err := appendState(make([]byte, 0, 1024+len(historyKey)+len(h)), p)
	if err != nil {
		return nil, fmt.Errorf("encode poll state: %w", err)
	}
	if len(h) == 0 {
		return b, nil
	}
	// The history goes last, so that rawHistory finds it without decoding the rest.
	b = append(b[:len(b)-1], historyKey...)
	b = append(b, h...)
	return append(b, '}'), nil
}

// historyKey introduces the history in an encoded state.
const historyKey = `,"history":`

// rawHistory returns the encoded history of an encoded state (nil when it
// has none). It is the state's last member (see marshalWith), and its key's
// first occurrence: no other member has that name, and a string inside the
// state cannot hold historyKey, whose quotes would be escaped there.
func rawHistory(state []byte) ([]byte, error) {
	i := bytes.Index(state, []byte(historyKey))
	if i < 0 {
		return nil, nil
	}
	raw := bytes.TrimRight(state[i+len(historyKey):], " \t\r\n")
	raw, ok := bytes.CutSuffix(raw, []byte("}"))
	if !ok {
		return nil, errors.New("decode poll history: the state does not end after it")
	}
	return raw, nil
}

// historyOf decodes the history of an encoded state.
func historyOf(state []byte) (pollHistory, error) {
	raw, err := rawHistory(state)
	if err != nil || raw == nil {
		return nil, err
	}
	var h pollHistory
	if err := h.UnmarshalJSON(raw); err != nil {
		return nil, fmt.Errorf("decode poll history: %w", err)
	}
	return h, nil
}

// unmarshalState decodes a stored state without its history (which stays
// in the store: see historyOf).
func unmarshalState(b []byte) (persisted, error) {
	if i := bytes.Index(b, []byte(historyKey)); i >= 0 {
		b = append(b[:i:i], '}') // a copy: b is the caller's
	}
	var p persisted
	if err := json.Unmarshal(b, &p); err != nil {
		return persisted{}, fmt.Errorf("decode poll state: %w", err)
	}
	if p.V != stateVersion {
		return persisted{}, fmt.Errorf("decode poll state: unknown version %d", p.V)
	}
	// The decoder grows slices by doubling; the state is kept for as long
	// as the resource lives, so it keeps exact-size copies.
	p.Policy.Intervals = slices.Clone(p.Policy.Intervals)
	// Words every state repeats share the constants' memory.
	p.LastOutcome = outcomeString([]byte(p.LastOutcome))
	p.Kind, p.Policy.Kind = kindString(p.Kind), kindString(p.Policy.Kind)
	if p.Last != nil {
		p.Last.Items = slices.Clone(p.Last.Items)
	}
	return p, nil
}

// scheduledUnder reports whether p's next poll was placed under the policy
// whose key is key (of kind kind). Of a state saved before the key was
// recorded only its kind is known: under the same kind, it is taken for
// the same policy, its next poll kept as before.
func (p *persisted) scheduledUnder(key uint64, kind string) bool {
	if p.PolicyKey != 0 {
		return p.PolicyKey == key
	}
	return p.Kind == "" || p.Kind == kind
}

// kindString returns the policy kind k as the constant, when it is one.
func kindString(k string) string {
	for _, c := range [...]string{KindFlat, KindSmart, KindBudget} {
		if k == c {
			return c
		}
	}
	return k
}

// bulkStates is a store that reads every poll state in one pass (Badger's
// iterator), which a start-up with many resources uses instead of a read
// per resource.
type bulkStates interface {
	PollStates(ctx context.Context, fn func(id string, state, progress []byte) error) error
}

// bulkLoadMin is the number of resources from which loadAll reads every
// state in one pass rather than one by one.
const bulkLoadMin = 256

// stateReader reads the stored poll states of resources being added (at
// start-up, by a reload or a registration): one by one, or, for many, all
// in one pass when the store can. It keeps nothing; safe for concurrent use.
type stateReader struct {
	states StateStore
	split  historyStore // nil: a state is read whole (PollState)
	bulk   bulkStates   // nil: no reading in one pass
	log    *slog.Logger
}

// newStateReader reads states from states; log gets what cannot be read.
func newStateReader(states StateStore, log *slog.Logger) *stateReader {
	r := &stateReader{states: states, log: log}
	r.split, _ = states.(historyStore)
	r.bulk, _ = states.(bulkStates)
	return r
}

// loadAll reads the stored states of ids into loaded; a state that cannot
// be read or decoded is left out (the resource starts afresh).
func (sr *stateReader) loadAll(ctx context.Context, ids []string, loaded map[string]persisted) {
	if sr.bulk != nil && len(ids) >= bulkLoadMin {
		err := sr.loadBulk(ctx, ids, loaded)
		if err == nil {
			return
		}
		sr.log.WarnContext(ctx, "poll states unreadable in one pass; reading them one by one", slog.Any("error", err))
		clear(loaded)
	}
	for _, id := range ids {
		if st, ok := sr.load(ctx, id); ok {
			loaded[id] = st
		}
	}
}

// loadBulk reads the stored states of ids into loaded in one pass.
// Decoding (≈ 13 µs a state, most of a start-up with 100,000 resources) is
// spread over the cores while the pass reads on.
func (sr *stateReader) loadBulk(ctx context.Context, ids []string, loaded map[string]persisted) error {
	want := make(map[string]bool, len(ids))
	for _, id := range ids {
		want[id] = true
	}
	type stored struct {
		id          string
		b, progress []byte
	}
	in := make(chan stored, 256)
	var (
		mu sync.Mutex
		wg sync.WaitGroup
	)
	for range max(1, runtime.GOMAXPROCS(0)) {
		wg.Go(func() {
			for s := range in {
				st, err := unmarshalState(s.b)
				if err == nil {
					err = st.loadSplit(s.b, s.progress)
				}
				if err != nil {
					sr.log.Warn("poll state undecodable; starting afresh", slog.String("resource", s.id), slog.Any("error", err))
					continue
				}
				mu.Lock()
				loaded[s.id] = st
				mu.Unlock()
			}
		})
	}
	err := sr.bulk.PollStates(ctx, func(id string, b, progress []byte) error {
		if !want[id] {
			return nil
		}
		select {
		case in <- stored{id: id, b: bytes.Clone(b), progress: bytes.Clone(progress)}: // only valid during the call
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	close(in)
	wg.Wait()
	return err
}

// load reads id's stored state; false when there is none or it cannot be
// read or decoded (logged).
func (sr *stateReader) load(ctx context.Context, id string) (persisted, bool) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var b, progress []byte
	var err error
	if sr.split != nil {
		b, progress, err = sr.split.PollStateProgress(ctx, id)
	} else {
		b, err = sr.states.PollState(ctx, id)
	}
	if errors.Is(err, storage.ErrNotFound) {
		return persisted{}, false
	}
	if err != nil {
		sr.log.WarnContext(ctx, "poll state unreadable; starting afresh", slog.String("resource", id), slog.Any("error", err))
		return persisted{}, false
	}
	st, err := unmarshalState(b)
	if err == nil {
		err = st.loadSplit(b, progress)
	}
	if err != nil {
		sr.log.Warn("poll state undecodable; starting afresh", slog.String("resource", id), slog.Any("error", err))
		return persisted{}, false
	}
	return st, true
}
