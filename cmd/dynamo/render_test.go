package main

import (
	"path/filepath"
	"testing"

	"github.com/dynamo-rss/dynamo/config"
)

// TestBrowserAvailable: /new offers to render when poller.browser.url is
// set, not when poller.browser.exec names no browser.
func TestBrowserAvailable(t *testing.T) {
	var cfg config.Config
	cfg.Poller.Browser.URL = "ws://127.0.0.1:9222/devtools/browser/x"
	if !browserAvailable(&cfg) {
		t.Error("poller.browser.url set: no browser available")
	}
	cfg.Poller.Browser.URL = ""
	cfg.Poller.Browser.Exec = filepath.Join(t.TempDir(), "no-chromium")
	if browserAvailable(&cfg) {
		t.Error("poller.browser.exec names nothing: a browser available")
	}
}
