package config

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestFetchSettings(t *testing.T) {
	cfg, err := Parse([]byte(`poller:
  browser: {exec: /usr/bin/chromium}
resources:
  - id: js
    url: "https://example.org/js/"
    fetch: browser
    wait_for: "ul.news li"
    content: full
  - id: plain
    url: "https://example.org/plain/"
`))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	b := cfg.Poller.Browser
	if b.Exec != "/usr/bin/chromium" || b.MaxTabs != DefaultBrowserTabs || b.Timeout.D() != 30*time.Second {
		t.Errorf("poller.browser = %+v, want the exec given and the defaults max_tabs 2, timeout 30s", b)
	}
	if cfg.Poller.FullPerPoll != DefaultFullPerPoll {
		t.Errorf("full_per_poll = %d, want %d", cfg.Poller.FullPerPoll, DefaultFullPerPoll)
	}
	r := cfg.Resources[0]
	if r.Fetch != FetchBrowser || r.WaitFor != "ul.news li" || r.Content != ContentFull {
		t.Errorf("resource = %+v", r)
	}
	if !cfg.UsesBrowser() {
		t.Error("UsesBrowser = false with a fetch: browser resource")
	}
	cfg.Resources = cfg.Resources[1:]
	if cfg.UsesBrowser() {
		t.Error("UsesBrowser = true without a fetch: browser resource")
	}
}

func TestFetchSettingsInvalid(t *testing.T) {
	tests := []struct {
		name, yaml, path, msg string
	}{
		{"unknown fetch", "fetch: chrome", "$.resources[0].fetch", `unknown value "chrome" (want http or browser)`},
		{"wait_for without browser", `wait_for: "ul li"`, "$.resources[0].wait_for", "only means something with fetch: browser"},
		{"wait_for not CSS", "fetch: browser\n    wait_for: \"ul..li\"", "$.resources[0].wait_for", "is not a CSS selector"},
		{"unknown content", "content: article", "$.resources[0].content", `unknown value "article" (want summary or full)`},
		{"max_tabs", "", "$.poller.browser.max_tabs", "must be between 1 and 64"},
		{"timeout", "", "$.poller.browser.timeout", "must be positive"},
		{"url", "", "$.poller.browser.url", "is not a DevTools endpoint"},
		{"full_per_poll", "", "$.poller.full_per_poll", "must be between 1 and 1000"},
	}
	poller := map[string]string{
		"max_tabs":      "  browser: {max_tabs: 0}\n",
		"timeout":       "  browser: {timeout: 0s}\n",
		"url":           "  browser: {url: \"chromium:9222\"}\n",
		"full_per_poll": "  full_per_poll: 0\n",
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			doc := "poller:\n  workers: 1\n" + poller[tc.name] + "resources:\n  - id: a\n    url: \"https://example.org/\"\n"
			if tc.yaml != "" {
				doc += "    " + tc.yaml + "\n"
			}
			_, err := Parse([]byte(doc))
			if err == nil {
				t.Fatalf("Parse accepted:\n%s", doc)
			}
			if !strings.Contains(err.Error(), strings.TrimPrefix(tc.path, "$.")+": ") || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %q, want %s: …%s", err, tc.path, tc.msg)
			}
		})
	}
}

// TestWeightJSON: a weight is written and read as a JSON number; anything
// else is refused in words.
func TestWeightJSON(t *testing.T) {
	var w Weight
	if err := json.Unmarshal([]byte("2.5"), &w); err != nil || w.Value != 2.5 || !w.Set {
		t.Fatalf("2.5: %+v, %v", w, err)
	}
	if b, err := json.Marshal(w); err != nil || string(b) != "2.5" {
		t.Errorf("Marshal = %s, %v", b, err)
	}
	w = Weight{}
	if err := json.Unmarshal([]byte(`"heavy"`), &w); err == nil || !strings.Contains(err.Error(), "weight must be a positive number") || w.Set {
		t.Errorf(`"heavy": %+v, %v; want refused`, w, err)
	}
}
