package fetch_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dynamo-rss/dynamo/fetch"
)

// TestRenderRemoteBrowser attaches to a browser that runs already (as a
// pool would be), at its DevTools endpoint: the render still goes through
// the client, in its own incognito context.
func TestRenderRemoteBrowser(t *testing.T) {
	ws, cmd, cancel := startRemoteBrowser(t)

	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, scriptPage)
	})
	mux.HandleFunc("/items.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `[{"title":"Remote story","link":"/a/1"}]`)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	r, rec := newRenderer(t, fetch.BrowserOptions{URL: ws, Exec: "/nonexistent"}) // Exec unused with URL
	out, err := r.Render(t.Context(), fetch.RenderRequest{URL: srv.URL + "/", WaitFor: "ul#news li"})
	if err != nil {
		t.Fatalf("Render on the remote browser: %v", err)
	}
	if !strings.Contains(string(out.HTML), "Remote story") || !rec.saw("/items.json") {
		t.Errorf("remote render: JSON through the client %v, DOM:\n%s", rec.saw("/items.json"), out.HTML)
	}

	// The pool's browser goes away: the next render sees the connection
	// lost and attaches again, which fails here, saying where.
	lost := fetch.LostConnection(r)
	cancel()
	_ = cmd.Wait() // killed: its exit status says so
	select {       // chromedp notices the closed connection on its own goroutine
	case <-lost:
	case <-time.After(time.Minute):
		t.Fatal("the connection to the killed browser was never seen lost")
	}
	ctx2, cancel2 := context.WithTimeout(t.Context(), time.Minute)
	defer cancel2()
	_, err = r.Render(ctx2, fetch.RenderRequest{URL: srv.URL + "/", WaitFor: "ul#news li"})
	if err == nil || !strings.Contains(err.Error(), "attach to the browser at poller.browser.url") {
		t.Errorf("Render after the remote browser went away: %v, want an error naming poller.browser.url", err)
	}
}

// startRemoteBrowser starts a Chromium as a browser pool would run one,
// with none of the flags a Renderer gives the browsers it starts, and
// returns its DevTools endpoint, its process and what kills it.
func startRemoteBrowser(t *testing.T, flags ...string) (ws string, cmd *exec.Cmd, cancel context.CancelFunc) {
	t.Helper()
	path := chromium(t)
	var ctx context.Context
	ctx, cancel = context.WithCancel(t.Context())
	// Not t.TempDir: the browser's helpers may still write there for a
	// moment after it is killed, and its removal would fail the test.
	profile, err := os.MkdirTemp("", "dynamo-remote-browser")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(profile) }) // best effort, see above
	args := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--remote-debugging-port=0", "--remote-debugging-address=127.0.0.1", "--user-data-dir=" + profile}, flags...)
	cmd = exec.CommandContext(ctx, path, append(args, "about:blank")...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = cmd.Wait() }) // killed: its exit status says so
	found := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`ws://127\.0\.0\.1:\d+/devtools/browser/\S+`)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := re.FindString(sc.Text()); m != "" {
				found <- m
				break
			}
		}
		for sc.Scan() { // keep the pipe drained
		}
	}()
	select {
	case ws = <-found:
	case <-time.After(60 * time.Second):
		t.Fatal("the browser never said where its DevTools endpoint is")
	}
	return ws, cmd, cancel
}

// TestRenderRemoteBrowserUnreachable: a browser pool that does not answer
// at poller.browser.url is named as such, not taken for a local start.
func TestRenderRemoteBrowserUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	r, err := fetch.NewRenderer(fetch.BrowserOptions{URL: "ws://" + addr + "/devtools/browser/gone", Client: http.DefaultClient, Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	_, err = r.Render(ctx, fetch.RenderRequest{URL: "http://127.0.0.1:1/"})
	if err == nil || !strings.Contains(err.Error(), "attach to the browser at poller.browser.url") {
		t.Fatalf("Render with no browser at the URL: %v, want an error naming poller.browser.url", err)
	}
}
