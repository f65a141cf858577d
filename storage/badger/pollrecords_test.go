package badger_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/dynamo-rss/dynamo/storage"
	"github.com/dynamo-rss/dynamo/storage/badger"
)

// Poll-history records are appended with the state, the oldest beyond keep
// dropped, and go with the resource when it is unregistered.
func TestPollRecords(t *testing.T) {
	db, err := badger.Open(t.TempDir(), badger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	if _, err := db.Register(ctx, storage.Registration{ID: "r", Definition: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	// A first save brings three records at once (an older history), then one per poll.
	if err := db.SavePollStateRecords(ctx, "r", []byte("s3"), 1, [][]byte{[]byte("1"), []byte("2"), []byte("3")}, 5); err != nil {
		t.Fatal(err)
	}
	for seq := uint64(4); seq <= 9; seq++ {
		if err := db.SavePollStateRecords(ctx, "r", []byte(fmt.Sprint("s", seq)), seq, [][]byte{[]byte(fmt.Sprint(seq))}, 5); err != nil {
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
	if err := db.SavePollStateRecords(ctx, "r", nil, 0, nil, 5); !errors.Is(err, storage.ErrInvalid) {
		t.Fatalf("record 0: %v, want ErrInvalid", err)
	}
	if err := db.Unregister(ctx, "r"); err != nil {
		t.Fatal(err)
	}
	if recs, err := db.PollRecords(ctx, "r"); err != nil || len(recs) != 0 {
		t.Fatalf("after Unregister: %s, %v; want none", recs, err)
	}
	if err := db.SavePollStateRecords(ctx, "r", []byte("late"), 10, [][]byte{[]byte("10")}, 5); !errors.Is(err, storage.ErrGone) {
		t.Fatalf("after Unregister: %v, want ErrGone", err)
	}
}
