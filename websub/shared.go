package websub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/dynamo-rss/dynamo/storage"
)

// recordKind names the hub's records in the store.
const recordKind = "websub"

// keySep separates the parts of a subscription's record key; it cannot occur
// in a resource id or a URL (both are printable).
const keySep = "\x1f"

// SharedStore keeps subscriptions and their pending deliveries in dynamo's
// own store, through either storage driver ([storage.RecordStore]): they
// survive restarts, and with PostgreSQL every node sees the same ones, and
// an update (marking a delivery pending, recording its outcome) is atomic
// across nodes.
type SharedStore struct{ rs storage.RecordStore }

// NewSharedStore returns a Store over a storage driver's records.
func NewSharedStore(rs storage.RecordStore) *SharedStore { return &SharedStore{rs: rs} }

func recordKey(k Key) string { return k.Resource + keySep + k.Topic + keySep + k.Callback }

// Subscription returns the subscription named by key.
func (s *SharedStore) Subscription(ctx context.Context, key Key) (Subscription, error) {
	b, err := s.rs.Record(ctx, recordKind, recordKey(key))
	if errors.Is(err, storage.ErrNotFound) {
		return Subscription{}, fmt.Errorf("%w: %s → %s", ErrNotFound, key.Topic, key.Callback)
	}
	if err != nil {
		return Subscription{}, err
	}
	var sub Subscription
	if err := json.Unmarshal(b, &sub); err != nil {
		return Subscription{}, fmt.Errorf("websub: decode subscription: %w", err)
	}
	return sub, nil
}

// Subscriptions lists the subscriptions of resource, or all of them.
func (s *SharedStore) Subscriptions(ctx context.Context, resource string, all bool) ([]Subscription, error) {
	prefix := ""
	if !all {
		prefix = resource + keySep
	}
	recs, err := s.rs.Records(ctx, recordKind, prefix)
	if err != nil {
		return nil, err
	}
	out := make([]Subscription, 0, len(recs))
	for _, r := range recs {
		var sub Subscription
		if err := json.Unmarshal(r.Value, &sub); err != nil {
			return nil, fmt.Errorf("websub: decode subscription %q: %w", strings.ReplaceAll(r.Key, keySep, " "), err)
		}
		out = append(out, sub)
	}
	return out, nil
}

// Update changes the subscription named by key atomically.
func (s *SharedStore) Update(ctx context.Context, key Key, fn func(cur *Subscription) (*Subscription, error)) error {
	return s.rs.UpdateRecord(ctx, recordKind, recordKey(key), func(raw []byte) ([]byte, error) {
		var cur *Subscription
		if raw != nil {
			cur = new(Subscription)
			if err := json.Unmarshal(raw, cur); err != nil {
				return nil, fmt.Errorf("websub: decode subscription: %w", err)
			}
		}
		next, err := fn(cur)
		if err != nil || next == nil {
			return nil, err
		}
		next.Key = key
		return json.Marshal(next)
	})
}
