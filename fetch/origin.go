package fetch

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/dynamo-rss/dynamo/config"
)

// shown is a URL as fetch's errors and logs name it: credentials in it
// (https://user:pass@host/) become ***@host.
func shown(raw string) string { return config.RedactURL(raw) }

// sameOrigin reports whether u is of page's origin (RFC 6454): the same
// scheme, the same host (case-insensitive) and the same port, a missing
// port being the scheme's default (https://h and https://h:443 are one
// origin). It is the one rule for where a resource's headers go: the page
// GET (and every hop of its redirects), a render's requests, articles.
func sameOrigin(u, page *url.URL) bool {
	return u != nil && page != nil &&
		strings.EqualFold(u.Scheme, page.Scheme) &&
		strings.EqualFold(u.Hostname(), page.Hostname()) &&
		effectivePort(u) == effectivePort(page)
}

// effectivePort is u's port, or its scheme's default.
func effectivePort(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "ws":
		return "80"
	case "https", "wss":
		return "443"
	}
	return ""
}

// chainStaysHome reports whether every hop of a redirect chain, via (the
// first request first) and then req, is of page's origin: once a redirect
// left it, the resource's headers are not sent again, not even back at
// the page's origin (another origin chose that request).
func chainStaysHome(page *url.URL, req *http.Request, via []*http.Request) bool {
	for _, r := range via {
		if !sameOrigin(r.URL, page) {
			return false
		}
	}
	return sameOrigin(req.URL, page)
}
