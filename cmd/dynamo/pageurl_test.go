package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dynamo-rss/dynamo/schema"
)

// urlPage is served on loopback to the commands that take a page.
const urlPage = `<html><head><title>Ticker</title></head><body>
<ul>
<li><a href="/a">Budget approved</a> <span class="d">03.11.26 18:00</span></li>
<li><a href="/b">Tram line 4</a> <span class="d">vor 2 Stunden</span></li>
<li><a href="/c">Library</a> <span class="d">sometime</span></li>
</ul>
</body></html>`

func serveURLPage(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			_, _ = w.Write([]byte("User-agent: *\nDisallow: /private/\n")) // client gone: the test fails anyway
		case "/moved":
			http.Redirect(w, r, "/news/ticker.html", http.StatusFound)
		default:
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write([]byte(urlPage))
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestCommandsTakeURLs: extract, lint and suggest fetch a page given as a
// URL through the poller's retriever: a loopback address is refused with
// a message naming --allow-private, and fetched with it (or with a
// --config that allows it); robots.txt is honoured; links resolve against
// the page's URL after redirects.
func TestCommandsTakeURLs(t *testing.T) {
	srv := serveURLPage(t)
	block := filepath.Join(t.TempDir(), "select.yaml")
	if err := os.WriteFile(block, []byte("item: li\ntitle: a\ndate: span.d\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"extract", "lint", "suggest"} {
		t.Run(cmd+" refused", func(t *testing.T) {
			args := []string{cmd, srv.URL + "/news/ticker.html"}
			if cmd != "suggest" {
				args = []string{cmd, "--select", block, srv.URL + "/news/ticker.html"}
			}
			stdout, stderr, code := runExtractCmd(t, "", args...)
			if code == 0 || stdout != "" || !strings.Contains(stderr, "--allow-private") || !strings.Contains(stderr, srv.URL) {
				t.Fatalf("exit %d, stdout %q, stderr %q: want a failure that names the URL and --allow-private", code, stdout, stderr)
			}
		})
	}
	t.Run("extract", func(t *testing.T) {
		stdout, stderr, code := runExtractCmd(t, "", "extract", "--allow-private", "--select", block, "--timezone", "Europe/Berlin", srv.URL+"/moved")
		if code != 0 {
			t.Fatalf("exit %d, stderr %q", code, stderr)
		}
		doc, err := schema.Unmarshal([]byte(stdout))
		if err != nil {
			t.Fatalf("%v\n%s", err, stdout)
		}
		if len(doc.Items) != 3 || doc.Items[0].Link != srv.URL+"/a" || doc.Channel.Link != srv.URL+"/news/ticker.html" {
			t.Fatalf("document:\n%s", stdout)
		}
		if got, _ := doc.Items[1].Extensions.Lookup(schema.DCNamespace, "date"); !strings.HasSuffix(got, "+01:00") && !strings.HasSuffix(got, "+02:00") {
			t.Errorf("relative date stored as %q, want an RFC 3339 time in Europe/Berlin", got)
		}
		if !strings.Contains(stderr, srv.URL+"/moved:5:30: warning: unreadable date \"sometime\"") {
			t.Errorf("stderr %q, want the unreadable date at its place in the page", stderr)
		}
	})
	t.Run("lint --dates", func(t *testing.T) {
		stdout, stderr, code := runExtractCmd(t, "", "lint", "--allow-private", "--select", block, "--dates", "--timezone", "Europe/Rome", srv.URL+"/news/ticker.html")
		if code != 0 {
			t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
		}
		lines := strings.Split(strings.TrimSpace(stdout), "\n")
		if len(lines) != 4 {
			t.Fatalf("lint --dates printed:\n%s\nwant 3 info lines and a warning", stdout)
		}
		want := srv.URL + `/news/ticker.html:3:38: info: date "03.11.26 18:00" reads as 2026-11-03T18:00:00+01:00 (day-first dotted, Europe/Rome)`
		if lines[0] != want {
			t.Errorf("first line\n%s\nwant\n%s", lines[0], want)
		}
		if !strings.Contains(lines[1], `:4:34: info: date "vor 2 Stunden" reads as `) || !strings.Contains(lines[1], "(relative to the poll time ") {
			t.Errorf("second line %s", lines[1])
		}
		if !strings.Contains(lines[2], `:5:30: warning: unreadable date`) || !strings.Contains(lines[3], `:5:30: info: date "sometime" reads as no date`) {
			t.Errorf("last lines\n%s\n%s", lines[2], lines[3])
		}
	})
	t.Run("suggest", func(t *testing.T) {
		stdout, stderr, code := runExtractCmd(t, "", "suggest", "--allow-private", srv.URL+"/news/ticker.html")
		if code != 0 || !strings.Contains(stdout, "item:") || !strings.Contains(stdout, "Budget approved") {
			t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
		}
	})
	t.Run("config", func(t *testing.T) {
		cfg := filepath.Join(t.TempDir(), "dynamo.yaml")
		if err := os.WriteFile(cfg, []byte("poller:\n  allow_private: true\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		_, stderr, code := runExtractCmd(t, "", "lint", "--config", cfg, "--select", block, srv.URL+"/news/ticker.html")
		if code != 0 {
			t.Fatalf("exit %d, stderr %q", code, stderr)
		}
		// robots.txt disallows /private/.
		_, stderr, code = runExtractCmd(t, "", "lint", "--config", cfg, "--select", block, srv.URL+"/private/page.html")
		if code == 0 || !strings.Contains(stderr, "robots.txt") {
			t.Fatalf("exit %d, stderr %q: want the robots.txt refusal", code, stderr)
		}
		if err := os.WriteFile(cfg, []byte("poller:\n  allow_private: true\n  max_body: 100\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		_, stderr, code = runExtractCmd(t, "", "lint", "--config", cfg, "--select", block, srv.URL+"/news/ticker.html")
		if code == 0 || !strings.Contains(stderr, "max_body") {
			t.Fatalf("exit %d, stderr %q: want the size limit", code, stderr)
		}
	})
}
