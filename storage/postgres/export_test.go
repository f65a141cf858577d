package postgres

import (
	"context"
	"time"

	"github.com/dynamo-rss/dynamo/storage"
)

// Test hooks into the info cache's listener.

// ListenerPID is the backend pid of s's LISTENing connection, 0 when none.
func ListenerPID(s *Store) uint32 { return s.cache.pid.Load() }

// ListenerLosses counts the listening connections s lost.
func ListenerLosses(s *Store) int64 { return s.cache.losses.Load() }

// Listening reports whether s's cache is live (its listener connected).
func Listening(s *Store) bool {
	s.cache.mu.Lock()
	defer s.cache.mu.Unlock()
	return s.cache.live
}

// Cached reports whether s serves id's info from its cache.
func Cached(s *Store, id string) bool {
	_, _, ok := s.cache.get(id)
	return ok
}

// ResourceUncached is Resource without the cache: the database round trip.
func ResourceUncached(s *Store, ctx context.Context, id string) (storage.ResourceInfo, error) {
	return s.resource(ctx, id)
}

// AddNS is addNS: nanoseconds plus a duration, saturating.
func AddNS(ns int64, d time.Duration) int64 { return addNS(ns, d) }
