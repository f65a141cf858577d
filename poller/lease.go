package poller

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/dynamo-rss/dynamo/config"
	"github.com/dynamo-rss/dynamo/schema"
	"github.com/dynamo-rss/dynamo/storage"
)

// Leaser divides polling among several engines (nodes) sharing one store.
// Every node schedules every resource in its own queue, as a single node
// does; before polling, it asks the store for the resource's lease, which
// the store grants to one node at a time, only when the resource is due
// (by the next-poll time the last poll of any node stored) and its host's
// politeness slot is free across all nodes. The poll's result (the version,
// the poll state, the next due time) and the lease's release commit in one
// transaction, so a node that dies mid-poll leaves nothing half-done: its
// lease expires and another node polls the resource.
type Leaser interface {
	// Acquire asks for the lease of req.ID; see [LeaseRequest] and [Lease].
	Acquire(ctx context.Context, req LeaseRequest) (Lease, error)
	// Complete commits a poll of id made under this node's lease, in one
	// transaction: it stores doc as a version (nil: none; a document whose
	// content equals the latest version's is not stored, as Save does),
	// calls commit with the save's result to get the poll state and the next
	// due time, writes both and releases the lease. It fails with
	// [storage.ErrLeaseLost], storing nothing, when the lease is no longer
	// this node's (it expired and another node took the resource).
	Complete(ctx context.Context, id string, doc *schema.Document, commit CommitFunc) (storage.SaveResult, error)
	// Reschedule rewrites the poll states and next due times of ids with fn,
	// called for one id after the other, when this node's policy for them
	// changed (a reload, a PUT): the due time every node's leases follow was
	// decided by the last poll, under the policy before. Each resource's
	// state is read and rewritten in one transaction (a few hundred
	// resources share one). fn is not called, and nothing is written, for a
	// resource whose lease runs at now (the poll under it decides the due
	// time), without a stored state, unknown or deleted.
	Reschedule(ctx context.Context, ids []string, now time.Time, fn RescheduleFunc) error
}

// The lease's data shapes are the store's (a driver implements [Leaser]
// without importing the poller).
type (
	CommitFunc     = storage.CommitFunc
	RescheduleFunc = storage.RescheduleFunc
	LeaseRequest   = storage.LeaseRequest
	Lease          = storage.Lease
)

// ErrPolledElsewhere is returned by PollNow when another node holds the
// resource's lease (it is being polled there).
var ErrPolledElsewhere = errors.New("poller: resource being polled by another node")

// errRemovedDuringPoll ends the commit of a poll whose resource was
// removed from this engine while it ran.
var errRemovedDuringPoll = errors.New("resource removed during its poll")

// leaseRetryOnError is when to ask again after the store failed to answer.
const leaseRetryOnError = 10 * time.Second

// leases is the lease keeper: the part of the engine that speaks to the
// [Leaser] of the nodes sharing the store. It asks for leases, commits
// polls made under them and moves due times in the store; what to do with
// the answers (adopt a state, requeue a resource) is the engine's. It keeps
// nothing between calls; safe for concurrent use.
type leases struct {
	leaser Leaser
	clock  Clock
	log    *slog.Logger
}

// newLeases returns the lease keeper of leaser; nil when leaser is nil (a
// single node polls every resource itself).
func newLeases(leaser Leaser, clock Clock, log *slog.Logger) *leases {
	if leaser == nil {
		return nil
	}
	return &leases{leaser: leaser, clock: clock, log: log}
}

// leaseAnswer is what an acquire learned.
type leaseAnswer struct {
	granted bool
	// state is the poll state the store holds (the node that polled last,
	// maybe another), to adopt; nil: none, or undecodable.
	state *persisted
	// requeue: ask again at retry (zero: at the resource's recorded next
	// poll); false: leave the resource's schedule alone.
	requeue bool
	retry   time.Time
}

// acquire asks for the lease of resource id, on host, under the poller
// settings p (its length: twice the timeout; the host's interval across
// nodes). Refused, the answer says when to ask again, unless force (a
// PollNow, whose caller is told instead).
func (l *leases) acquire(ctx context.Context, id, host string, p config.PollerConfig, force bool) leaseAnswer {
	now := l.clock.Now()
	lease, err := l.leaser.Acquire(ctx, LeaseRequest{
		ID:           id,
		Host:         host,
		Now:          now,
		Lease:        2 * p.Timeout.D(),
		HostInterval: p.PerHostInterval.D(),
		Force:        force,
	})
	if err != nil {
		if ctx.Err() != nil {
			return leaseAnswer{}
		}
		l.log.WarnContext(ctx, "lease not acquired", slog.String("resource", id), slog.Any("error", err))
		return leaseAnswer{requeue: true, retry: now.Add(leaseRetryOnError)}
	}
	var a leaseAnswer
	if lease.State != nil {
		st, err := unmarshalState(lease.State)
		if err != nil {
			l.log.WarnContext(ctx, "stored poll state undecodable; keeping this node's", slog.String("resource", id), slog.Any("error", err))
		} else {
			a.state = &st
		}
	}
	a.granted = lease.Granted
	if !a.granted && !force {
		a.requeue, a.retry = true, lease.Retry
	}
	return a
}

// adopted is st, a poll state written by another node, made this node's:
// it keeps what belongs to this node's configuration as own records it
// (the URL, policy and extraction in force, the earliest Since).
func adopted(own *persisted, st persisted) persisted {
	if st.URL != own.URL {
		st.Validators, st.Last = validators{}, nil // another page: nothing to compare with
	}
	if st.URL != own.URL || st.Extraction != own.Extraction {
		// Learned under another definition (another node's before it read
		// the registry or was reloaded, or this node's before a change):
		// the next poll fetches and extracts the page again.
		st.Validators, st.BodyHash = validators{}, 0
	}
	st.URL, st.Kind, st.Extraction, st.PolicyKey = own.URL, own.Kind, own.Extraction, own.PolicyKey
	if st.Since.IsZero() || (!own.Since.IsZero() && own.Since.Before(st.Since)) {
		st.Since = own.Since
	}
	return st
}

// replanFunc places resource id's next poll from its stored state st (see
// replan), setting in st what this node's policy records; false leaves the
// resource alone (removed meanwhile).
type replanFunc func(id string, st *persisted) (time.Time, bool)

// reschedule moves the due times in the store of ids, whose policy changed
// on this node, to what plan makes of their stored states, from their last
// poll, whichever node made it: without it, every node would keep
// following the due time the last poll decided under the old policy (a
// shorter interval would wait for it, a longer one would not wait). It
// returns the due times it stored; nil when the store failed (logged).
func (l *leases) reschedule(ctx context.Context, ids []string, plan replanFunc) map[string]time.Time {
	now := l.clock.Now()
	planned := make(map[string]time.Time, len(ids))
	err := l.leaser.Reschedule(ctx, ids, now, func(id string, b []byte) ([]byte, time.Time, bool) {
		st, err := unmarshalState(b)
		var h []byte
		if err == nil {
			h, err = rawHistory(b)
		}
		if err != nil {
			l.log.WarnContext(ctx, "stored poll state undecodable; next poll not rescheduled for the new policy", slog.String("resource", id), slog.Any("error", err))
			return nil, time.Time{}, false
		}
		at, ok := plan(id, &st)
		if !ok {
			return nil, time.Time{}, false
		}
		data, err := st.marshalWith(h)
		if err != nil {
			l.log.WarnContext(ctx, "next poll not rescheduled for the new policy", slog.String("resource", id), slog.Any("error", err))
			return nil, time.Time{}, false
		}
		planned[id] = at
		return data, at, true
	})
	if err != nil {
		l.log.WarnContext(ctx, "next polls not rescheduled for the new policy", slog.Int("resources", len(ids)), slog.Any("error", err))
		return nil
	}
	return planned
}

// decideFunc records a poll, given the result of saving its version: the
// poll state to store and its next due time; ok false when the resource
// was removed meanwhile (nothing is to be stored).
type decideFunc func(storage.SaveResult) (state []byte, next time.Time, ok bool, err error)

// complete commits a poll of id made under this node's lease: doc (nil:
// none) is stored, decide's state and due time written and the lease
// released, in one transaction. errRemovedDuringPoll when decide found
// the resource removed; storage.ErrLeaseLost when the lease was no longer
// this node's (logged).
func (l *leases) complete(ctx context.Context, id string, doc *schema.Document, decide decideFunc) (storage.SaveResult, error) {
	sr, err := l.leaser.Complete(ctx, id, doc, func(sr storage.SaveResult) ([]byte, time.Time, error) {
		data, next, ok, err := decide(sr)
		if !ok {
			return nil, time.Time{}, errRemovedDuringPoll
		}
		return data, next, err
	})
	if errors.Is(err, storage.ErrLeaseLost) {
		l.log.WarnContext(ctx, "poll discarded: this node no longer holds the lease (it expired and another node took the resource, or the resource was deleted or registered again)", slog.String("resource", id))
	}
	return sr, err
}
