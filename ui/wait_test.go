package ui

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dynamo-rss/dynamo/api"
	"github.com/dynamo-rss/dynamo/internal/formclient"
)

// waitingFetcher is a fetcher whose host's slot is wait away: PageWait
// says so, and FetchPage waits until release closes.
type waitingFetcher struct {
	loopFetcher
	wait    time.Duration
	release chan struct{}
}

func (f waitingFetcher) PageWait(string) time.Duration { return f.wait }

func (f waitingFetcher) FetchPage(ctx context.Context, u string) (api.Page, error) {
	if err := released(ctx, f.release); err != nil {
		return api.Page{}, err
	}
	return f.loopFetcher.FetchPage(ctx, u)
}

// released waits until release closes, or ctx ends (its error).
func released(ctx context.Context, release <-chan struct{}) error {
	select {
	case <-release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

var refreshRE = regexp.MustCompile(`<meta http-equiv="refresh" content="2;url=(/new/wait/[A-Za-z0-9_-]+)">`)

// checkWaitPage checks a waiting page: at once, 200, the page CSP, no
// script, what it waits for and about how long, and its refresh URL.
func checkWaitPage(t *testing.T, b *formclient.Client, what, about string) string {
	t.Helper()
	if b.Last.StatusCode != http.StatusOK {
		t.Fatalf("waiting page: %d\n%s", b.Last.StatusCode, b.Body)
	}
	if got := b.Last.Header.Get("Content-Security-Policy"); got != api.PageSecurityPolicy {
		t.Errorf("CSP %q, want the page CSP", got)
	}
	if strings.Contains(b.Body, "<script") {
		t.Error("a waiting page has a script")
	}
	for _, want := range []string{what, about, "refreshes itself"} {
		if !strings.Contains(b.Body, want) {
			t.Errorf("the waiting page does not say %q:\n%s", want, b.Body)
		}
	}
	m := refreshRE.FindStringSubmatch(b.Body)
	if m == nil {
		t.Fatalf("no meta refresh to /new/wait/…:\n%s", b.Body)
	}
	return m[1]
}

// TestFetchWaitsWithAWord: POST /new when the host's slot is 8.5 s away
// answers at once with a page that waits and refreshes itself; once the
// fetch is done, its URL leads to the offer. Another session cannot see it.
func TestFetchWaitsWithAWord(t *testing.T) {
	wf := waitingFetcher{wait: 8500 * time.Millisecond, release: make(chan struct{})}
	env := newPagesEnv(t, func(o *api.Options) {
		wf.loopFetcher = o.Fetch.(loopFetcher)
		o.Fetch = wf
	})
	b := formclient.New(t, env.srv.URL)
	login(t, b)
	b.Get("/new")
	b.Submit(b.Form("/new", "url"), "url", env.origin.URL+"/list.html")
	wait := checkWaitPage(t, b, "Waiting for 127.0.0.1", "about 9 seconds")
	env.clock.Advance(8 * time.Second)
	b.Get(wait)
	if again := checkWaitPage(t, b, "Waiting for 127.0.0.1", "about 1 second;"); again != wait {
		t.Errorf("refreshes to %s, then %s", wait, again)
	}

	other := formclient.New(t, env.srv.URL)
	login(t, other)
	if code := other.Get(wait); code != http.StatusNotFound {
		t.Errorf("another session's wait: %d, want 404", code)
	}

	close(wf.release)
	waitDone(env, wait)
	if code := b.Get(wait); code != http.StatusOK || b.Last.Request.URL.Path != "/new" || !strings.Contains(b.Body, `action="/new/add"`) {
		t.Fatalf("the wait done: %d at %s\n%s", code, b.Last.Request.URL, b.Body)
	}
}

// waitDone waits for the background wait of a waiting page's URL to end.
func waitDone(env *pagesEnv, wait string) {
	env.ui.waits.mu.Lock()
	j := env.ui.waits.jobs[strings.TrimPrefix(wait, "/new/wait/")]
	env.ui.waits.mu.Unlock()
	<-j.done
}

// slowPoller is the polling registry whose polls wait until release closes.
type slowPoller struct {
	*pollingRegistry
	release chan struct{}
}

func (p slowPoller) PollNow(ctx context.Context, id string) (api.ResourceStatus, error) {
	if err := released(ctx, p.release); err != nil {
		return api.ResourceStatus{}, err
	}
	return p.pollingRegistry.PollNow(ctx, id)
}

// TestAddWaitsWithAWord: an Add whose first poll takes longer than the
// patience answers with a page that waits for it, registered already, and
// leads to the view once the poll is done.
func TestAddWaitsWithAWord(t *testing.T) {
	release := make(chan struct{})
	var reg *pollingRegistry
	env := newPagesEnv(t, func(o *api.Options) {
		reg = o.Poller.(*pollingRegistry)
		o.Poller = slowPoller{pollingRegistry: reg, release: release}
	})
	env.ui.waits.patience = time.Nanosecond
	b := fetchList(t, env)
	add := b.Form("/new/add", "id")
	id := add.Values.Get("id")
	b.Submit(add)
	wait := checkWaitPage(t, b, "Checking the page for the first time", "about 20 seconds")
	if _, ok := env.reg.Definition(id); !ok {
		t.Fatalf("%q is not registered while its first poll waits", id)
	}
	b.Get(wait)
	checkWaitPage(t, b, "Checking the page for the first time", "seconds")

	close(release)
	waitDone(env, wait)
	if code := b.Get(wait); code != http.StatusOK || b.Last.Request.URL.Path != api.ViewHref(id) {
		t.Fatalf("the first poll done: %d at %s, want %s", code, b.Last.Request.URL, api.ViewHref(id))
	}
	if reg.polls.Load() != 1 {
		t.Errorf("%d polls, want 1", reg.polls.Load())
	}
}

// TestWaitsEndWithClose: Close cancels the waits still running and waits
// for them.
func TestWaitsEndWithClose(t *testing.T) {
	wf := waitingFetcher{wait: time.Second, release: make(chan struct{})}
	env := newPagesEnv(t, func(o *api.Options) {
		wf.loopFetcher = o.Fetch.(loopFetcher)
		o.Fetch = wf
	})
	b := formclient.New(t, env.srv.URL)
	login(t, b)
	b.Submit(b.Form("/new", "url"), "url", env.origin.URL+"/list.html")
	wait := checkWaitPage(t, b, "Waiting for 127.0.0.1", "about 1 second;")
	env.ui.Close()
	waitDone(env, wait)
	if code := b.Get(wait); code != http.StatusUnprocessableEntity || !strings.Contains(b.Body, "could not be fetched") {
		t.Errorf("a wait ended by Close: %d\n%s", code, b.Body)
	}
}

// TestWaitsBoundedPerSession: a session runs at most waitsPerSession waits
// at once; the next fetch that would wait is refused with a word.
func TestWaitsBoundedPerSession(t *testing.T) {
	wf := waitingFetcher{wait: 3 * time.Second, release: make(chan struct{})}
	env := newPagesEnv(t, func(o *api.Options) {
		wf.loopFetcher = o.Fetch.(loopFetcher)
		o.Fetch = wf
	})
	t.Cleanup(func() { close(wf.release); env.ui.Close() })
	b := formclient.New(t, env.srv.URL)
	login(t, b)
	for range waitsPerSession {
		b.Get("/new")
		b.Submit(b.Form("/new", "url"), "url", env.origin.URL+"/list.html")
		checkWaitPage(t, b, "Waiting for 127.0.0.1", "about 3 seconds")
	}
	b.Get("/new")
	if code := b.Submit(b.Form("/new", "url"), "url", env.origin.URL+"/list.html"); code != http.StatusTooManyRequests || !strings.Contains(b.Body, "already waits for") {
		t.Errorf("a wait too many: %d\n%s", code, b.Body)
	}
}
