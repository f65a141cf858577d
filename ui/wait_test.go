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
	select {
	case <-f.release:
	case <-ctx.Done():
		return api.Page{}, ctx.Err()
	}
	return f.loopFetcher.FetchPage(ctx, u)
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
