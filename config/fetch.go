package config

import (
	"fmt"
	"net/url"

	"github.com/andybalholm/cascadia"
)

// How a resource's page is fetched (ResourceEntry.Fetch).
const (
	FetchHTTP    = "http"    // a plain GET (the default)
	FetchBrowser = "browser" // rendered with JavaScript in headless Chromium
)

// What a resource's items carry (ResourceEntry.Content).
const (
	ContentSummary = "summary" // what the page shows (the default)
	ContentFull    = "full"    // each new item's article, fetched once from its link
)

// Defaults of poller.browser and poller.full_per_poll.
const (
	DefaultBrowserTabs = 2
	DefaultFullPerPoll = 10
)

// BrowserConfig is poller.browser: the browser that renders resources with
// fetch: browser. Exec is a Chromium binary started headless on demand
// (empty: chromium or chrome found on PATH); URL, when set, is the
// DevTools endpoint of a running browser (ws://, wss://, http:// or
// https://) and nothing is started.
type BrowserConfig struct {
	Exec    string   `yaml:"exec"`
	URL     string   `yaml:"url"`
	MaxTabs int      `yaml:"max_tabs"` // renders at once
	Timeout Duration `yaml:"timeout"`  // one render
}

// UsesBrowser reports whether any resource of c is rendered (fetch: browser).
func (c *Config) UsesBrowser() bool {
	for _, r := range c.Resources {
		if r.Fetch == FetchBrowser {
			return true
		}
	}
	return false
}

// validateFetch checks poller.browser and poller.full_per_poll.
func (p PollerConfig) validateFetch(bad func(path string, format string, args ...any)) {
	b := p.Browser
	if b.MaxTabs < 1 || b.MaxTabs > 64 {
		bad("$.poller.browser.max_tabs", "must be between 1 and 64, got %d", b.MaxTabs)
	}
	if b.Timeout <= 0 {
		bad("$.poller.browser.timeout", "must be positive (default 30s)")
	}
	if b.URL != "" {
		u, err := url.Parse(b.URL)
		if err != nil || u.Host == "" || (u.Scheme != "ws" && u.Scheme != "wss" && u.Scheme != "http" && u.Scheme != "https") {
			bad("$.poller.browser.url", "%q is not a DevTools endpoint (want ws://host:port/… or http://host:port)", b.URL)
		}
		if b.Exec != "" {
			bad("$.poller.browser.exec", "set beside poller.browser.url: use one (url attaches to a running browser; exec starts one)")
		}
	}
	if p.FullPerPoll < 1 || p.FullPerPoll > 1000 {
		bad("$.poller.full_per_poll", "must be between 1 and 1000, got %d", p.FullPerPoll)
	}
}

// fetchErrors checks a resource's fetch, wait_for and content.
func fetchErrors(at string, r ResourceEntry) []error {
	var errs []error
	bad := func(path string, format string, args ...any) {
		errs = append(errs, &FieldError{Path: at + path, Err: fmt.Errorf(format, args...)})
	}
	switch r.Fetch {
	case "", FetchHTTP, FetchBrowser:
	default:
		bad(".fetch", "unknown value %q (want http or browser)", r.Fetch)
	}
	if r.WaitFor != "" {
		if r.Fetch != FetchBrowser {
			bad(".wait_for", "only means something with fetch: browser (a plain GET runs no script to wait for)")
		} else if _, err := cascadia.ParseGroup(r.WaitFor); err != nil {
			bad(".wait_for", "%q is not a CSS selector: %v", r.WaitFor, err)
		}
	}
	switch r.Content {
	case "", ContentSummary, ContentFull:
	default:
		bad(".content", "unknown value %q (want summary or full)", r.Content)
	}
	return errs
}
