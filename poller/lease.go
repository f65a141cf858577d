package poller

import (
	"context"
	"errors"
	"fmt"
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

// acquire asks for r's lease. Granted, it adopts the store's poll state
// (another node may have polled since) and returns true. Refused, it adopts
// the state too, requeues r when the store says to ask again and returns
// false; force is PollNow's.
func (e *Engine) acquire(ctx context.Context, r *resource, cfg *config.Config, force bool) bool {
	now := e.clock.Now()
	lease, err := e.leaser.Acquire(ctx, LeaseRequest{
		ID:           r.id,
		Host:         r.host,
		Now:          now,
		Lease:        2 * cfg.Poller.Timeout.D(),
		HostInterval: cfg.Poller.PerHostInterval.D(),
		Force:        force,
	})
	if err != nil {
		if ctx.Err() == nil {
			e.log.WarnContext(ctx, "lease not acquired", slog.String("resource", r.id), slog.Any("error", err))
			e.requeue(r, now.Add(leaseRetryOnError))
		}
		return false
	}
	if lease.State != nil {
		st, err := unmarshalState(lease.State)
		if err != nil {
			e.log.WarnContext(ctx, "stored poll state undecodable; keeping this node's", slog.String("resource", r.id), slog.Any("error", err))
		} else {
			e.adopt(r, st)
		}
	}
	if !lease.Granted {
		if !force {
			e.requeue(r, lease.Retry)
		}
		return false
	}
	return true
}

// adopt takes a poll state written by another node, keeping what belongs to
// this node's configuration (the URL, policy and extraction in force).
func (e *Engine) adopt(r *resource, st persisted) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.resources[r.id] != r {
		return
	}
	if st.URL != r.st.URL {
		st.Validators, st.Last = validators{}, nil // another page: nothing to compare with
	}
	if st.URL != r.st.URL || st.Extraction != r.st.Extraction {
		// Learned under another definition (another node's before it read
		// the registry or was reloaded, or this node's before a change):
		// the next poll fetches and extracts the page again.
		st.Validators, st.BodyHash = validators{}, 0
	}
	st.URL, st.Kind, st.Extraction, st.PolicyKey = r.st.URL, r.st.Kind, r.st.Extraction, r.st.PolicyKey
	if st.Since.IsZero() || (!r.st.Since.IsZero() && r.st.Since.Before(st.Since)) {
		st.Since = r.st.Since
	}
	r.st = st
}

// reschedule moves the due times in the store of resources whose policy
// changed on this node (ids; those in added were just added, at start-up
// or by a reload: see replan) to what restartLocked makes of them here,
// from their last poll, whichever node made it: without it, every node
// would keep following the due time the last poll decided under the old
// policy (a shorter interval would wait for it, a longer one would not
// wait).
func (e *Engine) reschedule(ctx context.Context, ids []string, added map[string]bool) {
	if e.leaser == nil || len(ids) == 0 {
		return
	}
	now := e.clock.Now()
	planned := make(map[string]time.Time, len(ids))
	err := e.leaser.Reschedule(ctx, ids, now, func(id string, b []byte) ([]byte, time.Time, bool) {
		st, err := unmarshalState(b)
		var h []byte
		if err == nil {
			h, err = rawHistory(b)
		}
		if err != nil {
			e.log.WarnContext(ctx, "stored poll state undecodable; next poll not rescheduled for the new policy", slog.String("resource", id), slog.Any("error", err))
			return nil, time.Time{}, false
		}
		e.mu.Lock()
		r := e.resources[id]
		if r == nil {
			e.mu.Unlock()
			return nil, time.Time{}, false // removed meanwhile
		}
		st.Kind, st.PolicyKey = r.st.Kind, r.st.PolicyKey
		at := replan(&st, r.policy, id, now, added[id])
		e.mu.Unlock()
		data, err := st.marshalWith(h)
		if err != nil {
			e.log.WarnContext(ctx, "next poll not rescheduled for the new policy", slog.String("resource", id), slog.Any("error", err))
			return nil, time.Time{}, false
		}
		planned[id] = at
		return data, at, true
	})
	if err != nil {
		e.log.WarnContext(ctx, "next polls not rescheduled for the new policy", slog.Int("resources", len(ids)), slog.Any("error", err))
		return
	}
	// This node's queue follows: restartLocked placed these resources from
	// what this node knew of their last poll, older when another node
	// made it.
	e.mu.Lock()
	defer e.mu.Unlock()
	for id, at := range planned {
		if r := e.resources[id]; r != nil {
			if _, queued := e.queue.At(id); queued {
				r.st.NextPoll = at
				e.queue.Update(id, at)
			}
		}
	}
}

// finishLeased is finish under a lease: the version, the state and the
// next due time commit together, then the lease is released.
func (e *Engine) finishLeased(ctx context.Context, r *resource, start time.Time, res pollResult) Status {
	var (
		status  Status
		decided bool
	)
	e.mu.Lock()
	ret := r.retention
	e.mu.Unlock()
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stateSaveTimeout)
	defer cancel()
	// A history that cannot be read is started anew rather than failing
	// the poll: its version and the lease must be committed now.
	res.history, _ = e.hist.raw(cctx, r.id)
	sr, err := e.leaser.Complete(cctx, r.id, res.doc, func(sr storage.SaveResult) ([]byte, time.Time, error) {
		if res.doc != nil && sr.Changed {
			res.outcome, res.changed = OutcomeChanged, true
		}
		res.versions = sr.Versions
		st, data, ok, err := e.decide(r, start, &res)
		if !ok {
			return nil, time.Time{}, errRemovedDuringPoll
		}
		status, decided = st, true
		return data, st.NextPoll, err
	})
	switch {
	case err == nil:
		if sr.Changed {
			e.stored(ctx, r.id, ret, start)
		}
	case errors.Is(err, errRemovedDuringPoll):
		// Removed here meanwhile (deleted, or gone from the file): nothing
		// is stored, and nothing is left to record the poll in.
		e.discard(ctx, r.id, DiscardRemoved, res)
		return Status{ID: r.id, LastOutcome: res.outcome}
	case errors.Is(err, storage.ErrLeaseLost):
		e.m.discarded.WithLabelValues(DiscardLeaseLost).Inc()
		e.log.WarnContext(ctx, "poll discarded: this node no longer holds the lease (it expired and another node took the resource, or the resource was deleted or registered again)", slog.String("resource", r.id))
		res = pollResult{outcome: OutcomeError, err: err}
	default:
		res = pollResult{outcome: OutcomeError, err: fmt.Errorf("commit poll: %w", err)}
	}
	if err != nil {
		// Nothing was stored. Record the failure here; the store's state
		// comes back with the next lease.
		res.changed = false
		var ok bool
		if status, _, ok, _ = e.decide(r, start, &res); !ok {
			return Status{ID: r.id, LastOutcome: res.outcome}
		}
	} else if !decided {
		return Status{ID: r.id, LastOutcome: res.outcome}
	}
	e.done(ctx, status, res)
	return status
}
