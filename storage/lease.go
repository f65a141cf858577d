package storage

import "errors"

// ErrLeaseLost is returned when a node commits a poll under a lease that is
// no longer its own: it expired, and another node took the resource over.
// Nothing is written.
var ErrLeaseLost = errors.New("storage: lease lost")
