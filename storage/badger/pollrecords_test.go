package badger_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/dynamo-rss/dynamo/storage"
	"github.com/dynamo-rss/dynamo/storage/badger"
)

// registeredStore opens a store, closed at the end of the test, with ids
// registered.
func registeredStore(t *testing.T, ids ...string) (*badger.DB, context.Context) {
	t.Helper()
	db, err := badger.Open(t.TempDir(), badger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ctx := context.Background()
	for _, id := range ids {
		if _, err := db.Register(ctx, storage.Registration{ID: id, Definition: []byte("x")}); err != nil {
			t.Fatal(err)
		}
	}
	return db, ctx
}

// Poll-history records are appended with the state, the oldest beyond keep
// dropped, and go with the resource when it is unregistered.
func TestPollRecords(t *testing.T) {
	db, ctx := registeredStore(t, "r")
	// A first save brings three records at once (an older history), then one per poll.
	if err := db.SavePollStateRecords(ctx, "r", []byte("s3"), nil, 1, [][]byte{[]byte("1"), []byte("2"), []byte("3")}, 5); err != nil {
		t.Fatal(err)
	}
	for seq := uint64(4); seq <= 9; seq++ {
		if err := db.SavePollStateRecords(ctx, "r", []byte(fmt.Sprint("s", seq)), nil, seq, [][]byte{[]byte(fmt.Sprint(seq))}, 5); err != nil {
			t.Fatal(err)
		}
	}
	recs, err := db.PollRecords(ctx, "r")
	if err != nil || fmt.Sprintf("%s", recs) != "[5 6 7 8 9]" {
		t.Fatalf("records %s, %v; want the newest five, oldest first", recs, err)
	}
	if st, err := db.PollState(ctx, "r"); err != nil || string(st) != "s9" {
		t.Fatalf("state %q, %v", st, err)
	}
	if err := db.SavePollStateRecords(ctx, "r", nil, nil, 0, nil, 5); !errors.Is(err, storage.ErrInvalid) {
		t.Fatalf("record 0: %v, want ErrInvalid", err)
	}
	if _, err := db.Unregister(ctx, "r"); err != nil {
		t.Fatal(err)
	}
	if recs, err := db.PollRecords(ctx, "r"); err != nil || len(recs) != 0 {
		t.Fatalf("after Unregister: %s, %v; want none", recs, err)
	}
	if err := db.SavePollStateRecords(ctx, "r", []byte("late"), nil, 10, [][]byte{[]byte("10")}, 5); !errors.Is(err, storage.ErrGone) {
		t.Fatalf("after Unregister: %v, want ErrGone", err)
	}
}

// A poll state's progress is written beside it: a nil state leaves the
// state, a nil progress deletes the progress; PollStates pairs them by id;
// Unregister removes both.
func TestPollProgress(t *testing.T) {
	db, ctx := registeredStore(t, "a", "b", "c", "bb")
	save := func(id string, state, progress string, seq uint64) {
		t.Helper()
		var s, p []byte
		if state != "" {
			s = []byte(state)
		}
		if progress != "" {
			p = []byte(progress)
		}
		if err := db.SavePollStateRecords(ctx, id, s, p, seq, [][]byte{[]byte("r")}, 5); err != nil {
			t.Fatal(err)
		}
	}
	save("a", "sa", "pa1", 1)
	save("a", "", "pa2", 2) // the state stays
	save("b", "sb", "", 1)  // no progress
	save("c", "sc", "pc", 1)
	save("bb", "", "pbb", 1)                                          // a progress without a state is not listed
	if err := db.SavePollState(ctx, "c", []byte("sc2")); err != nil { // a whole state: no progress
		t.Fatal(err)
	}
	if st, err := db.PollState(ctx, "a"); err != nil || string(st) != "sa" {
		t.Errorf("state of a %q, %v; want sa", st, err)
	}
	if st, p, err := db.PollStateProgress(ctx, "a"); err != nil || string(st) != "sa" || string(p) != "pa2" {
		t.Errorf("state and progress of a %q, %q, %v; want sa, pa2", st, p, err)
	}
	if st, p, err := db.PollStateProgress(ctx, "c"); err != nil || string(st) != "sc2" || p != nil {
		t.Errorf("state and progress of c %q, %q, %v; want sc2 and none", st, p, err)
	}
	list := func() string {
		t.Helper()
		var got []string
		err := db.PollStates(ctx, func(id string, state, progress []byte) error {
			got = append(got, fmt.Sprintf("%s:%s/%s", id, state, progress))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(got)
	}
	if got, want := list(), "[a:sa/pa2 b:sb/ c:sc2/]"; got != want {
		t.Errorf("PollStates %s, want %s", got, want)
	}
	if _, err := db.Unregister(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if _, p, err := db.PollStateProgress(ctx, "a"); err == nil || p != nil {
		t.Errorf("progress after Unregister %q, %v; want none and an error", p, err)
	}
	if got, want := list(), "[b:sb/ c:sc2/]"; got != want {
		t.Errorf("PollStates after Unregister %s, want %s", got, want)
	}
}

// A history that starts again at record 1 replaces the records left from
// before (a downgrade to a version that kept the history in the state, then
// an upgrade, moves that history out again from 1).
func TestPollRecordsStartAgain(t *testing.T) {
	db, ctx := registeredStore(t, "r")
	for seq := uint64(1); seq <= 6; seq++ {
		if err := db.SavePollStateRecords(ctx, "r", []byte("s"), nil, seq, [][]byte{[]byte(fmt.Sprint("old", seq))}, 5); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.SavePollStateRecords(ctx, "r", []byte("s"), nil, 1, [][]byte{[]byte("new1"), []byte("new2")}, 5); err != nil {
		t.Fatal(err)
	}
	if recs, err := db.PollRecords(ctx, "r"); err != nil || fmt.Sprintf("%s", recs) != "[new1 new2]" {
		t.Fatalf("records %s, %v; want only the new ones", recs, err)
	}
}

// PollStates pairs each state with its own progress, walking the progress
// values beside the states: an id without progress between two with one
// (a, then b without, then c) takes none of c's, and a's does not carry
// the walk past b's or c's.
func TestPollStatesProgressBesideGaps(t *testing.T) {
	db, ctx := registeredStore(t, "a", "b", "c", "d")
	for _, s := range []struct{ id, progress string }{{"a", "pa"}, {"b", ""}, {"c", "pc"}, {"d", "pd"}} {
		var p []byte
		if s.progress != "" {
			p = []byte(s.progress)
		}
		if err := db.SavePollStateRecords(ctx, s.id, []byte("s"+s.id), p, 1, [][]byte{[]byte("r")}, 5); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	err := db.PollStates(ctx, func(id string, state, progress []byte) error {
		got = append(got, fmt.Sprintf("%s:%s/%s", id, state, progress))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fmt.Sprint(got), "[a:sa/pa b:sb/ c:sc/pc d:sd/pd]"; got != want {
		t.Errorf("PollStates %s, want %s", got, want)
	}
}
