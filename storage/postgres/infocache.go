package postgres

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/dynamo-rss/dynamo/storage"
)

// notifyChannel is the channel every transaction that changes a resource's
// info (its ResourceInfo, or whether Resources lists it) notifies, with the
// resource's id as the payload.
const notifyChannel = "dynamo_resources"

// notifySQL queues the change notification of the resource $1 in the
// current transaction: PostgreSQL sends it when the transaction commits,
// and drops it when it rolls back.
const notifySQL = `select pg_notify('` + notifyChannel + `', $1)`

// notify is notifySQL in tx.
func notify(ctx context.Context, tx pgx.Tx, id string) error {
	_, err := tx.Exec(ctx, notifySQL, id)
	return err
}

// infoCache keeps the ResourceInfo of resources recently read, and the
// list Resources returns, so that the REST layer's per-request Resource
// call (the ETag and the render cache key) costs a map lookup instead of a
// database round trip.
//
// Every node's writes notify the change (see notify); the Store's listener
// invalidates the entry when the notification arrives, so a node serves an
// older info than another node stored only for the notification's delivery
// time (milliseconds). The cache serves and keeps entries only while the
// listener is connected: when the listening connection is lost, every
// entry is dropped, and until LISTEN runs again on a new connection every
// read goes to the database (never stale, only slower).
//
// A reader fills the cache only if no invalidation (nor a loss or a new
// connection) happened since it looked (the generation check), so a read
// that raced with another node's commit never leaves a stale entry behind.
type infoCache struct {
	mu   sync.Mutex
	gen  uint64
	live bool // the listener is connected and LISTENing
	m    map[string]storage.ResourceInfo
	all  []storage.ResourceInfo // Resources' answer; nil when not cached

	losses atomic.Int64  // listening connections lost, for tests and logs
	pid    atomic.Uint32 // the listening connection's backend pid, 0 when none
}

// get returns the cached info and the generation to hand to fill on a miss.
func (c *infoCache) get(id string) (storage.ResourceInfo, uint64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	info, ok := c.m[id]
	return info, c.gen, ok && c.live
}

// fill caches info read at generation gen, unless the generation moved on
// or the listener is down.
func (c *infoCache) fill(id string, info storage.ResourceInfo, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen || !c.live {
		return
	}
	if c.m == nil {
		c.m = make(map[string]storage.ResourceInfo)
	}
	c.m[id] = info
}

// list returns the cached Resources answer (a copy) and the generation.
func (c *infoCache) list() ([]storage.ResourceInfo, uint64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.all == nil || !c.live {
		return nil, c.gen, false
	}
	return slices.Clone(c.all), c.gen, true
}

// fillList caches Resources' answer read at generation gen.
func (c *infoCache) fillList(all []storage.ResourceInfo, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen || !c.live {
		return
	}
	c.all = slices.Clip(slices.Clone(all))
	if c.all == nil {
		c.all = []storage.ResourceInfo{}
	}
}

// invalidate drops id's entry and the list, and voids the fills begun
// before it.
func (c *infoCache) invalidate(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	delete(c.m, id)
	c.all = nil
}

// setLive records whether the listener is connected; either way every
// entry is dropped and the fills begun before are void: a notification may
// have been missed while it was not listening.
func (c *infoCache) setLive(live bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	c.live = live
	c.m, c.all = nil, nil
}

// Backoff between attempts to reconnect the listener. At most a second:
// until it listens again, other nodes' registry changes reach this node
// only by its periodic re-read, and its info cache is bypassed, so a
// database back from a restart must be listened to within a second; one
// connection attempt a second costs a database that is down nothing.
const (
	listenBackoffMin = 100 * time.Millisecond
	listenBackoffMax = time.Second
)

// listen keeps one connection LISTENing to notifyChannel and
// registrationsChannel, invalidates the cache's entries and tells
// RegistryChanged's waiters as notifications arrive, until ctx ends. A lost
// connection empties the cache (serving uncached meanwhile) and is
// reconnected with exponential backoff.
func (s *Store) listen(ctx context.Context, cfg *pgx.ConnConfig) {
	backoff := listenBackoffMin
	for {
		err := s.listenOnce(ctx, cfg, func() { backoff = listenBackoffMin })
		if ctx.Err() != nil {
			return
		}
		s.cache.losses.Add(1)
		s.log.WarnContext(ctx, "resource change notifications lost; serving resource infos uncached until reconnected",
			slog.Duration("retry_in", backoff), slog.Any("error", err))
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		backoff = min(2*backoff, listenBackoffMax)
	}
}

// listenOnce connects, LISTENs, marks the cache live (calling connected)
// and tells RegistryChanged's waiters (changes of the registrations may
// have been missed before), then invalidates entries and tells the waiters
// of other nodes' changes until the connection fails or ctx ends.
func (s *Store) listenOnce(ctx context.Context, cfg *pgx.ConnConfig, connected func()) error {
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close(context.WithoutCancel(ctx)) }()
	for _, ch := range []string{notifyChannel, registrationsChannel} {
		if _, err := conn.Exec(ctx, `listen `+ch); err != nil {
			return err
		}
	}
	s.cache.pid.Store(conn.PgConn().PID())
	s.cache.setLive(true)
	s.regs.changed()
	connected()
	defer func() {
		s.cache.setLive(false)
		s.cache.pid.Store(0)
	}()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		if n.Channel != registrationsChannel {
			s.cache.invalidate(n.Payload)
		} else if n.Payload != s.node { // this node's own changes are applied where they are made
			s.regs.changed()
		}
	}
}
