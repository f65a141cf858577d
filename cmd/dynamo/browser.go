package main

import (
	"fmt"
	"strings"

	"github.com/dynamo-rss/dynamo/config"
	"github.com/dynamo-rss/dynamo/fetch"
)

// browserAvailable reports whether a browser can render pages: a running
// one at poller.browser.url, or one found (poller.browser.exec, or PATH).
// /new offers "Render with JavaScript" then.
func browserAvailable(cfg *config.Config) bool {
	if cfg.Poller.Browser.URL != "" {
		return true
	}
	_, err := fetch.FindBrowser(cfg.Poller.Browser.Exec)
	return err == nil
}

// browserWarning says, when some resource has fetch: browser and no
// browser can be found (poller.browser.url unset, poller.browser.exec or
// PATH without one), which resources will fail and what to do; "" when
// there is nothing to say. check prints it and serve logs it.
func browserWarning(cfg *config.Config) string {
	if !cfg.UsesBrowser() || cfg.Poller.Browser.URL != "" {
		return ""
	}
	_, err := fetch.FindBrowser(cfg.Poller.Browser.Exec)
	if err == nil {
		return ""
	}
	var ids []string
	for _, r := range cfg.Resources {
		if r.Fetch == config.FetchBrowser {
			ids = append(ids, r.ID)
		}
	}
	if len(ids) > 5 {
		ids = append(ids[:5], fmt.Sprintf("and %d more", len(ids)-5))
	}
	return fmt.Sprintf("poller.browser: the resources with fetch: browser (%s) will fail until a browser is found: %v", strings.Join(ids, ", "), err)
}
