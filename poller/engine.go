package poller

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/dynamo-rss/dynamo/config"
	"github.com/dynamo-rss/dynamo/extractor"
	"github.com/dynamo-rss/dynamo/extractor/filter"
	"github.com/dynamo-rss/dynamo/fetch"
	"github.com/dynamo-rss/dynamo/schema"
	"github.com/dynamo-rss/dynamo/storage"
)

// Poll outcomes: every poll ends in exactly one.
const (
	OutcomeChanged      = "changed"       // a new version was stored
	OutcomeUnchanged    = "unchanged"     // fetched and extracted; same content as the latest version
	OutcomeNotModified  = "not-modified"  // 304: nothing extracted, nothing written
	OutcomeNotAnnotated = "not-annotated" // the page has no channel:title annotation
	OutcomeRobotsDenied = "robots-denied" // robots.txt disallows the URL; nothing fetched
	OutcomeDiskFull     = "disk_full"     // fetched and extracted, but the store's disk is below storage.min_free: nothing stored
	OutcomeError        = "error"         // see Status.LastError for the cause
)

// Outcomes lists every poll outcome.
func Outcomes() []string {
	return []string{OutcomeChanged, OutcomeUnchanged, OutcomeNotModified, OutcomeNotAnnotated, OutcomeRobotsDenied, OutcomeDiskFull, OutcomeError}
}

// ErrUnknownResource is returned for an id the configuration does not have.
var ErrUnknownResource = errors.New("poller: unknown resource")

// stateSaveTimeout bounds saving a poll's state once the poll's own context
// may have ended.
const stateSaveTimeout = 5 * time.Second

// VersionSaver stores changed versions and prunes history.
type VersionSaver interface {
	Save(ctx context.Context, doc *schema.Document) (storage.SaveResult, error)
	Prune(ctx context.Context, id string, r storage.Retention, now time.Time) (int, error)
}

// StateStore persists the poller's opaque per-resource state.
type StateStore interface {
	PollState(ctx context.Context, id string) ([]byte, error) // storage.ErrNotFound when none
	SavePollState(ctx context.Context, id string, state []byte) error
}

// Store is what the engine needs from storage; every storage.Store satisfies it.
type Store interface {
	VersionSaver
	StateStore
}

// ExtractFunc is the signature of extractor.Extract.
type ExtractFunc func(r io.Reader, opts extractor.Options) (*extractor.Result, error)

// Options configure an Engine; the zero value is valid.
type Options struct {
	Clock      Clock                 // nil: the real clock
	Logger     *slog.Logger          // nil: discard
	Registerer prometheus.Registerer // nil: metrics not registered
	// Transport replaces the engine's own guarded transport (tests). The SSRF
	// guard lives in the default transport's dialer, so a replacement must
	// provide its own.
	Transport http.RoundTripper
	Resolver  Resolver    // nil: the system resolver
	Extract   ExtractFunc // nil: extractor.Extract; its reader is valid only during the call (the body's buffer is reused)
	// Registry keeps resources registered at run time (the store's); nil:
	// only the configuration file's resources, and Register fails.
	Registry Registry
	// Leaser divides polling among the nodes that share the store (see
	// lease.go); nil: this engine polls every resource itself.
	Leaser Leaser
	// Readers counts each resource's readers for weight_readers (the
	// api's); nil: every resource counts one reader.
	Readers Readers
}

// Status is what the engine knows of a resource. Its fields match
// api.ResourceStatus one for one, so the api converts it with a plain conversion.
type Status struct {
	ID          string        `json:"id"`
	URL         string        `json:"url"`
	Policy      string        `json:"policy"`
	Interval    time.Duration `json:"interval"`
	Tau         time.Duration `json:"tau"`
	Alpha       float64       `json:"alpha"`
	AlphaAuto   bool          `json:"alpha_auto"`
	LastPoll    time.Time     `json:"last_poll"`
	NextPoll    time.Time     `json:"next_poll"`
	LastOutcome string        `json:"last_outcome"`
	LastError   string        `json:"last_error,omitempty"`
	Polls       int64         `json:"polls"`
	Changes     int64         `json:"changes"`
	Errors      int64         `json:"errors"`
	Since       time.Time     `json:"since"`                 // when the resource was first scheduled: declared or registered
	Diagnostics []string      `json:"diagnostics,omitempty"` // the last extraction's diagnostics (the first few), e.g. a selector that matched nothing
}

// Engine schedules and polls resources. Its methods are safe for concurrent
// use; Run owns the scheduler and worker goroutines.
type Engine struct {
	store   Store
	hist    *histories   // the poll histories in the store
	states  *stateReader // reads the stored states of resources being added
	clock   Clock
	log     *slog.Logger
	m       *metrics
	extract ExtractFunc
	descs   *extractor.DescriptionCache // sanitized descriptions, shared by every poll
	opts    Options
	// fetcher is how pages, robots.txt and articles are fetched: one
	// guarded client, robots.txt cache, politeness gate and browser for
	// the engine's life, reconfigured by Apply.
	fetcher *fetch.Fetcher
	// articles is the article step of content: full, fetching through fetcher.
	articles *articles
	wake     chan struct{} // cap 1: the schedule changed

	mu        sync.Mutex
	cfg       *config.Config
	resources map[string]*resource
	// retired holds the busy tokens of resources removed while one of
	// their polls was in flight: a resource added again under the same id
	// takes its token over, so that it is not polled beside that poll.
	retired map[string]chan struct{}
	order   []string // ids in configuration order
	queue   Queue    // resources waiting for their next poll (not the ones being polled)
	running bool

	// reg follows the registry of resources registered at run time; its
	// lock serialises changes of the resource set (Apply, Register,
	// Unregister) so that each builds on the last, and is taken before mu.
	reg    *registryFollower
	leases *leases // nil: this node polls every resource (one node)

	budget    *Budget        // shared by the resources with policy kind budget
	budgetSet BudgetSettings // the settings it was last configured with (guarded by mu)

	afterPoll func(Status) // tests: called after each completed poll
}

// New builds an engine for cfg, reading persisted poll state from store and
// scheduling every resource (resuming persisted next-poll times; spreading
// first polls by a stable hash of the id).
func New(ctx context.Context, cfg *config.Config, store Store, opts Options) (*Engine, error) {
	if cfg == nil || store == nil {
		return nil, errors.New("poller: New needs a config and a store")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	m, err := newMetrics(opts.Registerer)
	if err != nil {
		return nil, err
	}
	e := &Engine{
		store:     store,
		clock:     opts.Clock,
		log:       opts.Logger,
		m:         m,
		extract:   opts.Extract,
		descs:     extractor.NewDescriptionCache(0),
		opts:      opts,
		wake:      make(chan struct{}, 1),
		resources: make(map[string]*resource),
		retired:   make(map[string]chan struct{}),
	}
	if opts.Registerer != nil {
		if err := opts.Registerer.Register(estimates{e.eachState}); err != nil {
			return nil, fmt.Errorf("register poller metrics: %w", err)
		}
	}
	if e.clock == nil {
		e.clock = realClock{}
	}
	if e.log == nil {
		e.log = slog.New(slog.DiscardHandler)
	}
	e.hist = newHistories(store, e.log)
	e.states = newStateReader(store, e.log)
	e.leases = newLeases(opts.Leaser, e.clock, e.log)
	e.budget = NewBudget(BudgetSettingsOf(cfg.Poller.Budget), opts.Readers)
	e.budgetSet = BudgetSettingsOf(cfg.Poller.Budget)
	e.reg = newRegistryFollower(opts.Registry, e.clock, e.log, e.applyRegistered, e.currentConfig, e.hold)
	if e.reg.enabled() {
		if err := e.reg.load(ctx); err != nil {
			return nil, err
		}
	}
	if e.extract == nil {
		e.extract = extractor.Extract
	}
	e.fetcher, err = fetch.New(cfg.Poller, fetch.Options{
		Transport: opts.Transport, Resolver: opts.Resolver,
		Clock: e.clock, Logger: e.log, Registerer: opts.Registerer,
	})
	if err != nil {
		return nil, err
	}
	e.articles = newArticles(e.fetcher, e.log, m.articles.WithLabelValues("fetched"), m.articles.WithLabelValues("failed"))
	if err := e.Apply(ctx, cfg); err != nil {
		return nil, err
	}
	return e, nil
}

// Apply switches to cfg without a restart: added resources are scheduled,
// removed ones stop (their history stays in storage), a changed policy
// recomputes the next poll at once while keeping what was learned (τ, α,
// intervals; with a Leaser, in the store too, for every node), a changed URL
// drops the conditional-GET validators. Fetch
// settings apply to the next request; workers is read only by Run at start.
// On error nothing changes.
func (e *Engine) Apply(ctx context.Context, cfg *config.Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	return e.reg.locked(func(registered map[string]registration) error {
		return e.apply(ctx, cfg, registered)
	})
}

// currentConfig is the configuration in force.
func (e *Engine) currentConfig() *config.Config {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.cfg
}

// apply makes the engine poll cfg's resources and the registered ones (an id
// the file declares shadows a registered one). The caller holds the
// registry follower's lock (registryFollower.locked).
func (e *Engine) apply(ctx context.Context, cfg *config.Config, registered map[string]registration) error {
	bs := make([]built, 0, len(cfg.Resources)+len(registered))
	declared := make(map[string]bool, len(cfg.Resources))
	for i := range cfg.Resources {
		r := &cfg.Resources[i]
		b, err := build(cfg.Poller, e.budget, r, SourceFile, fmt.Sprintf("$.resources[%d]", i))
		if err != nil {
			return err
		}
		declared[r.ID] = true
		bs = append(bs, b)
	}
	for _, id := range slices.Sorted(maps.Keys(registered)) {
		reg := registered[id]
		if declared[id] {
			e.log.WarnContext(ctx, "registered resource shadowed by the configuration file's", slog.String("resource", id))
			continue
		}
		if errs := cfg.Poller.ValidateResource("$", *reg.entry); len(errs) > 0 {
			e.log.WarnContext(ctx, "registered resource not valid under this configuration; not polled", slog.String("resource", id), slog.Any("error", errors.Join(errs...)))
			continue
		}
		b, err := build(cfg.Poller, e.budget, reg.entry, SourceAPI, "$")
		if err != nil {
			e.log.WarnContext(ctx, "registered resource not polled", slog.String("resource", id), slog.Any("error", err))
			continue
		}
		b.since = reg.registered
		bs = append(bs, b)
	}
	// Read the persisted state of new resources before taking the lock.
	e.mu.Lock()
	var fresh []string
	for _, b := range bs {
		if _, ok := e.resources[b.entry.ID]; !ok {
			fresh = append(fresh, b.entry.ID)
		}
	}
	e.mu.Unlock()
	loaded := make(map[string]persisted, len(fresh))
	e.states.loadAll(ctx, fresh, loaded)

	var (
		restart []string        // ids whose policy changed
		added   map[string]bool // those of them just added (see replan)
	)
	// Outside e.mu: a browser that the new settings end takes a while to.
	e.fetcher.Configure(cfg.Poller)
	e.mu.Lock()
	defer func() {
		e.mu.Unlock()
		e.poke()
		e.reschedule(ctx, restart, added)
	}()
	now := e.clock.Now()
	bset := BudgetSettingsOf(cfg.Poller.Budget)
	rebudget := bset != e.budgetSet
	if rebudget {
		e.budget.Configure(bset)
		e.budgetSet = bset
	}
	keep := make(map[string]bool, len(bs))
	order := make([]string, 0, len(bs))
	for _, b := range bs {
		keep[b.entry.ID] = true
		order = append(order, b.entry.ID)
		st, ok := loaded[b.entry.ID]
		_, existed := e.resources[b.entry.ID]
		if e.upsertLocked(b, st, ok, now) {
			restart = append(restart, b.entry.ID)
			if !existed {
				if added == nil {
					added = make(map[string]bool)
				}
				added[b.entry.ID] = true
			}
		}
	}
	for id := range e.resources {
		if !keep[id] {
			e.removeLocked(id)
		}
	}
	if rebudget {
		// A new budget takes effect now, not at each resource's next poll:
		// every budget resource is re-placed from its last poll.
		for _, id := range order {
			if r := e.resources[id]; r != nil && r.policy.Config().Kind == KindBudget {
				e.restartLocked(r, now)
				restart = append(restart, id)
			}
		}
	}
	slices.Sort(restart)
	restart = slices.Compact(restart)
	e.order = order
	e.cfg = cfg
	return nil
}

// upsertLocked adds the resource b (with its stored poll state st when
// stored) or brings an existing one up to b's definition: its page,
// retention and policy (a policy change reschedules it from its last poll,
// and upsertLocked returns true). A resource added with a state stored
// under another policy (changed in the file before a restart, or on the
// node that polled it last) is a policy change too. e.mu must be held.
func (e *Engine) upsertLocked(b built, st persisted, stored bool, now time.Time) (restarted bool) {
	id := b.entry.ID
	pkey := policyKey(b.policy.Config(), e.budgetSet)
	r, ok := e.resources[id]
	if !ok {
		r = &resource{id: id, busy: e.retired[id]}
		if r.busy == nil {
			r.busy = make(chan struct{}, 1)
		}
		delete(e.retired, id)
		if stored {
			r.st = st
		}
		e.resources[id] = r
		r.host, r.policy, r.retention, r.entry, r.source, r.dates, r.sel = strings.ToLower(b.u.Host), b.policy, b.ret, b.entry, b.source, b.dates, b.sel
		r.filter = b.filter
		if r.st.Since.IsZero() {
			r.st.Since = cmp.Or(b.since, now)
		}
		key := extractionKey(b.entry)
		if r.st.URL != b.entry.URL {
			r.st.Validators, r.st.Last = validators{}, nil // another page: nothing to compare with
		}
		if r.st.URL != b.entry.URL || r.st.Extraction != key {
			// Stored under another definition (changed in the file before
			// a restart): the page is fetched and extracted again.
			r.st.BodyHash, r.st.Validators = 0, validators{}
		}
		// The next poll stored was placed under the policy the state
		// records: under another one, it is placed again from the last
		// poll, as a reload would (a shorter interval does not wait out
		// the old one), and, with a Leaser, in the store too.
		replanned := stored && !r.st.LastPoll.IsZero() && !r.st.scheduledUnder(pkey, b.policy.Config().Kind)
		r.st.URL, r.st.Kind, r.st.Extraction, r.st.PolicyKey = b.entry.URL, b.policy.Config().Kind, key, pkey
		if replanned {
			e.queue.Push(id, replan(&r.st, r.policy, id, now, true))
			return true
		}
		e.scheduleFirst(r, now)
		return false
	}
	r.st.PolicyKey = pkey
	if r.st.URL != b.entry.URL {
		r.st.Validators, r.st.Last = validators{}, nil // another page: nothing to compare with
		r.st.URL = b.entry.URL
	}
	if !sameExtraction(r.entry, b.entry) {
		// The next body is fetched and extracted again: a 304 would leave
		// the old settings' version.
		r.st.BodyHash, r.st.Validators = 0, validators{}
		r.st.Extraction = extractionKey(b.entry)
	}
	r.host, r.retention, r.entry, r.source, r.dates, r.sel = strings.ToLower(b.u.Host), b.ret, b.entry, b.source, b.dates, b.sel
	r.filter = b.filter
	if r.policy.Config() != b.policy.Config() {
		if r.policy.Config().Kind == KindBudget && b.policy.Config().Kind != KindBudget {
			e.budget.Leave(id)
		}
		r.policy = b.policy
		r.st.Kind = b.policy.Config().Kind
		e.restartLocked(r, now)
		return true
	}
	return false
}

// applyRegistered brings the registered resource id in line with reg (nil:
// it was unregistered) without touching the others: a registration costs
// O(log n), where [Engine.apply] rebuilds all n resources. A resource the
// file declares shadows the registration and is left alone; one that is
// not valid under cfg is not polled (as apply does).
func (e *Engine) applyRegistered(ctx context.Context, cfg *config.Config, id string, reg *registration) error {
	if declared(cfg, id) {
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

// SyncRegistry re-reads the registry and applies what changed since it was
// last read: new registrations are scheduled, replaced ones re-applied,
// deleted ones stop being polled. A read older than this node's own later
// change of an id leaves that id as this node made it.
func (e *Engine) SyncRegistry(ctx context.Context) error {
	return e.reg.sync(ctx)
}

// Register registers (or replaces) a resource at run time: it is kept in the
// registry and polled within seconds. entry must have been validated with
// [config.ParseResource]; an id the configuration file declares fails with
// ErrDeclaredInFile.
func (e *Engine) Register(ctx context.Context, entry config.ResourceEntry) (created bool, err error) {
	return e.reg.register(ctx, entry)
}

// Unregister stops polling a registered resource and removes it and its
// history; ErrDeclaredInFile for a resource of the file, ErrUnknownResource
// for an id that is not registered. An in-flight poll of it finishes first.
func (e *Engine) Unregister(ctx context.Context, id string) error {
	return e.reg.unregister(ctx, id)
}

// hold waits for a poll of resource id in flight (none when id is not
// polled) and keeps id from being polled until release.
func (e *Engine) hold(ctx context.Context, id string) (release func(), err error) {
	e.mu.Lock()
	r := e.resources[id]
	e.mu.Unlock()
	if r == nil {
		return func() {}, nil
	}
	select {
	case r.busy <- struct{}{}:
		return func() { e.release(r) }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// removeLocked stops scheduling resource id and forgets it. A poll of it
// in flight ends without recording anything (see decide); its busy token
// is kept for a resource added again under that id. e.mu must be held.
func (e *Engine) removeLocked(id string) {
	r := e.resources[id]
	if r == nil {
		return
	}
	if len(r.busy) > 0 {
		e.retired[id] = r.busy
	}
	e.queue.Remove(id)
	e.budget.Leave(id)
	delete(e.resources, id)
}

// release gives back r's busy token, taken for a poll (or a change that
// must not overlap one).
func (e *Engine) release(r *resource) {
	<-r.busy
	e.mu.Lock()
	if e.retired[r.id] == r.busy {
		delete(e.retired, r.id)
	}
	e.mu.Unlock()
}

// restartLocked starts r's policy again (a new policy, a new budget) and
// reschedules r from its last poll, keeping an error back-off in force.
// e.mu must be held.
func (e *Engine) restartLocked(r *resource, now time.Time) {
	if _, queued := e.queue.At(r.id); !queued {
		r.policy.Start(&r.st.Policy)
		return // being polled: the poll's end schedules it
	}
	e.queue.Update(r.id, replan(&r.st, r.policy, r.id, now, false))
}

// scheduleFirst queues a resource just added (at start-up or by reload).
func (e *Engine) scheduleFirst(r *resource, now time.Time) {
	wait := r.policy.Start(&r.st.Policy)
	var at time.Time
	switch {
	case r.source == SourceAPI && r.st.LastPoll.IsZero():
		// Just registered by someone waiting for its feed: now.
		at = now
	case r.st.NextPoll.IsZero(), r.st.NextPoll.Before(now):
		// New, or overdue after a restart: soon, but not every origin at
		// once. The window is short so that a resource just configured shows
		// its first version within a minute, not after a whole interval.
		at = now.Add(spread(r.id, min(wait, firstPollWindow)))
	default:
		at = r.st.NextPoll
	}
	r.st.NextPoll = at
	e.queue.Push(r.id, at)
}

// poke wakes the scheduler.
func (e *Engine) poke() {
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// Run polls resources as they fall due with a pool of poller.workers
// goroutines until ctx is done, then waits for the workers and returns nil.
// Run may be called once at a time.
func (e *Engine) Run(ctx context.Context) error {
	e.mu.Lock()
	if e.running {
		e.mu.Unlock()
		return errors.New("poller: engine already running")
	}
	e.running = true
	workers := e.cfg.Poller.Workers
	e.mu.Unlock()
	defer func() {
		e.mu.Lock()
		e.running = false
		e.mu.Unlock()
	}()

	jobs := make(chan *resource)
	var wg sync.WaitGroup
	if e.leases != nil && e.reg.enabled() {
		// Several nodes: resources registered through another node reach
		// this one by the shared registry.
		wg.Go(func() { e.reg.follow(ctx) })
	}
	for range workers {
		wg.Go(func() {
			for r := range jobs {
				e.work(ctx, r)
			}
		})
	}
	defer e.fetcher.Close() //nolint:errcheck // Close reports nothing
	defer wg.Wait()
	defer close(jobs)
	for {
		r, wait := e.due()
		if r != nil {
			select {
			case jobs <- r:
			case <-ctx.Done():
				e.requeue(r, time.Time{})
				return nil
			}
			continue
		}
		var timer Timer
		var fire <-chan time.Time
		if wait >= 0 {
			timer = e.clock.NewTimer(wait)
			fire = timer.C()
		}
		select {
		case <-ctx.Done():
			if timer != nil {
				timer.Stop()
			}
			return nil
		case <-fire:
		case <-e.wake:
			if timer != nil {
				timer.Stop()
			}
		}
	}
}

// Close ends the browser the engine started for fetch: browser resources,
// if any, and closes its idle connections (Run's return does too); a later
// poll connects, or starts a browser, again.
func (e *Engine) Close() error {
	if e.fetcher == nil { // an engine New did not finish building
		return nil
	}
	return e.fetcher.Close()
}

// due pops the first resource whose time has come; else it returns how long
// until the next one (−1: nothing scheduled).
func (e *Engine) due() (*resource, time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	id, at, ok := e.queue.Peek()
	if !ok {
		return nil, -1
	}
	now := e.clock.Now()
	if at.After(now) {
		return nil, at.Sub(now)
	}
	e.queue.Pop()
	return e.resources[id], 0
}

// requeue puts a popped resource back at `at` (zero: its recorded next
// poll) unless it was removed or rescheduled meanwhile.
func (e *Engine) requeue(r *resource, at time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.resources[r.id] != r {
		return
	}
	if at.IsZero() {
		at = r.st.NextPoll
	}
	if _, queued := e.queue.At(r.id); !queued {
		r.st.NextPoll = at
		e.queue.Push(r.id, at)
	}
}

// work polls one resource popped by the scheduler.
func (e *Engine) work(ctx context.Context, r *resource) {
	select {
	case r.busy <- struct{}{}:
	case <-ctx.Done():
		e.requeue(r, time.Time{})
		return
	}
	defer e.release(r)
	e.mu.Lock()
	_, queued := e.queue.At(r.id)
	current := e.resources[r.id] == r
	e.mu.Unlock()
	if !current || queued {
		return // removed, or polled meanwhile by PollNow and rescheduled
	}
	if _, done := e.poll(ctx, r, false); !done {
		e.requeue(r, time.Time{}) // no-op when the politeness gate already requeued it
	}
	e.poke()
}

// PollNow polls resource id at once (waiting for a poll in progress and for
// the host's politeness slot) and returns its status afterwards.
func (e *Engine) PollNow(ctx context.Context, id string) (Status, error) {
	return e.pollNow(ctx, id, false)
}

// FirstPoll makes sure resource id has been polled once: it polls it at
// once as PollNow does unless it has been polled already (a registration's
// first poll, which runs at once, may have ended, or end while FirstPoll
// waits for it), and returns its status afterwards. Registering a resource
// and then asking for its first poll so fetches its page once.
func (e *Engine) FirstPoll(ctx context.Context, id string) (Status, error) {
	return e.pollNow(ctx, id, true)
}

// pollNow is PollNow; with first, a resource polled already is not polled
// again.
func (e *Engine) pollNow(ctx context.Context, id string, first bool) (Status, error) {
	e.mu.Lock()
	r := e.resources[id]
	e.mu.Unlock()
	if r == nil {
		return Status{}, fmt.Errorf("%w: %q", ErrUnknownResource, id)
	}
	select {
	case r.busy <- struct{}{}:
	case <-ctx.Done():
		return Status{}, ctx.Err()
	}
	defer e.release(r)
	e.mu.Lock()
	if e.resources[id] != r {
		e.mu.Unlock()
		return Status{}, fmt.Errorf("%w: %q", ErrUnknownResource, id)
	}
	if first && r.st.Polls > 0 {
		st := e.statusLocked(r)
		e.mu.Unlock()
		return st, nil
	}
	prev := r.st.NextPoll
	e.queue.Remove(id)
	e.mu.Unlock()
	st, done := e.poll(ctx, r, true)
	e.poke()
	if !done {
		e.requeue(r, prev)
		if err := ctx.Err(); err != nil {
			return Status{}, err
		}
		if e.leases != nil {
			return Status{}, fmt.Errorf("poll %q: %w", id, ErrPolledElsewhere)
		}
		return Status{}, fmt.Errorf("poll %q: interrupted", id)
	}
	return st, nil
}

// Statuses returns every resource's status in configuration order.
func (e *Engine) Statuses() []Status {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]Status, 0, len(e.order))
	for _, id := range e.order {
		if r := e.resources[id]; r != nil {
			out = append(out, e.statusLocked(r))
		}
	}
	return out
}

// Definitions lists every resource, declared and registered, with where it
// comes from and its poll state, sorted by id.
func (e *Engine) Definitions() []Definition {
	regs := e.reg.registrations()
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
	reg, registered := e.reg.registration(id)
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

// RenderPage renders rawURL once in the browser as a poll of a resource
// with fetch: browser (and wait_for waitFor) would, with the engine's
// fetcher (fetch.Fetcher.Render: the guard, robots.txt and the host's
// politeness as FetchPage), for the browser's /new.
func (e *Engine) RenderPage(ctx context.Context, rawURL, waitFor string) (Page, error) {
	return e.fetcher.Render(ctx, rawURL, waitFor)
}

// PicturePage draws rawURL once in the engine's browser for the
// browser's /new "point at the list" (fetch.Fetcher.Picture: the guard,
// robots.txt and the host's politeness as RenderPage, one visit of the
// host): the page, as Page (with scripts, the DOM once waitFor matched or
// the network went quiet; without, the document as the server sent it),
// and its picture: the screenshot, the marked DOM and every element's
// box; nil when the document was not HTML (nothing drawn).
func (e *Engine) PicturePage(ctx context.Context, rawURL, waitFor string, scripts bool) (Page, *Picture, error) {
	pic, err := e.fetcher.Picture(ctx, rawURL, waitFor, scripts)
	if err != nil {
		return Page{}, nil, err
	}
	page := Page{Body: pic.Document, ContentType: pic.ContentType, URL: pic.URL}
	if pic.Image == nil {
		return page, nil, nil
	}
	return page, &pic, nil
}

// FetchPage fetches rawURL once as a poll would, with the engine's
// fetcher (fetch.Fetcher.Once: the SSRF guard, timeouts, size limit,
// robots.txt when configured, the host's politeness slot, shared with the
// polls), e.g. to check that a page a webmaster registers is annotated.
func (e *Engine) FetchPage(ctx context.Context, rawURL string) (Page, error) {
	return e.fetcher.Once(ctx, rawURL)
}

// PageWait is how long a FetchPage of rawURL would wait for its host's
// politeness slot now, booking nothing (0: free, or not a URL).
func (e *Engine) PageWait(rawURL string) time.Duration {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return 0
	}
	return e.fetcher.Wait(strings.ToLower(u.Host))
}

// BudgetShare is what the engine knows of a budget resource's place in the
// budget (for / and /admin/resources/{id}).
type BudgetShare struct {
	PollsPerDay float64   `json:"polls_per_day"` // its share of poller.budget
	Lambda      float64   `json:"lambda"`        // learned postings per day
	Evidence    bool      `json:"evidence"`      // false: too new, it has the mean share
	Weight      float64   `json:"weight"`        // configured weight (before readers)
	NextPoll    time.Time `json:"next_poll"`
}

// BudgetShare returns resource id's share of the budget; false when id is
// unknown or its policy kind is not budget.
func (e *Engine) BudgetShare(id string) (BudgetShare, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	r := e.resources[id]
	if r == nil || r.policy.Config().Kind != KindBudget {
		return BudgetShare{}, false
	}
	perDay, ok := e.budget.Share(id)
	if !ok {
		return BudgetShare{}, false
	}
	lambda, evidence := r.st.Policy.Rate.Lambda()
	return BudgetShare{PollsPerDay: perDay, Lambda: lambda, Evidence: evidence, Weight: r.policy.Config().Weight, NextPoll: r.st.NextPoll}, true
}

// Status returns one resource's status.
func (e *Engine) Status(id string) (Status, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	r := e.resources[id]
	if r == nil {
		return Status{}, false
	}
	return e.statusLocked(r), true
}

// History returns the recent polls of resource id, oldest first (at most
// the last 200, none older than four weeks), and false for an unknown id.
// The history is read from the store: the engine does not keep it in
// memory.
func (e *Engine) History(ctx context.Context, id string) ([]PollRecord, bool) {
	e.mu.Lock()
	known := e.resources[id] != nil
	e.mu.Unlock()
	if !known {
		return nil, false
	}
	return e.hist.read(ctx, id), true
}

func (e *Engine) statusLocked(r *resource) Status {
	c := r.policy.Config()
	s := Status{
		ID:          r.id,
		URL:         r.st.URL,
		Policy:      c.Kind,
		Interval:    r.st.Policy.Wait,
		Tau:         r.st.Policy.Tau,
		LastPoll:    r.st.LastPoll,
		NextPoll:    r.st.NextPoll,
		LastOutcome: r.st.LastOutcome,
		LastError:   r.st.LastError,
		Polls:       r.st.Polls,
		Changes:     r.st.Changes,
		Errors:      r.st.Errors,
		Since:       r.st.Since,
		Diagnostics: r.st.Diagnostics,
	}
	if c.Kind == KindSmart {
		s.Alpha, s.AlphaAuto = r.st.Policy.Alpha, c.AlphaAuto
	}
	if lambda, ok := r.st.Policy.Rate.Lambda(); c.Kind == KindBudget && ok {
		s.Tau = time.Duration(float64(24*time.Hour) / lambda) // the mean time between postings
	}
	return s
}

// pollResult is what the I/O part of a poll found.
type pollResult struct {
	outcome    string
	err        error
	changed    bool
	notMod     bool
	published  time.Time
	items      itemChanges
	floor      time.Duration
	validators *validators           // nil: keep the old ones
	version    *lastVersion          // nil: keep the old one
	doc        *schema.Document      // with a Leaser: the extracted document, not yet stored
	entry      *config.ResourceEntry // the definition the page was fetched and extracted under; nil: not fetched
	bodyHash   uint64                // the body's hash, kept when the poll stored (or found stored) its document
	versions   int                   // versions stored after the poll, when it saved; 0: unknown (history.go)
	extracted  bool                  // the page went through the extractor (diags are this poll's)
	diags      []string              // the extraction's diagnostics, at most maxStatusDiagnostics
	history    []byte                // the stored history, encoded, which this poll extends (see appendRecord)
	// With a historyStore: the records to append, numbered from firstRecord.
	records       [][]byte
	firstRecord   uint64
	historyUnread bool // the stored history could not be read: nothing is saved
	// The state's history numbering before this poll, restored when the
	// save fails (the next poll must not skip a record, nor a history
	// still to move out of the state).
	prevHistorySeq      uint64
	prevHistoryVersions int
	// With a historyStore: the state's progress to store, and the hash of
	// the rest (see progress.go).
	progress []byte
	restHash uint64

	// content: full: items still wait for their articles (see resource.articlesDone).
	articlesLeft bool
}

// poll runs one poll of r, whose busy token the caller holds. With wait, it
// waits for the host's politeness slot; without, a busy host requeues r for
// its slot and poll returns done=false. done=false also when ctx ended.
func (e *Engine) poll(ctx context.Context, r *resource, wait bool) (Status, bool) {
	e.mu.Lock()
	cfg, entry, host, ret := e.cfg, r.entry, r.host, r.retention
	val, last, bodyHash := r.compareWith()
	rawURL := entry.URL
	dates, sel, filter := r.dates, r.sel, r.filter
	e.mu.Unlock()
	// Parsed here rather than kept: a parsed URL per idle resource costs
	// more memory than a parse per poll costs time.
	u, err := url.Parse(rawURL)
	if err != nil { // checked when the resource was built: not expected
		return e.finish(ctx, r, e.clock.Now(), pollResult{outcome: OutcomeError, err: redacted(fmt.Errorf("page URL: %w", err), rawURL)}), true
	}
	allowed, known := e.fetcher.Robots(u)
	if !known { // robots.txt to fetch first: a request to the host, in its slot
		if !e.gate(ctx, r, host, wait) {
			return Status{}, false
		}
		start := e.clock.Now()
		if allowed, err = e.fetcher.FetchRobots(ctx, u); err != nil {
			if ctx.Err() != nil {
				return Status{}, false
			}
			return e.finish(ctx, r, start, pollResult{outcome: OutcomeError, err: redacted(err, rawURL)}), true
		}
	}
	if !allowed {
		return e.finish(ctx, r, e.clock.Now(), pollResult{outcome: OutcomeRobotsDenied, err: ErrRobotsDenied}), true
	}
	if !e.gate(ctx, r, host, wait) {
		return Status{}, false
	}
	if e.leases != nil {
		if !e.acquire(ctx, r, host, cfg.Poller, wait) {
			return Status{}, false
		}
		// The lease brought the state of the node that polled last, maybe
		// not this one: its validators and last version are the ones to
		// compare with (a conditional request after another node's poll).
		e.mu.Lock()
		val, last, bodyHash = r.compareWith()
		e.mu.Unlock()
	}
	start := e.clock.Now()
	t0 := time.Now() // latency is measured on the wall clock, whatever the engine clock
	res := e.fetchAndStore(ctx, r, u, fetchState{val, last, ret, bodyHash, dates, sel, filter, entry, cfg.Poller}, start)
	res.entry = entry
	res.err = redacted(res.err, rawURL) // fetch errors may show the page's URL
	e.m.latency.Observe(time.Since(t0).Seconds())
	if res.outcome == OutcomeError && ctx.Err() != nil {
		return Status{}, false
	}
	return e.finish(ctx, r, start, res), true
}

// gate waits for (wait) or checks for the host's politeness slot; without
// wait, a busy host requeues r at its slot and gate returns false: a
// worker never sleeps on a host while other resources are due.
func (e *Engine) gate(ctx context.Context, r *resource, host string, wait bool) bool {
	if wait {
		return e.fetcher.WaitSlot(ctx, host) == nil
	}
	if d := e.fetcher.Reserve(host); d > 0 {
		e.requeue(r, e.clock.Now().Add(d))
		return false
	}
	return true
}

// acquire asks the lease keeper for r's lease. Granted, it adopts the
// store's poll state (another node may have polled since) and returns
// true. Refused, it adopts the state too, requeues r when the store says
// to ask again and returns false; force is PollNow's.
func (e *Engine) acquire(ctx context.Context, r *resource, host string, p config.PollerConfig, force bool) bool {
	a := e.leases.acquire(ctx, r.id, host, p, force)
	if a.state != nil {
		e.mu.Lock()
		if e.resources[r.id] == r {
			r.st = adopted(&r.st, *a.state)
		}
		e.mu.Unlock()
	}
	if a.requeue {
		e.requeue(r, a.retry)
	}
	return a.granted
}

// reschedule moves the due times in the store of resources whose policy
// changed on this node (ids; those in added were just added, at start-up
// or by a reload: see replan) to what restartLocked makes of them here,
// from their last poll, whichever node made it (see leases.reschedule).
func (e *Engine) reschedule(ctx context.Context, ids []string, added map[string]bool) {
	if e.leases == nil || len(ids) == 0 {
		return
	}
	now := e.clock.Now()
	planned := e.leases.reschedule(ctx, ids, func(id string, st *persisted) (time.Time, bool) {
		e.mu.Lock()
		defer e.mu.Unlock()
		r := e.resources[id]
		if r == nil {
			return time.Time{}, false // removed meanwhile
		}
		st.Kind, st.PolicyKey = r.st.Kind, r.st.PolicyKey
		return replan(st, r.policy, id, now, added[id]), true
	})
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

// fetchState is what a poll reads of its resource, snapshotted under e.mu
// (Apply may change it meanwhile).
type fetchState struct {
	val      validators
	last     *lastVersion
	ret      storage.Retention
	bodyHash uint64 // of the last body extracted and stored; 0: none
	dates    schema.DateRules
	sel      *extractor.Selectors  // nil: the page's annotations
	filter   *filter.Filter        // nil: every item kept
	entry    *config.ResourceEntry // its title, headers and how it is fetched
	poller   config.PollerConfig
}

// fetchAndStore fetches, extracts and saves; it decides the outcome.
func (e *Engine) fetchAndStore(ctx context.Context, r *resource, u *url.URL, fs fetchState, now time.Time) pollResult {
	last, ret, dates := fs.last, fs.ret, fs.dates
	req := fetch.Request{URL: u.String(), Validators: fs.val}
	if fs.entry != nil {
		req.Headers = fs.entry.Headers
		req.Browser, req.WaitFor = fs.entry.Fetch == config.FetchBrowser, fs.entry.WaitFor
	}
	fr, err := e.fetcher.Get(ctx, req)
	defer e.fetcher.Release(&fr) // nothing below keeps the body
	if err != nil {
		res := pollResult{outcome: OutcomeError, err: err}
		var se *StatusError
		if errors.As(err, &se) {
			res.floor = se.RetryAfter
		}
		return res
	}
	if fr.NotModified {
		return pollResult{outcome: OutcomeNotModified, notMod: true, floor: fr.MaxAge}
	}
	v := fr.Validators
	bodyHash := xxhash.Sum64(fr.Body) | 1 // never 0, which means "none"
	if bodyHash == fs.bodyHash {
		// The same bytes as the last page extracted and stored (an origin
		// without validators): the same document, so neither extraction
		// nor storage can find anything new. The cheapest poll there is.
		return pollResult{outcome: OutcomeUnchanged, floor: fr.MaxAge, validators: &v, bodyHash: bodyHash}
	}
	page := u.String()
	if fr.URL != "" {
		page = fr.URL // after redirects: relative links resolve against where the page really is
	}
	out, err := e.extract(bytes.NewReader(fr.Body), extractor.Options{
		URL:          page,
		RSSID:        r.id,
		ContentType:  fr.ContentType,
		Timestamp:    now,
		Dates:        dates,
		Descriptions: e.descs,
		Select:       fs.sel,
	})
	var diags []string
	if out != nil {
		diags = diagnosticStrings(out.Diagnostics)
	}
	if errors.Is(err, extractor.ErrNotAnnotated) || (err == nil && (out == nil || out.Document == nil)) {
		return pollResult{outcome: OutcomeNotAnnotated, err: extractor.ErrNotAnnotated, floor: fr.MaxAge, validators: &v, extracted: true, diags: diags}
	}
	if err != nil {
		return pollResult{outcome: OutcomeError, err: fmt.Errorf("extract: %w", err), floor: fr.MaxAge, extracted: true, diags: diags}
	}
	doc := out.Document
	// Filtered before anything reads the items (dates, articles, the
	// comparison): an item filtered out is neither fetched nor stored.
	fs.filter.Apply(doc)
	newest := newestStored(ctx, e.store, r.id) // read once, by whichever needs it
	if err := keepDates(newest, doc, out.RelativeDates); err != nil {
		e.log.WarnContext(ctx, "relative dates read again", slog.String("resource", r.id), slog.Any("error", err))
	}
	if fs.entry != nil && fs.entry.Title != "" {
		doc.Channel.Title = fs.entry.Title // the resource's title overrides the page's
	}
	articlesLeft := false
	if fs.entry != nil && fs.entry.Content == config.ContentFull {
		articlesLeft = e.articles.fill(ctx, r.id, doc, fs.poller.FullPerPoll, newest, fs.entry)
	}
	items, version := compareItems(doc, last, dates)
	res := pollResult{outcome: OutcomeUnchanged, floor: fr.MaxAge, validators: &v, published: newestPublished(doc, dates), items: items, version: version, bodyHash: bodyHash, extracted: true, diags: diags, articlesLeft: articlesLeft}
	if e.leases != nil {
		res.doc = doc // stored by finish, with the poll state, in one transaction
		return res
	}
	sr, err := e.store.Save(ctx, doc)
	if errors.Is(err, storage.ErrDiskFull) {
		// Validators are not kept: the next poll fetches the page again and
		// stores it once space has returned.
		return pollResult{outcome: OutcomeDiskFull, err: err, floor: fr.MaxAge}
	}
	if err != nil {
		return pollResult{outcome: OutcomeError, err: fmt.Errorf("save version: %w", err)}
	}
	res.versions = sr.Versions
	if sr.Changed {
		res.outcome, res.changed = OutcomeChanged, true
		e.stored(ctx, r.id, ret, now)
	}
	return res
}

// stored accounts for a new version of id and applies its retention.
func (e *Engine) stored(ctx context.Context, id string, ret storage.Retention, now time.Time) {
	e.m.versions.Inc()
	if ret.MaxVersions > 0 || ret.MaxAge > 0 {
		if _, err := e.store.Prune(ctx, id, ret, now); err != nil {
			// The version is stored; a failed prune is retried after the next change.
			e.log.WarnContext(ctx, "prune failed", slog.String("resource", id), slog.Any("error", err))
		}
	}
}

// finish records a poll's outcome, asks the policy (or the error back-off)
// for the next poll, reschedules and persists.
func (e *Engine) finish(ctx context.Context, r *resource, start time.Time, res pollResult) Status {
	if e.leases != nil {
		return e.finishLeased(ctx, r, start, res)
	}
	// The poll happened (a version may be stored): its state is read back
	// and saved even when ctx ended meanwhile (shutdown, a PollNow client gone).
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stateSaveTimeout)
	defer cancel()
	var readErr error
	e.mu.Lock()
	recorded := e.hist.ownRecords() && r.st.HistorySeq > 0
	e.mu.Unlock()
	if !recorded {
		// The history is in the stored state (or, once, is moved out of it).
		res.history, readErr = e.hist.raw(sctx, r.id)
		res.historyUnread = readErr != nil
	}
	status, data, ok, err := e.decide(r, start, &res)
	if !ok {
		e.discard(ctx, r.id, DiscardRemoved, res)
		return status
	}
	if err == nil && readErr != nil {
		// Saving now would replace the stored history with this poll
		// alone; the state in memory is saved with the next poll.
		err = readErr
	}
	switch {
	case res.records != nil:
		if err == nil {
			err = e.hist.save(sctx, r.id, data, res.progress, res.firstRecord, res.records)
		}
		e.mu.Lock()
		if err != nil {
			r.st.HistorySeq, r.st.HistoryVersions = res.prevHistorySeq, res.prevHistoryVersions
		} else {
			r.st.restHash = res.restHash
		}
		e.mu.Unlock()
	case err != nil:
	default:
		err = e.store.SavePollState(sctx, r.id, data)
	}
	switch {
	case errors.Is(err, storage.ErrDiskFull):
		e.log.DebugContext(ctx, "poll state not saved", slog.String("resource", r.id), slog.Any("error", err))
	case err != nil:
		e.log.WarnContext(ctx, "poll state not saved", slog.String("resource", r.id), slog.Any("error", err))
	}
	e.done(ctx, status, res)
	return status
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
	sr, err := e.leases.complete(cctx, r.id, res.doc, func(sr storage.SaveResult) ([]byte, time.Time, bool, error) {
		if res.doc != nil && sr.Changed {
			res.outcome, res.changed = OutcomeChanged, true
		}
		res.versions = sr.Versions
		st, data, ok, err := e.decide(r, start, &res)
		if ok {
			status, decided = st, true
		}
		return data, st.NextPoll, ok, err
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

// discard counts and logs a poll whose result is thrown away, so that an
// operator can tell a poll that happened from one that was lost.
func (e *Engine) discard(ctx context.Context, id, reason string, res pollResult) {
	e.m.discarded.WithLabelValues(reason).Inc()
	e.m.polls.WithLabelValues(res.outcome).Inc()
	e.log.LogAttrs(ctx, slog.LevelInfo, "poll result discarded", slog.String("resource", id), slog.String("reason", reason), slog.String("outcome", res.outcome))
}

// eachState calls count with the number of resources, then fn with each
// one's id and state, holding e.mu (the metrics' estimates).
func (e *Engine) eachState(count func(n int), fn func(id string, st *persisted)) {
	e.mu.Lock()
	defer e.mu.Unlock()
	count(len(e.resources))
	for id, r := range e.resources {
		fn(id, &r.st)
	}
}

// done ends a poll: its metric, its log line and the test hook.
func (e *Engine) done(ctx context.Context, status Status, res pollResult) {
	e.m.polls.WithLabelValues(res.outcome).Inc()
	e.logPoll(ctx, status, res)
	e.mu.Lock()
	hook := e.afterPoll
	e.mu.Unlock()
	if hook != nil {
		hook(status)
	}
}

// decide applies a poll's result to r's state under e.mu: counters, the
// policy (or the error back-off) for the next poll, the queue. It returns
// the status and the encoded state to persist; ok is false when r was
// removed meanwhile (nothing to persist).
func (e *Engine) decide(r *resource, start time.Time, res *pollResult) (status Status, data []byte, ok bool, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.resources[r.id] != r {
		return Status{ID: r.id, LastOutcome: res.outcome}, nil, false, nil
	}
	if res.entry != nil && !sameExtraction(res.entry, r.entry) {
		// Redefined during the poll (a reload, a PUT): what the poll learned
		// of the page under the old definition does not hold for the new one.
		res.validators, res.bodyHash = nil, 0
		if res.entry.URL != r.entry.URL {
			res.version = nil // another page: its items are not these
		}
	}
	st := &r.st
	// Whether the poll may add postings to a budget policy's rate state
	// (see progress.go): it changed, or it is the first observation.
	postings := res.changed || st.Policy.Rate == nil || st.Policy.Rate.At.IsZero()
	st.Polls++
	st.LastPoll = start
	st.LastOutcome = res.outcome
	st.LastError = ""
	if res.err != nil {
		st.LastError = res.err.Error()
	}
	if res.extracted { // otherwise the last extraction's still hold
		st.Diagnostics = res.diags
	}
	var wait time.Duration
	switch res.outcome {
	case OutcomeError:
		st.Errors++
		st.Failures++
		wait = max(backoff(r.id, st.Failures), min(res.floor, MaxHintFloor))
	case OutcomeDiskFull:
		// Not the page's fault and not evidence about it: the policy learns
		// nothing, and the page is retried soon so storing resumes by itself.
		wait = diskFullRetry
		if st.Policy.Wait > 0 {
			wait = min(st.Policy.Wait, diskFullRetry)
		}
		wait = max(wait, min(res.floor, MaxHintFloor))
	case OutcomeRobotsDenied:
		st.Failures = 0
		wait = st.Policy.Wait
		if wait <= 0 {
			wait = r.policy.Start(&st.Policy)
		}
	default:
		st.Failures = 0
		if res.changed {
			st.Changes++
		}
		if res.validators != nil {
			st.Validators = *res.validators
		}
		if res.version != nil {
			st.Last = res.version
		}
		if res.extracted && (res.outcome == OutcomeChanged || res.outcome == OutcomeUnchanged) {
			r.articlesDone = !res.articlesLeft // stored: what it left over is known
		}
		if res.outcome == OutcomeChanged || res.outcome == OutcomeUnchanged || res.outcome == OutcomeNotAnnotated {
			st.BodyHash = res.bodyHash // 0 unless this body's document is stored
		}
		wait = r.policy.Observe(&st.Policy, Observation{
			Time:        start,
			Changed:     res.changed,
			NotModified: res.notMod,
			Published:   res.published,
			Dates:       res.items.dates,
			NewItems:    res.items.newItems,
			Floor:       res.floor,
		})
	}
	next := e.clock.Now().Add(wait)
	st.NextPoll = next
	rec := PollRecord{
		Time:     start.UTC().Truncate(time.Second),
		Outcome:  res.outcome,
		Wait:     wait,
		Tau:      st.Policy.Tau,
		Versions: res.versions,
	}
	e.queue.Push(r.id, next)
	if e.hist.ownRecords() && e.leases == nil && !res.historyUnread {
		res.prevHistorySeq, res.prevHistoryVersions = st.HistorySeq, st.HistoryVersions
		res.firstRecord, res.records = st.recordPoll(res.history, rec)
		// The state is stored in two parts (progress.go): the rest only
		// when it differs from what was stored last.
		data, res.restHash, err = st.restToStore(postings)
		res.progress = appendProgress(make([]byte, 0, 128), st)
		return e.statusLocked(r), data, true, err
	}
	history := appendRecord(res.history, rec)
	data, err = st.marshalWith(history) // the history is stored, not kept in memory
	return e.statusLocked(r), data, true, err
}

// logPoll writes one line per poll: INFO for a poll that stored a version
// or failed, WARN when the disk is full, DEBUG for the rest (most polls
// find nothing new, and an operator reads the log for what changed).
func (e *Engine) logPoll(ctx context.Context, st Status, res pollResult) {
	attrs := []slog.Attr{slog.String("resource", st.ID), slog.String("outcome", res.outcome), slog.Time("next_poll", st.NextPoll)}
	switch res.outcome {
	case OutcomeChanged:
		e.log.LogAttrs(ctx, slog.LevelInfo, "version stored", append(attrs, slog.Int("new_items", res.items.newItems))...)
	case OutcomeError, OutcomeNotAnnotated:
		e.log.LogAttrs(ctx, slog.LevelInfo, "poll failed", append(attrs, slog.Any("error", res.err))...)
	case OutcomeDiskFull:
		e.log.LogAttrs(ctx, slog.LevelWarn, "version not stored: disk full", append(attrs, slog.Any("error", res.err))...)
	default:
		e.log.LogAttrs(ctx, slog.LevelDebug, "polled", attrs...)
	}
}
