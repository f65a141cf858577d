package storage

import (
	"errors"
	"time"
)

// ErrLeaseLost is returned when a node commits a poll under a lease that is
// no longer its own: it expired, and another node took the resource over.
// Nothing is written.
var ErrLeaseLost = errors.New("storage: lease lost")

// CommitFunc turns a save's result into the poll state to persist and the
// resource's next due time; it runs inside the commit's transaction.
type CommitFunc func(SaveResult) (state []byte, next time.Time, err error)

// RescheduleFunc turns resource id's stored poll state into the state to
// store instead and its next due time, when a node's policy for it changed;
// false leaves the resource as it is. It runs inside the reschedule's
// transaction.
type RescheduleFunc func(id string, state []byte) (newState []byte, next time.Time, ok bool)

// LeaseRequest asks for a resource's lease.
type LeaseRequest struct {
	ID   string
	Host string // the page's host, for politeness across nodes
	Now  time.Time
	// Lease is how long the lease holds without a Complete: twice the poll
	// timeout, so a node that died mid-poll frees its resources soon.
	Lease time.Duration
	// HostInterval is the politeness gap between two requests to Host,
	// whichever nodes make them.
	HostInterval time.Duration
	// Force grants the lease even before the resource is due (a poll asked
	// for by an operator), but never while another node holds it.
	Force bool
}

// Lease is the store's answer to a [LeaseRequest].
type Lease struct {
	Granted bool
	// State is the resource's poll state as the store has it (written by
	// whichever node polled last); nil when none was ever stored.
	State []byte
	// Retry, when not granted, is when the resource may be asked for again:
	// its next due time, the end of another node's lease, or its host's
	// next politeness slot.
	Retry time.Time
}
