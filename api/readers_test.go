package api

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dynamo-rss/dynamo/schema/schematest"
)

// readerServer serves the fixture store on loopback, recording the Accept
// header of every request.
type readerServer struct {
	*httptest.Server
	mu      sync.Mutex
	accepts []string
}

func newReaderServer(t *testing.T) *readerServer {
	t.Helper()
	s := newFDServer(t, openFixtureDB(t), func(o *Options) { o.PublicURL = "" })
	rs := &readerServer{}
	rs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rs.mu.Lock()
		rs.accepts = append(rs.accepts, r.Header.Get("Accept"))
		rs.mu.Unlock()
		s.ServeHTTP(w, r)
	}))
	t.Cleanup(rs.Close)
	return rs
}

func (rs *readerServer) sent() []string {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return slices.Clone(rs.accepts)
}

// readerItems are the titles of the fixture's items in /resources/news?max=10.
var readerItems = []string{"Straße closed for works", "Weather: sun at last", "Budget vote tonight"}

// TestFeedReadersFeedparser fetches a feed URL with python3 feedparser over
// HTTP, as a reader does: it must get the feed (not the page for
// browsers) with its items.
func TestFeedReadersFeedparser(t *testing.T) {
	py := feedparserPython(t)
	rs := newReaderServer(t)
	const script = `
import sys, json, feedparser
d = feedparser.parse(sys.argv[1])
print(json.dumps({"status": d.get("status"), "type": d.headers.get("content-type"), "version": d.version, "bozo": bool(d.bozo), "titles": [e.title for e in d.entries]}))
`
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, py, "-c", script, rs.URL+"/resources/news?max=10").Output()
	if err != nil {
		t.Fatalf("feedparser: %v\n%s", err, out)
	}
	var got struct {
		Status  int      `json:"status"`
		Type    string   `json:"type"`
		Version string   `json:"version"`
		Bozo    bool     `json:"bozo"`
		Titles  []string `json:"titles"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("feedparser output %q: %v", out, err)
	}
	if got.Status != http.StatusOK || !strings.HasPrefix(got.Type, "application/rss+xml") || got.Bozo || !slices.Equal(got.Titles, readerItems) {
		t.Errorf("feedparser got %+v, want the RSS 2.0 feed with %q", got, readerItems)
	}
	t.Logf("feedparser sent Accept: %q", rs.sent())
}

// TestFeedReadersNewsboat reloads a feed URL with newsboat (its own config,
// URL list and cache in a temporary directory) and checks it stored the
// feed's items.
func TestFeedReadersNewsboat(t *testing.T) {
	newsboat := schematest.Tool(t, "newsboat")
	rs := newReaderServer(t)
	dir := t.TempDir()
	urls := filepath.Join(dir, "urls")
	config := filepath.Join(dir, "config")
	cache := filepath.Join(dir, "cache.db")
	if err := os.WriteFile(urls, []byte(rs.URL+"/resources/news?max=10\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(config, []byte("download-timeout 20\nreload-threads 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, newsboat, "-u", urls, "-C", config, "-c", cache, "-x", "reload", "print-unread")
	cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_CONFIG_HOME="+dir, "XDG_DATA_HOME="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("newsboat: %v\n%s", err, out)
	}
	if want := "3 unread articles"; !strings.Contains(string(out), want) {
		t.Errorf("newsboat printed %q, want %q", out, want)
	}
	sent := rs.sent()
	if len(sent) == 0 {
		t.Fatal("newsboat made no request")
	}
	for _, a := range sent {
		if prefersHTML(a) {
			t.Errorf("newsboat sent Accept %q, which would get the page", a)
		}
	}
	t.Logf("newsboat sent Accept: %q", sent)
}
