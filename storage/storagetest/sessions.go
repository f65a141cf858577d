package storagetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dynamo-rss/dynamo/storage"
)

// sessions is the store's storage.Sessions; a driver must implement it.
func sessions(t *testing.T, db storage.Store) storage.Sessions {
	t.Helper()
	s, ok := db.(storage.Sessions)
	if !ok {
		t.Fatalf("%T does not implement storage.Sessions", db)
	}
	return s
}

// mustRevoked fails t unless SessionRevoked(id) answers want.
func mustRevoked(t *testing.T, s storage.Sessions, id string, want bool) {
	t.Helper()
	got, err := s.SessionRevoked(context.Background(), id)
	if err != nil || got != want {
		t.Fatalf("SessionRevoked(%q) = %v, %v; want %v", id, got, err, want)
	}
}

// testSessions: a revoked session stays revoked until its until has
// passed at a later revocation, which forgets it; revoking again keeps
// the later until; ids no session can have are refused.
func testSessions(t *testing.T, open Opener) {
	db := open(t)
	s := sessions(t, db)
	ctx := context.Background()
	mustRevoked(t, s, "a", false)
	if err := s.RevokeSession(ctx, "a", T0.Add(time.Hour), T0); err != nil {
		t.Fatalf("RevokeSession(a): %v", err)
	}
	mustRevoked(t, s, "a", true)
	mustRevoked(t, s, "b", false)
	mustRevoked(t, s, "A", false) // ids are compared byte for byte
	// Revoked again until later, then once more until earlier: the later
	// until holds.
	for _, until := range []time.Duration{12 * time.Hour, 2 * time.Hour} {
		if err := s.RevokeSession(ctx, "a", T0.Add(until), T0.Add(time.Minute)); err != nil {
			t.Fatalf("RevokeSession(a) again: %v", err)
		}
	}
	if err := s.RevokeSession(ctx, "b", T0.Add(3*time.Hour), T0.Add(2*time.Minute)); err != nil {
		t.Fatalf("RevokeSession(b): %v", err)
	}
	// Past b's until (exactly at it) but before a's: b is forgotten.
	if err := s.RevokeSession(ctx, "c", T0.Add(15*time.Hour), T0.Add(3*time.Hour)); err != nil {
		t.Fatalf("RevokeSession(c): %v", err)
	}
	mustRevoked(t, s, "a", true)
	mustRevoked(t, s, "b", false)
	mustRevoked(t, s, "c", true)
	// Past a's until too.
	if err := s.RevokeSession(ctx, "d", T0.Add(25*time.Hour), T0.Add(13*time.Hour)); err != nil {
		t.Fatalf("RevokeSession(d): %v", err)
	}
	mustRevoked(t, s, "a", false)
	mustRevoked(t, s, "c", true)
	mustRevoked(t, s, "d", true)

	for _, id := range []string{"", "a\x00b", "a\xffb", strings.Repeat("x", storage.MaxSessionIDLen+1)} {
		if err := s.RevokeSession(ctx, id, T0.Add(time.Hour), T0); !errors.Is(err, storage.ErrInvalid) {
			t.Errorf("RevokeSession(%q) = %v, want ErrInvalid", id, err)
		}
		mustRevoked(t, s, id, false)
	}
	mustRevoked(t, s, strings.Repeat("x", storage.MaxSessionIDLen), false)

	canceled, cancel := context.WithCancel(ctx)
	cancel()
	if err := s.RevokeSession(canceled, "e", T0.Add(time.Hour), T0); !errors.Is(err, context.Canceled) {
		t.Errorf("RevokeSession with a canceled context = %v, want context.Canceled", err)
	}
	if _, err := s.SessionRevoked(canceled, "a"); !errors.Is(err, context.Canceled) {
		t.Errorf("SessionRevoked with a canceled context = %v, want context.Canceled", err)
	}
	mustRevoked(t, s, "e", false)
	MustCheck(t, db)
}

// testSessionsConcurrent: logouts at once, each pruning, lose none of the
// revocations still in force.
func testSessionsConcurrent(t *testing.T, open Opener) {
	s := sessions(t, open(t))
	ctx := context.Background()
	const n = 16
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			now := T0.Add(time.Duration(i) * time.Minute)
			errs <- s.RevokeSession(ctx, fmt.Sprintf("s%02d", i), now.Add(12*time.Hour), now)
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("RevokeSession: %v", err)
		}
	}
	for i := range n {
		mustRevoked(t, s, fmt.Sprintf("s%02d", i), true)
	}
}
