package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestCheckCommand(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.yaml", "resources:\n  - {id: news, url: \"https://example.org/news.html\", timezone: Europe/Rome}\n")
	stdout, stderr, code := runExtractCmd(t, "", "check", "--config", good)
	if code != 0 || !strings.Contains(stdout, "ok (1 resources") {
		t.Fatalf("good config: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	bad := write("bad.yaml", "log: {format: xml}\npoller:\n  workers: 0\nresources:\n  - {id: news, url: /news}\n  - {id: news, url: \"http://x/\", date_format: yyyy}\n")
	_, stderr, code = runExtractCmd(t, "", "check", "--config", bad)
	if code != 1 {
		t.Fatalf("bad config: exit %d, want 1; stderr %q", code, stderr)
	}
	for _, want := range []string{bad + ":1:15: log.format", bad + ":3:12: poller.workers", bad + ":5:21: resources[0].url", "resources[1].id: duplicate", "resources[1].date_format", "5 problem(s)"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if _, _, code := runExtractCmd(t, "", "check", "--config", filepath.Join(dir, "missing.yaml")); code != 1 {
		t.Errorf("missing file: exit %d, want 1", code)
	}
	if stdout, _, code := runExtractCmd(t, "", "check"); code != 0 || !strings.Contains(stdout, "built-in") {
		t.Errorf("built-in config: exit %d, %q", code, stdout)
	}
}

// TestCheckWarnsAsServe checks that check prints the warnings serve logs
// of a valid configuration, and takes relative paths from the file's
// directory wherever it runs.
func TestCheckWarnsAsServe(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "admin.token"), []byte("abc\n"), 0o644); err != nil { //nolint:gosec // the world-readable file is the point
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(dir, "admin.token"), 0o644); err != nil { // past the umask
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "dynamo.yaml")
	if err := os.WriteFile(cfg, []byte("storage:\n  path: ./data\nadmin:\n  token_file: ./admin.token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	stdout, stderr, code := runExtractCmd(t, "", "check", "--config", cfg)
	if code != 0 || !strings.Contains(stdout, "ok") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	for _, want := range []string{"warning: a secret file is world-readable", "field=admin.token_file", "warning: the admin token is short enough to guess"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if strings.Contains(stderr+stdout, "abc") {
		t.Errorf("the token is shown:\n%s%s", stdout, stderr)
	}
}

func TestVersionCommand(t *testing.T) {
	stdout, stderr, code := runExtractCmd(t, "", "version")
	if code != 0 || !strings.HasPrefix(stdout, "dynamo ") || !strings.Contains(stdout, "commit ") || !strings.Contains(stdout, runtime.Version()) {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

func TestServeHelpNamesTheConfiguration(t *testing.T) {
	stdout, _, code := runExtractCmd(t, "", "serve", "--help")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"--config", "docs/configuration.md", "min_free", "resources:", "dynamo check"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("serve --help lacks %q:\n%s", want, stdout)
		}
	}
}

func TestCheckWarnsOfAMissingBrowser(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "no-chromium")
	p := filepath.Join(dir, "js.yaml")
	body := "poller:\n  browser: {exec: " + missing + "}\nresources:\n  - {id: js, url: \"https://example.org/\", fetch: browser}\n  - {id: plain, url: \"https://example.org/p\"}\n"
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := runExtractCmd(t, "", "check", "--config", p)
	if code != 0 || !strings.Contains(stdout, "ok (2 resources") {
		t.Fatalf("exit %d, stdout %q, stderr %q: a missing browser is a warning, not an error", code, stdout, stderr)
	}
	for _, want := range []string{"warning: poller.browser", "(js)", missing, "poller.browser.url"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	// Without a fetch: browser resource, nothing to say.
	if err := os.WriteFile(p, []byte("poller:\n  browser: {exec: "+missing+"}\nresources:\n  - {id: plain, url: \"https://example.org/p\"}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := runExtractCmd(t, "", "check", "--config", p); code != 0 || stderr != "" {
		t.Errorf("no browser resource: exit %d, stderr %q", code, stderr)
	}
}
