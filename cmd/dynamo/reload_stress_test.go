package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mmcdole/gofeed"
	"go.uber.org/goleak"

	"github.com/dynamo-rss/dynamo/storage/badger"
)

// TestServeReloadStress drives a real service on Badger the way operators
// do, all at once: the file rewritten and reloaded by POST /admin/reload
// (policies switched, a resource added and removed, an invalid file in
// between), resources PUT and DELETEd through the admin API, feeds read,
// while the pages change and are polled every second. Then it stops
// (SIGTERM's path: the context ends) with polls in flight; the store
// opens again, checks clean and numbers every resource's versions 1, 2, 3…
func TestServeReloadStress(t *testing.T) {
	leaks := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, leaks) })
	var hits atomic.Int64
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		n := hits.Add(1)
		time.Sleep(time.Duration(n%3) * time.Millisecond) // polls overlap reloads and DELETEs
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, e2ePage(r.URL.Path+" at "+strconv.FormatInt(n/2, 10))) // changes every other request
	}))
	t.Cleanup(origin.Close)
	dir := t.TempDir()
	data, tokenFile, cfgPath := filepath.Join(dir, "data"), filepath.Join(dir, "token"), filepath.Join(dir, "dynamo.yaml")
	if err := os.WriteFile(tokenFile, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	policies := []string{"{kind: flat, interval: 1s}", "{kind: smart, initial: 1s, min: 1s, max: 3s}", "{kind: budget}"}
	write := func(i int, valid bool) {
		t.Helper()
		var b strings.Builder
		fmt.Fprintf(&b, "  - {id: f1, url: %q, policy: %s}\n", origin.URL+"/f1", policies[i%3])
		if i%2 == 0 {
			fmt.Fprintf(&b, "  - {id: f2, url: %q, policy: %s}\n", origin.URL+"/f2", policies[(i+1)%3])
		}
		if !valid {
			b.WriteString("  - {id: bad, url: \"not a url\", policy: {kind: sometimes}}\n")
		}
		y := fmt.Sprintf(e2eConfig, data, tokenFile, origin.URL, "")
		y = y[:strings.Index(y, "resources:\n")] + "  budget: {polls_per_day: 100000, max_interval: 10m}\nresources:\n" + b.String()
		if err := os.WriteFile(cfgPath, []byte(y), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(0, true)
	c, stop, _ := runServe(t, cfgPath, "s3cret")
	send := func(method, path, body string) (int, string) {
		req, err := http.NewRequest(method, c.base+path, strings.NewReader(body))
		if err != nil {
			t.Error(err)
			return 0, ""
		}
		req.Header.Set("Authorization", "Bearer s3cret")
		req.Header.Set("Content-Type", "application/json")
		resp, err := c.c.Do(req)
		if err != nil {
			t.Errorf("%s %s: %v", method, path, err)
			return 0, ""
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}

	var wg sync.WaitGroup
	var fileMu sync.Mutex // the file as last reloaded
	wg.Go(func() {
		for i := 1; i <= 12; i++ {
			fileMu.Lock()
			valid := i%4 != 3
			write(i, valid)
			code, body := send(http.MethodPost, "/admin/reload", "")
			switch {
			case valid && code != http.StatusOK:
				t.Errorf("reload %d: %d %s", i, code, body)
			case !valid && code < 400:
				t.Errorf("reload %d of an invalid file: %d %s", i, code, body)
			case !valid:
				// The previous configuration stays in force.
				want := []string{"flat", "smart", "budget"}[(i-1)%3]
				if code, body := send(http.MethodGet, "/admin/resources/f1", ""); code != http.StatusOK || !strings.Contains(body, `"policy":"`+want+`"`) {
					t.Errorf("after the refused reload %d: f1 %d %s, want policy %s in force", i, code, body, want)
				}
				write(i-1, true) // put the file in force back, for the next reader
			}
			fileMu.Unlock()
			time.Sleep(100 * time.Millisecond)
		}
	})
	wg.Go(func() {
		for i := range 12 {
			id := "a" + strconv.Itoa(i%2)
			if i%3 == 2 {
				if code, body := send(http.MethodDelete, "/admin/resources/"+id, ""); code != http.StatusNoContent {
					t.Errorf("DELETE %s: %d %s", id, code, body)
				}
				if code, _ := send(http.MethodGet, "/resources/"+id, ""); code != http.StatusGone {
					t.Errorf("feed of %s after DELETE: %d, want 410", id, code)
				}
				continue
			}
			code, body := send(http.MethodPut, "/admin/resources/"+id, fmt.Sprintf(`{"url": %q, "policy": {"kind": "flat", "interval": "1s"}}`, origin.URL+"/"+id))
			if code != http.StatusOK && code != http.StatusCreated {
				t.Errorf("PUT %s: %d %s", id, code, body)
			}
			time.Sleep(80 * time.Millisecond)
		}
	})
	wg.Go(func() {
		for range 30 {
			if code, body := send(http.MethodPost, "/admin/resources/f1/poll", ""); code != http.StatusOK {
				t.Errorf("poll f1: %d %s", code, body)
			}
			resp, body := c.do(http.MethodGet, "/resources/f1?type=atom", false)
			if resp.StatusCode == http.StatusOK {
				if _, err := gofeed.NewParser().Parse(bytes.NewReader(body)); err != nil {
					t.Errorf("feed of f1: %v", err)
				}
			}
			time.Sleep(40 * time.Millisecond)
		}
	})
	wg.Wait()
	stop() // polls are due every second: some are in flight

	db, err := badger.Open(data, badger.Options{})
	if err != nil {
		t.Fatalf("the store does not open after the shutdown: %v", err)
	}
	defer db.Close()
	if err := db.Check(t.Context()); err != nil {
		t.Fatalf("store after the shutdown: %v", err)
	}
	infos, err := db.Resources(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, info := range infos {
		vs, err := db.Versions(t.Context(), info.ID, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range vs {
			if want := info.LatestSeq - uint64(i); v.Seq != want {
				t.Fatalf("%s: version %d has seq %d, want %d (numbers contiguous)", info.ID, i, v.Seq, want)
			}
		}
		t.Logf("%s: %d versions, latest seq %d", info.ID, len(vs), info.LatestSeq)
		if info.ID == "f1" && len(vs) < 5 {
			t.Errorf("f1: %d versions stored by 30 polls of a page that changes every other request", len(vs))
		}
	}
}
