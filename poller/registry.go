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
	"strings"
	"time"

	"github.com/dynamo-rss/dynamo/config"
	"github.com/dynamo-rss/dynamo/schema"
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

// loadRegistered reads the registry at start-up.
func (e *Engine) loadRegistered(ctx context.Context) error {
	changed := e.watchRegistry()
	regs, rev, err := e.readRegistry(ctx)
	if err != nil {
		return err
	}
	e.registered, e.regRevision, e.regChanged = regs, rev, changed
	return nil
}

// watchRegistry returns the channel that tells of a change of the registry
// through another node after this call; nil without a [RegistryWatcher].
func (e *Engine) watchRegistry() <-chan struct{} {
	if w, ok := e.registry.(RegistryWatcher); ok {
		return w.RegistryChanged()
	}
	return nil
}

// readRegistry reads and decodes every registration, with the registry's
// revision the read saw; undecodable ones are logged and left out.
func (e *Engine) readRegistry(ctx context.Context) (map[string]registration, Revision, error) {
	snap, err := e.registry.Registrations(ctx)
	if err != nil {
		return nil, 0, fmt.Errorf("read registered resources: %w", err)
	}
	return e.decodeRegistrations(ctx, snap.Registrations), snap.Revision, nil
}

// decodeRegistrations decodes regs; undecodable ones are logged and left out.
func (e *Engine) decodeRegistrations(ctx context.Context, regs []Registration) map[string]registration {
	out := make(map[string]registration, len(regs))
	for _, raw := range regs {
		if reg, ok := e.decodeRegistration(ctx, raw); ok {
			out[raw.ID] = reg
		}
	}
	return out
}

// decodeRegistration decodes raw; an undecodable one is logged.
func (e *Engine) decodeRegistration(ctx context.Context, raw Registration) (registration, bool) {
	entry, err := config.DecodeStoredResource(raw.Definition)
	if err != nil || entry.ID != raw.ID {
		e.log.WarnContext(ctx, "registered resource undecodable; not polled", slog.String("resource", raw.ID), slog.Any("error", err))
		return registration{}, false
	}
	return registration{entry: &entry, def: raw.Definition, registered: raw.Registered}, true
}

// applyRegistered brings the registered resource id in line with reg (nil:
// it was unregistered) without touching the others: a registration costs
// O(log n), where [Engine.apply] rebuilds all n resources. A resource the
// file declares shadows the registration and is left alone; one that is
// not valid under cfg is not polled (as apply does).
func (e *Engine) applyRegistered(ctx context.Context, cfg *config.Config, id string, reg *registration) error {
	if slices.ContainsFunc(cfg.Resources, func(r config.ResourceEntry) bool { return r.ID == id }) {
		return nil
	}
	var b built
	if reg != nil {
		var err error
		if errs := cfg.Poller.ValidateResource("$", *reg.entry); len(errs) > 0 {
			err = errors.Join(errs...)
		} else {
			b, err = build(cfg.Poller, e.budget, reg.entry, SourceAPI, "$")
			b.since = reg.registered
		}
		if err != nil {
			e.log.WarnContext(ctx, "registered resource not polled", slog.String("resource", id), slog.Any("error", err))
			reg = nil
		}
	}
	if reg == nil {
		e.mu.Lock()
		defer e.mu.Unlock()
		if r, ok := e.resources[id]; ok && r.source == SourceAPI {
			e.removeLocked(id)
			if i := slices.Index(e.order, id); i >= 0 {
				e.order = slices.Delete(e.order, i, i+1)
			}
		}
		return nil
	}
	e.mu.Lock()
	_, exists := e.resources[id]
	e.mu.Unlock()
	var st persisted
	var stored bool
	if !exists {
		st, stored = e.states.load(ctx, id) // outside the lock: a store read
	}
	var restarted, added bool
	e.mu.Lock()
	defer func() {
		e.mu.Unlock()
		e.poke()
		if restarted {
			e.reschedule(ctx, []string{id}, map[string]bool{id: added})
		}
	}()
	if _, exists := e.resources[id]; !exists {
		e.order = append(e.order, id)
		added = true
	}
	restarted = e.upsertLocked(b, st, stored, e.clock.Now())
	return nil
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
// engine rests after it before a read for another node's change.
const registryRestFactor = 4

// syncRegistry re-reads the registry when a [RegistryWatcher] tells of a
// change through another node, and every registrySyncInterval, until ctx
// ends (several nodes only: a single node's registry changes only through
// its own Register and Unregister).
func (e *Engine) syncRegistry(ctx context.Context) {
	e.regMu.Lock()
	changed := e.regChanged
	e.regMu.Unlock()
	var lastEnd time.Time
	var took time.Duration // the last read's length
	failed := false        // the last read failed
	for {
		wait := registrySyncInterval
		if failed {
			wait = registryRetryInterval
		}
		t := e.clock.NewTimer(wait)
		read, kind := e.SyncRegistry, "all" // the periodic re-read: all of it, the safety net
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C():
		case <-changed: // nil: never
			t.Stop()
			read, kind = e.syncChanges, "changes" // another node's change: what changed since the last read
			// Every change through another node is a read here (of what
			// changed, when the registry can tell; else of all of it).
			// When reads are slow, rest four times the last read's length
			// after it first, so that a stream of changes costs this node
			// at most a fifth of a core; a change after a quiet spell is
			// read at once.
			if rest := min(lastEnd.Add(registryRestFactor*took).Sub(e.clock.Now()), registrySyncInterval); rest > 0 {
				p := e.clock.NewTimer(rest)
				select {
				case <-ctx.Done():
					p.Stop()
					return
				case <-p.C():
				}
			}
		}
		start := e.clock.Now()
		err := read(ctx)
		end := e.clock.Now()
		e.log.DebugContext(ctx, "registry re-read", slog.String("read", kind), slog.Duration("took", end.Sub(start)), slog.Any("error", err))
		if kind == "changes" {
			// Only reads for changes rest the next one: the periodic read
			// of all of it comes every registrySyncInterval whatever it
			// costs, and a slow one (a busy database) must not hold back
			// the next change by four times its length.
			lastEnd, took = end, end.Sub(start)
		}
		e.regMu.Lock()
		changed = e.regChanged
		e.regMu.Unlock()
		failed = err != nil
		if failed {
			if ctx.Err() == nil {
				e.log.WarnContext(ctx, "registry not re-read", slog.Any("error", err))
			}
			// The next attempt waits for the timer, a short one: the
			// channel taken before the failed read may be closed already.
			changed = nil
		}
	}
}

// SyncRegistry re-reads the registry and applies what changed since it was
// last read: new registrations are scheduled, replaced ones re-applied,
// deleted ones stop being polled. The read is taken without holding the
// lock this node's own changes take, so one of them may commit between the
// read and its apply: an id this node changed at a higher revision than
// the read's keeps the state this node gave it (the read is older than
// that change), and a read older than one already applied changes nothing.
func (e *Engine) SyncRegistry(ctx context.Context) error {
	changed := e.watchRegistry() // before the read, so that a change during it closes it
	snap, err := e.registry.Registrations(ctx)
	if err != nil {
		return fmt.Errorf("read registered resources: %w", err)
	}
	return e.applyRead(ctx, snap.Revision, snap.Registrations, nil, true, changed)
}

// syncChanges re-reads what changed in the registry since the revision
// applied last, when the registry can tell ([RegistryChanges]), else all of
// it as SyncRegistry does.
func (e *Engine) syncChanges(ctx context.Context) error {
	rc, ok := e.registry.(RegistryChanges)
	if !ok {
		return e.SyncRegistry(ctx)
	}
	changed := e.watchRegistry() // before the read, so that a change during it closes it
	e.regMu.Lock()
	since := e.regRevision
	e.regMu.Unlock()
	delta, err := rc.RegistrationsSince(ctx, since)
	if errors.Is(err, errors.ErrUnsupported) { // a wrapper of a registry that cannot tell
		return e.SyncRegistry(ctx)
	}
	if err != nil {
		return fmt.Errorf("read registry changes: %w", err)
	}
	return e.applyRead(ctx, delta.Revision, delta.Changed, delta.Deleted, false, changed)
}

// applyRead applies a read of the registry at revision rev: found are the
// registrations it found (a full read: every one; else those changed since
// the revision applied last), deleted the ids it found unregistered since
// then (a full read finds them by their absence from found). changed is
// the RegistryWatcher's channel taken before the read. Only a registration
// that differs from the one applied is decoded: a full read of a registry
// that did not change costs a comparison per registration.
func (e *Engine) applyRead(ctx context.Context, rev Revision, found []Registration, deleted []string, full bool, changed <-chan struct{}) error {
	e.regMu.Lock()
	defer e.regMu.Unlock()
	if rev < e.regRevision {
		return nil // two reads crossed: this one is older than the one applied
	}
	e.mu.Lock()
	cfg := e.cfg
	e.mu.Unlock()
	// mine: changed here after the read; seen: a full read's registrations.
	mine := func(id string) bool { return e.regWrites[id] > rev }
	var seen map[string]bool
	if full {
		seen = make(map[string]bool, len(found))
	}
	for _, raw := range found {
		id := raw.ID
		if old, ok := e.registered[id]; mine(id) || ok && old.same(raw) {
			if seen != nil {
				seen[id] = true
			}
			continue
		}
		reg, ok := e.decodeRegistration(ctx, raw)
		if !ok {
			continue // as if absent
		}
		if seen != nil {
			seen[id] = true
		}
		if err := e.applyRegistered(ctx, cfg, id, &reg); err != nil {
			return err
		}
		e.registered[id] = reg
	}
	if full {
		for id := range e.registered {
			if !seen[id] {
				deleted = append(deleted, id)
			}
		}
	}
	for _, id := range deleted {
		if _, ok := e.registered[id]; ok && !mine(id) {
			if err := e.applyRegistered(ctx, cfg, id, nil); err != nil {
				return err
			}
			delete(e.registered, id)
		}
	}
	maps.DeleteFunc(e.regWrites, func(_ string, w Revision) bool { return w <= rev }) // the read holds them
	e.regRevision, e.regChanged = rev, changed
	return nil
}

// same reports whether raw, as a read found it, is the registration r.
func (r registration) same(raw Registration) bool {
	return r.registered.Equal(raw.Registered) && bytes.Equal(r.def, raw.Definition)
}

// Register registers (or replaces) a resource at run time: it is kept in the
// registry and polled within seconds. entry must have been validated with
// [config.ParseResource]; an id the configuration file declares fails with
// ErrDeclaredInFile.
func (e *Engine) Register(ctx context.Context, entry config.ResourceEntry) (created bool, err error) {
	if e.registry == nil {
		return false, ErrNoRegistry
	}
	e.regMu.Lock()
	defer e.regMu.Unlock()
	e.mu.Lock()
	cfg := e.cfg
	e.mu.Unlock()
	if slices.ContainsFunc(cfg.Resources, func(r config.ResourceEntry) bool { return r.ID == entry.ID }) {
		return false, fmt.Errorf("register %q: %w", entry.ID, ErrDeclaredInFile)
	}
	if errs := cfg.Poller.ValidateResource("$", entry); len(errs) > 0 {
		return false, errors.Join(errs...)
	}
	def, err := json.Marshal(entry)
	if err != nil {
		return false, fmt.Errorf("encode resource %q: %w", entry.ID, err)
	}
	now := e.clock.Now()
	res, err := e.registry.Register(ctx, Registration{ID: entry.ID, Definition: def, Registered: now, Updated: now})
	if err != nil {
		return false, fmt.Errorf("register %q: %w", entry.ID, err)
	}
	old, had := e.registered[entry.ID]
	reg := registration{entry: &entry, def: def, registered: now}
	if had {
		reg.registered = old.registered
	}
	if err := e.applyRegistered(ctx, cfg, entry.ID, &reg); err != nil {
		return false, err
	}
	e.registered[entry.ID] = reg
	e.regWrites[entry.ID] = res.Revision
	return res.Created, nil
}

// Unregister stops polling a registered resource and removes it and its
// history; ErrDeclaredInFile for a resource of the file, ErrUnknownResource
// for an id that is not registered. An in-flight poll of it finishes first.
func (e *Engine) Unregister(ctx context.Context, id string) error {
	if e.registry == nil {
		return ErrNoRegistry
	}
	e.regMu.Lock()
	defer e.regMu.Unlock()
	e.mu.Lock()
	cfg := e.cfg
	r := e.resources[id]
	e.mu.Unlock()
	if slices.ContainsFunc(cfg.Resources, func(r config.ResourceEntry) bool { return r.ID == id }) {
		return fmt.Errorf("unregister %q: %w", id, ErrDeclaredInFile)
	}
	if _, ok := e.registered[id]; !ok {
		return fmt.Errorf("unregister %q: %w", id, ErrUnknownResource)
	}
	if r != nil {
		// Wait for an in-flight poll, so none stores a version after the delete.
		select {
		case r.busy <- struct{}{}:
			defer e.release(r)
		case <-ctx.Done():
			return fmt.Errorf("unregister %q: %w", id, ctx.Err())
		}
	}
	// The store first: when it fails, the resource is still registered
	// there, so it stays polled here and the DELETE can be retried. Not
	// found there (deleted through another node), it goes here too.
	rev, serr := e.registry.Unregister(ctx, id)
	if serr != nil && !errors.Is(serr, storage.ErrNotFound) {
		return fmt.Errorf("unregister %q: %w", id, serr)
	}
	if err := e.applyRegistered(ctx, cfg, id, nil); err != nil {
		return err
	}
	delete(e.registered, id)
	if serr == nil {
		e.regWrites[id] = rev
	}
	if serr != nil {
		return fmt.Errorf("unregister %q: %w", id, serr)
	}
	return nil
}

// Definitions lists every resource, declared and registered, with where it
// comes from and its poll state, sorted by id.
func (e *Engine) Definitions() []Definition {
	e.regMu.Lock()
	regs := maps.Clone(e.registered)
	e.regMu.Unlock()
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]Definition, 0, len(e.resources)+len(regs))
	for id, r := range e.resources {
		d := Definition{Resource: *r.entry, Source: r.source, Registered: r.st.Since, Status: e.statusLocked(r), Polled: true}
		if reg, ok := regs[id]; ok && r.source == SourceAPI {
			d.Registered = reg.registered
		}
		out = append(out, d)
	}
	for id, reg := range regs {
		if _, polled := e.resources[id]; !polled || e.resources[id].source != SourceAPI {
			out = append(out, Definition{Resource: *reg.entry, Source: SourceAPI, Registered: reg.registered, Status: Status{ID: id, URL: reg.entry.URL}})
		}
	}
	slices.SortFunc(out, func(a, b Definition) int {
		if c := strings.Compare(a.Resource.ID, b.Resource.ID); c != 0 {
			return c
		}
		return strings.Compare(a.Source, b.Source)
	})
	return out
}

// Definition is one resource's definition as Definitions lists it; a
// registration the file shadows is returned as the file's resource.
func (e *Engine) Definition(id string) (Definition, bool) {
	e.regMu.Lock()
	reg, registered := e.registered[id]
	e.regMu.Unlock()
	e.mu.Lock()
	defer e.mu.Unlock()
	if r, ok := e.resources[id]; ok {
		d := Definition{Resource: *r.entry, Source: r.source, Registered: r.st.Since, Status: e.statusLocked(r), Polled: true}
		if registered && r.source == SourceAPI {
			d.Registered = reg.registered
		}
		return d, true
	}
	if registered {
		return Definition{Resource: *reg.entry, Source: SourceAPI, Registered: reg.registered, Status: Status{ID: id, URL: reg.entry.URL}}, true
	}
	return Definition{}, false
}

// DateRules are the rules resource id's dates are read with (its
// date_format and timezone, resolved when it was applied); zero for an
// unknown id.
func (e *Engine) DateRules(id string) schema.DateRules {
	e.mu.Lock()
	defer e.mu.Unlock()
	if r, ok := e.resources[id]; ok {
		return r.dates
	}
	return schema.DateRules{}
}

// FetchPage fetches rawURL once as a poll would, with the engine's
// fetcher (fetch.Fetcher.Once: the SSRF guard, timeouts, size limit,
// robots.txt when configured, the host's politeness slot, shared with the
// polls), e.g. to check that a page a webmaster registers is annotated.
func (e *Engine) FetchPage(ctx context.Context, rawURL string) (Page, error) {
	return e.fetcher.Once(ctx, rawURL)
}
