package poller

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/dynamo-rss/dynamo/config"
	"github.com/dynamo-rss/dynamo/storage"
)

// Where a resource comes from.
const (
	SourceFile = "file" // declared in the configuration file
	SourceAPI  = "api"  // registered at run time through the admin API (or self-registration)
)

// ErrDeclaredInFile is returned when the admin API tries to register,
// replace or delete a resource that the configuration file declares.
var ErrDeclaredInFile = errors.New("poller: resource declared in the configuration file")

// ErrNoRegistry is returned by Register and Unregister when the engine has
// no [Registry] to keep registrations in.
var ErrNoRegistry = errors.New("poller: no registry for runtime resources")

// The registry's data shapes are the store's, so drivers need not import
// the poller: a registration, the registry as one read saw it, the result
// of a change and the revision that orders changes.
type (
	Registration     = storage.Registration
	RegistrySnapshot = storage.RegistrySnapshot
	RegistryDelta    = storage.RegistryDelta
	RegisterResult   = storage.RegisterResult
	Revision         = storage.Revision
)

// Registry keeps the resources registered at run time, so that they survive
// restarts and every node sharing the store sees them.
//
// Every change takes a [Revision] higher than those of the changes
// committed before it, and a read returns the revision it saw, holding
// exactly the changes up to it. That is what lets a node of several re-read
// the registry without undoing its own changes: a read taken before this
// node's change committed has a lower revision than the change, and the
// node keeps its own state of that id until a read at least as new.
type Registry interface {
	// Registrations reads every registered resource and the registry's
	// revision the read saw.
	Registrations(ctx context.Context) (RegistrySnapshot, error)
	// Register stores reg, replacing a registration of the same id (whose
	// Registered time is kept); it says whether the id is new and the
	// change's revision.
	Register(ctx context.Context, reg Registration) (RegisterResult, error)
	// Unregister removes the registration and everything stored for the
	// resource (versions, poll state), leaving a tombstone so its feeds
	// answer 410 Gone, and returns the change's revision;
	// storage.ErrNotFound when it is not registered.
	Unregister(ctx context.Context, id string) (Revision, error)
}

// RegistryWatcher is a [Registry] shared by several nodes that tells when
// another node may have changed it (the PostgreSQL store's, by
// LISTEN/NOTIFY), so that a node of several re-reads the registry at once
// rather than at its next periodic re-read.
type RegistryWatcher interface {
	Registry
	// RegistryChanged returns a channel closed when the registrations may
	// have changed through another node since it was returned (or when
	// such changes may have been missed). It is taken before a read of the
	// registry, so that a change during the read closes it.
	RegistryChanged() <-chan struct{}
}

// RegistryChanges is a [Registry] that can tell what changed after a
// revision (the PostgreSQL store's), so that a node of several reads only
// that when another node changes the registry, rather than all of it.
type RegistryChanges interface {
	// RegistrationsSince reads the registrations made or replaced after
	// revision since, and the ids unregistered after it (and not
	// registered again), with the revision the read saw;
	// errors.ErrUnsupported when the registry cannot tell after all (a
	// wrapper of one that cannot).
	RegistrationsSince(ctx context.Context, since Revision) (RegistryDelta, error)
}

// registration is a decoded [Registration].
type registration struct {
	entry      *config.ResourceEntry // shared with the resource built from it
	def        []byte                // the definition as stored, to tell a change
	registered time.Time
}

// Definition is a resource as the admin API lists it: its definition, where
// it comes from, when it was registered and its poll state.
type Definition struct {
	Resource   config.ResourceEntry `json:"resource"`
	Source     string               `json:"source"`
	Registered time.Time            `json:"registered,omitzero"`
	Status     Status               `json:"status"`
	Polled     bool                 `json:"polled"` // false: registered but not polled (shadowed by the file, or invalid under the current configuration)
}

// registryFollower is the part of the engine that follows the [Registry]:
// it holds the registrations this node applies, makes this node's own
// changes (Register, Unregister), and reads the registry again when
// another node changed it and periodically (follow). It changes the
// engine's resources only through apply, and its lock, taken before the
// engine's, serialises every change of the resource set (the engine's
// Apply takes it too: locked). Its methods are safe for concurrent use.
type registryFollower struct {
	registry Registry // nil: no runtime registrations
	clock    Clock
	log      *slog.Logger
	apply    applyFunc
	cfg      func() *config.Config // the configuration in force
	hold     holdFunc

	mu         sync.Mutex              // serialises changes of the resource set; taken before the engine's
	registered map[string]registration // by id
	// changed is closed when the registry may have changed through another
	// node since registered was read (see RegistryWatcher); nil: the
	// registry tells nothing of the sort.
	changed <-chan struct{}
	// revision is the revision of the last read of the registry applied;
	// writes, the revisions of this node's own changes (Register,
	// Unregister) that no read applied since holds: a read older than such
	// a change leaves its id alone (see sync).
	revision Revision
	writes   map[string]Revision
}

// applyFunc brings the resource id in line with its registration reg (nil:
// unregistered) under cfg, leaving the others alone (see
// [Engine.applyRegistered]). It is called with the follower's lock held.
type applyFunc func(ctx context.Context, cfg *config.Config, id string, reg *registration) error

// holdFunc waits for a poll of resource id in flight and keeps id from
// being polled until release is called; an error when ctx ends first.
type holdFunc func(ctx context.Context, id string) (release func(), err error)

// newRegistryFollower returns the follower of registry (nil: none, and
// Register fails), changing resources through apply under the
// configuration cfg returns; it reads nothing yet (see load).
func newRegistryFollower(registry Registry, clock Clock, log *slog.Logger, apply applyFunc, cfg func() *config.Config, hold holdFunc) *registryFollower {
	return &registryFollower{
		registry: registry, clock: clock, log: log, apply: apply, cfg: cfg, hold: hold,
		registered: make(map[string]registration),
		writes:     make(map[string]Revision),
	}
}

// enabled reports whether there is a registry to follow.
func (f *registryFollower) enabled() bool { return f.registry != nil }

// load reads the registry at start-up.
func (f *registryFollower) load(ctx context.Context) error {
	changed := f.watch()
	snap, err := f.registry.Registrations(ctx)
	if err != nil {
		return fmt.Errorf("read registered resources: %w", err)
	}
	regs := make(map[string]registration, len(snap.Registrations))
	for _, raw := range snap.Registrations {
		if reg, ok := f.decode(ctx, raw); ok {
			regs[raw.ID] = reg
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.registered, f.revision, f.changed = regs, snap.Revision, changed
	return nil
}

// locked calls fn with the registrations, holding the lock every change of
// the resource set takes (the engine's Apply: each change builds on the
// last). fn must not keep registered.
func (f *registryFollower) locked(fn func(registered map[string]registration) error) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return fn(f.registered)
}

// registration returns the registration of id.
func (f *registryFollower) registration(id string) (registration, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	reg, ok := f.registered[id]
	return reg, ok
}

// registrations returns a copy of every registration, by id.
func (f *registryFollower) registrations() map[string]registration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return maps.Clone(f.registered)
}

// watch returns the channel that tells of a change of the registry
// through another node after this call; nil without a [RegistryWatcher].
func (f *registryFollower) watch() <-chan struct{} {
	if w, ok := f.registry.(RegistryWatcher); ok {
		return w.RegistryChanged()
	}
	return nil
}

// decode decodes raw; an undecodable one is logged.
func (f *registryFollower) decode(ctx context.Context, raw Registration) (registration, bool) {
	entry, err := config.DecodeStoredResource(raw.Definition)
	if err != nil || entry.ID != raw.ID {
		f.log.WarnContext(ctx, "registered resource undecodable; not polled", slog.String("resource", raw.ID), slog.Any("error", err))
		return registration{}, false
	}
	return registration{entry: &entry, def: raw.Definition, registered: raw.Registered}, true
}

// registrySyncInterval is how often a node of several re-reads the shared
// registry, so that a resource registered, replaced or deleted through
// another node is polled (or no longer) here within that time even when
// the store's word of the change (see [RegistryWatcher]) was lost, or the
// store gives none.
const registrySyncInterval = 5 * time.Second

// registryRetryInterval is the wait after a read of the registry failed
// (the store unreachable): shorter than registrySyncInterval, so that a
// node follows the others again within a second of the store's return,
// when the word of their changes may have been lost meanwhile.
const registryRetryInterval = time.Second

// registryRestFactor is how many times a registry read's length the
// follower rests after it before a read for another node's change.
const registryRestFactor = 4

// follow re-reads the registry when a [RegistryWatcher] tells of a change
// through another node, and every registrySyncInterval, until ctx ends
// (several nodes only: a single node's registry changes only through its
// own Register and Unregister).
func (f *registryFollower) follow(ctx context.Context) {
	f.mu.Lock()
	changed := f.changed
	f.mu.Unlock()
	var lastEnd time.Time
	var took time.Duration // the last read's length
	failed := false        // the last read failed
	for {
		wait := registrySyncInterval
		if failed {
			wait = registryRetryInterval
		}
		t := f.clock.NewTimer(wait)
		read, kind := f.sync, "all" // the periodic re-read: all of it, the safety net
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C():
		case <-changed: // nil: never
			t.Stop()
			read, kind = f.syncChanges, "changes" // another node's change: what changed since the last read
			// Every change through another node is a read here (of what
			// changed, when the registry can tell; else of all of it).
			// When reads are slow, rest four times the last read's length
			// after it first, so that a stream of changes costs this node
			// at most a fifth of a core; a change after a quiet spell is
			// read at once.
			if rest := min(lastEnd.Add(registryRestFactor*took).Sub(f.clock.Now()), registrySyncInterval); rest > 0 {
				p := f.clock.NewTimer(rest)
				select {
				case <-ctx.Done():
					p.Stop()
					return
				case <-p.C():
				}
			}
		}
		start := f.clock.Now()
		err := read(ctx)
		end := f.clock.Now()
		f.log.DebugContext(ctx, "registry re-read", slog.String("read", kind), slog.Duration("took", end.Sub(start)), slog.Any("error", err))
		if kind == "changes" {
			// Only reads for changes rest the next one: the periodic read
			// of all of it comes every registrySyncInterval whatever it
			// costs, and a slow one (a busy database) must not hold back
			// the next change by four times its length.
			lastEnd, took = end, end.Sub(start)
		}
		f.mu.Lock()
		changed = f.changed
		f.mu.Unlock()
		failed = err != nil
		if failed {
			if ctx.Err() == nil {
				f.log.WarnContext(ctx, "registry not re-read", slog.Any("error", err))
			}
			// The next attempt waits for the timer, a short one: the
			// channel taken before the failed read may be closed already.
			changed = nil
		}
	}
}

// sync re-reads the registry and applies what changed since it was last
// read (see [Engine.SyncRegistry]). The read is taken without holding the
// lock this node's own changes take, so one of them may commit between the
// read and its apply: an id this node changed at a higher revision than
// the read's keeps the state this node gave it (the read is older than
// that change), and a read older than one already applied changes nothing.
func (f *registryFollower) sync(ctx context.Context) error {
	changed := f.watch() // before the read, so that a change during it closes it
	snap, err := f.registry.Registrations(ctx)
	if err != nil {
		return fmt.Errorf("read registered resources: %w", err)
	}
	return f.applyRead(ctx, snap.Revision, snap.Registrations, nil, true, changed)
}

// syncChanges re-reads what changed in the registry since the revision
// applied last, when the registry can tell ([RegistryChanges]), else all of
// it as sync does.
func (f *registryFollower) syncChanges(ctx context.Context) error {
	rc, ok := f.registry.(RegistryChanges)
	if !ok {
		return f.sync(ctx)
	}
	changed := f.watch() // before the read, so that a change during it closes it
	f.mu.Lock()
	since := f.revision
	f.mu.Unlock()
	delta, err := rc.RegistrationsSince(ctx, since)
	if errors.Is(err, errors.ErrUnsupported) { // a wrapper of a registry that cannot tell
		return f.sync(ctx)
	}
	if err != nil {
		return fmt.Errorf("read registry changes: %w", err)
	}
	return f.applyRead(ctx, delta.Revision, delta.Changed, delta.Deleted, false, changed)
}

// applyRead applies a read of the registry at revision rev: found are the
// registrations it found (a full read: every one; else those changed since
// the revision applied last), deleted the ids it found unregistered since
// then (a full read finds them by their absence from found). changed is
// the RegistryWatcher's channel taken before the read. Only a registration
// that differs from the one applied is decoded: a full read of a registry
// that did not change costs a comparison per registration.
func (f *registryFollower) applyRead(ctx context.Context, rev Revision, found []Registration, deleted []string, full bool, changed <-chan struct{}) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if rev < f.revision {
		return nil // two reads crossed: this one is older than the one applied
	}
	cfg := f.cfg()
	// mine: changed here after the read; seen: a full read's registrations.
	mine := func(id string) bool { return f.writes[id] > rev }
	var seen map[string]bool
	if full {
		seen = make(map[string]bool, len(found))
	}
	for _, raw := range found {
		id := raw.ID
		if old, ok := f.registered[id]; mine(id) || ok && old.same(raw) {
			if seen != nil {
				seen[id] = true
			}
			continue
		}
		reg, ok := f.decode(ctx, raw)
		if !ok {
			continue // as if absent
		}
		if seen != nil {
			seen[id] = true
		}
		if err := f.apply(ctx, cfg, id, &reg); err != nil {
			return err
		}
		f.registered[id] = reg
	}
	if full {
		for id := range f.registered {
			if !seen[id] {
				deleted = append(deleted, id)
			}
		}
	}
	for _, id := range deleted {
		if _, ok := f.registered[id]; ok && !mine(id) {
			if err := f.apply(ctx, cfg, id, nil); err != nil {
				return err
			}
			delete(f.registered, id)
		}
	}
	maps.DeleteFunc(f.writes, func(_ string, w Revision) bool { return w <= rev }) // the read holds them
	f.revision, f.changed = rev, changed
	return nil
}

// same reports whether raw, as a read found it, is the registration r.
func (r registration) same(raw Registration) bool {
	return r.registered.Equal(raw.Registered) && bytes.Equal(r.def, raw.Definition)
}

// declared reports whether cfg's file declares resource id.
func declared(cfg *config.Config, id string) bool {
	return slices.ContainsFunc(cfg.Resources, func(r config.ResourceEntry) bool { return r.ID == id })
}

// register is [Engine.Register].
func (f *registryFollower) register(ctx context.Context, entry config.ResourceEntry) (created bool, err error) {
	if f.registry == nil {
		return false, ErrNoRegistry
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	cfg := f.cfg()
	if declared(cfg, entry.ID) {
		return false, fmt.Errorf("register %q: %w", entry.ID, ErrDeclaredInFile)
	}
	if errs := cfg.Poller.ValidateResource("$", entry); len(errs) > 0 {
		return false, errors.Join(errs...)
	}
	def, err := json.Marshal(entry)
	if err != nil {
		return false, fmt.Errorf("encode resource %q: %w", entry.ID, err)
	}
	now := f.clock.Now()
	res, err := f.registry.Register(ctx, Registration{ID: entry.ID, Definition: def, Registered: now, Updated: now})
	if err != nil {
		return false, fmt.Errorf("register %q: %w", entry.ID, err)
	}
	old, had := f.registered[entry.ID]
	reg := registration{entry: &entry, def: def, registered: now}
	if had {
		reg.registered = old.registered
	}
	if err := f.apply(ctx, cfg, entry.ID, &reg); err != nil {
		return false, err
	}
	f.registered[entry.ID] = reg
	f.writes[entry.ID] = res.Revision
	return res.Created, nil
}

// unregister is [Engine.Unregister].
func (f *registryFollower) unregister(ctx context.Context, id string) error {
	if f.registry == nil {
		return ErrNoRegistry
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	cfg := f.cfg()
	if declared(cfg, id) {
		return fmt.Errorf("unregister %q: %w", id, ErrDeclaredInFile)
	}
	if _, ok := f.registered[id]; !ok {
		return fmt.Errorf("unregister %q: %w", id, ErrUnknownResource)
	}
	// Wait for an in-flight poll, so none stores a version after the delete.
	release, err := f.hold(ctx, id)
	if err != nil {
		return fmt.Errorf("unregister %q: %w", id, err)
	}
	defer release()
	// The store first: when it fails, the resource is still registered
	// there, so it stays polled here and the DELETE can be retried. Not
	// found there (deleted through another node), it goes here too.
	rev, serr := f.registry.Unregister(ctx, id)
	if serr != nil && !errors.Is(serr, storage.ErrNotFound) {
		return fmt.Errorf("unregister %q: %w", id, serr)
	}
	if err := f.apply(ctx, cfg, id, nil); err != nil {
		return err
	}
	delete(f.registered, id)
	if serr == nil {
		f.writes[id] = rev
	}
	if serr != nil {
		return fmt.Errorf("unregister %q: %w", id, serr)
	}
	return nil
}
