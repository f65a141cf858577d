package poller

import (
	"context"
	"fmt"
	"net/url"

	"github.com/dynamo-rss/dynamo/config"
)

// Fetch fetches rawURL once, outside any engine, through the retriever
// polls use, with the poller settings p: the SSRF guard (private addresses
// refused unless p.AllowPrivate; the error wraps [ErrForbiddenAddress]),
// the timeouts, max_body ([ErrTooLarge]), max_redirects, the user agent,
// and robots.txt when p.Robots ([ErrRobotsDenied]). The command line reads
// a page given as a URL so (`dynamo extract https://…`). opts.Transport
// and opts.Resolver are used as an engine uses them, opts.Clock (nil: the
// real clock) dates the fetch; the rest is ignored.
func Fetch(ctx context.Context, p config.PollerConfig, rawURL string, opts Options) (Page, error) {
	u, err := url.Parse(rawURL)
	if err != nil || !u.IsAbs() || (u.Scheme != "http" && u.Scheme != "https") {
		return Page{}, fmt.Errorf("fetch %q: not an http or https URL", rawURL)
	}
	r := newRetriever(fetchSettingsOf(p), opts)
	defer r.close()
	clk := opts.Clock
	if clk == nil {
		clk = realClock{}
	}
	now := clk.Now()
	if p.Robots {
		var robots robotsCache
		g, err := robots.fetch(ctx, r, u, now)
		if err != nil {
			return Page{}, fmt.Errorf("robots.txt of %s: %w", u.Host, classify(err))
		}
		if !g.Test(robotsPath(u)) {
			return Page{}, fmt.Errorf("fetch %s: %w", rawURL, ErrRobotsDenied)
		}
	}
	fr, err := r.fetch(ctx, rawURL, validators{}, now)
	if err != nil {
		return Page{}, classify(err)
	}
	final := fr.URL
	if final == "" {
		final = rawURL
	}
	// fr's buffer is not recycled: the page's body outlives the retriever.
	return Page{Body: fr.Body, ContentType: fr.ContentType, URL: final}, nil
}
