package websub

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/dynamo-rss/dynamo/internal/ratelimit"
)

// Topics is what the hub knows of the feeds it is the hub of; the api
// implements it. Implementations are safe for concurrent use.
type Topics interface {
	// TopicResource returns the resource whose feed topic is ("" for a feed
	// that depends on every resource, such as the list of resources), or an
	// error wrapping [ErrUnknownTopic] when topic is not a feed of this
	// service (any other error is a passing failure: the hub then refuses
	// the request without denying it). With ErrUnknownTopic it still
	// returns the resource a feed path names (a deleted resource's feed), so
	// that its subscriptions can be found and ended; when that resource was
	// deleted (and not registered again) the error wraps [ErrTopicDeleted].
	TopicResource(ctx context.Context, topic string) (resource string, err error)
	// RenderTopic returns topic's current body and content type, exactly
	// as a GET of topic would answer them.
	RenderTopic(ctx context.Context, topic string) (body []byte, contentType string, err error)
}

// Defaults for the zero values of [Options].
const (
	DefaultLease    = 10 * 24 * time.Hour // §8.2: "10 days is a good default"
	DefaultLeaseMin = time.Hour
	DefaultLeaseMax = 30 * 24 * time.Hour
	DefaultRetryFor = 24 * time.Hour
	DefaultWorkers  = 8
	DefaultQueue    = 1024

	// A callback host gets DefaultCallbackBurst verification requests at
	// once, then one every DefaultCallbackEvery: at most 8,640 a day for
	// a host that anyone may name as a callback, while a reader service
	// subscribing to a thousand feeds is through in under three hours.
	DefaultCallbackEvery = 10 * time.Second
	DefaultCallbackBurst = 60

	defaultRetryMin = 10 * time.Second
	defaultRetryMax = time.Hour
	defaultTimeout  = 15 * time.Second
	defaultSweep    = time.Hour
)

// Options configure a [Hub]. Topics, Store, Client and URL are required.
type Options struct {
	URL    string       // the hub's absolute URL, sent as Link rel="hub" with deliveries
	Topics Topics       // which URLs are topics, and their bodies
	Store  Store        // subscriptions and pending deliveries
	Client *http.Client // for callbacks; it must go through the SSRF guard (cmd gives fetch.NewGuardedClient's). Redirects are never followed (§5.3.1, §7).
	Logger *slog.Logger // nil: discard
	Clock  Clock        // nil: the real clock

	// Leases (§5.3.1, §8.2): Lease is granted when hub.lease_seconds is
	// absent; a requested lease is clamped to [LeaseMin, LeaseMax].
	Lease, LeaseMin, LeaseMax time.Duration
	// RetryFor bounds the retries of one notification (§7): attempts back
	// off exponentially from RetryMin (doubling, at most RetryMax apart)
	// until RetryFor after the notification; then the hub gives up on it.
	RetryFor, RetryMin, RetryMax time.Duration
	// DropAfter ends a subscription after that many notifications in a row
	// were given up on. 0 (the default) keeps it until its lease ends, as
	// §7 requires ("The hub MUST keep the subscription active until the end
	// of the lease duration"); a 410 Gone from the callback ends it at once.
	DropAfter int
	Workers   int           // callback requests made at once (verifications and deliveries)
	Queue     int           // bound of the verification queue and of the delivery queue
	Timeout   time.Duration // one callback request, body included; 0: 15s
	UserAgent string        // "": "dynamo-websub"

	// CallbackEvery and CallbackBurst bound the verification requests
	// (§5.3) sent to one callback host (its registrable domain, see
	// callbackHost): CallbackBurst at once, then one every CallbackEvery.
	// Anyone may name any public callback, so without a bound the hub
	// would send GETs to a host as fast as requests arrive. A request past
	// the bound is refused at once with a [*LimitError]. The budget is
	// this hub's (each node of a cluster has its own) and starts full at
	// each start. 0: DefaultCallbackEvery, DefaultCallbackBurst.
	CallbackEvery time.Duration
	CallbackBurst int

	Registerer prometheus.Registerer // nil: metrics not registered
}

// Hub is a WebSub hub (W3C Recommendation, 23 January 2018) for the feeds
// of this service. Build it with [New], run it with [Hub.Run]; [Hub.Request]
// and [Hub.Notify] are safe for concurrent use and never wait for a
// callback.
type Hub struct {
	opts    Options
	log     *slog.Logger
	clock   Clock
	client  *http.Client
	metrics *metrics

	verify chan request // accepted requests awaiting verification of intent (§5.3)
	work   chan Key     // subscriptions whose delivery is due, fed by sched
	sched  *scheduler

	callbacks *ratelimit.Keyed // verification requests per callback host

	mu      sync.Mutex
	changed map[string]struct{} // resources notified and not yet processed
	wake    chan struct{}       // cap 1: a resource was notified
	// deleted holds the subscriptions a notification pass found the
	// resource of deleted; a worker checks the topic again, then denies and
	// removes them (see endIfDeleted). Bounded by those subscriptions.
	deleted map[Key]struct{}

	// latest holds the topics the last notification pass rendered, so
	// that the workers delivering one topic to many subscribers do not
	// render it once each. Replaced whole at each pass: it never holds more
	// than the topics of the resources last notified.
	latest atomic.Pointer[renderings]

	event func(kind string, k Key) // tests: told of each outcome; nil otherwise
}

// renderings are the topics one notification pass rendered; the pass
// writes, the workers read.
type renderings struct {
	mu sync.RWMutex
	m  map[string]content
}

// content is a topic's rendering.
type content struct {
	body  []byte
	ctype string
	hash  string
}

// render returns topic's current content: from the last notification pass
// when it rendered topic, else rendered now.
func (h *Hub) render(ctx context.Context, topic string) (content, error) {
	if r := h.latest.Load(); r != nil {
		r.mu.RLock()
		c, ok := r.m[topic]
		r.mu.RUnlock()
		if ok {
			return c, nil
		}
	}
	body, ctype, err := h.opts.Topics.RenderTopic(ctx, topic)
	if err != nil {
		return content{}, err
	}
	return content{body: body, ctype: ctype, hash: contentHash(body, ctype)}, nil
}

// observe tells a test's hook what happened.
func (h *Hub) observe(kind string, k Key) {
	if h.event != nil {
		h.event(kind, k)
	}
}

// New builds a hub from opts, filling defaults.
func New(opts Options) (*Hub, error) {
	switch {
	case opts.Topics == nil:
		return nil, errors.New("websub: Options.Topics is required")
	case opts.Store == nil:
		return nil, errors.New("websub: Options.Store is required")
	case opts.Client == nil:
		return nil, errors.New("websub: Options.Client is required")
	}
	if u, err := url.Parse(opts.URL); err != nil || !u.IsAbs() {
		return nil, fmt.Errorf("websub: Options.URL %q is not an absolute URL", opts.URL)
	}
	setDefault(&opts.Lease, DefaultLease)
	setDefault(&opts.LeaseMin, DefaultLeaseMin)
	setDefault(&opts.LeaseMax, DefaultLeaseMax)
	setDefault(&opts.RetryFor, DefaultRetryFor)
	setDefault(&opts.RetryMin, defaultRetryMin)
	setDefault(&opts.RetryMax, defaultRetryMax)
	setDefault(&opts.Timeout, defaultTimeout)
	if opts.LeaseMin > opts.LeaseMax {
		return nil, fmt.Errorf("websub: LeaseMin %v exceeds LeaseMax %v", opts.LeaseMin, opts.LeaseMax)
	}
	opts.Lease = max(opts.LeaseMin, min(opts.LeaseMax, opts.Lease))
	if opts.Workers <= 0 {
		opts.Workers = DefaultWorkers
	}
	if opts.Queue <= 0 {
		opts.Queue = DefaultQueue
	}
	setDefault(&opts.CallbackEvery, DefaultCallbackEvery)
	if opts.CallbackBurst <= 0 {
		opts.CallbackBurst = DefaultCallbackBurst
	}
	if opts.UserAgent == "" {
		opts.UserAgent = "dynamo-websub"
	}
	h := &Hub{opts: opts, log: opts.Logger, clock: opts.Clock}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	if h.clock == nil {
		h.clock = realClock{}
	}
	// A copy, so that the caller's client keeps its own redirect policy:
	// the hub treats 3xx as failure (§5.3.1) and must not follow it (§7).
	c := *opts.Client
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	h.client = &c
	m, err := newMetrics(opts.Registerer)
	if err != nil {
		return nil, err
	}
	h.metrics = m
	h.callbacks = ratelimit.New(opts.CallbackEvery, opts.CallbackBurst)
	h.verify = make(chan request, opts.Queue)
	h.work = make(chan Key, opts.Queue)
	h.sched = newScheduler(h.clock)
	h.changed = make(map[string]struct{})
	h.deleted = make(map[Key]struct{})
	h.wake = make(chan struct{}, 1)
	return h, nil
}

func setDefault(d *time.Duration, def time.Duration) {
	if *d <= 0 {
		*d = def
	}
}

// URL is the hub's URL (for discovery).
func (h *Hub) URL() string { return h.opts.URL }

// Request handles the form of a subscription or unsubscription request
// (§5.1). nil means the request was accepted (answer 202, §5.1.2) and will be
// verified asynchronously (§5.3); otherwise the error wraps
// [ErrInvalidRequest], [ErrUnknownTopic], [ErrBusy] or [ErrRateLimited]
// (a [*LimitError]). The outcome of the verification never changes the
// answer (§5.1.2).
func (h *Hub) Request(ctx context.Context, form url.Values) error {
	r, err := parseRequest(form, h.opts.Lease, h.opts.LeaseMin, h.opts.LeaseMax)
	if err != nil {
		h.metrics.requests.WithLabelValues("invalid").Inc()
		return err
	}
	// §5.1.1: hubs MAY refuse topics the publisher does not advertise; this
	// hub only serves its own feeds, so anything else is refused at once.
	if _, err := h.topicOf(ctx, r); err != nil {
		h.metrics.requests.WithLabelValues("unknown_topic").Inc()
		return fmt.Errorf("hub.topic %q: %w", r.topic, err)
	}
	// Only a request that will be verified takes from its callback host's
	// budget: a refused one sends no GET.
	host := callbackHost(r.callback)
	ok, wait, giveBack := h.callbacks.Take(host, h.clock.Now())
	if !ok {
		h.metrics.requests.WithLabelValues("limited").Inc()
		return &LimitError{Host: host, RetryAfter: wait}
	}
	select {
	case h.verify <- r:
		h.metrics.requests.WithLabelValues("accepted").Inc()
		return nil
	default:
		giveBack()
		h.metrics.requests.WithLabelValues("busy").Inc()
		return ErrBusy
	}
}

// topicOf returns the resource of r's topic. A topic that is no feed any
// more (its resource was deleted) is still known to an unsubscribe whose
// subscription is stored: the subscriber may end it rather than wait for
// its lease to run out.
func (h *Hub) topicOf(ctx context.Context, r request) (string, error) {
	resource, err := h.opts.Topics.TopicResource(ctx, r.topic)
	if err == nil || r.mode != ModeUnsubscribe || !errors.Is(err, ErrUnknownTopic) {
		return resource, err
	}
	if _, serr := h.opts.Store.Subscription(ctx, Key{Resource: resource, Topic: r.topic, Callback: r.callback}); serr != nil {
		return "", err
	}
	return resource, nil
}

// Notify tells the hub that resource has a new version. It never blocks:
// the resource is remembered (once, however often it is notified) and a
// goroutine of [Hub.Run] renders the topics of the resource, and of the
// list of resources, and delivers those whose content changed.
func (h *Hub) Notify(resource string) {
	h.mu.Lock()
	h.changed[resource] = struct{}{}
	h.mu.Unlock()
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

// Run verifies requests and delivers notifications until ctx ends, then
// waits for its goroutines and returns ctx's error. On start it takes up
// the pending deliveries the store kept, and checks every topic for content
// that changed while the hub was not running. Call it once.
func (h *Hub) Run(ctx context.Context) error {
	subs, err := h.opts.Store.Subscriptions(ctx, "", true)
	if err != nil {
		return fmt.Errorf("websub: load subscriptions: %w", err)
	}
	now := h.clock.Now()
	for _, s := range subs {
		switch {
		case !now.Before(s.Expires):
			h.expire(ctx, s.Key)
		case s.Pending != nil:
			h.sched.push(s.Key, s.Pending.Next)
			h.Notify(s.Resource)
		default:
			h.Notify(s.Resource)
		}
	}
	var wg sync.WaitGroup
	wg.Go(func() { h.sched.run(ctx, h.work) })
	wg.Go(func() { h.notifier(ctx) })
	for range h.opts.Workers {
		wg.Go(func() { h.worker(ctx) })
	}
	wg.Wait()
	return ctx.Err()
}

// worker makes callback requests: verifications first, then deliveries.
func (h *Hub) worker(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case r := <-h.verify:
			h.verifyIntent(ctx, r)
		case k := <-h.work:
			if !h.endIfDeleted(ctx, k) {
				h.deliver(ctx, k)
			}
			h.sched.done(k)
		}
	}
}

// notifier processes notified resources, and sweeps expired subscriptions
// every hour.
func (h *Hub) notifier(ctx context.Context) {
	for {
		t := h.clock.NewTimer(defaultSweep)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-h.wake:
			t.Stop()
			h.mu.Lock()
			changed := h.changed
			h.changed = make(map[string]struct{})
			h.mu.Unlock()
			h.process(ctx, changed)
			h.observe("processed", Key{})
		case <-t.C():
			h.sweep(ctx)
		}
	}
}

// process checks the subscriptions of the changed resources, and of the
// list of resources, rendering each topic once, and makes a delivery
// pending where the content differs from what the subscription last got.
// The subscriptions to a topic whose resource was deleted are handed to
// the workers, which deny and remove them (endIfDeleted).
func (h *Hub) process(ctx context.Context, changed map[string]struct{}) {
	var subs []Subscription
	changed[""] = struct{}{} // the list of resources depends on every resource
	for res := range changed {
		s, err := h.opts.Store.Subscriptions(ctx, res, false)
		if err != nil {
			h.log.ErrorContext(ctx, "websub: list subscriptions", slog.String("resource", res), slog.Any("error", err))
			continue
		}
		subs = append(subs, s...)
	}
	rendered := &renderings{m: make(map[string]content)} // topic → its rendering, once per pass
	h.latest.Store(rendered)
	failed := make(map[string]bool)
	deleted := make(map[string]bool)
	now := h.clock.Now()
	for _, s := range subs {
		if ctx.Err() != nil {
			return
		}
		if !now.Before(s.Expires) {
			h.expire(ctx, s.Key)
			continue
		}
		if deleted[s.Topic] {
			h.endLater(s.Key, now)
			continue
		}
		if failed[s.Topic] {
			continue
		}
		c, ok := rendered.m[s.Topic] // only this goroutine writes it
		if !ok {
			body, ctype, err := h.opts.Topics.RenderTopic(ctx, s.Topic)
			if err != nil {
				if errors.Is(err, ErrUnknownTopic) && h.topicDeleted(ctx, s.Topic) {
					deleted[s.Topic] = true
					h.endLater(s.Key, now)
					continue
				}
				h.log.WarnContext(ctx, "websub: render topic", slog.String("topic", s.Topic), slog.Any("error", err))
				failed[s.Topic] = true
				continue
			}
			c = content{body: body, ctype: ctype, hash: contentHash(body, ctype)}
			rendered.mu.Lock()
			rendered.m[s.Topic] = c
			rendered.mu.Unlock()
		}
		sum := c.hash
		if s.LastHash == sum || (s.Pending != nil && s.Pending.Hash == sum) {
			continue
		}
		marked := false
		err := h.opts.Store.Update(ctx, s.Key, func(cur *Subscription) (*Subscription, error) {
			if cur == nil || cur.LastHash == sum || (cur.Pending != nil && cur.Pending.Hash == sum) {
				return cur, nil
			}
			cur.Pending = &Pending{Hash: sum, Since: now, Next: now}
			marked = true
			return cur, nil
		})
		if err != nil {
			h.log.ErrorContext(ctx, "websub: mark delivery", slog.String("topic", s.Topic), slog.String("callback", s.Callback), slog.Any("error", err))
			continue
		}
		if marked {
			h.sched.push(s.Key, now)
		}
	}
}

// reasonDeleted is the hub.reason of a denial for a deleted resource.
const reasonDeleted = "resource deleted: hub.topic is no longer a feed of this hub"

// topicDeleted reports whether topic's resource was deleted (and not
// registered again): not merely a topic that does not render now.
func (h *Hub) topicDeleted(ctx context.Context, topic string) bool {
	_, err := h.opts.Topics.TopicResource(ctx, topic)
	return errors.Is(err, ErrTopicDeleted)
}

// endLater hands the subscription named by k, whose resource was deleted,
// to a worker, which denies and removes it: a denial is a callback request,
// which the notification pass does not wait for. If the hub stops first,
// the pass at its next start finds the deletion again.
func (h *Hub) endLater(k Key, now time.Time) {
	h.mu.Lock()
	h.deleted[k] = struct{}{}
	h.mu.Unlock()
	h.sched.push(k, now)
}

// endIfDeleted ends the subscription named by k when a notification pass
// found its resource deleted and the topic is still of a deleted resource
// now (a resource registered again under the same id meanwhile keeps its
// subscriptions): the subscription is removed, then its subscriber is sent
// a denial (§5.2: the hub may deny a subscription at any time, with
// hub.mode=denied and hub.reason). Removed first, so that it is denied
// once, and never delivered to afterwards. It reports whether k was
// handled; false: deliver as usual.
func (h *Hub) endIfDeleted(ctx context.Context, k Key) bool {
	h.mu.Lock()
	_, marked := h.deleted[k]
	delete(h.deleted, k)
	h.mu.Unlock()
	if !marked {
		return false
	}
	switch _, err := h.opts.Topics.TopicResource(ctx, k.Topic); {
	case errors.Is(err, ErrTopicDeleted):
	case err == nil || errors.Is(err, ErrUnknownTopic):
		h.log.InfoContext(ctx, "websub: resource registered again before its subscriptions were denied; kept", slog.String("topic", k.Topic), slog.String("callback", k.Callback))
		h.observe("kept", k)
		return false
	default: // a passing failure: the next notification of the resource, or the next start, looks again
		h.log.WarnContext(ctx, "websub: topic of a deleted resource not checked; subscription kept", slog.String("topic", k.Topic), slog.String("callback", k.Callback), slog.Any("error", err))
		h.observe("kept", k)
		return false
	}
	var ended *Subscription
	err := h.opts.Store.Update(ctx, k, func(cur *Subscription) (*Subscription, error) {
		ended = cur // fn may run again
		return nil, nil
	})
	if err != nil {
		h.log.ErrorContext(ctx, "websub: remove subscription of a deleted resource", slog.String("topic", k.Topic), slog.String("callback", k.Callback), slog.Any("error", err))
		return true
	}
	if ended == nil {
		return true // unsubscribed or expired meanwhile
	}
	h.deny(ctx, k.Callback, cmp.Or(ended.AsGiven, k.Topic), reasonDeleted)
	h.metrics.denied.Inc()
	h.log.InfoContext(ctx, "websub: subscription denied: resource deleted", slog.String("topic", k.Topic), slog.String("callback", k.Callback))
	h.observe("denied", k)
	return true
}

// sweep removes the expired subscriptions (§5.3.1: "Hubs MUST enforce
// lease expirations").
func (h *Hub) sweep(ctx context.Context) {
	subs, err := h.opts.Store.Subscriptions(ctx, "", true)
	if err != nil {
		h.log.ErrorContext(ctx, "websub: list subscriptions", slog.Any("error", err))
		return
	}
	now := h.clock.Now()
	for _, s := range subs {
		if !now.Before(s.Expires) {
			h.expire(ctx, s.Key)
		}
	}
}

// expire deletes the subscription named by k if its lease has ended.
func (h *Hub) expire(ctx context.Context, k Key) {
	now := h.clock.Now()
	expired := false
	err := h.opts.Store.Update(ctx, k, func(cur *Subscription) (*Subscription, error) {
		if cur == nil || now.Before(cur.Expires) {
			return cur, nil // renewed meanwhile
		}
		expired = true
		return nil, nil
	})
	switch {
	case err != nil:
		h.log.ErrorContext(ctx, "websub: expire subscription", slog.String("topic", k.Topic), slog.String("callback", k.Callback), slog.Any("error", err))
	case expired:
		h.metrics.expired.Inc()
		h.log.InfoContext(ctx, "websub: subscription expired", slog.String("topic", k.Topic), slog.String("callback", k.Callback))
	}
}

// contentHash identifies a rendering: its content type and body.
func contentHash(body []byte, ctype string) string {
	d := sha256.New()
	d.Write([]byte(ctype))
	d.Write([]byte{0})
	d.Write(body)
	return hex.EncodeToString(d.Sum(nil)[:16])
}
