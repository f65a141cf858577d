package storage

import "time"

// Registration is a resource registered at run time, as the store keeps it:
// its definition is the JSON of a config.ResourceEntry (the configuration package's).
type Registration struct {
	ID         string
	Definition []byte
	Registered time.Time // first registered
	Updated    time.Time // last replaced
}

// Revision numbers the changes of a store's registry: every Register and
// Unregister that succeeds takes the next one, in the order the changes
// commit, so that a reader can tell which of two states of the registry is
// the newer. A node of several that re-reads the registry keeps, for each
// id, the state with the higher revision: a read taken before its own
// change committed cannot undo that change (see [RegistrySnapshot]).
type Revision uint64

// RegistrySnapshot is the registry as one read saw it: every change whose
// revision is at most Revision, and none after it (changes commit in
// revision order, and the read is atomic).
type RegistrySnapshot struct {
	Revision      Revision
	Registrations []Registration // sorted by id
}

// RegistryDelta is what changed in the registry after one revision, as
// one read saw it: the registrations made or replaced since (their current
// state), the ids unregistered since (and not registered again), and the
// revision the read saw, as in [RegistrySnapshot].
type RegistryDelta struct {
	Revision Revision
	Changed  []Registration // sorted by id
	Deleted  []string       // sorted
}

// RegisterResult says what [Store.Register] did.
type RegisterResult struct {
	Created  bool     // a new id (or one unregistered before), not a replacement
	Revision Revision // the registry's revision of this change
}
