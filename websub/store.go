package websub

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"sync"
	"time"
)

// ErrNotFound is returned by [Store.Subscription] for a subscription that
// does not exist (never verified, unsubscribed, expired and removed).
var ErrNotFound = errors.New("websub: subscription not found")

// Key names a subscription: the Recommendation (§5.1) keys subscription state
// by the topic URL and callback URL combination. Resource is derived from
// Topic (through [Topics.TopicResource]) and leads the key so that a store
// can list the subscriptions of one resource without a secondary index.
type Key struct {
	Resource string // "" for a topic that depends on every resource (the list of resources)
	Topic    string // normalized (see normalizeURL)
	Callback string // normalized
}

// Subscription is one verified subscription and its delivery state.
type Subscription struct {
	Key
	// AsGiven is hub.topic as the subscriber last spelled it, echoed in a
	// denial (§5.2); "" in subscriptions stored before it was kept: Topic.
	AsGiven  string        `json:"topic_as_given,omitempty"`
	Secret   string        `json:"secret,omitempty"` // hub.secret; "" = deliveries are not signed
	Lease    time.Duration `json:"lease"`            // the lease granted at the last verification
	Verified time.Time     `json:"verified"`         // when the last verification request was made
	Expires  time.Time     `json:"expires"`          // Verified + Lease (§5.3: measured from the verification request)
	// LastHash is the hash of the content last delivered to this
	// subscription, or last given up on (see [Options.RetryFor]): a topic
	// whose rendering still hashes to it is not delivered again.
	LastHash string `json:"last_hash,omitempty"`
	// Failures counts the notifications given up on in a row; a success
	// resets it.
	Failures int `json:"failures,omitempty"`
	// Pending is the delivery waiting to be made (nil: none).
	Pending *Pending `json:"pending,omitempty"`
}

// Pending is a delivery that is due or being retried. Only the latest
// content of a topic is ever delivered (§7: the full contents of the topic),
// so a subscription has at most one pending delivery: a newer notification
// replaces an older one and restarts its retry window.
type Pending struct {
	Hash     string    `json:"hash"`     // hash of the content that made it pending
	Since    time.Time `json:"since"`    // when the notification was processed: start of the retry window
	Next     time.Time `json:"next"`     // when the next attempt is due
	Attempts int       `json:"attempts"` // failed attempts so far
}

// Store keeps subscriptions, and with them the pending deliveries, so that
// both survive restarts. Implementations are safe for concurrent use.
// [MemoryStore] is for tests; [BadgerStore] persists.
type Store interface {
	// Subscription returns the subscription named by key, or an error
	// wrapping [ErrNotFound].
	Subscription(ctx context.Context, key Key) (Subscription, error)
	// Subscriptions lists the subscriptions whose Key.Resource is
	// resource, or every subscription when all is true.
	Subscriptions(ctx context.Context, resource string, all bool) ([]Subscription, error)
	// Update changes the subscription named by key atomically: fn gets the
	// current one (nil when there is none), which it may modify, and
	// returns the one to store (nil: delete it). fn may run more than once
	// (a store may retry a conflicting transaction). An error from fn
	// aborts the update and is returned.
	Update(ctx context.Context, key Key, fn func(cur *Subscription) (*Subscription, error)) error
}

// MemoryStore is a [Store] in memory, for tests and for a hub whose
// subscriptions need not survive a restart. The zero value is ready to use.
type MemoryStore struct {
	mu   sync.Mutex
	subs map[Key]Subscription
}

var _ Store = (*MemoryStore)(nil)

// Subscription implements [Store].
func (m *MemoryStore) Subscription(ctx context.Context, key Key) (Subscription, error) {
	if err := ctx.Err(); err != nil {
		return Subscription{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.subs[key]
	if !ok {
		return Subscription{}, ErrNotFound
	}
	return clone(s), nil
}

// Subscriptions implements [Store]; the result is sorted by key.
func (m *MemoryStore) Subscriptions(ctx context.Context, resource string, all bool) ([]Subscription, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Subscription
	for k, s := range m.subs {
		if all || k.Resource == resource {
			out = append(out, clone(s))
		}
	}
	slices.SortFunc(out, func(a, b Subscription) int { return compareKeys(a.Key, b.Key) })
	return out, nil
}

// Update implements [Store].
func (m *MemoryStore) Update(ctx context.Context, key Key, fn func(cur *Subscription) (*Subscription, error)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var cur *Subscription
	if s, ok := m.subs[key]; ok {
		c := clone(s)
		cur = &c
	}
	next, err := fn(cur)
	switch {
	case err != nil:
		return err
	case next == nil:
		delete(m.subs, key)
	default:
		if m.subs == nil {
			m.subs = make(map[Key]Subscription)
		}
		n := clone(*next)
		n.Key = key
		m.subs[key] = n
	}
	return nil
}

// clone copies s deeply (Pending is a pointer).
func clone(s Subscription) Subscription {
	if s.Pending != nil {
		p := *s.Pending
		s.Pending = &p
	}
	return s
}

func compareKeys(a, b Key) int {
	return cmp.Or(cmp.Compare(a.Resource, b.Resource), cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Callback, b.Callback))
}
