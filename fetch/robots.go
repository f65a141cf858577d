package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/temoto/robotstxt"
)

// robotsTTL is how long a host's robots.txt is trusted before it is fetched again.
const robotsTTL = time.Hour

// maxRobotsBytes bounds a robots.txt (Google reads 500 KiB).
const maxRobotsBytes = 512 << 10

// ErrRobotsDenied is wrapped when robots.txt disallows a URL: nothing was
// fetched.
var ErrRobotsDenied = errors.New("fetch: disallowed by robots.txt")

// robotsRules are a host's robots.txt rules for our user agent.
type robotsRules struct {
	group *robotstxt.Group
	// denyAll: robots.txt answered 5xx, which disallows everything (RFC
	// 9309). The library's disallow-all data has no group (FindGroup
	// gives an empty one, which allows everything), so it is kept apart.
	denyAll bool
}

func (r robotsRules) allows(u *url.URL) bool { return !r.denyAll && r.group.Test(robotsPath(u)) }

type robotsEntry struct {
	rules   robotsRules
	expires time.Time
}

// robotsCache holds each host's robots.txt group for our user agent.
// Safe for concurrent use.
type robotsCache struct {
	mu    sync.Mutex
	hosts map[string]robotsEntry // key: scheme://host:port
}

func robotsKey(u *url.URL) string { return u.Scheme + "://" + u.Host }

// lookup returns the cached rules for u's host, or ok=false when they must be fetched.
func (c *robotsCache) lookup(u *url.URL, now time.Time) (robotsRules, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.hosts[robotsKey(u)]
	if !ok || !now.Before(e.expires) {
		return robotsRules{}, false
	}
	return e.rules, true
}

// fetch retrieves and caches u's host's robots.txt with cl. Per RFC 9309:
// 4xx means no rules, 5xx means everything disallowed
// (robotstxt.FromStatusAndBytes). Network errors are returned (and not
// cached) so the poll fails and backs off.
func (c *robotsCache) fetch(ctx context.Context, cl *client, u *url.URL, now time.Time) (robotsRules, error) {
	ru := &url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/robots.txt"}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, ru.String(), nil)
	if err != nil {
		return robotsRules{}, fmt.Errorf("robots.txt: %w", err)
	}
	req.Header.Set("User-Agent", cl.set.UserAgent)
	resp, err := cl.http.Do(req)
	if err != nil {
		return robotsRules{}, fmt.Errorf("robots.txt: %w", err)
	}
	defer resp.Body.Close() //nolint:errcheck // read-only body
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxRobotsBytes))
	if err != nil {
		return robotsRules{}, fmt.Errorf("robots.txt: read: %w", err)
	}
	data, err := robotstxt.FromStatusAndBytes(resp.StatusCode, body)
	if err != nil {
		return robotsRules{}, fmt.Errorf("robots.txt: parse: %w", err)
	}
	rules := robotsRules{group: data.FindGroup(cl.set.UserAgent), denyAll: resp.StatusCode >= 500}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.hosts == nil {
		c.hosts = make(map[string]robotsEntry)
	}
	c.hosts[robotsKey(u)] = robotsEntry{rules: rules, expires: now.Add(robotsTTL)}
	return rules, nil
}

// robotsPath is what a group is tested against: the path and query.
func robotsPath(u *url.URL) string {
	p := u.EscapedPath()
	if p == "" {
		p = "/"
	}
	if u.RawQuery != "" {
		p += "?" + u.RawQuery
	}
	return p
}

// hostGate enforces politeness: no two requests to one host closer than its
// interval (per_host_interval, raised by robots.txt Crawl-delay). Safe for
// concurrent use.
type hostGate struct {
	mu    sync.Mutex
	hosts map[string]*hostSlot
}

type hostSlot struct {
	next       time.Time     // earliest time of the next request
	last       time.Time     // time of the last booked request
	crawlDelay time.Duration // from robots.txt
}

func (g *hostGate) slotLocked(host string) *hostSlot {
	if g.hosts == nil {
		g.hosts = make(map[string]*hostSlot)
	}
	s := g.hosts[host]
	if s == nil {
		s = &hostSlot{}
		g.hosts[host] = s
	}
	return s
}

// reserve books a request to host at now when allowed and returns 0; else it
// returns how long to wait and books nothing.
func (g *hostGate) reserve(host string, now time.Time, interval time.Duration) time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	s := g.slotLocked(host)
	if now.Before(s.next) {
		return s.next.Sub(now)
	}
	s.last, s.next = now, now.Add(max(interval, s.crawlDelay))
	return 0
}

// wait is how long from now until host's slot, booking nothing.
func (g *hostGate) wait(host string, now time.Time) time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	if s := g.hosts[host]; s != nil && now.Before(s.next) {
		return s.next.Sub(now)
	}
	return 0
}

// extend books host as visited until now, the end of a visit that took
// its slot at its start (a render and its requests): the next request to
// host comes its interval after now, at the earliest.
func (g *hostGate) extend(host string, now time.Time, interval time.Duration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	s := g.slotLocked(host)
	if now.After(s.last) {
		s.last = now
	}
	if next := now.Add(max(interval, s.crawlDelay)); next.After(s.next) {
		s.next = next
	}
}

// setCrawlDelay sets host's robots.txt Crawl-delay (0: none), which raises
// its interval when longer.
func (g *hostGate) setCrawlDelay(host string, d time.Duration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	s := g.slotLocked(host)
	s.crawlDelay = min(d, MaxHint)
	if !s.last.IsZero() && s.last.Add(s.crawlDelay).After(s.next) {
		// The booked next slot was computed with the old interval: push it.
		s.next = s.last.Add(s.crawlDelay)
	}
}
