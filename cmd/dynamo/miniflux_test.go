package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dynamo-rss/dynamo/storage/postgres/pgtest"
)

// minifluxEnv turns on TestMinifluxReadsArticles: it builds Miniflux (the
// module's tool miniflux.app/v2), which takes minutes, and needs PostgreSQL.
const minifluxEnv = "DYNAMO_TEST_MINIFLUX"

// TestMinifluxReadsArticles is a real reader against dynamo: Miniflux,
// backed by a throwaway PostgreSQL, imports dynamo's OPML, refreshes, and
// its entries must be the page's articles (titles and links of the items),
// not snapshots of the page's versions.
func TestMinifluxReadsArticles(t *testing.T) {
	if os.Getenv(minifluxEnv) != "1" {
		t.Skipf("set %s=1 to build and run Miniflux against dynamo", minifluxEnv)
	}
	dsn := pgtest.DSN(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "miniflux")
	build := exec.CommandContext(t.Context(), "go", "build", "-o", bin, "miniflux.app/v2")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build miniflux: %v\n%s", err, out)
	}

	origin, page := e2eOrigin(t)
	second := e2ePage("Tram line 4", "Budget approved")
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte("miniflux-test-token-0123\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(dir, "dynamo.yaml")
	// No public_url: the OPML's links are the address Miniflux reaches.
	cfg := fmt.Sprintf("listen: \"127.0.0.1:0\"\nstorage:\n  path: ./data\nadmin:\n  token_file: ./token\npoller:\n  per_host_interval: 0s\n  allow_private: true\nresources:\n  - id: news\n    url: \"%s/news.html\"\n    policy: {kind: flat, interval: 1s}\n", origin.URL)
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	c, _, _ := runServe(t, cfgPath, "miniflux-test-token-0123")
	serveEventually(t, "the first version", 20*time.Second, func() bool {
		return len(c.feed("/resources/news?max=50").Items) == 1
	})
	page.Store(&second)
	serveEventually(t, "the second version", 20*time.Second, func() bool {
		return len(c.feed("/resources/news").Items) == 2
	})

	// Miniflux on a free port, its database a fresh one of the test server.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close() // Miniflux listens on it next
	mf := exec.CommandContext(t.Context(), bin)
	mf.Env = append(os.Environ(),
		"DATABASE_URL="+dsn, "RUN_MIGRATIONS=1", "CREATE_ADMIN=1", "ADMIN_USERNAME=admin", "ADMIN_PASSWORD=test-password-123",
		"LISTEN_ADDR="+addr, "FETCHER_ALLOW_PRIVATE_NETWORKS=1", "POLLING_FREQUENCY=60", "BATCH_SIZE=10")
	var mfLog bytes.Buffer
	mf.Stdout, mf.Stderr = &mfLog, &mfLog
	if err := mf.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = mf.Process.Kill() // the test is over; its exit status says nothing
		_ = mf.Wait()
		if t.Failed() {
			t.Logf("miniflux log:\n%s", mfLog.String())
		}
	})
	api := func(method, path string, body []byte) (int, []byte) {
		req, err := http.NewRequestWithContext(t.Context(), method, "http://"+addr+path, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.SetBasicAuth("admin", "test-password-123")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, nil
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		_, _ = b.ReadFrom(resp.Body)
		return resp.StatusCode, b.Bytes()
	}
	serveEventually(t, "miniflux", 60*time.Second, func() bool {
		code, _ := api(http.MethodGet, "/v1/me", nil)
		return code == http.StatusOK
	})

	_, opml := c.do(http.MethodGet, "/resources.opml", false)
	if code, b := api(http.MethodPost, "/v1/import", opml); code != http.StatusCreated && code != http.StatusOK {
		t.Fatalf("import OPML: %d %s\n%s", code, b, opml)
	}
	if code, b := api(http.MethodPut, "/v1/feeds/refresh", nil); code/100 != 2 {
		t.Fatalf("refresh: %d %s", code, b)
	}
	var entries struct {
		Entries []struct {
			Title string `json:"title"`
			URL   string `json:"url"`
		} `json:"entries"`
	}
	serveEventually(t, "miniflux's entries", 60*time.Second, func() bool {
		code, b := api(http.MethodGet, "/v1/entries?order=published_at&direction=desc", nil)
		return code == http.StatusOK && json.Unmarshal(b, &entries) == nil && len(entries.Entries) >= 2
	})
	var titles, links []string
	for _, e := range entries.Entries {
		titles = append(titles, e.Title)
		links = append(links, strings.TrimPrefix(e.URL, origin.URL))
	}
	slices.Sort(titles)
	slices.Sort(links)
	if want := []string{"Budget approved", "Tram line 4"}; !slices.Equal(titles, want) {
		t.Errorf("miniflux's entries are %q, want the page's articles %q", titles, want)
	}
	if want := []string{"/a/1.html", "/a/2.html"}; !slices.Equal(links, want) {
		t.Errorf("miniflux's entries link to %q, want the articles %q", links, want)
	}
}
