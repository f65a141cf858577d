package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/dynamo-rss/dynamo/api"
	"github.com/dynamo-rss/dynamo/config"
	"github.com/dynamo-rss/dynamo/fetch"
	"github.com/dynamo-rss/dynamo/poller"
	"github.com/dynamo-rss/dynamo/schema"
	"github.com/dynamo-rss/dynamo/storage"
	"github.com/dynamo-rss/dynamo/storage/badger"
	"github.com/dynamo-rss/dynamo/websub"
)

// hubURL is the WebSub hub's URL when the configuration enables the hub,
// "" otherwise.
func hubURL(cfg *config.Config, publicURL string) string {
	if !cfg.WebSubEnabled() {
		return ""
	}
	return strings.TrimRight(publicURL, "/") + "/websub"
}

// changes tells the hub which resources got a new version or were
// deleted: it sits between the poller and the store (and its registry), so
// the hub is fed by what storage reports (SaveResult.Changed, a successful
// Unregister), never called by the poller. It is set once the hub exists;
// until then, and without a hub, it does nothing.
type changes struct{ hub atomic.Pointer[websub.Hub] }

func (c *changes) stored(id string, res storage.SaveResult, err error) {
	if err == nil && res.Changed {
		if h := c.hub.Load(); h != nil {
			h.Notify(id)
		}
	}
}

// deleted tells the hub that resource id was deleted (unregistered): its
// notification pass finds the resource's feeds gone and denies their
// subscriptions.
func (c *changes) deleted(id string, err error) {
	if err == nil {
		if h := c.hub.Load(); h != nil {
			h.Notify(id)
		}
	}
}

// notifyingRegistry is the poller's registry (the store's) whose
// deletions are reported to the hub.
type notifyingRegistry struct {
	poller.Registry
	c *changes
}

// RegistryChanged passes on the word of other nodes' changes of a registry
// that gives it (see poller.RegistryWatcher); nil, like none, otherwise.
func (r notifyingRegistry) RegistryChanged() <-chan struct{} {
	if w, ok := r.Registry.(poller.RegistryWatcher); ok {
		return w.RegistryChanged()
	}
	return nil
}

// RegistrationsSince passes on a read of what changed in a registry that
// can tell (see poller.RegistryChanges); errors.ErrUnsupported for one
// that cannot, which the poller then reads whole.
func (r notifyingRegistry) RegistrationsSince(ctx context.Context, since poller.Revision) (poller.RegistryDelta, error) {
	if rc, ok := r.Registry.(poller.RegistryChanges); ok {
		return rc.RegistrationsSince(ctx, since)
	}
	return poller.RegistryDelta{}, errors.ErrUnsupported
}

func (r notifyingRegistry) Unregister(ctx context.Context, id string) (poller.Revision, error) {
	rev, err := r.Registry.Unregister(ctx, id)
	r.c.deleted(id, err)
	return rev, err
}

// notifyingStore is a store whose saves that store a version are reported.
type notifyingStore struct {
	storage.Store
	c *changes
}

func (s notifyingStore) Save(ctx context.Context, doc *schema.Document) (storage.SaveResult, error) {
	res, err := s.Store.Save(ctx, doc)
	s.c.stored(doc.RSSID, res, err)
	return res, err
}

// notifyingBadger is notifyingStore over Badger. The poller finds some of
// a store's abilities by its type (states read in one pass, poll-history
// records of their own); a wrapper that embeds the storage.Store interface
// hides them, so they are forwarded here.
type notifyingBadger struct {
	notifyingStore
	b *badger.DB
}

func (s notifyingBadger) PollStates(ctx context.Context, fn func(id string, state, progress []byte) error) error {
	return s.b.PollStates(ctx, fn)
}

func (s notifyingBadger) SavePollStateRecords(ctx context.Context, id string, state, progress []byte, first uint64, recs [][]byte, keep uint64) error {
	return s.b.SavePollStateRecords(ctx, id, state, progress, first, recs, keep)
}

func (s notifyingBadger) PollStateProgress(ctx context.Context, id string) (state, progress []byte, err error) {
	return s.b.PollStateProgress(ctx, id)
}

func (s notifyingBadger) PollRecords(ctx context.Context, id string) ([][]byte, error) {
	return s.b.PollRecords(ctx, id)
}

// pollerStore is the store the poller is given: saves that store a version
// are reported to the hub, and Badger's abilities stay visible.
func pollerStore(db *openedStore, c *changes) poller.Store {
	ns := notifyingStore{Store: db.Store, c: c}
	if db.badger != nil {
		return notifyingBadger{notifyingStore: ns, b: db.badger}
	}
	return ns
}

// notifyingLeaser is a Leaser whose commits that store a version are reported.
type notifyingLeaser struct {
	poller.Leaser
	c *changes
}

func (l notifyingLeaser) Complete(ctx context.Context, id string, doc *schema.Document, commit poller.CommitFunc) (storage.SaveResult, error) {
	res, err := l.Leaser.Complete(ctx, id, doc, commit)
	l.c.stored(id, res, err)
	return res, err
}

// startHub builds the hub for srv's feeds. Its subscriptions and pending
// deliveries live in the store (records of kind "websub"), so they survive
// restarts and, with PostgreSQL, every node shares them. The caller runs
// hub.Run.
func startHub(cfg *config.Config, url string, srv *api.Server, rs storage.RecordStore, reg prometheus.Registerer, log *slog.Logger) (*websub.Hub, error) {
	hub, err := websub.New(hubOptions(cfg, url, srv, rs, reg, log))
	if err != nil {
		return nil, fmt.Errorf("build websub hub: %w", err)
	}
	srv.SetHub(hub)
	return hub, nil
}

// hubOptions are the hub's options from the configuration.
func hubOptions(cfg *config.Config, url string, srv *api.Server, rs storage.RecordStore, reg prometheus.Registerer, log *slog.Logger) websub.Options {
	w := cfg.WebSub
	return websub.Options{
		URL:      url,
		Topics:   srv,
		Store:    websub.NewSharedStore(rs),
		Client:   fetch.NewGuardedClient(cfg.Poller, nil),
		Logger:   log.With(slog.String("component", "websub")),
		Lease:    w.LeaseDefault.D(),
		LeaseMin: w.LeaseMin.D(),
		LeaseMax: w.LeaseMax.D(),
		RetryFor: w.RetryFor.D(),
		// DropAfter stays 0: a subscriber whose deliveries keep failing
		// keeps its subscription until its lease ends, and each new
		// version is tried again (§7: the hub "MUST keep the subscription
		// active until the end of the lease duration, and if a new update
		// is published to the topic, MUST continue to retry delivery to the
		// previously-failing subscriber"). A 410 Gone still ends it at once.
		Workers:    w.Workers,
		Queue:      w.Queue,
		UserAgent:  cfg.Poller.UserAgent,
		Registerer: reg,
	}
}
