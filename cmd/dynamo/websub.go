package main

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/dynamo-rss/dynamo/api"
	"github.com/dynamo-rss/dynamo/config"
	"github.com/dynamo-rss/dynamo/poller"
	"github.com/dynamo-rss/dynamo/schema"
	"github.com/dynamo-rss/dynamo/storage"
	"github.com/dynamo-rss/dynamo/storage/postgres"
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

// changes tells the hub which resources got a new version: it sits between
// the poller and the store, so the hub is fed by what storage reports
// (SaveResult.Changed), never called by the poller. It is set once the hub
// exists; until then, and without a hub, it does nothing.
type changes struct{ hub atomic.Pointer[websub.Hub] }

func (c *changes) stored(id string, res storage.SaveResult, err error) {
	if err == nil && res.Changed {
		if h := c.hub.Load(); h != nil {
			h.Notify(id)
		}
	}
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

// safeName makes a node id usable as a directory name.
func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == ':' || r < ' ' {
			return '_'
		}
		return r
	}, s)
}

// startHub builds the hub for srv's feeds, its subscriptions kept under the
// data directory (they survive restarts). The caller runs hub.Run and
// calls closeStore after it returns.
func startHub(cfg *config.Config, url string, srv *api.Server, reg prometheus.Registerer, log *slog.Logger) (hub *websub.Hub, closeStore func() error, err error) {
	dir := filepath.Join(cfg.Storage.Path, "websub")
	if cfg.Storage.Driver == config.DriverPostgres {
		// Several nodes may share a machine (and storage.path): each keeps
		// the subscriptions it took in a directory of its own.
		dir = filepath.Join(cfg.Storage.Path, "websub-"+safeName(cmp.Or(cfg.NodeID, postgres.DefaultNodeID())))
	}
	subs, err := websub.OpenBadgerStore(dir, log.With(slog.String("component", "websub-store")))
	if err != nil {
		return nil, nil, fmt.Errorf("open websub store %s: %w", dir, err)
	}
	w := cfg.WebSub
	hub, err = websub.New(websub.Options{
		URL:        url,
		Topics:     srv,
		Store:      subs,
		Client:     poller.NewGuardedClient(cfg.Poller, nil),
		Logger:     log.With(slog.String("component", "websub")),
		Lease:      w.LeaseDefault.D(),
		LeaseMin:   w.LeaseMin.D(),
		LeaseMax:   w.LeaseMax.D(),
		RetryFor:   w.RetryFor.D(),
		Workers:    w.Workers,
		Queue:      w.Queue,
		UserAgent:  cfg.Poller.UserAgent,
		Registerer: reg,
	})
	if err != nil {
		_ = subs.Close()
		return nil, nil, fmt.Errorf("build websub hub: %w", err)
	}
	srv.SetHub(hub)
	return hub, subs.Close, nil
}
