package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dynamo-rss/dynamo/config"
)

// TestWebSubEndToEnd subscribes a real callback server to a running
// service's hub, changes the origin page and checks that the new feed is
// pushed, signed with the subscriber's secret.
func TestWebSubEndToEnd(t *testing.T) {
	origin, page := e2eOrigin(t)
	// The public URL must be known before start: a free port, chosen now.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	public := "http://" + addr

	type delivery struct {
		body []byte
		sig  string
		link []string
	}
	var mu sync.Mutex
	var verified bool
	deliveries := make(chan delivery, 16)
	sub := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet: // verification of intent: echo the challenge
			mu.Lock()
			verified = r.URL.Query().Get("hub.mode") == "subscribe"
			mu.Unlock()
			_, _ = io.WriteString(w, r.URL.Query().Get("hub.challenge"))
		case http.MethodPost:
			b, _ := io.ReadAll(r.Body)
			deliveries <- delivery{b, r.Header.Get("X-Hub-Signature"), r.Header.Values("Link")}
		}
	}))
	defer sub.Close()

	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "dynamo.yaml")
	cfg := fmt.Sprintf(`listen: %q
public_url: %q
storage: {path: %q}
poller:
  workers: 2
  timeout: 5s
  per_host_interval: 0s
  allow_private: true
resources:
  - id: news
    url: "%s/news.html"
    policy: {kind: flat, interval: 1s}
`, addr, public, filepath.Join(dir, "data"), origin.URL)
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	c, _, _ := runServe(t, cfgPath, "")
	serveEventually(t, "the first version", 20*time.Second, func() bool {
		resp, _ := c.do(http.MethodGet, "/resources/news", false)
		return resp.StatusCode == http.StatusOK && len(c.feed("/resources/news").Items) == 1
	})
	topic := public + "/resources/news?max=10&type=atom"
	resp, body := c.do(http.MethodGet, "/resources/news?max=10&type=atom", false)
	if links := strings.Join(resp.Header.Values("Link"), ", "); !strings.Contains(links, `<`+public+`/websub>; rel="hub"`) {
		t.Fatalf("feed Link headers %q lack the hub; body:\n%s", links, body)
	}

	form := url.Values{"hub.mode": {"subscribe"}, "hub.topic": {topic}, "hub.callback": {sub.URL + "/cb"}, "hub.secret": {"s3cret"}}
	r, err := http.PostForm(public+"/websub", form)
	if err != nil {
		t.Fatal(err)
	}
	_ = r.Body.Close()
	if r.StatusCode != http.StatusAccepted {
		t.Fatalf("subscribe: %d, want 202", r.StatusCode)
	}
	serveEventually(t, "the verified subscription", 10*time.Second, func() bool {
		mu.Lock()
		v := verified
		mu.Unlock()
		_, m := c.do(http.MethodGet, "/metrics", false)
		return v && strings.Contains(string(m), `dynamo_websub_verifications_total{mode="subscribe",outcome="verified"} 1`)
	})

	second := e2ePage("Bridge closed", "Budget approved")
	page.Store(&second)
	deadline := time.After(20 * time.Second)
	for {
		var d delivery
		select {
		case d = <-deliveries:
		case <-deadline:
			t.Fatal("no delivery of the new version within 20 s of the change")
		}
		if !strings.Contains(string(d.body), "Bridge closed") {
			continue // a delivery of the version before the change
		}
		mac := hmac.New(sha256.New, []byte("s3cret"))
		mac.Write(d.body)
		if want := "sha256=" + hex.EncodeToString(mac.Sum(nil)); d.sig != want {
			t.Errorf("X-Hub-Signature %q, want %q", d.sig, want)
		}
		if links := strings.Join(d.link, ", "); !strings.Contains(links, `rel="hub"`) || !strings.Contains(links, `rel="self"`) {
			t.Errorf("delivery Link headers %q", links)
		}
		return
	}
}

// TestHubKeepsFailingSubscribers: the hub cmd builds never ends a
// subscription because its deliveries keep failing; only its lease (or a
// 410 Gone) does. §7: the hub "MUST keep the subscription active until the
// end of the lease duration, and if a new update is published to the topic,
// MUST continue to retry delivery to the previously-failing subscriber". A
// reader whose server was down for a few days must not silently stop
// getting pushes while it believes it is subscribed.
func TestHubKeepsFailingSubscribers(t *testing.T) {
	cfg, err := config.Parse([]byte("public_url: \"https://feeds.example.org\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	opts := hubOptions(cfg, "https://feeds.example.org/websub", nil, nil, nil, slog.New(slog.DiscardHandler))
	if opts.DropAfter != 0 {
		t.Errorf("DropAfter = %d: failing subscribers are dropped before their lease ends", opts.DropAfter)
	}
}

// TestWebSubDeletionDeniesSubscribers: deleting a registered resource
// through the admin API tells the hub, which sends each subscriber of its
// feeds a denial (hub.mode=denied, hub.reason) instead of leaving the
// subscription to live out its lease without deliveries.
func TestWebSubDeletionDeniesSubscribers(t *testing.T) {
	origin, _ := e2eOrigin(t)
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte("del-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(dir, "dynamo.yaml")
	if err := os.WriteFile(cfgPath, fmt.Appendf(nil, e2eConfig, filepath.Join(dir, "data"), tokenFile, origin.URL, ""), 0o600); err != nil {
		t.Fatal(err)
	}
	c, _, _ := runServe(t, cfgPath, "del-token")
	admin := func(method, body string) int {
		req, _ := http.NewRequest(method, c.base+"/admin/resources/forum", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer del-token")
		req.Header.Set("Content-Type", "application/json")
		resp, err := c.c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	if code := admin(http.MethodPut, fmt.Sprintf(`{"url": "%s/forum.html", "policy": {"kind": "flat", "interval": "1h"}}`, origin.URL)); code != http.StatusCreated {
		t.Fatalf("PUT forum: %d", code)
	}
	serveEventually(t, "the registered page's first version", 20*time.Second, func() bool {
		resp, _ := c.do(http.MethodGet, "/resources/forum", false)
		return resp.StatusCode == http.StatusOK
	})

	gets := make(chan url.Values, 10)
	sub := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			gets <- r.URL.Query()
			_, _ = io.WriteString(w, r.URL.Query().Get("hub.challenge"))
		}
	}))
	defer sub.Close()
	next := func(what string) url.Values {
		t.Helper()
		select {
		case q := <-gets:
			return q
		case <-time.After(10 * time.Second):
			t.Fatalf("no %s within 10 s", what)
		}
		return nil
	}
	topic := "https://feeds.example.org/resources/forum?type=atom"
	r, err := http.PostForm(c.base+"/websub", url.Values{"hub.mode": {"subscribe"}, "hub.topic": {topic}, "hub.callback": {sub.URL + "/cb"}})
	if err != nil {
		t.Fatal(err)
	}
	_ = r.Body.Close()
	if r.StatusCode != http.StatusAccepted {
		t.Fatalf("subscribe: %d, want 202", r.StatusCode)
	}
	if q := next("verification"); q.Get("hub.mode") != "subscribe" {
		t.Fatalf("verification %v", q)
	}
	serveEventually(t, "the verified subscription", 10*time.Second, func() bool {
		_, m := c.do(http.MethodGet, "/metrics", false)
		return strings.Contains(string(m), `dynamo_websub_verifications_total{mode="subscribe",outcome="verified"} 1`)
	})

	if code := admin(http.MethodDelete, ""); code != http.StatusNoContent {
		t.Fatalf("DELETE forum: %d", code)
	}
	q := next("denial")
	if q.Get("hub.mode") != "denied" || q.Get("hub.topic") != topic || !strings.Contains(q.Get("hub.reason"), "deleted") {
		t.Errorf("denial %v", q)
	}
	serveEventually(t, "the denial counted", 10*time.Second, func() bool {
		_, m := c.do(http.MethodGet, "/metrics", false)
		return strings.Contains(string(m), "dynamo_websub_subscriptions_denied_total 1")
	})
}
