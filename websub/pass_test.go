package websub

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// hookStore is a MemoryStore whose listings of one resource and whose
// updates a test can make fail, or hold, to stand for a store's passing
// failures and for the races between a notification pass and the workers.
type hookStore struct {
	MemoryStore

	mu       sync.Mutex
	failList int          // the next failList listings of one resource fail
	failKey  map[Key]int  // the next n updates of a key fail
	gates    map[Key]gate // the next update of a key waits
	updates  int          // updates made so far
}

type gate struct{ entered, release, done chan struct{} }

var errStoreDown = errors.New("store unavailable")

func (s *hookStore) Subscriptions(ctx context.Context, resource string, all bool) ([]Subscription, error) {
	s.mu.Lock()
	fail := !all && s.failList > 0
	if fail {
		s.failList--
	}
	s.mu.Unlock()
	if fail {
		return nil, fmt.Errorf("list %q: %w", resource, errStoreDown)
	}
	return s.MemoryStore.Subscriptions(ctx, resource, all)
}

func (s *hookStore) Update(ctx context.Context, k Key, fn func(cur *Subscription) (*Subscription, error)) error {
	s.mu.Lock()
	s.updates++
	fail := s.failKey[k] > 0
	if fail {
		s.failKey[k]--
	}
	g, held := s.gates[k]
	delete(s.gates, k)
	s.mu.Unlock()
	if fail {
		return fmt.Errorf("update: %w", errStoreDown)
	}
	if !held {
		return s.MemoryStore.Update(ctx, k, fn)
	}
	close(g.entered)
	<-g.release
	defer close(g.done)
	return s.MemoryStore.Update(ctx, k, fn)
}

// failUpdates makes the next n updates of k fail.
func (s *hookStore) failUpdates(k Key, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failKey == nil {
		s.failKey = make(map[Key]int)
	}
	s.failKey[k] += n
}

// failLists makes the next n listings of one resource fail.
func (s *hookStore) failLists(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failList += n
}

// hold makes the next update of k wait, once it has begun (entered is
// closed then), until release is closed; done is closed once it is made.
func (s *hookStore) hold(k Key) (entered <-chan struct{}, release chan struct{}, done <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gates == nil {
		s.gates = make(map[Key]gate)
	}
	g := gate{entered: make(chan struct{}), release: make(chan struct{}), done: make(chan struct{})}
	s.gates[k] = g
	return g.entered, g.release, g.done
}

// updateCount is the number of updates made so far.
func (s *hookStore) updateCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.updates
}

func waitClosed(t *testing.T, c <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-c:
	case <-time.After(wait):
		t.Fatalf("%s: not within %v", what, wait)
	}
}

// waitEvents waits until the hub has observed each of kinds (as many
// times as listed), in any order, skipping other events.
func (th *testHub) waitEvents(t *testing.T, kinds ...string) {
	t.Helper()
	want := make(map[string]int)
	for _, k := range kinds {
		want[k]++
	}
	deadline := time.After(wait)
	for n := len(kinds); n > 0; {
		select {
		case k := <-th.events:
			if want[k] > 0 {
				want[k]--
				n--
			}
		case <-deadline:
			t.Fatalf("events %v not all observed within %v", kinds, wait)
		}
	}
}

// TestUnchangedTopicWritesNothing: a notification of a topic whose content
// the subscribers already have, or have in flight, leaves the store alone:
// a resource with many subscribers is notified at each of its versions, and
// its feeds often do not change.
func TestUnchangedTopicWritesNothing(t *testing.T) {
	st := &hookStore{}
	th := startHub(t, st, nil, nil, nil)
	th.topics.set(topicNews, "a")
	sub := newSubscriber(t)
	subscribeOK(t, th, topicNews, sub.srv.URL+"/cb?id=1")
	subscribeOK(t, th, topicNews, sub.srv.URL+"/cb?id=2")

	// Nothing changed since the subscriptions: nothing is written.
	n := st.updateCount()
	th.Notify("news")
	th.waitEvent(t, "processed")
	if got := st.updateCount(); got != n {
		t.Errorf("a notification of unchanged content made %d store updates, want none", got-n)
	}

	// b is delivered to one subscription, and held in flight to the other
	// (pending there): a notification of b again writes nothing either.
	release := make(chan struct{})
	defer close(release)
	sub.mu.Lock()
	sub.hold = release
	sub.mu.Unlock()
	th.topics.set(topicNews, "b")
	th.Notify("news")
	nextDelivery(t, sub, th.clock, 0)
	nextDelivery(t, sub, th.clock, 0)
	th.waitEvents(t, "processed", outcomeDelivered)
	n = st.updateCount()
	th.Notify("news")
	th.waitEvent(t, "processed")
	if got := st.updateCount(); got != n {
		t.Errorf("a notification of the content delivered and in flight made %d store updates, want none", got-n)
	}
}

// TestExpiredSubscriptionDoesNotStopPass: a subscription whose lease ended
// is removed by the notification pass, and the pass goes on with the other
// subscriptions to the topic: they get the change.
func TestExpiredSubscriptionDoesNotStopPass(t *testing.T) {
	th := startHub(t, nil, nil, nil, nil)
	th.topics.set(topicNews, "a")
	sub := newSubscriber(t)
	// Listed in key order: id=1 (expired) comes first.
	k1 := subscribeOK(t, th, topicNews, sub.srv.URL+"/cb?id=1", "hub.lease_seconds", "60")
	subscribeOK(t, th, topicNews, sub.srv.URL+"/cb?id=2", "hub.lease_seconds", "3600")
	th.clock.Advance(61 * time.Second)
	th.topics.set(topicNews, "b")
	th.Notify("news")
	d := nextDelivery(t, sub, th.clock, 0)
	if string(d.body) != "b" || d.query.Get("id") != "2" {
		t.Errorf("delivery %q to id=%s, want b to id=2", d.body, d.query.Get("id"))
	}
	th.waitEvent(t, outcomeDelivered)
	if _, err := th.store.Subscription(context.Background(), k1); !errors.Is(err, ErrNotFound) {
		t.Errorf("expired subscription still stored: %v", err)
	}
}

// TestListingFailureDelaysOnlyItsResource: when the store fails to list
// the subscriptions of one of the resources a pass processes, the others'
// subscribers still get their changes; the failed one's come with its next
// notification.
func TestListingFailureDelaysOnlyItsResource(t *testing.T) {
	st := &hookStore{}
	th := startHub(t, st, nil, nil, nil)
	list := topicBase + "/resources?type=atom"
	th.topics.set(topicNews, "a")
	th.topics.set(list, "l1")
	sub := newSubscriber(t)
	subscribeOK(t, th, topicNews, sub.srv.URL+"/cb?id=news")
	subscribeOK(t, th, list, sub.srv.URL+"/cb?id=list")
	th.topics.set(topicNews, "b")
	th.topics.set(list, "l2")
	// The pass lists "news" and "" (the list), in no set order: whichever
	// comes first fails.
	st.failLists(1)
	th.Notify("news")
	first := nextDelivery(t, sub, th.clock, 0).query.Get("id")
	th.waitEvent(t, outcomeDelivered)
	th.Notify("news")
	second := nextDelivery(t, sub, th.clock, 0).query.Get("id")
	if first == second || (first != "news" && first != "list") || (second != "news" && second != "list") {
		t.Errorf("deliveries to %q then %q, want one to each of news and list", first, second)
	}
}

// TestMarkFailureDelaysOnlyItsSubscription: when the store fails to record
// the pending delivery of one subscription, the other subscriptions to the
// topic still get the change; that one gets it with the next notification.
func TestMarkFailureDelaysOnlyItsSubscription(t *testing.T) {
	st := &hookStore{}
	th := startHub(t, st, nil, nil, nil)
	th.topics.set(topicNews, "a")
	sub := newSubscriber(t)
	k1 := subscribeOK(t, th, topicNews, sub.srv.URL+"/cb?id=1") // listed first
	subscribeOK(t, th, topicNews, sub.srv.URL+"/cb?id=2")
	st.failUpdates(k1, 1)
	th.topics.set(topicNews, "b")
	th.Notify("news")
	if d := nextDelivery(t, sub, th.clock, 0); d.query.Get("id") != "2" {
		t.Errorf("delivery to id=%s, want id=2 (id=1's could not be recorded)", d.query.Get("id"))
	}
	th.waitEvent(t, outcomeDelivered)
	th.Notify("news")
	if d := nextDelivery(t, sub, th.clock, 0); d.query.Get("id") != "1" || string(d.body) != "b" {
		t.Errorf("next notification: %q to id=%s, want b to id=1", d.body, d.query.Get("id"))
	}
}

// brokenTopics fails to render some topics with a passing error (not
// ErrUnknownTopic: the topic is still a feed).
type brokenTopics struct {
	*fakeTopics
	mu     sync.Mutex
	broken map[string]bool
}

func (b *brokenTopics) RenderTopic(ctx context.Context, topic string) ([]byte, string, error) {
	b.mu.Lock()
	broken := b.broken[topic]
	b.mu.Unlock()
	if broken {
		return nil, "", errors.New("database unavailable")
	}
	return b.fakeTopics.RenderTopic(ctx, topic)
}

// TestUnrenderableTopicDoesNotStopPass: a topic that does not render, for a
// passing failure or because it is no feed any more, holds up no other
// topic of the resource: their subscribers get their changes.
func TestUnrenderableTopicDoesNotStopPass(t *testing.T) {
	for _, how := range []string{"passing failure", "no feed any more"} {
		t.Run(how, func(t *testing.T) {
			topics := &brokenTopics{fakeTopics: newFakeTopics(), broken: make(map[string]bool)}
			th := startHub(t, nil, topics.fakeTopics, nil, func(o *Options) { o.Topics = topics })
			atom := topicBase + "/resources/news?type=atom" // listed before topicNews (…?type=rss2)
			topics.set(atom, "a1")
			topics.set(topicNews, "r1")
			sub := newSubscriber(t)
			subscribeOK(t, th, atom, sub.srv.URL+"/cb?id=1")
			subscribeOK(t, th, atom, sub.srv.URL+"/cb?id=2")
			subscribeOK(t, th, topicNews, sub.srv.URL+"/cb?id=3")
			if how == "passing failure" {
				topics.mu.Lock()
				topics.broken[atom] = true
				topics.mu.Unlock()
			} else {
				topics.remove(atom)
			}
			topics.set(topicNews, "r2")
			th.Notify("news")
			if d := nextDelivery(t, sub, th.clock, 0); d.query.Get("id") != "3" || string(d.body) != "r2" {
				t.Errorf("delivery %q to id=%s, want r2 to id=3", d.body, d.query.Get("id"))
			}
		})
	}
}

// TestEverySubscriptionOfDeletedTopicDenied: each subscriber of a topic
// whose resource was deleted is told so, not only the first one the pass
// finds.
func TestEverySubscriptionOfDeletedTopicDenied(t *testing.T) {
	th := startHub(t, nil, nil, nil, nil)
	th.topics.set(topicNews, "a")
	subs := []*subscriber{newSubscriber(t), newSubscriber(t), newSubscriber(t)}
	for _, s := range subs {
		subscribeOK(t, th, topicNews, s.srv.URL)
		nextVerification(t, s)
	}
	th.topics.deleteResource("news")
	th.Notify("news")
	for i, s := range subs {
		if q := nextVerification(t, s); q.Get("hub.mode") != "denied" {
			t.Errorf("subscriber %d: %v, want a denial", i, q)
		}
	}
}

// TestMissingTopicIsNotDeletedResource: a topic that is no feed any more
// while its resource is not deleted (a version past the history, say) is
// not taken for a deleted resource's: its subscriptions are not handed over
// to be denied, and no "registered again; kept" is logged for them.
func TestMissingTopicIsNotDeletedResource(t *testing.T) {
	th := startHub(t, nil, nil, nil, func(o *Options) { o.Workers = 1 })
	atom := topicBase + "/resources/news?type=atom"
	forum := topicBase + "/resources/forum"
	th.topics.set(atom, "a")
	th.topics.set(forum, "f1")
	gone, other := newSubscriber(t), newSubscriber(t)
	subscribeOK(t, th, atom, gone.srv.URL)
	subscribeOK(t, th, forum, other.srv.URL)
	until := func(kind string) {
		t.Helper()
		deadline := time.After(wait)
		for {
			select {
			case ev := <-th.events:
				switch ev {
				case kind:
					return
				case "kept", "denied":
					t.Errorf("%s: the missing topic was taken for a deleted resource's", ev)
				}
			case <-deadline:
				t.Fatalf("no %q event within %v", kind, wait)
			}
		}
	}
	th.topics.remove(atom)
	th.Notify("news")
	until("processed")
	// A delivery due after anything the first pass scheduled, made by the
	// only worker after it: the end of what that pass caused.
	th.clock.Advance(time.Second)
	th.topics.set(forum, "f2")
	th.Notify("forum")
	until(outcomeDelivered)
	if d := nextDelivery(t, other, th.clock, 0); string(d.body) != "f2" {
		t.Errorf("delivery %q, want f2", d.body)
	}
}

// TestRetryDuringPassDeliversNewerContentOnce: a retry made while a
// notification pass is marking newer content pending sends that newer
// content (the pass has rendered it), and so settles it: the subscriber
// gets it once, and nothing is left pending (which the next start would
// deliver again).
func TestRetryDuringPassDeliversNewerContentOnce(t *testing.T) {
	st := &hookStore{}
	th := startHub(t, st, nil, nil, nil)
	th.topics.set(topicNews, "a")
	sub := newSubscriber(t)
	k := subscribeOK(t, th, topicNews, sub.srv.URL)
	sub.answerPosts(http.StatusInternalServerError)
	th.topics.set(topicNews, "b")
	th.Notify("news")
	nextDelivery(t, sub, th.clock, 0) // b fails: retried a second later
	th.waitEvent(t, outcomeRetry)

	entered, release, done := st.hold(k)
	th.topics.set(topicNews, "c")
	th.Notify("news")
	waitClosed(t, entered, "the pass marking c pending") // it has rendered c, and listed b pending
	if d := nextDelivery(t, sub, th.clock, time.Second); string(d.body) != "c" {
		t.Fatalf("retry sent %q, want the newer c", d.body)
	}
	th.waitEvent(t, outcomeDelivered)
	sub.answerPosts(http.StatusInternalServerError) // a second delivery of c would stay pending
	close(release)
	waitClosed(t, done, "the pass marking c pending")
	s := mustSub(t, th.store, k)
	if s.Pending != nil {
		t.Errorf("pending after c was delivered: %+v", s.Pending)
	}
	if want := th.topicHash(context.Background(), topicNews); s.LastHash != want {
		t.Errorf("last hash %q, want c's %q", s.LastHash, want)
	}
}

// TestRenewedWhileExpiringKept: a subscription renewed while the hub is
// removing it for its ended lease (a pass listed it expired) is kept, with
// the renewed lease, and gets the next change.
func TestRenewedWhileExpiringKept(t *testing.T) {
	st := &hookStore{}
	th := startHub(t, st, nil, nil, nil)
	th.topics.set(topicNews, "a")
	sub := newSubscriber(t)
	k := subscribeOK(t, th, topicNews, sub.srv.URL, "hub.lease_seconds", "60")
	th.clock.Advance(61 * time.Second)
	entered, release, done := st.hold(k)
	th.Notify("news")
	waitClosed(t, entered, "the pass expiring the subscription")
	subscribeOK(t, th, topicNews, sub.srv.URL, "hub.lease_seconds", "3600")
	close(release)
	waitClosed(t, done, "the pass expiring the subscription")
	s, err := th.store.Subscription(context.Background(), k)
	if err != nil {
		t.Fatalf("renewed subscription removed: %v", err)
	}
	if want := th.clock.Now().Add(time.Hour); !s.Expires.Equal(want) {
		t.Errorf("Expires = %v, want the renewal's %v", s.Expires, want)
	}
	th.topics.set(topicNews, "b")
	th.Notify("news")
	if d := nextDelivery(t, sub, th.clock, 0); string(d.body) != "b" {
		t.Errorf("delivery %q, want b", d.body)
	}
}

// logRecords keeps the records a hub logged (after passing them on to the
// test's log), for tests of what an operator is told.
type logRecords struct {
	mu   sync.Mutex
	recs []slog.Record
}

// recordLogs makes o's logger record into the returned logRecords too.
func recordLogs(o *Options) *logRecords {
	l := &logRecords{}
	o.Logger = slog.New(recordingHandler{Handler: o.Logger.Handler(), to: l})
	return l
}

// find returns the records whose message contains msg.
func (l *logRecords) find(msg string) []slog.Record {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []slog.Record
	for _, r := range l.recs {
		if strings.Contains(r.Message, msg) {
			out = append(out, r)
		}
	}
	return out
}

type recordingHandler struct {
	slog.Handler
	to *logRecords
}

func (h recordingHandler) Handle(ctx context.Context, r slog.Record) error {
	h.to.mu.Lock()
	h.to.recs = append(h.to.recs, r.Clone())
	h.to.mu.Unlock()
	return h.Handler.Handle(ctx, r)
}

func (h recordingHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return recordingHandler{Handler: h.Handler.WithAttrs(as), to: h.to}
}

func (h recordingHandler) WithGroup(name string) slog.Handler {
	return recordingHandler{Handler: h.Handler.WithGroup(name), to: h.to}
}
