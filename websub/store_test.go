package websub

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/dynamo-rss/dynamo/storage/badger"
)

func openBadger(t *testing.T, dir string) *BadgerStore {
	t.Helper()
	st, err := OpenBadgerStore(dir, nil)
	if err != nil {
		t.Fatalf("OpenBadgerStore: %v", err)
	}
	return st
}

// TestStoreContract runs the same checks over every Store.
func TestStoreContract(t *testing.T) {
	stores := []struct {
		name string
		open func(t *testing.T) Store
	}{
		{"memory", func(*testing.T) Store { return &MemoryStore{} }},
		{"shared (storage/badger)", func(t *testing.T) Store {
			db, err := badger.Open(t.TempDir(), badger.Options{NoSyncWrites: true})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = db.Close() })
			return NewSharedStore(db)
		}},
		{"badger", func(t *testing.T) Store {
			st := openBadger(t, t.TempDir())
			t.Cleanup(func() {
				if err := st.Close(); err != nil {
					t.Error(err)
				}
			})
			return st
		}},
	}
	ctx := context.Background()
	at := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range stores {
		t.Run(tc.name, func(t *testing.T) {
			st := tc.open(t)
			a := Key{Resource: "news", Topic: "http://x/resources/news", Callback: "http://cb/1"}
			b := Key{Resource: "news", Topic: "http://x/resources/news", Callback: "http://cb/2"}
			c := Key{Resource: "newsroom", Topic: "http://x/resources/newsroom", Callback: "http://cb/1"}
			l := Key{Resource: "", Topic: "http://x/resources", Callback: "http://cb/1"}
			if _, err := st.Subscription(ctx, a); !errors.Is(err, ErrNotFound) {
				t.Fatalf("missing: %v", err)
			}
			for _, k := range []Key{b, a, c, l} {
				err := st.Update(ctx, k, func(cur *Subscription) (*Subscription, error) {
					if cur != nil {
						t.Errorf("cur = %+v before any write", cur)
					}
					return &Subscription{Secret: "s", Lease: time.Hour, Expires: at.Add(time.Hour), Pending: &Pending{Hash: "h", Since: at}}, nil
				})
				if err != nil {
					t.Fatal(err)
				}
			}
			got := mustSub(t, st, a)
			if got.Key != a || got.Secret != "s" || got.Pending == nil || !got.Pending.Since.Equal(at) {
				t.Errorf("read back %+v", got)
			}
			news, err := st.Subscriptions(ctx, "news", false)
			if err != nil || len(news) != 2 || news[0].Key != a || news[1].Key != b {
				t.Errorf("Subscriptions(news) = %+v, %v", news, err)
			}
			list, err := st.Subscriptions(ctx, "", false)
			if err != nil || len(list) != 1 || list[0].Key != l {
				t.Errorf("Subscriptions(\"\") = %+v, %v", list, err)
			}
			all, err := st.Subscriptions(ctx, "", true)
			if err != nil || len(all) != 4 {
				t.Errorf("all = %d, %v", len(all), err)
			}
			// Modify in place, then delete.
			err = st.Update(ctx, a, func(cur *Subscription) (*Subscription, error) {
				cur.Pending = nil
				cur.LastHash = "h"
				return cur, nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if got := mustSub(t, st, a); got.Pending != nil || got.LastHash != "h" {
				t.Errorf("after update %+v", got)
			}
			boom := errors.New("boom")
			if err := st.Update(ctx, a, func(*Subscription) (*Subscription, error) { return nil, boom }); !errors.Is(err, boom) {
				t.Errorf("fn error: %v", err)
			}
			mustSub(t, st, a)
			if err := st.Update(ctx, a, func(*Subscription) (*Subscription, error) { return nil, nil }); err != nil {
				t.Fatal(err)
			}
			if _, err := st.Subscription(ctx, a); !errors.Is(err, ErrNotFound) {
				t.Errorf("after delete: %v", err)
			}
		})
	}
}

// TestSurvivesRestart: a verified subscription and a pending delivery kept
// in a BadgerStore outlive the hub and the store; the next hub takes them up.
func TestSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	topics := newFakeTopics()
	topics.set(topicNews, "a")
	clock := newFakeClock()
	sub := newSubscriber(t)

	st := openBadger(t, dir)
	th := startHub(t, st, topics, clock, nil)
	k := subscribeOK(t, th, topicNews, sub.srv.URL, "hub.secret", "k")
	sub.answerPosts(500)
	topics.set(topicNews, "b")
	th.Notify("news")
	nextDelivery(t, sub, clock, 0)
	th.waitEvent(t, outcomeRetry)
	th.stop()
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	st = openBadger(t, dir)
	t.Cleanup(func() {
		if err := st.Close(); err != nil {
			t.Error(err)
		}
	})
	if s := mustSub(t, st, k); s.Pending == nil || s.Secret != "k" {
		t.Fatalf("reopened: %+v", s)
	}
	th = startHub(t, st, topics, clock, nil)
	d := nextDelivery(t, sub, clock, time.Second) // the pending retry, taken up at start
	if string(d.body) != "b" {
		t.Errorf("body = %q", d.body)
	}
	checkSignature(t, d, "k")
	th.waitEvent(t, outcomeDelivered)

	topics.set(topicNews, "c") // and the subscription goes on
	th.Notify("news")
	if d := nextDelivery(t, sub, clock, 0); string(d.body) != "c" {
		t.Errorf("body = %q", d.body)
	}
}

// TestCatchUpAtStart: content that changed while no hub ran is delivered
// when the next hub starts.
func TestCatchUpAtStart(t *testing.T) {
	topics := newFakeTopics()
	topics.set(topicNews, "a")
	clock := newFakeClock()
	st := &MemoryStore{}
	sub := newSubscriber(t)
	th := startHub(t, st, topics, clock, nil)
	subscribeOK(t, th, topicNews, sub.srv.URL)
	th.stop()
	topics.set(topicNews, "b")
	startHub(t, st, topics, clock, nil)
	if d := nextDelivery(t, sub, clock, 0); string(d.body) != "b" {
		t.Errorf("body = %q", d.body)
	}
}

// TestBadgerStoreRefusesNUL: a key whose resource, topic or callback holds
// a NUL byte (the separator of the store's keys) is refused, whichever
// part holds it: it could otherwise read or overwrite another key's
// subscription.
func TestBadgerStoreRefusesNUL(t *testing.T) {
	st := openBadger(t, t.TempDir())
	t.Cleanup(func() { _ = st.Close() })
	ctx := t.Context()
	ok := Key{Resource: "news", Topic: "https://feeds.example/feeds/news.atom", Callback: "https://reader.example/cb"}
	for name, k := range map[string]Key{
		"resource": {Resource: "news\x00x", Topic: ok.Topic, Callback: ok.Callback},
		"topic":    {Resource: ok.Resource, Topic: ok.Topic + "\x00", Callback: ok.Callback},
		"callback": {Resource: ok.Resource, Topic: ok.Topic, Callback: "https://reader.example/\x00cb"},
	} {
		if _, err := st.Subscription(ctx, k); err == nil || !strings.Contains(err.Error(), "NUL") {
			t.Errorf("Subscription with a NUL in the %s: %v, want it refused", name, err)
		}
		err := st.Update(ctx, k, func(*Subscription) (*Subscription, error) { return &Subscription{Key: k}, nil })
		if err == nil || !strings.Contains(err.Error(), "NUL") {
			t.Errorf("Update with a NUL in the %s: %v, want it refused", name, err)
		}
	}
	if _, err := st.Subscription(ctx, ok); err != nil && !errors.Is(err, ErrNotFound) {
		t.Errorf("Subscription of a plain key: %v", err)
	}
}

// TestBadgerStoreUpdateRetriesAConflict: an Update whose subscription was
// changed by another one meanwhile (a delivery's outcome and a renewal at
// once) runs again on the new value: neither change is lost.
func TestBadgerStoreUpdateRetriesAConflict(t *testing.T) {
	st := openBadger(t, t.TempDir())
	t.Cleanup(func() { _ = st.Close() })
	ctx := t.Context()
	k := Key{Resource: "news", Topic: "https://feeds.example/feeds/news.atom", Callback: "https://reader.example/cb"}
	if err := st.Update(ctx, k, func(*Subscription) (*Subscription, error) { return &Subscription{Key: k, Lease: time.Hour}, nil }); err != nil {
		t.Fatal(err)
	}
	calls := 0
	err := st.Update(ctx, k, func(cur *Subscription) (*Subscription, error) {
		calls++
		if calls == 1 {
			// Another update commits between this one's read and its commit.
			err := st.Update(ctx, k, func(cur *Subscription) (*Subscription, error) {
				next := *cur
				next.Lease = 2 * time.Hour
				return &next, nil
			})
			if err != nil {
				return nil, err
			}
		}
		next := *cur
		next.Failures++
		return &next, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := st.Subscription(ctx, k)
	if err != nil {
		t.Fatal(err)
	}
	if calls != 2 || got.Lease != 2*time.Hour || got.Failures != 1 {
		t.Errorf("after a conflict: fn called %d times, lease %v, failures %d; want 2 calls, the other update's 2h and this one's 1", calls, got.Lease, got.Failures)
	}
}
