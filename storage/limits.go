package storage

import (
	"fmt"
	"math"
	"time"

	"github.com/dynamo-rss/dynamo/schema"
)

// MinTime and MaxTime bound the times a store keeps (document timestamps,
// registration times): int64 nanoseconds since the Unix epoch, exact and
// ordered as every driver keeps them, so roughly the years 1678 to 2262.
func MinTime() time.Time { return time.Unix(0, math.MinInt64).UTC() }

// MaxTime: see [MinTime].
func MaxTime() time.Time { return time.Unix(0, math.MaxInt64).UTC() }

// MaxItemIDLen bounds an item id, in bytes: every driver indexes items by
// id (PostgreSQL's B-tree entries hold at most ~2.7 KB, Badger's keys 64 KB).
const MaxItemIDLen = 2048

// ValidateTime reports whether t is within [MinTime, MaxTime]; what names
// it in the error, which wraps [ErrInvalid].
func ValidateTime(what string, t time.Time) error {
	if t.Before(MinTime()) || t.After(MaxTime()) {
		return fmt.Errorf("%w: %s %v is outside %v … %v", ErrInvalid, what, t, MinTime(), MaxTime())
	}
	return nil
}

// ValidateDocument reports whether a store can keep doc as a version: an
// id that passes [ValidateID], a document that passes
// [schema.Document.Validate] (its errors are wrapped too), a timestamp that
// passes [ValidateTime] (so never the zero time) and item ids of at most
// [MaxItemIDLen] bytes. Its errors wrap [ErrInvalid]; every driver's Save
// checks this first, before looking at what it stores.
func ValidateDocument(doc *schema.Document) error {
	if doc == nil {
		return fmt.Errorf("%w: nil document", ErrInvalid)
	}
	if err := ValidateID(doc.RSSID); err != nil {
		return err
	}
	if err := doc.Validate(); err != nil {
		return fmt.Errorf("%q: %w: %w", doc.RSSID, ErrInvalid, err)
	}
	if err := ValidateTime("timestamp", doc.Timestamp); err != nil {
		return fmt.Errorf("%q: %w", doc.RSSID, err)
	}
	for i := range doc.Items {
		if n := len(doc.Items[i].ID); n > MaxItemIDLen {
			return fmt.Errorf("%q: %w: item %d: id is %d bytes, more than %d", doc.RSSID, ErrInvalid, i+1, n, MaxItemIDLen)
		}
	}
	return nil
}

// ValidateRegistration reports whether a store can keep reg: an id that
// passes [ValidateID] and times that are zero (unknown) or pass
// [ValidateTime]. Its errors wrap [ErrInvalid].
func ValidateRegistration(reg Registration) error {
	if err := ValidateID(reg.ID); err != nil {
		return err
	}
	for _, t := range []struct {
		what string
		t    time.Time
	}{{"registration time", reg.Registered}, {"update time", reg.Updated}} {
		if !t.t.IsZero() {
			if err := ValidateTime(t.what, t.t); err != nil {
				return fmt.Errorf("%q: %w", reg.ID, err)
			}
		}
	}
	return nil
}
