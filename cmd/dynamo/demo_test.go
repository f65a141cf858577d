package main

import (
	"bytes"
	"context"
	"encoding/json"
	"image/png"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/dynamo-rss/dynamo/internal/syncbuf"
	"github.com/dynamo-rss/dynamo/schema/schematest"
)

// TestDemo runs `dynamo demo` (the README's run command) with no
// configuration and no network, and checks that within a minute there are
// versions, feeds (the Latin-1 page decoded) and an adapted smart interval;
// then it looks at the home page through headless Chromium.
func TestDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the demo in real time")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr syncbuf.Buffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"demo", "--listen", "127.0.0.1:0", "--seed", "4"}, strings.NewReader(""), &stdout, &stderr)
	}()
	banner := regexp.MustCompile(`(?s)(http://127\.0\.0\.1:\d+)/ .*Admin token: (\S+)`)
	serveEventually(t, "the demo banner", 20*time.Second, func() bool {
		select {
		case err := <-done:
			t.Fatalf("demo exited early: %v\n%s", err, stderr.String())
		default:
		}
		return banner.MatchString(stdout.String())
	})
	m := banner.FindStringSubmatch(stdout.String())
	c := &e2eClient{t: t, base: m[1], token: m[2], c: &http.Client{Timeout: 10 * time.Second}}

	versions := func(id string) int {
		resp, _ := c.do(http.MethodGet, "/resources/"+id, false)
		if resp.StatusCode != http.StatusOK {
			return 0
		}
		return len(c.feed("/resources/" + id).Items)
	}
	serveEventually(t, "versions of both demo resources", 60*time.Second, func() bool {
		return versions("harbour-news") >= 2 && versions("cronaca") >= 2
	})
	cronaca := c.feed("/resources/cronaca?max=20")
	if !strings.Contains(cronaca.Title, "Città") {
		t.Errorf("Latin-1 title not decoded: %q", cronaca.Title)
	}
	var status struct {
		Interval    string  `json:"interval"`
		Tau         string  `json:"tau"`
		Polls       float64 `json:"polls"`
		LastOutcome string  `json:"last_outcome"`
	}
	serveEventually(t, "the smart interval to adapt", 60*time.Second, func() bool {
		resp, body := c.do(http.MethodGet, "/admin/resources/harbour-news", true)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("admin status: %d %s", resp.StatusCode, body)
		}
		if err := json.Unmarshal(body, &status); err != nil {
			t.Fatal(err)
		}
		return status.Interval != "8s" && status.Tau != "8s"
	})
	t.Logf("harbour-news after %v polls: interval %s, τ %s, last %s", status.Polls, status.Interval, status.Tau, status.LastOutcome)

	t.Run("chromium", func(t *testing.T) { chromiumHome(t, c, []string{"cronaca", "harbour-news"}) })

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("demo: %v\n%s", err, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("demo did not stop within 30s")
	}
}

// chromiumArgs are the flags that keep a headless Chromium off the network
// and away from the user's profile.
func chromiumArgs(profile string) []string {
	return []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", "--user-data-dir=" + profile}
}

// chromiumHome loads / in headless Chromium at a phone's size: a screenshot
// (kept in $DYNAMO_SCREENSHOT when set) and the DOM after rendering, in which
// it finds every resource and follows each one's subscribe links.
func chromiumHome(t *testing.T, c *e2eClient, ids []string) {
	chromium := schematest.Tool(t, "chromium")
	dir := t.TempDir()
	browse := func(extra ...string) []byte {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		args := append(chromiumArgs(filepath.Join(dir, "profile")), extra...)
		cmd := exec.CommandContext(ctx, chromium, append(args, c.base+"/")...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("chromium %v: %v\n%s", extra, err, stderr.String())
		}
		return stdout.Bytes()
	}
	shot := filepath.Join(dir, "x.png")
	browse("--window-size=390,844", "--hide-scrollbars", "--screenshot="+shot)
	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	img, err := png.Decode(f)
	f.Close()
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if b := img.Bounds(); b.Dx() != 390 || b.Dy() != 844 {
		t.Errorf("screenshot is %v, want a 390×844 phone window", b)
	}
	if keep := os.Getenv("DYNAMO_SCREENSHOT"); keep != "" {
		data, err := os.ReadFile(shot)
		if err == nil {
			err = os.WriteFile(keep, data, 0o644)
		}
		if err != nil {
			t.Errorf("keep screenshot: %v", err)
		}
	}

	dom := browse("--window-size=390,844", "--dump-dom")
	doc, err := html.Parse(bytes.NewReader(dom))
	if err != nil {
		t.Fatalf("parse the DOM: %v", err)
	}
	found := map[string][]string{}
	for n := range doc.Descendants() {
		if n.Type != html.ElementNode || n.Data != "section" {
			continue
		}
		var id string
		for _, a := range n.Attr {
			if a.Key == "data-rssid" {
				id = a.Val
			}
		}
		if id == "" {
			continue
		}
		for d := range n.Descendants() {
			if d.Type != html.ElementNode || d.Data != "a" {
				continue
			}
			var href, class string
			for _, a := range d.Attr {
				switch a.Key {
				case "href":
					href = a.Val
				case "class":
					class = a.Val
				}
			}
			if class == "feed" {
				found[id] = append(found[id], href)
			}
		}
	}
	for _, id := range ids {
		links := found[id]
		if len(links) != 4 {
			t.Errorf("%s: %d subscribe links in the rendered page, want 4: %v", id, len(links), links)
			continue
		}
		for _, href := range links {
			path, ok := strings.CutPrefix(href, c.base)
			if !ok {
				t.Errorf("%s: link %q is not on the service", id, href)
				continue
			}
			f := c.feed(path)
			if len(f.Items) == 0 {
				t.Errorf("%s: feed %s has no items", id, href)
			}
		}
	}
}
