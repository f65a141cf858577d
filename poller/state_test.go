package poller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"
)

// bulkMemStore is a memStore that reads every state in one pass (as
// Badger's does), counting the passes; with fail, the pass fails.
type bulkMemStore struct {
	*memStore
	passes, reads int
	fail          bool
}

func (b *bulkMemStore) PollStates(_ context.Context, fn func(id string, state, progress []byte) error) error {
	b.passes++
	if b.fail {
		return errors.New("iterator broke")
	}
	for id, st := range b.states {
		if err := fn(id, st, nil); err != nil {
			return err
		}
	}
	return nil
}

func (b *bulkMemStore) PollState(ctx context.Context, id string) ([]byte, error) {
	b.reads++
	return b.memStore.PollState(ctx, id)
}

// The state reader, without an engine: a stored state is read, a missing
// or undecodable one is not.
func TestStateReaderLoad(t *testing.T) {
	ctx := t.Context()
	store := newMemStore()
	st := persisted{V: stateVersion, Kind: KindSmart, Polls: 3, URL: "https://example.com/"}
	b, err := st.marshal()
	if err != nil {
		t.Fatal(err)
	}
	store.states["a"] = b
	store.states["bad"] = []byte("{not json")
	sr := newStateReader(store, slog.New(slog.DiscardHandler))
	if got, ok := sr.load(ctx, "a"); !ok || got.Polls != 3 || got.Kind != KindSmart || got.URL != st.URL {
		t.Errorf("load a: %+v, %v; want the stored state", got, ok)
	}
	for _, id := range []string{"none", "bad"} {
		if _, ok := sr.load(ctx, id); ok {
			t.Errorf("load %s: found", id)
		}
	}
	loaded := map[string]persisted{}
	sr.loadAll(ctx, []string{"a", "none", "bad"}, loaded)
	if len(loaded) != 1 || loaded["a"].Polls != 3 {
		t.Errorf("loadAll: %+v, want a alone", loaded)
	}
}

// Many states are read in one pass when the store can; when the pass
// fails they are read one by one.
func TestStateReaderLoadAllInOnePass(t *testing.T) {
	ctx := t.Context()
	store := &bulkMemStore{memStore: newMemStore()}
	var ids []string
	for i := range bulkLoadMin {
		id := fmt.Sprintf("r%d", i)
		ids = append(ids, id)
		st := persisted{V: stateVersion, Kind: KindFlat, Polls: int64(i)}
		b, err := st.marshal()
		if err != nil {
			t.Fatal(err)
		}
		store.states[id] = b
	}
	sr := newStateReader(store, slog.New(slog.DiscardHandler))
	loaded := map[string]persisted{}
	sr.loadAll(ctx, ids[:bulkLoadMin-1], loaded)
	if store.passes != 0 || store.reads != bulkLoadMin-1 || len(loaded) != bulkLoadMin-1 {
		t.Errorf("below %d ids: %d passes, %d reads, %d loaded; want reads one by one", bulkLoadMin, store.passes, store.reads, len(loaded))
	}
	store.reads = 0
	clear(loaded)
	sr.loadAll(ctx, ids, loaded)
	if store.passes != 1 || store.reads != 0 || len(loaded) != bulkLoadMin || loaded["r7"].Polls != 7 {
		t.Errorf("%d ids: %d passes, %d reads, %d loaded; want one pass", bulkLoadMin, store.passes, store.reads, len(loaded))
	}
	store.fail = true
	clear(loaded)
	sr.loadAll(ctx, ids, loaded)
	if store.passes != 2 || store.reads != bulkLoadMin || len(loaded) != bulkLoadMin {
		t.Errorf("failed pass: %d passes, %d reads, %d loaded; want every state read one by one", store.passes, store.reads, len(loaded))
	}
}
