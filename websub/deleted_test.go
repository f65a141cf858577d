package websub

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// noMore fails when s got any request.
func noMore(t *testing.T, s *subscriber, what string) {
	t.Helper()
	select {
	case v := <-s.verifs:
		t.Errorf("%s: the subscriber got a GET %v", what, v.query)
	case d := <-s.deliver:
		t.Errorf("%s: the subscriber got a delivery %q", what, d.body)
	default:
	}
}

// TestDeletedResourceDeniesSubscriptions: when a resource is deleted, each
// subscription to any of its topics is removed and its subscriber told so,
// once, with hub.mode=denied, hub.topic as it subscribed and a hub.reason
// (§5.2: the hub may deny a subscription at any time), instead of living
// out its lease without deliveries. Subscriptions to other resources' topics
// and to the list of resources are kept.
func TestDeletedResourceDeniesSubscriptions(t *testing.T) {
	th := startHub(t, nil, nil, nil, nil)
	newsAtom := topicBase + "/resources/news?type=atom"
	forum := topicBase + "/resources/forum"
	list := topicBase + "/resources?type=atom"
	for _, topic := range []string{topicNews, newsAtom, forum, list} {
		th.topics.set(topic, "v1 "+topic)
	}
	sub, atom, keep := newSubscriber(t), newSubscriber(t), newSubscriber(t)
	asGiven := "HTTP://Dynamo.test/resources/n%65ws?type=rss2" // topicNews, spelled otherwise
	th.request(t, form(ModeSubscribe, asGiven, sub.srv.URL+"/cb?id=7", "hub.secret", "k"))
	th.waitEvent(t, ModeSubscribe)
	nextVerification(t, sub)
	kNews := Key{Resource: "news", Topic: topicNews, Callback: sub.srv.URL + "/cb?id=7"}
	kAtom := subscribeOK(t, th, newsAtom, atom.srv.URL)
	nextVerification(t, atom)
	kForum := subscribeOK(t, th, forum, keep.srv.URL)
	nextVerification(t, keep)
	kList := subscribeOK(t, th, list, keep.srv.URL)
	nextVerification(t, keep)

	th.topics.deleteResource("news")
	th.Notify("news")
	for _, tc := range []struct {
		s     *subscriber
		topic string
	}{{sub, asGiven}, {atom, newsAtom}} {
		q := nextVerification(t, tc.s)
		if q.Get("hub.mode") != "denied" || q.Get("hub.topic") != tc.topic || !strings.Contains(q.Get("hub.reason"), "deleted") {
			t.Errorf("denial = %v, want hub.mode=denied, hub.topic=%s and a reason saying the resource was deleted", q, tc.topic)
		}
		if q.Has("hub.challenge") || q.Has("hub.lease_seconds") {
			t.Errorf("a denial carries no challenge nor lease: %v", q)
		}
		if tc.s == sub && q.Get("id") != "7" {
			t.Errorf("the callback's query was lost: %v", q)
		}
	}
	th.waitEvent(t, "denied")
	th.waitEvent(t, "denied")
	for _, k := range []Key{kNews, kAtom} {
		if _, err := th.store.Subscription(context.Background(), k); !errors.Is(err, ErrNotFound) {
			t.Errorf("%s: subscription still stored after the denial: %v", k.Topic, err)
		}
	}
	mustSub(t, th.store, kForum)
	mustSub(t, th.store, kList)

	// Once: another notification of the deleted resource denies nothing more.
	th.Notify("news")
	th.waitEvent(t, "processed")
	noMore(t, sub, "second notification")
	noMore(t, atom, "second notification")

	// No delivery afterwards, even when the id is registered again and its
	// feed changes; the list's subscriber still gets its change.
	th.topics.set(topicNews, "v2")
	th.topics.set(newsAtom, "v2")
	th.topics.set(list, "v2 list")
	th.Notify("news")
	if d := nextDelivery(t, keep, th.clock, 0); string(d.body) != "v2 list" {
		t.Errorf("list delivery = %q", d.body)
	}
	th.waitEvent(t, outcomeDelivered)
	noMore(t, sub, "registered again")
	noMore(t, atom, "registered again")
	noMore(t, keep, "registered again")
}

// TestReRegisteredBeforeDenialKeepsSubscriptions: a resource deleted and
// registered again under the same id before the hub sends the denial keeps
// its subscriptions: the topic is checked again at the time of the denial,
// and deliveries go on. The operator is told so (info), not warned of a
// failure to check the topic: nothing failed.
func TestReRegisteredBeforeDenialKeepsSubscriptions(t *testing.T) {
	var logs *logRecords
	th := startHub(t, nil, nil, nil, func(o *Options) {
		o.Workers = 1
		logs = recordLogs(o)
	})
	forum := topicBase + "/resources/forum"
	th.topics.set(topicNews, "a")
	th.topics.set(forum, "f")
	sub := newSubscriber(t)
	k := subscribeOK(t, th, topicNews, sub.srv.URL)
	nextVerification(t, sub)

	// Keep the only worker busy with a verification that waits for us.
	blocker := newSubscriber(t)
	release := make(chan struct{})
	blocker.answerVerify(func(q url.Values) (int, string) {
		<-release
		return http.StatusOK, q.Get("hub.challenge")
	})
	th.request(t, form(ModeSubscribe, forum, blocker.srv.URL))
	nextVerification(t, blocker)

	th.topics.deleteResource("news")
	th.Notify("news")
	th.waitEvent(t, "processed")  // the deletion is seen; its denial waits for the worker
	th.topics.set(topicNews, "b") // registered again meanwhile
	close(release)
	th.waitEvent(t, "kept")
	noMore(t, sub, "registered again before the denial")
	mustSub(t, th.store, k)
	if w := logs.find("not checked"); len(w) != 0 {
		t.Errorf("warned that the topic could not be checked: %v", w)
	}
	if again := logs.find("registered again"); len(again) != 1 || again[0].Level != slog.LevelInfo {
		t.Errorf("notes that the resource was registered again: %v, want one, at info", again)
	}

	th.Notify("news")
	if d := nextDelivery(t, sub, th.clock, 0); string(d.body) != "b" {
		t.Errorf("delivery = %q, want b", d.body)
	}
}

// TestDeletedWhileStoppedDeniedAtStart: a deletion the hub was not told of
// (it was stopped, or the notification was lost) is found when the hub
// starts, as changes are.
func TestDeletedWhileStoppedDeniedAtStart(t *testing.T) {
	st := &MemoryStore{}
	clock := newFakeClock()
	sub := newSubscriber(t)
	k := Key{Resource: "news", Topic: topicNews, Callback: sub.srv.URL}
	if err := st.Update(context.Background(), k, func(*Subscription) (*Subscription, error) {
		return &Subscription{Key: k, Lease: time.Hour, Verified: clock.Now(), Expires: clock.Now().Add(time.Hour)}, nil
	}); err != nil {
		t.Fatal(err)
	}
	topics := newFakeTopics()
	topics.deleteResource("news")
	th := startHub(t, st, topics, clock, nil)
	q := nextVerification(t, sub)
	if q.Get("hub.mode") != "denied" || q.Get("hub.topic") != topicNews || q.Get("hub.reason") == "" {
		t.Errorf("denial = %v", q)
	}
	th.waitEvent(t, "denied")
	if _, err := st.Subscription(context.Background(), k); !errors.Is(err, ErrNotFound) {
		t.Errorf("subscription still stored: %v", err)
	}
}

// TestUnsubscribeFromDeletedTopicBeforeDenial: until the hub has processed
// the deletion, the subscription is stored and its subscriber may still
// unsubscribe (the existing rule); once the denial removed it, an
// unsubscribe is refused, as for any callback without a subscription.
func TestUnsubscribeFromDeletedTopicBeforeDenial(t *testing.T) {
	th := startHub(t, nil, nil, nil, nil)
	th.topics.set(topicNews, "a")
	sub := newSubscriber(t)
	subscribeOK(t, th, topicNews, sub.srv.URL)
	nextVerification(t, sub)
	th.topics.deleteResource("news") // not notified yet
	// A subscription to it is refused, the stored one notwithstanding.
	if err := th.Request(context.Background(), form(ModeSubscribe, topicNews, sub.srv.URL)); !errors.Is(err, ErrUnknownTopic) {
		t.Errorf("subscribe to the deleted topic: %v, want ErrUnknownTopic", err)
	}
	th.request(t, form(ModeUnsubscribe, topicNews, sub.srv.URL))
	if q := nextVerification(t, sub); q.Get("hub.mode") != ModeUnsubscribe {
		t.Fatalf("verification = %v", q)
	}
	th.waitEvent(t, ModeUnsubscribe)

	other := newSubscriber(t)
	th.topics.set(topicNews, "a") // registered again
	subscribeOK(t, th, topicNews, other.srv.URL)
	nextVerification(t, other)
	th.topics.deleteResource("news")
	th.Notify("news")
	if q := nextVerification(t, other); q.Get("hub.mode") != "denied" {
		t.Fatalf("denial = %v", q)
	}
	th.waitEvent(t, "denied")
	if err := th.Request(context.Background(), form(ModeUnsubscribe, topicNews, other.srv.URL)); !errors.Is(err, ErrUnknownTopic) {
		t.Errorf("unsubscribe after the denial: %v, want ErrUnknownTopic", err)
	}
}
