package ui

import (
	"bytes"
	"context"
	"fmt"
	"github.com/dynamo-rss/dynamo/api"
	"github.com/dynamo-rss/dynamo/internal/apitest"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/dynamo-rss/dynamo/extractor"
	"github.com/dynamo-rss/dynamo/storage/badger"
)

// listPage is a page nobody annotated: a menu of site sections above the
// list a reader wants (headings with links, a summary, a date).
const listPage = `<!DOCTYPE html><html><head><meta charset="utf-8"><title>Town hall</title>
<link rel="alternate" type="application/rss+xml" title="Town hall (RSS)" href="/feed.xml">
<link rel="stylesheet" href="/s.css"></head><body>
<header><nav class="menu"><ul>
<li><a href="/">Home</a></li><li><a href="/about.html">About</a></li><li><a href="/contact.html">Contact</a></li><li><a href="/services/">Services</a></li><li><a href="/privacy.html">Privacy</a></li>
</ul></nav></header>
<main><h1>Notices</h1><div class="notices">
<article class="notice"><h3><a href="/n/4.html">Budget approved for the new library wing</a></h3><p>The council voted the budget on Monday evening.</p><time datetime="2026-11-26T18:00:00Z">26 Nov 2026</time></article>
<article class="notice"><h3><a href="/n/3.html">Tram line 4 closed for works until March</a></h3><p>Replacement buses run every ten minutes.</p><time datetime="2026-11-25T09:00:00Z">25 Nov 2026</time></article>
<article class="notice"><h3><a href="/n/2.html">Winter opening hours of the town hall offices</a></h3><p>From December the offices close at four.</p><time datetime="2026-11-24T12:00:00Z">24 Nov 2026</time></article>
<article class="notice"><h3><a href="/n/1.html">Public consultation on the river park project</a></h3><p>Residents may send comments until the end of the month.</p><time datetime="2026-11-20T10:00:00Z">20 Nov 2026</time></article>
</div></main>
<footer><a href="/legal.html">Legal</a></footer></body></html>`

// annotatedPage is a page its webmaster annotated.
const annotatedPage = `<html><body><h1><!-- <channel:title> -->Club news<!-- </channel:title> --></h1>
<p><!-- <item:link index="1"> --><a href="/c/1.html"><!-- <item:title index="1"> -->Season opens<!-- </item:title> --></a><!-- </item:link> --></p>
</body></html>`

// pagesOrigin is a loopback site that counts the requests for each path.
type pagesOrigin struct {
	*httptest.Server
	mu   sync.Mutex
	hits map[string]int
}

func newPagesOrigin(t *testing.T) *pagesOrigin {
	t.Helper()
	o := &pagesOrigin{hits: map[string]int{}}
	o.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o.mu.Lock()
		o.hits[r.URL.Path]++
		o.mu.Unlock()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		switch r.URL.Path {
		case "/list.html":
			_, _ = io.WriteString(w, listPage)
		case "/club.html":
			_, _ = io.WriteString(w, annotatedPage)
		case "/plain.html":
			_, _ = io.WriteString(w, "<html><body><p>Nothing to see.</p></body></html>")
		case "/posts.html":
			_, _ = io.WriteString(w, longPostsPage)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(o.Close)
	return o
}

func (o *pagesOrigin) count(path string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.hits[path]
}

// loopFetcher fetches pages over loopback, standing in for the poller's
// guarded retriever (which refuses loopback unless allow_private).
type loopFetcher struct{ c *http.Client }

func (f loopFetcher) FetchPage(ctx context.Context, u string) (api.Page, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return api.Page{}, err
	}
	resp, err := f.c.Do(req)
	if err != nil {
		return api.Page{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return api.Page{}, fmt.Errorf("fetch %s: %s", u, resp.Status)
	}
	body, err := io.ReadAll(resp.Body)
	return api.Page{Body: body, ContentType: resp.Header.Get("Content-Type"), URL: resp.Request.URL.String()}, err
}

// pollingRegistry is the fake registry with a poller that polls for real:
// PollNow fetches the registered page, extracts it with its select block
// (or annotations) and stores the version.
type pollingRegistry struct {
	*apitest.FakeRegistry
	fetch api.PageFetcher
	db    *badger.DB
	now   func() time.Time
	polls atomic.Int64
}

func (p *pollingRegistry) Statuses() []api.ResourceStatus {
	var out []api.ResourceStatus
	for _, d := range p.Definitions() {
		out = append(out, d.Status)
	}
	return out
}

func (p *pollingRegistry) Status(id string) (api.ResourceStatus, bool) {
	d, ok := p.Definition(id)
	return d.Status, ok
}

func (p *pollingRegistry) PollNow(ctx context.Context, id string) (api.ResourceStatus, error) {
	p.polls.Add(1)
	d, ok := p.Definition(id)
	if !ok {
		return api.ResourceStatus{}, fmt.Errorf("poll %q: unknown", id)
	}
	page, err := p.fetch.FetchPage(ctx, d.Resource.URL)
	if err != nil {
		return api.ResourceStatus{}, err
	}
	opts := extractor.Options{URL: page.URL, RSSID: id, ContentType: page.ContentType, Timestamp: p.now().UTC()}
	if !d.Resource.Select.IsZero() {
		if opts.Select, err = extractor.CompileSelectors(d.Resource.Select); err != nil {
			return api.ResourceStatus{}, err
		}
	}
	res, err := extractor.Extract(bytes.NewReader(page.Body), opts)
	if err != nil {
		return api.ResourceStatus{}, err
	}
	if _, err := p.db.Save(ctx, res.Document); err != nil {
		return api.ResourceStatus{}, err
	}
	st := api.ResourceStatus{ID: id, URL: d.Resource.URL, Policy: "smart", LastPoll: p.now(), LastOutcome: "changed", Polls: 1, Changes: 1}
	p.Mu.Lock()
	d.Status = st
	p.Defs[id] = d
	p.Mu.Unlock()
	return st, nil
}

// pagesEnv is a server with admin on, open registration, a real store and
// a loopback origin.
type pagesEnv struct {
	srv    *httptest.Server
	s      *api.Server
	ui     *Server // the pages mounted on s
	origin *pagesOrigin
	reg    *pollingRegistry
	clock  *apitest.Clock
}

const pagesToken = "correct horse battery staple"

// newPagesEnv builds the env; each of mod is a func(*api.Options) or a
// func(*Options) (the pages' own).
func newPagesEnv(t *testing.T, mod ...any) *pagesEnv {
	t.Helper()
	origin := newPagesOrigin(t)
	clock := &apitest.Clock{At: time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)}
	fetch := loopFetcher{c: origin.Client()}
	reg := &pollingRegistry{FakeRegistry: apitest.NewFakeRegistry(), fetch: fetch, db: apitest.OpenDB(t), now: clock.Now}
	opts := api.Options{
		Store: reg.db, Poller: reg, Registry: reg, Fetch: fetch, AdminToken: pagesToken, OpenRegistration: true,
		Now: clock.Now, Registerer: prometheus.NewRegistry(),
	}
	var pageMods []func(*Options)
	for _, m := range mod {
		switch m := m.(type) {
		case func(*api.Options):
			m(&opts)
		case func(*Options):
			pageMods = append(pageMods, m)
		default:
			t.Fatalf("newPagesEnv: a modifier of type %T", m)
		}
	}
	s, pages := mountBoth(t, opts, pageMods...)
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return &pagesEnv{srv: srv, s: s, ui: pages, origin: origin, reg: reg, clock: clock}
}
