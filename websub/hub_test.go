package websub

import (
	"cmp"
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

const topicNews = topicBase + "/resources/news?type=rss2"

// subscribeOK subscribes s's callback to topic and waits until verified.
func subscribeOK(t *testing.T, th *testHub, topic, callback string, extra ...string) Key {
	t.Helper()
	th.request(t, form(ModeSubscribe, topic, callback, extra...))
	th.waitEvent(t, ModeSubscribe)
	res, err := th.topics.TopicResource(context.Background(), topic)
	if err != nil {
		t.Fatal(err)
	}
	return Key{Resource: res, Topic: topic, Callback: callback}
}

func TestSubscribeVerifyDeliverSigned(t *testing.T) {
	th := startHub(t, nil, nil, nil, nil)
	th.topics.set(topicNews, "<rss>v1</rss>")
	sub := newSubscriber(t)
	callback := sub.srv.URL + "/cb?id=7"
	th.request(t, form(ModeSubscribe, topicNews, callback, "hub.lease_seconds", "7200", "hub.secret", "s3cret"))

	q := nextVerification(t, sub)
	if q.Get("hub.mode") != ModeSubscribe || q.Get("hub.topic") != topicNews || q.Get("hub.challenge") == "" {
		t.Fatalf("verification query = %v", q)
	}
	if q.Get("hub.lease_seconds") != "7200" {
		t.Errorf("hub.lease_seconds = %q, want 7200", q.Get("hub.lease_seconds"))
	}
	if q.Get("id") != "7" {
		t.Errorf("callback query not preserved: %v", q)
	}
	th.waitEvent(t, ModeSubscribe)
	k := Key{Resource: "news", Topic: topicNews, Callback: callback}
	s := mustSub(t, th.store, k)
	if want := th.clock.Now().Add(2 * time.Hour); !s.Expires.Equal(want) {
		t.Errorf("Expires = %v, want %v", s.Expires, want)
	}

	// No change, no delivery: a notification of an unchanged topic only
	// processes; then a change is delivered, signed.
	th.Notify("news")
	th.waitEvent(t, "processed")
	th.topics.set(topicNews, "<rss>v2</rss>")
	th.Notify("news")
	d := nextDelivery(t, sub, th.clock, 0)
	if string(d.body) != "<rss>v2</rss>" {
		t.Errorf("body = %q", d.body)
	}
	if ct := d.header.Get("Content-Type"); ct != "application/rss+xml; charset=utf-8" {
		t.Errorf("Content-Type = %q", ct)
	}
	link := d.header.Get("Link")
	if !strings.Contains(link, "<"+topicBase+`/websub>; rel="hub"`) || !strings.Contains(link, "<"+topicNews+`>; rel="self"`) {
		t.Errorf("Link = %q", link)
	}
	if d.query.Get("id") != "7" {
		t.Errorf("delivery lost the callback query: %v", d.query)
	}
	checkSignature(t, d, "s3cret")
	th.waitEvent(t, outcomeDelivered)
	if s := mustSub(t, th.store, k); s.Pending != nil || s.LastHash == "" {
		t.Errorf("after delivery: pending %v, last hash %q", s.Pending, s.LastHash)
	}

	// The same content again is not delivered again.
	th.Notify("news")
	th.waitEvent(t, "processed")
	select {
	case d := <-sub.deliver:
		t.Fatalf("unchanged topic delivered again: %q", d.body)
	default:
	}
}

// TestVerificationEchoesTopicAsGiven: the verification carries hub.topic as
// the subscriber sent it (§5.3), not the hub's normal form of it: subscribers
// (websub.rocks among them) compare it byte for byte with the topic they
// asked for, and answer 404 to anything else.
func TestVerificationEchoesTopicAsGiven(t *testing.T) {
	th := startHub(t, nil, nil, nil, nil)
	th.topics.set(topicNews, "a")
	sub := newSubscriber(t)
	asGiven := "HTTP://Dynamo.test/resources/n%65ws?type=rss2" // topicNews, spelled otherwise
	th.request(t, form(ModeSubscribe, asGiven, sub.srv.URL))
	if q := nextVerification(t, sub); q.Get("hub.topic") != asGiven {
		t.Errorf("hub.topic = %q, want %q as given", q.Get("hub.topic"), asGiven)
	}
	th.waitEvent(t, ModeSubscribe)
	mustSub(t, th.store, Key{Resource: "news", Topic: topicNews, Callback: sub.srv.URL}) // keyed in normal form
}

// TestChangeDuringVerificationDelivered: a new version processed while the
// subscriber is answering the verification (the subscription is not stored
// yet, so that pass cannot see it) is still delivered once the subscription
// is verified, not lost until the next change.
func TestChangeDuringVerificationDelivered(t *testing.T) {
	th := startHub(t, nil, nil, nil, nil)
	th.topics.set(topicNews, "a")
	sub := newSubscriber(t)
	sub.answerVerify(func(q url.Values) (int, string) {
		th.topics.set(topicNews, "b")
		th.Notify("news")
		for deadline := time.After(wait); ; { // the pass is over before the answer
			select {
			case ev := <-th.events:
				if ev != "processed" {
					continue
				}
			case <-deadline:
				t.Error("no notification pass during the verification")
			}
			return http.StatusOK, q.Get("hub.challenge")
		}
	})
	th.request(t, form(ModeSubscribe, topicNews, sub.srv.URL))
	if d := nextDelivery(t, sub, th.clock, 0); string(d.body) != "b" {
		t.Errorf("body = %q, want the content that changed during the verification", d.body)
	}
}

// TestVerificationQueryJoinsCallbackQuery: the hub's parameters follow
// the callback's own query with a single "&" (§5.1.1): a callback ending
// in "?" or "&" gets none added, so the subscriber gets no empty parameter
// ("?&", "&&"), which strict query parsers refuse.
func TestVerificationQueryJoinsCallbackQuery(t *testing.T) {
	th := startHub(t, nil, nil, nil, nil)
	th.topics.set(topicNews, "a")
	sub := newSubscriber(t)
	for _, tc := range []struct{ path, before string }{
		{"/cb", ""},
		{"/cb?", ""},
		{"/cb?id=7", "id=7&"},
		{"/cb?id=7&", "id=7&"},
	} {
		th.request(t, form(ModeSubscribe, topicNews, sub.srv.URL+tc.path))
		select {
		case v := <-sub.verifs:
			if rest, ok := strings.CutPrefix(v.raw, tc.before); !ok || !strings.HasPrefix(rest, "hub.") || strings.Contains(v.raw, "&&") {
				t.Errorf("callback %s: verification query %q, want %q then the hub's parameters", tc.path, v.raw, tc.before)
			}
		case <-time.After(wait):
			t.Fatalf("callback %s: no verification", tc.path)
		}
		th.waitEvent(t, ModeSubscribe)
	}
}

func TestUnsignedWithoutSecret(t *testing.T) {
	th := startHub(t, nil, nil, nil, nil)
	th.topics.set(topicNews, "a")
	sub := newSubscriber(t)
	subscribeOK(t, th, topicNews, sub.srv.URL)
	th.topics.set(topicNews, "b")
	th.Notify("news")
	d := nextDelivery(t, sub, th.clock, 0)
	if sig := d.header.Get("X-Hub-Signature"); sig != "" {
		t.Errorf("X-Hub-Signature = %q without a secret", sig)
	}
}

func TestRetryAfter500sThenSuccess(t *testing.T) {
	th := startHub(t, nil, nil, nil, nil)
	th.topics.set(topicNews, "a")
	sub := newSubscriber(t)
	k := subscribeOK(t, th, topicNews, sub.srv.URL, "hub.secret", "k")
	sub.answerPosts(500, 503)
	th.topics.set(topicNews, "b")
	th.Notify("news")
	for i := range 3 {
		d := nextDelivery(t, sub, th.clock, time.Second)
		if string(d.body) != "b" {
			t.Errorf("attempt %d body = %q", i+1, d.body)
		}
		checkSignature(t, d, "k")
	}
	th.waitEvent(t, outcomeDelivered)
	s := mustSub(t, th.store, k)
	if s.Pending != nil {
		t.Errorf("still pending after success: %+v", s.Pending)
	}
}

func TestGiveUpAfterRetryFor(t *testing.T) {
	tests := []struct {
		name      string
		dropAfter int
		kept      bool
	}{
		{"kept until its lease ends (§7)", 0, true},
		{"dropped after one abandoned notification", 1, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			th := startHub(t, nil, nil, nil, func(o *Options) {
				o.RetryFor = 10 * time.Second
				o.DropAfter = tc.dropAfter
			})
			th.topics.set(topicNews, "a")
			sub := newSubscriber(t)
			k := subscribeOK(t, th, topicNews, sub.srv.URL)
			sub.answerPosts(500, 500, 500, 500, 500, 500, 500, 500)
			th.topics.set(topicNews, "b")
			th.Notify("news")
			want := outcomeAbandoned
			if !tc.kept {
				want = outcomeDropped
			}
			deadline := time.After(wait)
			tick := time.NewTicker(5 * time.Millisecond)
			defer tick.Stop()
			for done := false; !done; {
				select {
				case <-sub.deliver:
				case <-tick.C:
					th.clock.Advance(time.Second)
				case ev := <-th.events:
					done = ev == want
				case <-deadline:
					t.Fatalf("no %s event", want)
				}
			}
			_, err := th.store.Subscription(context.Background(), k)
			if tc.kept && err != nil {
				t.Errorf("subscription gone after giving up: %v", err)
			}
			if !tc.kept && !errors.Is(err, ErrNotFound) {
				t.Errorf("subscription still there: %v", err)
			}
		})
	}
}

func TestGoneEndsSubscription(t *testing.T) {
	th := startHub(t, nil, nil, nil, nil)
	th.topics.set(topicNews, "a")
	sub := newSubscriber(t)
	k := subscribeOK(t, th, topicNews, sub.srv.URL)
	sub.answerPosts(http.StatusGone)
	th.topics.set(topicNews, "b")
	th.Notify("news")
	nextDelivery(t, sub, th.clock, 0)
	th.waitEvent(t, outcomeGone)
	if _, err := th.store.Subscription(context.Background(), k); !errors.Is(err, ErrNotFound) {
		t.Errorf("after 410: %v", err)
	}
}

// A subscriber may unsubscribe from a topic whose resource was deleted:
// its subscription is still stored (it would live out its lease), so the
// request is verified and the subscription removed. Unsubscribing a
// callback that has no subscription to such a topic is still refused.
func TestUnsubscribeFromDeletedTopic(t *testing.T) {
	th := startHub(t, nil, nil, nil, nil)
	th.topics.set(topicNews, "a")
	sub := newSubscriber(t)
	k := subscribeOK(t, th, topicNews, sub.srv.URL)
	nextVerification(t, sub)
	th.topics.remove(topicNews)

	stranger := newSubscriber(t)
	if err := th.Request(context.Background(), form(ModeUnsubscribe, topicNews, stranger.srv.URL)); !errors.Is(err, ErrUnknownTopic) {
		t.Errorf("unsubscribe without a subscription from a deleted topic: %v, want ErrUnknownTopic", err)
	}
	th.request(t, form(ModeUnsubscribe, topicNews, sub.srv.URL))
	if q := nextVerification(t, sub); q.Get("hub.mode") != ModeUnsubscribe || q.Get("hub.challenge") == "" {
		t.Errorf("unsubscribe verification = %v", q)
	}
	th.waitEvent(t, ModeUnsubscribe)
	if _, err := th.store.Subscription(context.Background(), k); !errors.Is(err, ErrNotFound) {
		t.Fatalf("after unsubscribe: %v", err)
	}
}

func TestUnsubscribeStopsDeliveries(t *testing.T) {
	th := startHub(t, nil, nil, nil, nil)
	th.topics.set(topicNews, "a")
	sub := newSubscriber(t)
	k := subscribeOK(t, th, topicNews, sub.srv.URL)
	nextVerification(t, sub)

	th.request(t, form(ModeUnsubscribe, topicNews, sub.srv.URL))
	q := nextVerification(t, sub)
	if q.Get("hub.mode") != ModeUnsubscribe || q.Get("hub.challenge") == "" {
		t.Errorf("unsubscribe verification = %v", q)
	}
	th.waitEvent(t, ModeUnsubscribe)
	if _, err := th.store.Subscription(context.Background(), k); !errors.Is(err, ErrNotFound) {
		t.Fatalf("after unsubscribe: %v", err)
	}
	th.topics.set(topicNews, "b")
	th.Notify("news")
	th.waitEvent(t, "processed")
	select {
	case d := <-sub.deliver:
		t.Fatalf("delivered after unsubscribe: %q", d.body)
	default:
	}
}

func TestUnsubscribeNotVerifiedKeepsSubscription(t *testing.T) {
	th := startHub(t, nil, nil, nil, nil)
	th.topics.set(topicNews, "a")
	sub := newSubscriber(t)
	k := subscribeOK(t, th, topicNews, sub.srv.URL)
	sub.answerVerify(func(url.Values) (int, string) { return http.StatusNotFound, "" })
	th.request(t, form(ModeUnsubscribe, topicNews, sub.srv.URL))
	th.waitEvent(t, "refused")
	mustSub(t, th.store, k) // §5.1: if verification fails, the state is left unchanged
}

func TestLeaseExpiryAndRenewal(t *testing.T) {
	th := startHub(t, nil, nil, nil, nil)
	th.topics.set(topicNews, "a")
	sub := newSubscriber(t)
	k := subscribeOK(t, th, topicNews, sub.srv.URL, "hub.lease_seconds", "120")

	// A renewal before the end extends the lease from its own verification.
	th.clock.Advance(100 * time.Second)
	subscribeOK(t, th, topicNews, sub.srv.URL, "hub.lease_seconds", "120")
	if s := mustSub(t, th.store, k); !s.Expires.Equal(th.clock.Now().Add(120 * time.Second)) {
		t.Errorf("renewed Expires = %v, want now+120s", s.Expires)
	}
	th.clock.Advance(100 * time.Second) // 200s after the first: alive thanks to the renewal
	th.topics.set(topicNews, "b")
	th.Notify("news")
	if d := nextDelivery(t, sub, th.clock, 0); string(d.body) != "b" {
		t.Errorf("body = %q", d.body)
	}
	th.waitEvent(t, outcomeDelivered)

	th.clock.Advance(21 * time.Second) // past the renewed lease
	th.topics.set(topicNews, "c")
	th.Notify("news")
	th.waitEvent(t, "processed")
	if _, err := th.store.Subscription(context.Background(), k); !errors.Is(err, ErrNotFound) {
		t.Fatalf("expired subscription still stored: %v", err)
	}
	select {
	case d := <-sub.deliver:
		t.Fatalf("delivered after expiry: %q", d.body)
	default:
	}
}

func TestLeaseBounds(t *testing.T) {
	tests := []struct {
		requested string
		want      time.Duration
	}{
		{"", DefaultLease},
		{"1", time.Minute}, // the test hub's LeaseMin
		{"3600", time.Hour},
		{"99999999999999", DefaultLeaseMax},
		{"99999999999999999999", DefaultLeaseMax},  // a positive decimal integer past int64: granted the longest, not refused
		{"099999999999999999999", DefaultLeaseMax}, // … with a leading zero too
		{"0001", time.Minute},
	}
	for _, tc := range tests {
		t.Run("lease="+tc.requested, func(t *testing.T) {
			th := startHub(t, nil, nil, nil, nil)
			th.topics.set(topicNews, "a")
			sub := newSubscriber(t)
			var extra []string
			if tc.requested != "" {
				extra = []string{"hub.lease_seconds", tc.requested}
			}
			k := subscribeOK(t, th, topicNews, sub.srv.URL, extra...)
			q := nextVerification(t, sub)
			if got := q.Get("hub.lease_seconds"); got != strconv.Itoa(int(tc.want.Seconds())) {
				t.Errorf("hub.lease_seconds = %s, want %v", got, tc.want.Seconds())
			}
			if s := mustSub(t, th.store, k); s.Lease != tc.want {
				t.Errorf("Lease = %v, want %v", s.Lease, tc.want)
			}
		})
	}
}

func TestVerificationRefused(t *testing.T) {
	tests := []struct {
		name   string
		answer func(q url.Values) (int, string)
	}{
		{"wrong challenge", func(url.Values) (int, string) { return 200, "nope" }},
		{"challenge with more", func(q url.Values) (int, string) { return 200, q.Get("hub.challenge") + "\n" }},
		{"404", func(q url.Values) (int, string) { return 404, q.Get("hub.challenge") }},
		{"500", func(q url.Values) (int, string) { return 500, q.Get("hub.challenge") }},
		{"redirect", func(q url.Values) (int, string) { return 302, q.Get("hub.challenge") }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			th := startHub(t, nil, nil, nil, nil)
			th.topics.set(topicNews, "a")
			sub := newSubscriber(t)
			sub.answerVerify(tc.answer)
			th.request(t, form(ModeSubscribe, topicNews, sub.srv.URL))
			th.waitEvent(t, "refused")
			subs, err := th.store.Subscriptions(context.Background(), "", true)
			if err != nil || len(subs) != 0 {
				t.Errorf("subscriptions = %v, %v; want none", subs, err)
			}
		})
	}
}

// TestDeniedWhenTopicGoneBeforeVerification: a request accepted (202) whose
// topic stops being a feed before its verification is denied, and the
// subscriber is told so with hub.mode=denied (§5.2 "MUST inform the
// subscriber"), not left waiting for a verification that never comes.
func TestDeniedWhenTopicGoneBeforeVerification(t *testing.T) {
	topics := newFakeTopics()
	topics.set(topicNews, "a")
	sub := newSubscriber(t)
	st := &MemoryStore{}
	h, err := New(Options{URL: topicBase + "/websub", Topics: topics, Store: st, Client: &http.Client{}, Clock: newFakeClock()})
	if err != nil {
		t.Fatal(err)
	}
	callback := sub.srv.URL + "/cb?id=7"
	if err := h.Request(context.Background(), form(ModeSubscribe, topicNews, callback)); err != nil {
		t.Fatal(err)
	}
	topics.mu.Lock()
	delete(topics.bodies, topicNews) // the resource is deleted before the hub runs the verification
	topics.mu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.Run(ctx) }()
	defer func() { cancel(); <-done }()

	q := nextVerification(t, sub)
	if q.Get("hub.mode") != "denied" || q.Get("hub.topic") != topicNews || q.Get("hub.reason") == "" || q.Get("id") != "7" {
		t.Errorf("denial query = %v", q)
	}
	if q.Has("hub.challenge") {
		t.Errorf("a denial carries no challenge: %v", q)
	}
	if subs, _ := st.Subscriptions(context.Background(), "", true); len(subs) != 0 {
		t.Errorf("subscriptions = %v", subs)
	}
}

// flakyTopics fails with a passing error (not ErrUnknownTopic) once broken.
type flakyTopics struct {
	*fakeTopics
	broken atomic.Bool
}

func (f *flakyTopics) TopicResource(ctx context.Context, topic string) (string, error) {
	if f.broken.Load() {
		return "", errors.New("store unavailable")
	}
	return f.fakeTopics.TopicResource(ctx, topic)
}

// TestNotDeniedForPassingFailure: a topic that cannot be checked at
// verification time because of our own passing failure is not denied (a
// denied subscriber gives up on the hub, §5.2); the request is dropped
// without a word, as a failed verification is, and the subscriber asks again.
func TestNotDeniedForPassingFailure(t *testing.T) {
	topics := &flakyTopics{fakeTopics: newFakeTopics()}
	topics.set(topicNews, "a")
	sub := newSubscriber(t)
	h, err := New(Options{URL: topicBase + "/websub", Topics: topics, Store: &MemoryStore{}, Client: &http.Client{}, Clock: newFakeClock()})
	if err != nil {
		t.Fatal(err)
	}
	refused := make(chan struct{}, 1)
	h.event = func(kind string, _ Key) {
		if kind == "refused" {
			refused <- struct{}{}
		}
	}
	if err := h.Request(context.Background(), form(ModeSubscribe, topicNews, sub.srv.URL)); err != nil {
		t.Fatal(err)
	}
	topics.broken.Store(true)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.Run(ctx) }()
	defer func() { cancel(); <-done }()
	select {
	case <-refused:
	case <-time.After(wait):
		t.Fatal("request not refused")
	}
	select {
	case v := <-sub.verifs:
		t.Errorf("the subscriber got %v", v.query)
	default:
	}
}

func TestCallbackRefusedByGuard(t *testing.T) {
	// A client like the poller's guarded one: its dialer refuses loopback
	// after resolution.
	guarded := &http.Client{Transport: &http.Transport{DialContext: (&net.Dialer{
		Control: func(_, address string, _ syscall.RawConn) error {
			host, _, _ := net.SplitHostPort(address)
			if ip := net.ParseIP(host); ip == nil || ip.IsLoopback() {
				return errors.New("address not allowed")
			}
			return nil
		},
	}).DialContext}}
	th := startHub(t, nil, nil, nil, func(o *Options) { o.Client = guarded })
	th.topics.set(topicNews, "a")
	sub := newSubscriber(t)
	th.request(t, form(ModeSubscribe, topicNews, sub.srv.URL))
	th.waitEvent(t, "refused")
	select {
	case v := <-sub.verifs:
		t.Fatalf("the guard let a verification through: %v", v.query)
	default:
	}
	if subs, _ := th.store.Subscriptions(context.Background(), "", true); len(subs) != 0 {
		t.Errorf("subscriptions = %v", subs)
	}
}

func TestRequestRefusedSynchronously(t *testing.T) {
	th := startHub(t, nil, nil, nil, nil)
	th.topics.set(topicNews, "a")
	cb := "https://reader.example/cb"
	tests := []struct {
		name string
		form url.Values
		want error
	}{
		{"topic not a feed here", form(ModeSubscribe, "https://elsewhere.example/feed", cb), ErrUnknownTopic},
		{"no mode", form("", topicNews, cb), ErrInvalidRequest},
		{"bad mode", form("publish", topicNews, cb), ErrInvalidRequest},
		{"no topic", form(ModeSubscribe, "", cb), ErrInvalidRequest},
		{"no callback", form(ModeSubscribe, topicNews, ""), ErrInvalidRequest},
		{"relative callback", form(ModeSubscribe, topicNews, "/cb"), ErrInvalidRequest},
		{"ftp callback", form(ModeSubscribe, topicNews, "ftp://reader.example/cb"), ErrInvalidRequest},
		{"callback with fragment", form(ModeSubscribe, topicNews, cb+"#x"), ErrInvalidRequest},
		// An empty fragment is still a fragment (url.Parse drops it): the
		// hub would call another URL than the one it was given.
		{"callback with an empty fragment", form(ModeSubscribe, topicNews, cb+"#"), ErrInvalidRequest},
		// http with no host (not opaque either: "http:cb" is) names no
		// server to call back.
		{"http callback without a host", form(ModeSubscribe, topicNews, "http:///cb"), ErrInvalidRequest},
		{"http callback with a path and no host", form(ModeSubscribe, topicNews, "http:/cb"), ErrInvalidRequest},
		{"opaque callback", form(ModeSubscribe, topicNews, "http:cb"), ErrInvalidRequest},
		{"lease not a number", form(ModeSubscribe, topicNews, cb, "hub.lease_seconds", "soon"), ErrInvalidRequest},
		{"lease zero", form(ModeSubscribe, topicNews, cb, "hub.lease_seconds", "0"), ErrInvalidRequest},
		{"lease negative", form(ModeSubscribe, topicNews, cb, "hub.lease_seconds", "-5"), ErrInvalidRequest},
		{"lease hugely negative", form(ModeSubscribe, topicNews, cb, "hub.lease_seconds", "-99999999999999999999"), ErrInvalidRequest},
		{"lease with a sign", form(ModeSubscribe, topicNews, cb, "hub.lease_seconds", "+99999999999999999999"), ErrInvalidRequest},
		{"callback too long", form(ModeSubscribe, topicNews, cb+"?q="+strings.Repeat("x", maxURL)), ErrInvalidRequest},
		{"callback of the longest length", form(ModeSubscribe, topicNews, cb+"?q="+strings.Repeat("x", maxURL-len(cb)-3)), nil},
		{"secret of 200 bytes", form(ModeSubscribe, topicNews, cb, "hub.secret", strings.Repeat("x", 200)), ErrInvalidRequest},
		{"secret of 199 bytes", form(ModeSubscribe, topicNews, cb, "hub.secret", strings.Repeat("x", 199)), nil},
		{"unsubscribe ignores a bad lease", form(ModeUnsubscribe, topicNews, cb, "hub.lease_seconds", "soon"), nil},
		{"unknown parameters ignored", form(ModeSubscribe, topicNews, cb, "hub.foo", "bar"), nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := th.Request(context.Background(), tc.form)
			if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
				t.Errorf("Request = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestNormalizeURL(t *testing.T) {
	tests := []struct{ in, want string }{
		{"http://Dynamo.TEST/resources/%6Eews?type=rss2", "http://dynamo.test/resources/news?type=rss2"},
		{"HTTPS://x.example/a%2fb%7e", "https://x.example/a%2Fb~"},
		{"http://x.example", "http://x.example"},
		{"http://x.example?q=%41%20", "http://x.example?q=A%20"},
		// A percent-encoding cut short at the end stays as it is.
		{"http://x.example/a%4", "http://x.example/a%4"},
		{"http://x.example/a%", "http://x.example/a%"},
		{"http://x.example/a%41", "http://x.example/aA"},
		{"http://x.example/%zz%41", "http://x.example/%zzA"},
		// Only a scheme and a host are lower-cased: an empty host leaves
		// the path alone, and no scheme, no host.
		{"HTTP:///Path", "http:///Path"},
		// Each end of each range of hex digits and of unreserved
		// characters: decoded when unreserved, else upper-cased.
		{"http://x.example/%30%39%41%5A%61%7A%4a%4f%6A%6F", "http://x.example/09AZazJOjo"},
		{"http://x.example/%2f%40%5b%60%7b%2F%3A%2D%2E%5F%7E", "http://x.example/%2F%40%5B%60%7B%2F%3A-._~"},
		{"://X.example/A", "://X.example/A"},
	}
	for _, tc := range tests {
		if got := normalizeURL(tc.in); got != tc.want {
			t.Errorf("normalizeURL(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestListTopicFollowsEveryResource(t *testing.T) {
	th := startHub(t, nil, nil, nil, nil)
	list := topicBase + "/resources?type=atom"
	th.topics.set(list, "l1")
	sub := newSubscriber(t)
	k := subscribeOK(t, th, list, sub.srv.URL)
	if k.Resource != "" {
		t.Fatalf("list topic resource = %q", k.Resource)
	}
	th.topics.set(list, "l2")
	th.Notify("any")
	if d := nextDelivery(t, sub, th.clock, 0); string(d.body) != "l2" {
		t.Errorf("body = %q", d.body)
	}
}

func TestBusyWhenVerificationQueueFull(t *testing.T) {
	topics := newFakeTopics()
	topics.set(topicNews, "a")
	h, err := New(Options{URL: topicBase + "/websub", Topics: topics, Store: &MemoryStore{}, Client: &http.Client{}, Queue: 1})
	if err != nil {
		t.Fatal(err)
	}
	// Not running: the first request fills the queue, the second is refused.
	f := form(ModeSubscribe, topicNews, "https://reader.example/cb")
	if err := h.Request(context.Background(), f); err != nil {
		t.Fatalf("first: %v", err)
	}
	if err := h.Request(context.Background(), f); !errors.Is(err, ErrBusy) {
		t.Fatalf("second: %v, want ErrBusy", err)
	}
	// Notify never blocks, however often it is called before Run.
	for range 10000 {
		h.Notify("news")
	}
}

// TestRequestsLimitedPerCallbackHost: past CallbackBurst accepted requests
// whose callbacks are on one host (any port, any path), a request for that
// host is refused at once with a *LimitError saying when to try again, and
// no verification is sent for it; another host is not affected, refused
// requests cost nothing, and the budget refills at CallbackEvery.
func TestRequestsLimitedPerCallbackHost(t *testing.T) {
	th := startHub(t, nil, nil, nil, func(o *Options) {
		o.CallbackEvery = 10 * time.Second
		o.CallbackBurst = 3
	})
	th.topics.set(topicNews, "a")
	sub, other := newSubscriber(t), newSubscriber(t) // both on 127.0.0.1
	ctx := context.Background()

	// Refused requests send no GET, so they take nothing from the budget.
	if err := th.Request(ctx, form(ModeSubscribe, topicBase+"/resources/nope", sub.srv.URL)); !errors.Is(err, ErrUnknownTopic) {
		t.Fatalf("unknown topic: %v", err)
	}
	if err := th.Request(ctx, form(ModeSubscribe, topicNews, sub.srv.URL, "hub.lease_seconds", "soon")); !errors.Is(err, ErrInvalidRequest) {
		t.Fatalf("invalid request: %v", err)
	}
	for i := range 3 {
		subscribeOK(t, th, topicNews, sub.srv.URL+"/cb"+strconv.Itoa(i))
		nextVerification(t, sub)
	}
	err := th.Request(ctx, form(ModeSubscribe, topicNews, other.srv.URL))
	var le *LimitError
	if !errors.Is(err, ErrRateLimited) || !errors.As(err, &le) || le.RetryAfter != 10*time.Second || le.Host != "127.0.0.1" {
		t.Fatalf("past the burst: %v (%+v), want a *LimitError for 127.0.0.1, retry after 10s", err, le)
	}
	if err := th.Request(ctx, form(ModeUnsubscribe, topicNews, sub.srv.URL+"/cb0")); !errors.Is(err, ErrRateLimited) {
		t.Fatalf("an unsubscribe is verified too, so limited too: %v", err)
	}

	// Another host name, even for the same server, has its own budget.
	local := strings.Replace(other.srv.URL, "127.0.0.1", "localhost", 1)
	subscribeOK(t, th, topicNews, local)
	if q := nextVerification(t, other); q.Get("hub.mode") != ModeSubscribe {
		t.Fatalf("verification = %v", q)
	}
	select {
	case v := <-other.verifs:
		t.Fatalf("a limited request was verified: %v", v.query)
	default:
	}

	th.clock.Advance(10 * time.Second)
	subscribeOK(t, th, topicNews, other.srv.URL)
	if err := th.Request(ctx, form(ModeSubscribe, topicNews, other.srv.URL)); !errors.Is(err, ErrRateLimited) {
		t.Errorf("a second request in one interval: %v, want ErrRateLimited", err)
	}
}

// TestBusyGivesBackCallbackBudget: a request refused because the queue is
// full sends no GET, so it takes nothing from its callback host's budget.
func TestBusyGivesBackCallbackBudget(t *testing.T) {
	topics := newFakeTopics()
	topics.set(topicNews, "a")
	h, err := New(Options{URL: topicBase + "/websub", Topics: topics, Store: &MemoryStore{}, Client: &http.Client{},
		Clock: newFakeClock(), Queue: 1, CallbackBurst: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := h.Request(ctx, form(ModeSubscribe, topicNews, "https://a.example/cb")); err != nil {
		t.Fatalf("first: %v", err)
	}
	if err := h.Request(ctx, form(ModeSubscribe, topicNews, "https://b.example/cb")); !errors.Is(err, ErrBusy) {
		t.Fatalf("queue full: %v, want ErrBusy", err)
	}
	<-h.verify // the hub is not running: empty its queue by hand
	if err := h.Request(ctx, form(ModeSubscribe, topicNews, "https://b.example/cb")); err != nil {
		t.Errorf("after the queue drained: %v; the busy request used up b.example's budget", err)
	}
}

func TestCallbackHost(t *testing.T) {
	tests := []struct{ callback, want string }{
		{"https://reader.example.org/cb", "example.org"},
		{"https://a.b.example.org:8443/x?y", "example.org"},
		{"https://example.org./cb", "example.org"},
		{"https://alice.github.io/cb", "alice.github.io"}, // a private suffix: one budget per site
		{"https://news.example.co.uk/cb", "example.co.uk"},
		{"http://127.0.0.1:8080/cb", "127.0.0.1"},
		{"http://[2001:db8::1]:8080/cb", "2001:db8::1"},
		{"http://localhost/cb", "localhost"},
	}
	for _, tc := range tests {
		if got := callbackHost(tc.callback); got != tc.want {
			t.Errorf("callbackHost(%q) = %q, want %q", tc.callback, got, tc.want)
		}
	}
}

// TestDeliveryStatusBounds: §7's success is a 2xx: 200 and 299 deliver,
// 300 is a failure to retry. (Below 200 are informational answers, which
// net/http sends before a final one: a subscriber cannot end with them.)
func TestDeliveryStatusBounds(t *testing.T) {
	for _, tc := range []struct {
		code int
		want string
	}{
		{200, outcomeDelivered},
		{299, outcomeDelivered},
		{300, outcomeRetry},
	} {
		t.Run(strconv.Itoa(tc.code), func(t *testing.T) {
			th := startHub(t, nil, nil, nil, nil)
			th.topics.set(topicNews, "a")
			sub := newSubscriber(t)
			subscribeOK(t, th, topicNews, sub.srv.URL)
			sub.answerPosts(tc.code)
			th.topics.set(topicNews, "b")
			th.Notify("news")
			nextDelivery(t, sub, th.clock, 0)
			th.waitEvent(t, tc.want)
		})
	}
}

// TestBackoff: the wait before each retry doubles from the base up to the
// limit, and stays there.
func TestBackoff(t *testing.T) {
	for n, want := range []time.Duration{1: time.Second, 2: 2 * time.Second, 3: 4 * time.Second, 4: 8 * time.Second, 5: 8 * time.Second, 9: 8 * time.Second} {
		if want == 0 {
			continue
		}
		if got := backoff(time.Second, 8*time.Second, n); got != want {
			t.Errorf("backoff after %d failures = %v, want %v", n, got, want)
		}
	}
	if got := backoff(3*time.Second, 10*time.Second, 3); got != 10*time.Second {
		t.Errorf("backoff past a limit that is no power of two = %v, want the limit 10s", got)
	}
}

// TestRetryAtExactlyRetryFor: a retry that would come exactly RetryFor after
// the notification is still attempted; only one later than that is not.
func TestRetryAtExactlyRetryFor(t *testing.T) {
	th := startHub(t, nil, nil, nil, func(o *Options) {
		o.RetryMin, o.RetryMax, o.RetryFor = time.Second, time.Second, time.Second
	})
	th.topics.set(topicNews, "a")
	sub := newSubscriber(t)
	subscribeOK(t, th, topicNews, sub.srv.URL)
	sub.answerPosts(500, 500)
	th.topics.set(topicNews, "b")
	th.Notify("news") // the clock stands still: the retry would come 1 s after, exactly RetryFor
	nextDelivery(t, sub, th.clock, 0)
	th.waitEvent(t, outcomeRetry)
	th.clock.Advance(time.Second) // now 1 s after: the next retry would be 2 s after, past RetryFor
	nextDelivery(t, sub, th.clock, 0)
	th.waitEvent(t, outcomeAbandoned)
}

// TestDeliveryLatencyOnlyForSuccess: the delivery latency histogram
// observes a notification's delivery once, when a subscriber took it, not
// its failed attempts.
func TestDeliveryLatencyOnlyForSuccess(t *testing.T) {
	reg := prometheus.NewRegistry()
	th := startHub(t, nil, nil, nil, func(o *Options) { o.Registerer = reg })
	th.topics.set(topicNews, "a")
	sub := newSubscriber(t)
	subscribeOK(t, th, topicNews, sub.srv.URL)
	sub.answerPosts(500, 503)
	th.topics.set(topicNews, "b")
	th.Notify("news")
	for range 3 {
		nextDelivery(t, sub, th.clock, time.Second)
	}
	th.waitEvent(t, outcomeDelivered)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var n uint64
	found := false
	for _, mf := range mfs {
		if mf.GetName() == "dynamo_websub_delivery_latency_seconds" {
			found = true
			n = mf.GetMetric()[0].GetHistogram().GetSampleCount()
		}
	}
	if !found || n != 1 {
		t.Fatalf("latency observations %d (found %v), want 1: two failures then a success", n, found)
	}
}

// TestOptionBounds: equal lease bounds are a fixed lease, crossed ones are
// refused; requests carry the default User-Agent unless one is given.
func TestOptionBounds(t *testing.T) {
	base := func() Options {
		return Options{URL: topicBase + "/websub", Topics: newFakeTopics(), Store: &MemoryStore{}, Client: &http.Client{}}
	}
	o := base()
	o.LeaseMin, o.LeaseMax = time.Hour, time.Hour
	if _, err := New(o); err != nil {
		t.Errorf("LeaseMin = LeaseMax: %v, want accepted", err)
	}
	o.LeaseMin = time.Hour + time.Second
	if _, err := New(o); err == nil {
		t.Error("LeaseMin > LeaseMax accepted")
	}
	// The hub's own URL, which subscribers are told: absolute, and a URL.
	for _, u := range []string{"/websub", "hub.example/websub", "https://hub.example/%zz", ""} {
		o := base()
		o.URL = u
		if _, err := New(o); err == nil || !strings.Contains(err.Error(), "is not an absolute URL") {
			t.Errorf("Options.URL %q: %v, want it refused", u, err)
		}
	}
	for _, ua := range []string{"", "reader-hub/2"} {
		th := startHub(t, nil, nil, nil, func(o *Options) { o.UserAgent = ua })
		th.topics.set(topicNews, "a")
		sub := newSubscriber(t)
		subscribeOK(t, th, topicNews, sub.srv.URL)
		th.topics.set(topicNews, "b")
		th.Notify("news")
		d := nextDelivery(t, sub, th.clock, 0)
		want := cmp.Or(ua, "dynamo-websub")
		if got := d.header.Get("User-Agent"); got != want {
			t.Errorf("UserAgent %q: deliveries say %q, want %q", ua, got, want)
		}
	}
}

// TestChangeDuringDeliveryDelivered: a change notified while a delivery is
// in flight is delivered after it, whatever the subscriber's answer to the
// first: the first's success does not count for the newer content.
func TestChangeDuringDeliveryDelivered(t *testing.T) {
	th, sub, _, release := heldDelivery(t)
	th.topics.set(topicNews, "c") // while b's POST is held
	th.Notify("news")
	th.waitEvent(t, "processed")
	close(release)
	deadline := time.After(wait)
	for {
		select {
		case d := <-sub.deliver:
			if string(d.body) == "c" {
				return
			}
		case <-deadline:
			t.Fatal("the change notified during a delivery was never delivered")
		}
	}
}

// TestSameContentDuringDeliveryNotDeliveredTwice: a notification of the
// very content in flight, or a renewal of the subscription, arriving
// during its delivery, is settled by that delivery's success: nothing is
// left pending, nothing is sent twice.
func TestSameContentDuringDeliveryNotDeliveredTwice(t *testing.T) {
	th, sub, k, release := heldDelivery(t)
	th.clock.Advance(time.Second) // a later notification of the same content
	th.Notify("news")
	th.waitEvent(t, "processed")
	subscribeOK(t, th, topicNews, sub.srv.URL) // and a renewal of the subscription meanwhile
	close(release)
	th.waitEvent(t, outcomeDelivered)
	if s := mustSub(t, th.store, k); s.Pending != nil {
		t.Fatalf("still pending after the content was delivered: %+v", s.Pending)
	}
}

// TestVerificationStatusBounds: a verification echoing the challenge with
// any 2xx, 299 included, is accepted; 300 is not (a 1xx is never a final
// answer of a Go server, so the low end is not tried here).
func TestVerificationStatusBounds(t *testing.T) {
	for _, tc := range []struct {
		code int
		want string
	}{{200, ModeSubscribe}, {299, ModeSubscribe}, {300, "refused"}} {
		t.Run(strconv.Itoa(tc.code), func(t *testing.T) {
			th := startHub(t, nil, nil, nil, nil)
			th.topics.set(topicNews, "a")
			sub := newSubscriber(t)
			sub.answerVerify(func(q url.Values) (int, string) { return tc.code, q.Get("hub.challenge") })
			th.request(t, form(ModeSubscribe, topicNews, sub.srv.URL))
			th.waitEvent(t, tc.want)
		})
	}
}

// TestResubscribedDuringDelivery: a subscriber that unsubscribes and
// subscribes again while a delivery to it is under way has a new
// subscription with nothing pending; the old delivery's success records
// what it sent and leaves the new subscription alone.
func TestResubscribedDuringDelivery(t *testing.T) {
	th, sub, k, release := heldDelivery(t)
	th.request(t, form(ModeUnsubscribe, topicNews, sub.srv.URL))
	th.waitEvent(t, ModeUnsubscribe)
	subscribeOK(t, th, topicNews, sub.srv.URL)
	if s := mustSub(t, th.store, k); s.Pending != nil {
		t.Fatalf("a new subscription with something pending: %+v", s.Pending)
	}
	close(release)
	th.waitEvent(t, outcomeDelivered)
	s := mustSub(t, th.store, k)
	if s.Pending != nil {
		t.Errorf("pending after the old delivery ended: %+v", s.Pending)
	}
	if want := th.topicHash(context.Background(), topicNews); s.LastHash != want {
		t.Errorf("last hash %q, want the delivered content's %q", s.LastHash, want)
	}
}

// heldDelivery subscribes to topicNews (content "a"), changes it to "b"
// and returns once the subscriber has received the delivery of "b",
// which it holds unanswered until release is closed.
func heldDelivery(t *testing.T) (th *testHub, sub *subscriber, k Key, release chan struct{}) {
	t.Helper()
	th = startHub(t, nil, nil, nil, nil)
	th.topics.set(topicNews, "a")
	sub = newSubscriber(t)
	k = subscribeOK(t, th, topicNews, sub.srv.URL)
	release = make(chan struct{})
	sub.mu.Lock()
	sub.hold = release
	sub.mu.Unlock()
	th.topics.set(topicNews, "b")
	th.Notify("news")
	if d := nextDelivery(t, sub, th.clock, 0); string(d.body) != "b" {
		t.Fatalf("first delivery %q, want b", d.body)
	}
	return th, sub, k, release
}
