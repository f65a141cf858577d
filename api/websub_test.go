package api

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/dynamo-rss/dynamo/schema"
	"github.com/dynamo-rss/dynamo/websub"
)

const fdHub = fdBase + "/websub"

func withHub(o *Options) { o.HubURL = fdHub }

func TestWebSubDiscovery(t *testing.T) {
	s := newFDServer(t, fdFixture(), withHub)
	tests := []struct {
		target, self, hubInDoc string
	}{
		{"/resources/news?type=atom", fdBase + "/resources/news?type=atom", `<link href="` + fdHub + `" rel="hub">`},
		{"/resources/news", fdBase + "/resources/news?type=rss2", `<atom:link href="` + fdHub + `" rel="hub">`},
		{"/resources?type=rss2", fdBase + "/resources?type=rss2", `<atom:link href="` + fdHub + `" rel="hub">`},
		{"/resources/news/versions/2?type=json", fdBase + "/resources/news/versions/2?type=json", `"hubs": [`},
		{"/resources/news?max=2&title=budget&type=rss1", fdBase + "/resources/news?max=2&title=budget&type=rss1", ""},
	}
	for _, tc := range tests {
		t.Run(tc.target, func(t *testing.T) {
			rec := fdDo(s, http.MethodGet, tc.target)
			if rec.Code != http.StatusOK {
				t.Fatalf("status %d: %s", rec.Code, rec.Body)
			}
			want := []string{"<" + fdHub + `>; rel="hub"`, "<" + tc.self + `>; rel="self"`}
			if got := rec.Header().Values("Link"); strings.Join(got, "|") != strings.Join(want, "|") {
				t.Errorf("Link = %q, want %q", got, want)
			}
			if !strings.Contains(rec.Body.String(), tc.hubInDoc) {
				t.Errorf("document lacks %s:\n%s", tc.hubInDoc, rec.Body)
			}
			if !strings.Contains(tc.target, "json") {
				parseFeed(t, rec.Body.Bytes())
			}
			// A 304 carries them too.
			rec2 := fdDo(s, http.MethodGet, tc.target, "If-None-Match", rec.Header().Get("ETag"))
			if rec2.Code != http.StatusNotModified || len(rec2.Header().Values("Link")) != 2 {
				t.Errorf("304: status %d, Link %q", rec2.Code, rec2.Header().Values("Link"))
			}
		})
	}
	t.Run("no hub, no links", func(t *testing.T) {
		rec := fdDo(newFDServer(t, fdFixture()), http.MethodGet, "/resources/news")
		if l := rec.Header().Values("Link"); len(l) != 0 || strings.Contains(rec.Body.String(), `rel="hub"`) {
			t.Errorf("Link %q without a hub", l)
		}
	})
}

func TestTopicResource(t *testing.T) {
	s := newFDServer(t, fdFixture(), withHub)
	ctx := context.Background()
	tests := []struct {
		topic, want string
		ok          bool
	}{
		{fdBase + "/resources", "", true},
		{fdBase + "/resources?type=atom&max=3", "", true},
		{fdBase + "/resources/news", "news", true},
		{fdBase + "/resources/news?type=json&title=budget", "news", true},
		{fdBase + "/resources/news/versions/3?type=atom", "news", true},
		{"HTTPS://FEEDS.example.org/resources/forum", "forum", true},
		{fdBase + "/resources/nope", "nope", false},            // no such resource (deleted): 404, named
		{fdBase + "/resources/news/versions/9", "news", false}, // past the history
		{fdBase + "/resources/news?index=abc", "news", false},  // 400
		{fdBase + "/resources/news/items", "", false},
		{fdBase + "/resources/news/versions", "", false},        // no seq
		{fdBase + "/resources/news/versions/3/atom", "", false}, // past a feed's path
		{fdBase + "/resources/news/history/3", "", false},       // not /versions
		{fdBase + "/resources//versions/3", "", false},          // no id
		{fdBase + "/", "", false},
		{"https://elsewhere.example/resources/news", "", false},
		{"http://feeds.example.org/resources/news", "", false}, // not the public scheme
	}
	for _, tc := range tests {
		t.Run(tc.topic, func(t *testing.T) {
			got, err := s.TopicResource(ctx, tc.topic)
			if tc.ok && (err != nil || got != tc.want) {
				t.Errorf("= %q, %v; want %q", got, err, tc.want)
			}
			// A feed path that does not render still names its resource,
			// so that the hub can end subscriptions to a deleted one.
			if !tc.ok && (!errors.Is(err, websub.ErrUnknownTopic) || got != tc.want) {
				t.Errorf("= %q, %v; want %q and ErrUnknownTopic", got, err, tc.want)
			}
		})
	}
}

func TestRenderTopicIsWhatGETAnswers(t *testing.T) {
	s := newFDServer(t, fdFixture(), withHub)
	for _, target := range []string{"/resources/news?type=atom", "/resources/news", "/resources?type=json", "/resources/news?max=2&type=rss1"} {
		body, ctype, err := s.RenderTopic(context.Background(), fdBase+target)
		if err != nil {
			t.Fatalf("%s: %v", target, err)
		}
		rec := fdDo(s, http.MethodGet, target)
		if string(body) != rec.Body.String() || ctype != rec.Header().Get("Content-Type") {
			t.Errorf("%s: rendered %q (%s) differs from GET %q (%s)", target, body, ctype, rec.Body, rec.Header().Get("Content-Type"))
		}
	}
}

// signalStore is a websub.MemoryStore that tells each update.
type signalStore struct {
	websub.MemoryStore
	updated chan websub.Key
}

func (s *signalStore) Update(ctx context.Context, k websub.Key, fn func(*websub.Subscription) (*websub.Subscription, error)) error {
	err := s.MemoryStore.Update(ctx, k, fn)
	s.updated <- k
	return err
}

// TestWebSubEndToEnd: a real subscriber on loopback subscribes at POST
// /websub, is verified, and gets the feed pushed, signed, when its resource
// gets a new version.
func TestWebSubEndToEnd(t *testing.T) {
	store := fdFixture()
	s := newFDServer(t, store, withHub)

	t.Run("hub off", func(t *testing.T) {
		rec := svcDoForm(s, "hub.mode=subscribe")
		svcProblem(t, rec, http.StatusNotFound)
	})

	subs := &signalStore{updated: make(chan websub.Key, 100)}
	hub, err := websub.New(websub.Options{URL: fdHub, Topics: s, Store: subs, Client: &http.Client{}, Registerer: prometheus.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	s.SetHub(hub)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- hub.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })

	verifs := make(chan url.Values, 10)
	posts := make(chan *http.Request, 10)
	bodies := make(chan []byte, 10)
	cb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			verifs <- r.URL.Query()
			_, _ = io.WriteString(w, r.URL.Query().Get("hub.challenge"))
			return
		}
		b, _ := io.ReadAll(r.Body)
		posts <- r
		bodies <- b
	}))
	t.Cleanup(cb.Close)
	topic := fdBase + "/resources/news?type=atom"

	t.Run("refused at once", func(t *testing.T) {
		for _, tc := range []struct {
			name, body string
			status     int
		}{
			{"topic not a feed here", "hub.mode=subscribe&hub.callback=" + url.QueryEscape(cb.URL) + "&hub.topic=" + url.QueryEscape(fdBase+"/resources/nope"), http.StatusBadRequest},
			{"topic elsewhere", "hub.mode=subscribe&hub.callback=" + url.QueryEscape(cb.URL) + "&hub.topic=" + url.QueryEscape("https://other.example/feed"), http.StatusBadRequest},
			{"no callback", "hub.mode=subscribe&hub.topic=" + url.QueryEscape(topic), http.StatusBadRequest},
			{"long secret", "hub.mode=subscribe&hub.callback=" + url.QueryEscape(cb.URL) + "&hub.topic=" + url.QueryEscape(topic) + "&hub.secret=" + strings.Repeat("s", 200), http.StatusBadRequest},
		} {
			t.Run(tc.name, func(t *testing.T) {
				svcProblem(t, svcDoForm(s, tc.body), tc.status)
			})
		}
		rec := svcDo(s, http.MethodPost, "/websub", strings.NewReader(`{"hub.mode":"subscribe"}`), "Content-Type", "application/json")
		svcProblem(t, rec, http.StatusUnsupportedMediaType)
	})

	rec := svcDoForm(s, "hub.mode=subscribe&hub.callback="+url.QueryEscape(cb.URL)+"&hub.topic="+url.QueryEscape(topic)+"&hub.secret=xyz&hub.lease_seconds=86400")
	if rec.Code != http.StatusAccepted {
		t.Fatalf("POST /websub: %d %s", rec.Code, rec.Body)
	}
	select {
	case q := <-verifs:
		if q.Get("hub.topic") != topic || q.Get("hub.lease_seconds") != "86400" {
			t.Errorf("verification %v", q)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no verification")
	}
	select {
	case <-subs.updated:
	case <-time.After(10 * time.Second):
		t.Fatal("subscription not stored")
	}

	store.Save(&schema.Document{URL: "https://example.org/news/index.html", RSSID: "news", Timestamp: fdT0.Add(3 * time.Hour),
		Channel: schema.Channel{Title: "Town News", Link: "https://example.org/news/", Description: "News"},
		Items:   []schema.Item{fdItem(1, "d", "New item", "https://example.org/news/d", "Fresh")}})
	hub.Notify("news")
	var r *http.Request
	var body []byte
	select {
	case r = <-posts:
		body = <-bodies
	case <-time.After(10 * time.Second):
		t.Fatal("no delivery")
	}
	get := fdDo(s, http.MethodGet, "/resources/news?type=atom")
	if string(body) != get.Body.String() || !strings.Contains(string(body), "/resources/news/versions/4") {
		t.Errorf("delivered body differs from GET:\n%s\n---\n%s", body, get.Body)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/atom+xml; charset=utf-8" {
		t.Errorf("Content-Type %q", ct)
	}
	if l := r.Header.Get("Link"); !strings.Contains(l, "<"+fdHub+`>; rel="hub"`) || !strings.Contains(l, "<"+topic+`>; rel="self"`) {
		t.Errorf("Link %q", l)
	}
	m := hmac.New(sha256.New, []byte("xyz"))
	m.Write(body)
	if sig := r.Header.Get("X-Hub-Signature"); sig != "sha256="+hex.EncodeToString(m.Sum(nil)) {
		t.Errorf("X-Hub-Signature %q", sig)
	}
}

// TestWebSubRequestWhenStoreFails: a subscription request whose topic
// cannot be rendered because the store fails is our error (500), not the
// subscriber's (400 "not a feed"), and the hub does not treat the topic as
// gone.
func TestWebSubRequestWhenStoreFails(t *testing.T) {
	store := fdFixture()
	store.Err = errors.New("disk on fire")
	s := newFDServer(t, &failHistory{fdStore: store}, withHub)
	topic := fdBase + "/resources/news?type=atom"
	if _, _, err := s.RenderTopic(context.Background(), topic); err == nil || errors.Is(err, websub.ErrUnknownTopic) {
		t.Errorf("RenderTopic = %v; want an error that is not ErrUnknownTopic", err)
	}
	hub, err := websub.New(websub.Options{URL: fdHub, Topics: s, Store: &websub.MemoryStore{}, Client: &http.Client{}})
	if err != nil {
		t.Fatal(err)
	}
	s.SetHub(hub)
	rec := svcDoForm(s, "hub.mode=subscribe&hub.callback="+url.QueryEscape("https://reader.example/cb")+"&hub.topic="+url.QueryEscape(topic))
	svcProblem(t, rec, http.StatusInternalServerError)
}

func svcDoForm(s *Server, body string) *httptest.ResponseRecorder {
	return svcDo(s, http.MethodPost, "/websub", strings.NewReader(body), "Content-Type", "application/x-www-form-urlencoded")
}

// TestRenderTopicOnlyFeeds: a topic whose GET answers a page for people
// (/, /view/…) or a problem is no feed: ErrUnknownTopic, nothing a hub
// would deliver to subscribers as content.
func TestRenderTopicOnlyFeeds(t *testing.T) {
	s := newFDServer(t, fdFixture(), withHub)
	for _, target := range []string{"/", "/view/news", "/no/such/route"} {
		if body, _, err := s.RenderTopic(context.Background(), fdBase+target); !errors.Is(err, websub.ErrUnknownTopic) {
			t.Errorf("%s: %v (%d bytes), want ErrUnknownTopic", target, err, len(body))
		}
	}
}
