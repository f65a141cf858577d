package websub

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeClock is a Clock whose time moves only by Advance.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
}

type fakeTimer struct {
	c        chan time.Time
	deadline time.Time
	clock    *fakeClock
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) NewTimer(d time.Duration) Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{c: make(chan time.Time, 1), deadline: c.now.Add(d), clock: c}
	if d <= 0 {
		t.c <- c.now
		return t
	}
	c.timers = append(c.timers, t)
	return t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	kept := c.timers[:0]
	for _, t := range c.timers {
		if t.deadline.After(c.now) {
			kept = append(kept, t)
			continue
		}
		t.c <- c.now
	}
	c.timers = kept
}

func (t *fakeTimer) C() <-chan time.Time { return t.c }

func (t *fakeTimer) Stop() bool {
	c := t.clock
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, x := range c.timers {
		if x == t {
			c.timers = append(c.timers[:i], c.timers[i+1:]...)
			return true
		}
	}
	return false
}

// topicBase is the fake service's base URL; topics are its /resources feeds.
const topicBase = "http://dynamo.test"

// fakeTopics serves topics from a map that tests change.
type fakeTopics struct {
	mu      sync.Mutex
	bodies  map[string]string // topic → body
	deleted map[string]bool   // resource ids deleted (and not registered again)
}

func newFakeTopics() *fakeTopics {
	return &fakeTopics{bodies: make(map[string]string), deleted: make(map[string]bool)}
}

// set makes topic render body; a topic of a deleted resource is then of
// the resource registered again.
func (f *fakeTopics) set(topic, body string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.bodies[topic] = body
	delete(f.deleted, topicID(topic))
}

// deleteResource deletes resource id: none of its topics render, and
// TopicResource says the resource was deleted, as the api does.
func (f *fakeTopics) deleteResource(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for topic := range f.bodies {
		if topicID(topic) == id {
			delete(f.bodies, topic)
		}
	}
	f.deleted[id] = true
}

// topicID is the resource id a topic URL names ("" for the list).
func topicID(topic string) string {
	u, err := url.Parse(topic)
	if err != nil {
		return ""
	}
	id, _, _ := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(u.Path, "/resources"), "/"), "/")
	return id
}

// remove makes topic a feed no more, its resource not deleted (a version
// past the history, say): TopicResource says ErrUnknownTopic only.
func (f *fakeTopics) remove(topic string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.bodies, topic)
}

// TopicResource names the resource of a feed path even when the feed does
// not render (as the api does: see [Topics]).
func (f *fakeTopics) TopicResource(_ context.Context, topic string) (string, error) {
	if _, err := url.Parse(topic); err != nil {
		return "", fmt.Errorf("%q: %w", topic, ErrUnknownTopic)
	}
	id := topicID(topic)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.deleted[id] {
		return id, fmt.Errorf("%q: %w", topic, ErrTopicDeleted)
	}
	if _, ok := f.bodies[topic]; !ok {
		return id, fmt.Errorf("%q: %w", topic, ErrUnknownTopic)
	}
	return id, nil
}

func (f *fakeTopics) RenderTopic(_ context.Context, topic string) ([]byte, string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	b, ok := f.bodies[topic]
	if !ok {
		return nil, "", fmt.Errorf("%q: %w", topic, ErrUnknownTopic)
	}
	return []byte(b), "application/rss+xml; charset=utf-8", nil
}

// verification is one verification request a subscriber received.
type verification struct {
	query url.Values
	raw   string // the query as sent
}

// delivery is one content distribution request a subscriber received.
type delivery struct {
	body   []byte
	header http.Header
	query  url.Values
	at     time.Time // real time of receipt
}

// subscriber is a WebSub subscriber on loopback whose answers tests choose.
type subscriber struct {
	srv *httptest.Server

	mu      sync.Mutex
	verify  func(q url.Values) (int, string) // nil: echo the challenge with 200
	posts   []int                            // status codes for the next POSTs; then 200
	verifs  chan verification
	deliver chan delivery
	hold    chan struct{} // non-nil: the next POST, once received, waits for it to close before answering
}

func newSubscriber(t *testing.T) *subscriber {
	t.Helper()
	s := &subscriber{verifs: make(chan verification, 100), deliver: make(chan delivery, 100)}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *subscriber) serve(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet:
		q := r.URL.Query()
		s.verifs <- verification{query: q, raw: r.URL.RawQuery}
		s.mu.Lock()
		fn := s.verify
		s.mu.Unlock()
		code, body := http.StatusOK, q.Get("hub.challenge")
		if fn != nil {
			code, body = fn(q)
		}
		w.WriteHeader(code)
		_, _ = io.WriteString(w, body)
	case http.MethodPost:
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		code := http.StatusOK
		if len(s.posts) > 0 {
			code, s.posts = s.posts[0], s.posts[1:]
		}
		hold := s.hold
		s.hold = nil
		s.mu.Unlock()
		s.deliver <- delivery{body: body, header: r.Header.Clone(), query: r.URL.Query(), at: time.Now()}
		if hold != nil {
			<-hold
		}
		w.WriteHeader(code)
	default:
		w.WriteHeader(http.StatusMethodNotAllowed)
	}
}

func (s *subscriber) answerPosts(codes ...int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.posts = append(s.posts, codes...)
}

func (s *subscriber) answerVerify(fn func(q url.Values) (int, string)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.verify = fn
}

// testHub is a running hub and what drives it.
type testHub struct {
	*Hub
	clock  *fakeClock
	topics *fakeTopics
	store  Store
	events chan string
	stop   func()
}

// startHub runs a hub over store (a fresh MemoryStore when nil) until the
// test ends or stop is called.
func startHub(t *testing.T, store Store, topics *fakeTopics, clock *fakeClock, tweak func(*Options)) *testHub {
	t.Helper()
	if store == nil {
		store = &MemoryStore{}
	}
	if topics == nil {
		topics = newFakeTopics()
	}
	if clock == nil {
		clock = newFakeClock()
	}
	opts := Options{
		URL:      topicBase + "/websub",
		Topics:   topics,
		Store:    store,
		Client:   &http.Client{},
		Clock:    clock,
		LeaseMin: time.Minute,
		RetryMin: time.Second,
		RetryMax: time.Minute,
		RetryFor: time.Hour,
		Workers:  4,
		Logger:   slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	if tweak != nil {
		tweak(&opts)
	}
	h, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	th := &testHub{Hub: h, clock: clock, topics: topics, store: store, events: make(chan string, 10000)}
	h.event = func(kind string, _ Key) { th.events <- kind }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.Run(ctx) }()
	var once sync.Once
	th.stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Errorf("Run: %v", err)
			}
		})
	}
	t.Cleanup(th.stop)
	return th
}

// wait is the bound on waiting for anything in these tests (real time).
const wait = 10 * time.Second

// waitEvent waits for the hub to observe kind, skipping other events.
func (th *testHub) waitEvent(t *testing.T, kind string) {
	t.Helper()
	deadline := time.After(wait)
	for {
		select {
		case k := <-th.events:
			if k == kind {
				return
			}
		case <-deadline:
			t.Fatalf("no %q event within %v", kind, wait)
		}
	}
}

// request sends a subscription request that must be accepted.
func (th *testHub) request(t *testing.T, form url.Values) {
	t.Helper()
	if err := th.Request(context.Background(), form); err != nil {
		t.Fatalf("Request(%v): %v", form, err)
	}
}

func form(mode, topic, callback string, extra ...string) url.Values {
	f := url.Values{"hub.mode": {mode}, "hub.topic": {topic}, "hub.callback": {callback}}
	for i := 0; i+1 < len(extra); i += 2 {
		f.Set(extra[i], extra[i+1])
	}
	return f
}

// nextDelivery waits for the subscriber's next POST; while waiting it
// advances the fake clock by step every few milliseconds of real time (step
// 0: never), so that retries scheduled on the fake clock come due whatever
// the interleaving.
func nextDelivery(t *testing.T, s *subscriber, clock *fakeClock, step time.Duration) delivery {
	t.Helper()
	deadline := time.After(wait)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case d := <-s.deliver:
			return d
		case <-tick.C:
			if step > 0 {
				clock.Advance(step)
			}
		case <-deadline:
			t.Fatalf("no delivery within %v", wait)
		}
	}
}

func nextVerification(t *testing.T, s *subscriber) url.Values {
	t.Helper()
	select {
	case v := <-s.verifs:
		return v.query
	case <-time.After(wait):
		t.Fatalf("no verification request within %v", wait)
	}
	return nil
}

func checkSignature(t *testing.T, d delivery, secret string) {
	t.Helper()
	got := d.header.Get("X-Hub-Signature")
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(d.body)
	want := "sha256=" + hex.EncodeToString(m.Sum(nil))
	if !hmac.Equal([]byte(got), []byte(want)) {
		t.Errorf("X-Hub-Signature = %q, want %q", got, want)
	}
}

func mustSub(t *testing.T, st Store, k Key) Subscription {
	t.Helper()
	s, err := st.Subscription(context.Background(), k)
	if err != nil {
		t.Fatalf("Subscription(%v): %v", k, err)
	}
	return s
}

// testWriter sends log lines to t.Log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}
