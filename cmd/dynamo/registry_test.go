package main

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/dynamo-rss/dynamo/internal/formclient"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dynamo-rss/dynamo/internal/syncbuf"
)

// runServe starts `dynamo serve --config cfgPath [args…]` and returns a
// client, a stop function that cancels it and waits for it to exit (failing
// the test if it does not within 30 s or returns an error), and its log.
func runServe(t *testing.T, cfgPath, token string, args ...string) (*e2eClient, func(), *syncbuf.Buffer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var stdout syncbuf.Buffer
	stderr := new(syncbuf.Buffer)
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, append([]string{"serve", "--config", cfgPath}, args...), strings.NewReader(""), &stdout, stderr)
	}()
	listening := regexp.MustCompile(`listening on (http://127\.0\.0\.1:\d+)`)
	serveEventually(t, "the listening address", 20*time.Second, func() bool {
		select {
		case err := <-done:
			t.Fatalf("serve exited early: %v\n%s", err, stderr.String())
		default:
		}
		return listening.MatchString(stdout.String())
	})
	c := &e2eClient{t: t, base: listening.FindStringSubmatch(stdout.String())[1], token: token, c: &http.Client{Timeout: 10 * time.Second}}
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve: %v\n%s", err, stderr.String())
			}
		case <-time.After(30 * time.Second):
			t.Error("serve did not stop")
		}
	}
	t.Cleanup(stop)
	return c, stop, stderr
}

// TestRegistryEndToEnd registers, lists, replaces and deletes a resource
// through the admin API of a real service on Badger: a registered page is
// polled at once, survives a restart, keeps its place beside the file's
// resources on reload, and its feeds answer 410 after DELETE.
func TestRegistryEndToEnd(t *testing.T) {
	origin, _ := e2eOrigin(t)
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte("reg-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(dir, "dynamo.yaml")
	if err := os.WriteFile(cfgPath, fmt.Appendf(nil, e2eConfig, filepath.Join(dir, "data"), tokenFile, origin.URL, ""), 0o600); err != nil {
		t.Fatal(err)
	}
	c, stop, _ := runServe(t, cfgPath, "reg-token")

	put := func(id, body string) (int, string) {
		req, _ := http.NewRequest(http.MethodPut, c.base+"/admin/resources/"+id, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer reg-token")
		req.Header.Set("Content-Type", "application/json")
		resp, err := c.c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b strings.Builder
		_, _ = fmt.Fprint(&b, resp.Header.Get("Content-Type"))
		return resp.StatusCode, b.String()
	}
	body := fmt.Sprintf(`{"url": "%s/forum.html", "policy": {"kind": "flat", "interval": "1h"}}`, origin.URL)
	if code, _ := put("forum", body); code != http.StatusCreated {
		t.Fatalf("PUT forum: %d, want 201", code)
	}
	if code, _ := put("forum", body); code != http.StatusOK {
		t.Errorf("PUT forum again: %d, want 200", code)
	}
	if code, ct := put("news", body); code != http.StatusConflict || !strings.HasPrefix(ct, "application/problem+json") {
		t.Errorf("PUT of a file id: %d %s, want 409 problem", code, ct)
	}
	if code, _ := put("bad", `{"url": "ftp://example.org/"}`); code != http.StatusBadRequest {
		t.Errorf("PUT with a bad url: %d, want 400", code)
	}
	// Polled at once, though its interval is an hour.
	serveEventually(t, "the registered page's first version", 20*time.Second, func() bool {
		resp, _ := c.do(http.MethodGet, "/resources/forum", false)
		return resp.StatusCode == http.StatusOK && len(c.feed("/resources/forum").Items) == 1
	})
	listed := func(c *e2eClient) map[string]string {
		resp, b := c.do(http.MethodGet, "/admin/resources", true)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET /admin/resources: %d %s", resp.StatusCode, b)
		}
		var list struct {
			Resources []struct {
				ID     string `json:"id"`
				Source string `json:"source"`
			} `json:"resources"`
		}
		if err := json.Unmarshal(b, &list); err != nil {
			t.Fatalf("GET /admin/resources: %v\n%s", err, b)
		}
		out := map[string]string{}
		for _, d := range list.Resources {
			out[d.ID] = d.Source
		}
		return out
	}
	if got := listed(c); got["news"] != "file" || got["forum"] != "api" || len(got) != 2 {
		t.Errorf("listed %v, want news from the file and forum from the api", got)
	}

	// A restart keeps the registration and its history.
	stop()
	c, _, _ = runServe(t, cfgPath, "reg-token")
	if got := listed(c); got["forum"] != "api" {
		t.Errorf("after a restart: listed %v", got)
	}
	if f := c.feed("/resources/forum"); len(f.Items) != 1 {
		t.Errorf("after a restart: %d versions of forum", len(f.Items))
	}

	// DELETE: 204, then the feeds are gone; the file's ids cannot be deleted.
	if resp, b := c.do(http.MethodDelete, "/admin/resources/forum", true); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE forum: %d %s", resp.StatusCode, b)
	}
	for _, path := range []string{"/resources/forum", "/resources/forum?max=5", "/resources/forum?index=1", "/resources/forum/versions/1"} {
		if resp, b := c.do(http.MethodGet, path, false); resp.StatusCode != http.StatusGone {
			t.Errorf("GET %s after DELETE: %d %s, want 410", path, resp.StatusCode, b)
		}
	}
	for _, id := range []string{"forum", "never-registered"} {
		if resp, b := c.do(http.MethodDelete, "/admin/resources/"+id, true); resp.StatusCode != http.StatusNotFound {
			t.Errorf("DELETE of an unknown id %q: %d %s, want 404", id, resp.StatusCode, b)
		}
	}
	if resp, _ := c.do(http.MethodDelete, "/admin/resources/news", true); resp.StatusCode != http.StatusConflict {
		t.Errorf("DELETE of a file id: %d, want 409", resp.StatusCode)
	}
	if got := listed(c); len(got) != 1 || got["news"] != "file" {
		t.Errorf("after DELETE: listed %v", got)
	}
}

// TestDeleteStoredOnly deletes a resource removed from the file whose
// history is kept: DELETE works and it is gone from /resources, while a
// file-declared id is still refused.
func TestDeleteStoredOnly(t *testing.T) {
	origin, _ := e2eOrigin(t)
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte("reg-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(dir, "dynamo.yaml")
	old := fmt.Sprintf("  - id: old\n    url: \"%s/forum.html\"\n    policy: {kind: flat, interval: 1h}\n", origin.URL)
	write := func(extra string) {
		if err := os.WriteFile(cfgPath, fmt.Appendf(nil, e2eConfig, filepath.Join(dir, "data"), tokenFile, origin.URL, extra), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(old)
	c, _, _ := runServe(t, cfgPath, "reg-token")
	listed := func() bool {
		for _, it := range c.feed("/resources").Items {
			if strings.HasSuffix(it.Link, "/view/old") {
				return true
			}
		}
		return false
	}
	serveEventually(t, "old's first version", 20*time.Second, listed)
	write("") // removed from the file; its history stays
	if resp, b := c.do(http.MethodPost, "/admin/reload", true); resp.StatusCode/100 != 2 {
		t.Fatalf("reload: %d %s", resp.StatusCode, b)
	}
	if !listed() {
		t.Fatal("a resource removed from the file is no longer listed, though its history is kept")
	}
	if resp, b := c.do(http.MethodDelete, "/admin/resources/old", true); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE of a stored-only resource: %d %s, want 204", resp.StatusCode, b)
	}
	if listed() {
		t.Error("/resources still lists the deleted resource")
	}
	if resp, _ := c.do(http.MethodGet, "/resources/old", false); resp.StatusCode != http.StatusGone {
		t.Errorf("its feed after DELETE: %d, want 410", resp.StatusCode)
	}
	if resp, _ := c.do(http.MethodDelete, "/admin/resources/news", true); resp.StatusCode != http.StatusConflict {
		t.Errorf("DELETE of a file id: %d, want 409", resp.StatusCode)
	}
}

// serveLoggedIn starts dynamo serve on e2eConfig for the origin at
// originURL (extra appended to its resources), with the admin token in a
// token file, and logs a browser without JavaScript in at /login, landing
// on /new.
func serveLoggedIn(t *testing.T, originURL, token, extra string) (*e2eClient, *formclient.Client) {
	t.Helper()
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(dir, "dynamo.yaml")
	if err := os.WriteFile(cfgPath, fmt.Appendf(nil, e2eConfig, filepath.Join(dir, "data"), tokenFile, originURL, extra), 0o600); err != nil {
		t.Fatal(err)
	}
	c, _, _ := runServe(t, cfgPath, token)
	b := formclient.New(t, c.base)
	b.Get("/login")
	if code := b.Submit(b.Form("/login", "token"), "token", token); code != http.StatusOK || b.Last.Request.URL.Path != "/new" {
		t.Fatalf("login: %d at %s", code, b.Last.Request.URL)
	}
	return c, b
}
