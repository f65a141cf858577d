package api

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/dynamo-rss/dynamo/storage"
	"github.com/dynamo-rss/dynamo/websub"
)

// TestTopicResourceOfDeletedResource: only the topics of a resource that
// was deleted (unregistered, its tombstone in the store) say
// websub.ErrTopicDeleted; a version removed by retention, an id never
// known, or a deleted id registered again do not.
func TestTopicResourceOfDeletedResource(t *testing.T) {
	ctx := context.Background()
	db := openFixtureDB(t)
	if _, err := db.Register(ctx, storage.Registration{ID: "news", Definition: []byte(`{"id":"news"}`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Prune(ctx, "news", storage.Retention{MaxVersions: 1}, fdNow); err != nil {
		t.Fatal(err)
	}
	s := newFDServer(t, db, withHub)
	check := func(topic, resource string, deleted bool) {
		t.Helper()
		res, err := s.TopicResource(ctx, fdBase+topic)
		if !errors.Is(err, websub.ErrUnknownTopic) || errors.Is(err, websub.ErrTopicDeleted) != deleted {
			t.Errorf("%s: %v; want ErrUnknownTopic, ErrTopicDeleted %v", topic, err, deleted)
		}
		if res != resource {
			t.Errorf("%s: resource %q, want %q", topic, res, resource)
		}
	}
	check("/resources/news/versions/1", "news", false) // removed by retention: 410, but the resource lives
	check("/resources/nope", "nope", false)
	if _, err := db.Unregister(ctx, "news"); err != nil {
		t.Fatal(err)
	}
	check("/resources/news?type=atom", "news", true)
	check("/resources/news/versions/3", "news", true)
	if _, err := db.Register(ctx, storage.Registration{ID: "news", Definition: []byte(`{"id":"news"}`)}); err != nil {
		t.Fatal(err)
	}
	check("/resources/news?type=atom", "news", false) // registered again: no version yet, not deleted
}

// TestWebSubDeletedResourceDenied: a real hub over the real store; when a
// subscribed resource is deleted and the hub notified, the subscriber gets
// a denial (hub.mode=denied, hub.topic, hub.reason) and the subscription is
// removed.
func TestWebSubDeletedResourceDenied(t *testing.T) {
	ctx := context.Background()
	db := openFixtureDB(t)
	if _, err := db.Register(ctx, storage.Registration{ID: "news", Definition: []byte(`{"id":"news"}`)}); err != nil {
		t.Fatal(err)
	}
	s := newFDServer(t, db, withHub)
	subs := &signalStore{updated: make(chan websub.Key, 100)}
	hub, err := websub.New(websub.Options{URL: fdHub, Topics: s, Store: subs, Client: &http.Client{}, Registerer: prometheus.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	s.SetHub(hub)
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- hub.Run(runCtx) }()
	t.Cleanup(func() { cancel(); <-done })

	gets := make(chan url.Values, 10)
	cb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			gets <- r.URL.Query()
			_, _ = io.WriteString(w, r.URL.Query().Get("hub.challenge"))
		}
	}))
	t.Cleanup(cb.Close)
	next := func() url.Values {
		t.Helper()
		select {
		case q := <-gets:
			return q
		case <-time.After(10 * time.Second):
			t.Fatal("no request to the callback")
		}
		return nil
	}
	topic := fdBase + "/resources/news?type=atom"
	if rec := svcDoForm(s, "hub.mode=subscribe&hub.callback="+url.QueryEscape(cb.URL)+"&hub.topic="+url.QueryEscape(topic)); rec.Code != http.StatusAccepted {
		t.Fatalf("POST /websub: %d %s", rec.Code, rec.Body)
	}
	if q := next(); q.Get("hub.mode") != "subscribe" {
		t.Fatalf("verification %v", q)
	}
	<-subs.updated

	if _, err := db.Unregister(ctx, "news"); err != nil {
		t.Fatal(err)
	}
	hub.Notify("news")
	q := next()
	if q.Get("hub.mode") != "denied" || q.Get("hub.topic") != topic || q.Get("hub.reason") == "" {
		t.Errorf("denial %v", q)
	}
	if all, _ := subs.Subscriptions(ctx, "", true); len(all) != 0 {
		t.Errorf("subscriptions after the denial: %v", all)
	}
}
