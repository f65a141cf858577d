package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	stdlog "log"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mmcdole/gofeed"
	"go.uber.org/goleak"

	"github.com/dynamo-rss/dynamo/config"
	"github.com/dynamo-rss/dynamo/storage/badger"
)

// e2ePage is an annotated page with the given item titles.
func e2ePage(titles ...string) string {
	var b strings.Builder
	b.WriteString("<html><body><h1><!-- <channel:title> -->E2E News<!-- </channel:title> --></h1>\n")
	for i, title := range titles {
		fmt.Fprintf(&b, "<p><!-- <item:link index=\"%d\"> --><a href=\"/a/%d.html\"><!-- <item:title index=\"%d\"> -->%s<!-- </item:title> --></a><!-- </item:link> -->\n"+
			"<!-- <item:description index=\"%d\"> -->About %s.<!-- </item:description> --></p>\n", i+1, len(titles)-i, i+1, title, i+1, title)
	}
	b.WriteString("</body></html>\n")
	return b.String()
}

// e2eOrigin is a legacy site whose page the test changes.
func e2eOrigin(t *testing.T) (*httptest.Server, *atomic.Pointer[string]) {
	t.Helper()
	var page atomic.Pointer[string]
	first := e2ePage("Budget approved")
	page.Store(&first)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			w.Header().Set("Content-Type", "text/plain")
			_, _ = io.WriteString(w, "User-agent: *\nAllow: /\n")
		case "/news.html", "/forum.html":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = io.WriteString(w, *page.Load())
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &page
}

const e2eConfig = `listen: "127.0.0.1:0"
public_url: "https://feeds.example.org"
storage:
  path: %q
admin:
  token_file: %q
poller:
  workers: 2
  timeout: 5s
  per_host_interval: 0s
  allow_private: true
  policy: {kind: smart, alpha: 0.5, initial: 2s, min: 1s, max: 1m}
resources:
  - id: news
    url: "%s/news.html"
    policy: {kind: flat, interval: 1s}
%s`

// e2eClient talks to the running service.
type e2eClient struct {
	t     *testing.T
	base  string
	token string
	c     *http.Client
}

func (c *e2eClient) do(method, path string, auth bool, header ...string) (*http.Response, []byte) {
	c.t.Helper()
	req, err := http.NewRequest(method, c.base+path, nil)
	if err != nil {
		c.t.Fatal(err)
	}
	if auth {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := c.c.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatalf("%s %s: read: %v", method, path, err)
	}
	return resp, body
}

// feed fetches and parses a feed, failing on anything but 200.
func (c *e2eClient) feed(path string) *gofeed.Feed {
	c.t.Helper()
	resp, body := c.do(http.MethodGet, path, false)
	if resp.StatusCode != http.StatusOK {
		c.t.Fatalf("GET %s: %d %s", path, resp.StatusCode, body)
	}
	f, err := gofeed.NewParser().Parse(bytes.NewReader(body))
	if err != nil {
		c.t.Fatalf("GET %s: not a feed: %v\n%s", path, err, body)
	}
	return f
}

// eventually polls cond until it holds or the deadline passes.
func serveEventually(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestServeEndToEnd runs `dynamo serve --config` with real storage and the
// real poller against a loopback origin, reads its feeds, uses the admin
// routes (poll, reload) and shuts it down.
func TestServeEndToEnd(t *testing.T) {
	leaks := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, leaks) }) // runs last: after the origin closes
	origin, page := e2eOrigin(t)
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte("e2e-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(dir, "dynamo.yaml")
	dataDir := filepath.Join(dir, "data")
	writeCfg := func(extra string) {
		t.Helper()
		if err := os.WriteFile(cfgPath, fmt.Appendf(nil, e2eConfig, dataDir, tokenFile, origin.URL, extra), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	writeCfg("")

	c, stop, stderr := runServe(t, cfgPath, "e2e-token", "--log-format", "json")

	// The memory settings are applied and logged at start-up.
	if !strings.Contains(stderr.String(), `"msg":"memory"`) || debug.SetMemoryLimit(-1) == math.MaxInt64 {
		t.Errorf("serve did not set the memory limit; log:\n%s", stderr.String())
	}
	for _, p := range []string{"/healthz", "/readyz"} {
		if resp, body := c.do(http.MethodGet, p, false); resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d %s", p, resp.StatusCode, body)
		}
	}

	// The scheduler polls the page: a first version appears.
	serveEventually(t, "the first version", 20*time.Second, func() bool {
		resp, _ := c.do(http.MethodGet, "/resources/news", false)
		return resp.StatusCode == http.StatusOK && len(c.feed("/resources/news").Items) == 1
	})
	// The page changes: a second version.
	second := e2ePage("Bridge closed", "Budget approved")
	page.Store(&second)
	serveEventually(t, "the second version", 20*time.Second, func() bool {
		return len(c.feed("/resources/news").Items) == 2
	})

	items := c.feed("/resources/news?max=20")
	if len(items.Items) != 2 || items.Items[0].Title != "Bridge closed" || items.Items[1].Title != "Budget approved" {
		t.Errorf("max=20 items: %+v", items.Items)
	}
	if !strings.HasPrefix(items.Items[0].Link, origin.URL+"/a/") {
		t.Errorf("item link %q", items.Items[0].Link)
	}
	atom := c.feed("/resources/news?type=atom&max=20")
	if atom.FeedType != "atom" || len(atom.Items) != 2 {
		t.Errorf("atom: type %q, %d items", atom.FeedType, len(atom.Items))
	}
	for _, typ := range []string{"rss1", "rss2", "json"} {
		if f := c.feed("/resources/news?max=20&type=" + typ); len(f.Items) != 2 {
			t.Errorf("%s: %d items", typ, len(f.Items))
		}
	}
	all := c.feed("/resources")
	if len(all.Items) != 1 || all.Items[0].Link != "https://feeds.example.org/view/news" {
		t.Errorf("/resources: %+v", all.Items)
	}
	// Caching: a matching If-None-Match is a 304.
	resp, _ := c.do(http.MethodGet, "/resources/news?max=20", false)
	if etag := resp.Header.Get("ETag"); etag == "" {
		t.Error("no ETag")
	} else if resp, body := c.do(http.MethodGet, "/resources/news?max=20", false, "If-None-Match", etag, "Accept-Encoding", "gzip"); resp.StatusCode != http.StatusNotModified ||
		resp.Header.Get("Content-Encoding") != "" || len(body) != 0 {
		t.Errorf("If-None-Match: %d, Content-Encoding %q, %d bytes; want a bare 304", resp.StatusCode, resp.Header.Get("Content-Encoding"), len(body))
	}
	// Compressed when accepted (the client asks explicitly, so it does not
	// decompress behind our back).
	if resp, body := c.do(http.MethodGet, "/resources/news?max=20", false, "Accept-Encoding", "gzip"); resp.Header.Get("Content-Encoding") != "gzip" || len(body) < 2 || body[0] != 0x1f || body[1] != 0x8b {
		t.Errorf("gzip: Content-Encoding %q", resp.Header.Get("Content-Encoding"))
	}

	// Admin: off without the token; state and poll-now with it.
	if resp, _ := c.do(http.MethodGet, "/admin/resources/news", false); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("admin without token: %d", resp.StatusCode)
	}
	resp, body := c.do(http.MethodGet, "/admin/resources/news", true)
	var status map[string]any
	if err := json.Unmarshal(body, &status); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("admin status: %d %v %s", resp.StatusCode, err, body)
	}
	if status["policy"] != "flat" || status["interval"] != "1s" || status["changes"].(float64) < 2 {
		t.Errorf("admin status: %s", body)
	}
	polls := status["polls"].(float64)
	resp, body = c.do(http.MethodPost, "/admin/resources/news/poll", true)
	if err := json.Unmarshal(body, &status); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("poll now: %d %v %s", resp.StatusCode, err, body)
	}
	if status["polls"].(float64) <= polls || status["last_outcome"] == "" {
		t.Errorf("poll now did not poll: before %v polls, after %s", polls, body)
	}

	// Reload through the API: a second resource appears; a broken file is
	// refused with the field's name and changes nothing.
	writeCfg(fmt.Sprintf("  - id: forum\n    url: %q\n", origin.URL+"/forum.html"))
	if resp, body := c.do(http.MethodPost, "/admin/reload", true); resp.StatusCode != http.StatusOK {
		t.Fatalf("reload: %d %s", resp.StatusCode, body)
	}
	if resp, body := c.do(http.MethodGet, "/admin/resources/forum", true); resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"policy":"smart"`) {
		t.Fatalf("forum after reload: %d %s", resp.StatusCode, body)
	}
	writeCfg("  - id: broken\n    url: \"not a url\"\n")
	resp, body = c.do(http.MethodPost, "/admin/reload", true)
	if resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(string(body), "resources[1].url") ||
		!strings.HasPrefix(resp.Header.Get("Content-Type"), "application/problem+json") {
		t.Errorf("bad reload: %d %s", resp.StatusCode, body)
	}
	if resp, _ := c.do(http.MethodGet, "/admin/resources/forum", true); resp.StatusCode != http.StatusOK {
		t.Error("a refused configuration changed the running one")
	}
	// A reload rotates the admin token.
	if err := os.WriteFile(tokenFile, []byte("rotated-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	writeCfg(fmt.Sprintf("  - id: forum\n    url: %q\n", origin.URL+"/forum.html"))
	if resp, body := c.do(http.MethodPost, "/admin/reload", true); resp.StatusCode != http.StatusOK {
		t.Fatalf("reload with a new token file: %d %s", resp.StatusCode, body)
	}
	if resp, _ := c.do(http.MethodGet, "/admin/resources/forum", true); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("old token after rotation: %d, want 401", resp.StatusCode)
	}
	c.token = "rotated-token"
	if resp, _ := c.do(http.MethodGet, "/admin/resources/forum", true); resp.StatusCode != http.StatusOK {
		t.Errorf("new token after rotation: %d, want 200", resp.StatusCode)
	}
	serveEventually(t, "the forum's first version", 20*time.Second, func() bool {
		resp, _ := c.do(http.MethodGet, "/resources/forum", false)
		return resp.StatusCode == http.StatusOK
	})

	// The home page lists both; /metrics has HTTP and poller series.
	_, home := c.do(http.MethodGet, "/", false)
	for _, want := range []string{`data-rssid="news"`, `data-rssid="forum"`, "https://feeds.example.org/resources/forum?type=atom"} {
		if !strings.Contains(string(home), want) {
			t.Errorf("home lacks %q", want)
		}
	}
	_, metrics := c.do(http.MethodGet, "/metrics", false)
	for _, want := range []string{`dynamo_http_requests_total{code="200",method="GET",route="/resources/:rssId"}`, "go_goroutines"} {
		if !strings.Contains(string(metrics), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	// Versions were stored: the store committed (and counted) writes.
	for _, name := range []string{"dynamo_storage_commits_total", "dynamo_storage_commit_writes_total"} {
		var n float64
		for _, line := range strings.Split(string(metrics), "\n") {
			if v, ok := strings.CutPrefix(line, name+" "); ok {
				n, _ = strconv.ParseFloat(v, 64)
			}
		}
		if n < 1 {
			t.Errorf("/metrics: %s is %v after versions were stored", name, n)
		}
	}

	// Shutdown: ctx ends, run returns nil within a bound, Badger is closed
	// (the directory opens again).
	stop()
	if _, err := http.Get(c.base + "/healthz"); err == nil {
		t.Error("still serving after shutdown")
	}
	logs := stderr.String()
	order := []string{`"msg":"http stopped"`, `"msg":"poller stopped"`, `"msg":"storage closed"`}
	last := -1
	for _, m := range order {
		i := strings.Index(logs, m)
		if i < last {
			t.Errorf("shutdown out of order: %s not after the previous step\n%s", m, logs)
		}
		last = i
	}
	db, err := badger.Open(dataDir, badger.Options{})
	if err != nil {
		t.Fatalf("reopen storage: %v", err)
	}
	info, err := db.Resource(context.Background(), "news")
	// The poller reached Badger's own capabilities through the wrappers:
	// each poll's history record is a key of its own.
	recs, rerr := db.PollRecords(context.Background(), "news")
	if cerr := db.Close(); cerr != nil {
		t.Error(cerr)
	}
	if err != nil || info.Versions != 2 {
		t.Errorf("stored news: %+v, %v", info, err)
	}
	if rerr != nil || len(recs) == 0 {
		t.Errorf("poll records of news: %d, %v; want the polls' records", len(recs), rerr)
	}
}

func TestServeFlags(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string // on stderr (via exitCode) or stdout
	}{
		{"help", []string{"serve", "--help"}, 0, "usage: dynamo serve"},
		{"unknown flag", []string{"serve", "--nope"}, 2, "flag provided but not defined"},
		{"extra argument", []string{"serve", "x"}, 2, "unexpected argument"},
		{"missing config", []string{"serve", "--config", "/nonexistent/dynamo.yaml"}, 1, "read config"},
		{"bad log level", []string{"serve", "--log-level", "loud"}, 2, "--log-level"},
		{"demo help", []string{"demo", "--help"}, 0, "usage: dynamo demo"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), tc.args, strings.NewReader(""), &stdout, &stderr)
			code := exitCode(err, &stderr)
			if code != tc.code || !strings.Contains(stdout.String()+stderr.String(), tc.want) {
				t.Errorf("exit %d (want %d); stdout %q; stderr %q; want %q", code, tc.code, stdout.String(), stderr.String(), tc.want)
			}
		})
	}
}

// What Go's packages log through the standard logger lands in the service's
// structured log while serve runs, and the standard logger is restored after.
func TestRouteStdLog(t *testing.T) {
	var buf bytes.Buffer
	restore := routeStdLog(slog.New(slog.NewJSONHandler(&buf, nil)))
	stdlog.Printf("Unsolicited response received on idle HTTP channel starting with %q", "x")
	restore()
	var rec map[string]any
	if err := json.Unmarshal(buf.Bytes(), &rec); err != nil {
		t.Fatalf("not one JSON record: %q (%v)", buf.String(), err)
	}
	if rec["level"] != "WARN" || !strings.Contains(fmt.Sprint(rec["msg"]), "Unsolicited response") {
		t.Errorf("record %v", rec)
	}
	if stdlog.Writer() == io.Writer(&buf) {
		t.Error("standard logger not restored")
	}
}

// TestRestartOnly checks which changes a reload names as needing a restart
// (docs/configuration.md, Reload): the settings read once at start-up.
func TestRestartOnly(t *testing.T) {
	tests := []struct {
		name   string
		change func(*config.Config)
		want   string
	}{
		{"resources apply live", func(c *config.Config) {
			c.Resources = append(c.Resources, config.ResourceEntry{ID: "a", URL: "https://example.org/"})
		}, ""},
		{"poller settings apply live", func(c *config.Config) { c.Poller.Timeout = config.Duration(time.Minute) }, ""},
		{"admin token applies live", func(c *config.Config) { c.Admin.Token = "new" }, ""},
		{"listen", func(c *config.Config) { c.Listen = ":9090" }, "listen"},
		{"poller.workers", func(c *config.Config) { c.Poller.Workers = 2 }, "poller.workers"},
		{"storage", func(c *config.Config) { c.Storage.MinFree = 0 }, "storage"},
		{"log", func(c *config.Config) { c.Log.Access = true }, "log"},
		{"registration", func(c *config.Config) { c.Registration = config.RegistrationOpen }, "registration"},
		{"trusted_proxies", func(c *config.Config) { c.TrustedProxies = []string{"10.0.0.0/8"} }, "trusted_proxies"},
		{"websub: the hub is built once", func(c *config.Config) { c.WebSub.LeaseDefault = config.Duration(48 * time.Hour) }, "websub"},
		{"websub turned on", func(c *config.Config) { on := true; c.WebSub.Enabled = &on }, "websub"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			last, next := config.Default(), config.Default()
			tt.change(&next)
			if got := strings.Join(restartOnly(&last, &next), ", "); got != tt.want {
				t.Errorf("restartOnly = %q, want %q", got, tt.want)
			}
		})
	}
}
