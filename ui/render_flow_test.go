package ui

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dynamo-rss/dynamo/api"
	"github.com/dynamo-rss/dynamo/internal/formclient"
)

// scriptBuiltPage is a page built by a script: an empty root element, a
// noscript asking for JavaScript, scripts and no list.
const scriptBuiltPage = `<!DOCTYPE html><html><head><title>Town hall</title>
<script src="/a.js"></script><script src="/b.js"></script></head>
<body><noscript>You need to enable JavaScript to run this app.</noscript><div id="root"></div></body></html>`

// renderedPage is scriptBuiltPage once its scripts ran: the list they built.
const renderedPage = `<!DOCTYPE html><html><head><title>Town hall</title></head><body><div id="root"><main><h1>Notices</h1>
<ul id="news">
<li class="notice"><h3><a href="/n/3.html">Tram line 4 closed for works until March</a></h3><p>Replacement buses run every ten minutes.</p></li>
<li class="notice"><h3><a href="/n/2.html">Winter opening hours of the town hall offices</a></h3><p>From December the offices close at four.</p></li>
<li class="notice"><h3><a href="/n/1.html">Public consultation on the river park project</a></h3><p>Residents may send comments until the end of the month.</p></li>
</ul></main></div></body></html>`

// renderCall is one RenderPage call of the fake renderer.
type renderCall struct{ URL, WaitFor string }

// fakeRenderer is an api.PageRenderer over fixed pages: FetchPage answers
// the page as a GET gets it, RenderPage as the browser builds it.
type fakeRenderer struct {
	plain, rendered map[string]string
	mu              sync.Mutex
	renders         []renderCall
	fetches         int
}

func (f *fakeRenderer) FetchPage(_ context.Context, u string) (api.Page, error) {
	f.mu.Lock()
	f.fetches++
	f.mu.Unlock()
	return api.Page{Body: []byte(f.plain[u]), ContentType: "text/html; charset=utf-8", URL: u}, nil
}

func (f *fakeRenderer) RenderPage(_ context.Context, u, waitFor string) (api.Page, error) {
	f.mu.Lock()
	f.renders = append(f.renders, renderCall{u, waitFor})
	f.mu.Unlock()
	return api.Page{Body: []byte(f.rendered[u]), ContentType: "text/html; charset=utf-8", URL: u}, nil
}

const scriptURL = "https://example.org/townhall/"

// newRenderEnv is a pages env whose /new fetches through a fakeRenderer;
// browser says whether a browser is configured.
func newRenderEnv(t *testing.T, browser bool) (*pagesEnv, *fakeRenderer, *formclient.Client) {
	t.Helper()
	fr := &fakeRenderer{plain: map[string]string{scriptURL: scriptBuiltPage}, rendered: map[string]string{scriptURL: renderedPage}}
	env := newPagesEnv(t, func(o *Options) { o.Fetch, o.Browser = fr, browser })
	b := formclient.New(t, env.srv.URL)
	b.Get("/login")
	if b.Submit(b.Form("/login", "token"), "token", pagesToken); b.Last.Request.URL.Path != "/new" {
		t.Fatalf("login: at %s", b.Last.Request.URL)
	}
	return env, fr, b
}

// TestRenderChoiceOnForm: with a browser, /new's form has "Render with
// JavaScript" and a wait-for field; without one, it says how to configure
// one and has neither.
func TestRenderChoiceOnForm(t *testing.T) {
	_, _, b := newRenderEnv(t, true)
	f := b.Form("/new", "url")
	for _, want := range []string{`type="checkbox"`, `name="render"`, "Render with JavaScript", `name="wait_for"`, "Pages built by JavaScript"} {
		if !strings.Contains(b.Body, want) {
			t.Errorf("/new with a browser lacks %s", want)
		}
	}
	_ = f

	_, _, b = newRenderEnv(t, false)
	if code := b.Get("/new"); code != http.StatusOK {
		t.Fatalf("GET /new: %d", code)
	}
	if strings.Contains(b.Body, `name="render"`) || strings.Contains(b.Body, `name="wait_for"`) {
		t.Error("/new without a browser offers to render")
	}
	for _, want := range []string{"poller.browser.exec", "poller.browser.url"} {
		if !strings.Contains(b.Body, want) {
			t.Errorf("/new without a browser does not say how to configure one (%s)", want)
		}
	}
}

// TestRenderFlow: "Render with JavaScript" fetches the page rendered (with
// its wait-for), the proposals come from the rendered DOM, and Add
// registers the resource with fetch: browser and wait_for.
func TestRenderFlow(t *testing.T) {
	env, fr, b := newRenderEnv(t, true)
	if code := b.Submit(b.Form("/new", "url", "wait_for"), "url", scriptURL, "render", "1", "wait_for", "ul#news li"); code != http.StatusOK {
		t.Fatalf("fetch rendered: %d\n%s", code, b.Body)
	}
	if len(fr.renders) != 1 || fr.renders[0] != (renderCall{scriptURL, "ul#news li"}) || fr.fetches != 0 {
		t.Fatalf("renders %v, plain fetches %d; want one render with its wait-for and no GET", fr.renders, fr.fetches)
	}
	want := "Tram line 4 closed for works until March|Winter opening hours of the town hall offices|Public consultation on the river park project"
	if got := strings.Join(itemTitles(b, "p1"), "|"); got != want {
		t.Fatalf("best proposal of the rendered page %q, want %q\n%s", got, want, b.Body)
	}
	if !strings.Contains(section(b, "page"), "rendered with JavaScript") {
		t.Error("the offer does not say the page was rendered")
	}
	// A preview keeps the choice; Add registers fetch: browser.
	if code := b.Submit(b.Form("/new/preview", "select")); code != http.StatusOK {
		t.Fatalf("preview: %d", code)
	}
	add := b.Form("/new/add", "id", "render", "wait_for")
	id := add.Values.Get("id")
	if code := b.Submit(add); code != http.StatusOK {
		t.Fatalf("add: %d\n%s", code, b.Body)
	}
	d, ok := env.reg.Definition(id)
	if !ok {
		t.Fatalf("%q not registered", id)
	}
	if d.Resource.Fetch != "browser" || d.Resource.WaitFor != "ul#news li" {
		t.Errorf("registered fetch %q wait_for %q, want browser and ul#news li", d.Resource.Fetch, d.Resource.WaitFor)
	}
}

// TestRenderIgnoredWithoutBrowser: render sent to a server without a
// browser fetches the page as a GET, and Add registers no fetch: browser.
func TestRenderIgnoredWithoutBrowser(t *testing.T) {
	_, fr, b := newRenderEnv(t, false)
	f := b.Form("/new", "url")
	f.Values.Set("render", "1")
	if code := b.Submit(f, "url", scriptURL); code != http.StatusOK {
		t.Fatalf("fetch: %d", code)
	}
	if len(fr.renders) != 0 || fr.fetches != 1 {
		t.Errorf("renders %v, fetches %d; want a GET only", fr.renders, fr.fetches)
	}
	if strings.Contains(b.Body, `name="render"`) {
		t.Error("the offer carries render without a browser")
	}
}

// TestScriptBuiltHint: a page fetched with a GET that looks built by a
// script says so and offers to render it (a form posting the same URL with
// render=1); a page with a list does not; without a browser, the hint says
// how to configure one.
func TestScriptBuiltHint(t *testing.T) {
	env, fr, b := newRenderEnv(t, true)
	_ = env
	f := b.Form("/new", "url")
	f.Values.Del("render")
	if code := b.Submit(f, "url", scriptURL); code != http.StatusOK {
		t.Fatalf("fetch: %d", code)
	}
	hint := section(b, "script-built")
	for _, want := range []string{"This page seems to be built by JavaScript", "empty", "noscript", "Pages built by JavaScript"} {
		if !strings.Contains(hint, want) {
			t.Errorf("the hint lacks %q:\n%s", want, hint)
		}
	}
	rf := b.Form("/new", "url", "render")
	if rf.Values.Get("url") != scriptURL || rf.Values.Get("render") != "1" {
		t.Fatalf("the render button's form sends %v", rf.Values)
	}
	if code := b.Submit(rf, "wait_for", "ul#news li"); code != http.StatusOK {
		t.Fatalf("render: %d", code)
	}
	if len(fr.renders) != 1 || fr.renders[0].URL != scriptURL {
		t.Fatalf("renders %v, want one of %s", fr.renders, scriptURL)
	}
	if strings.Contains(b.Body, `id="script-built"`) {
		t.Error("the rendered page is still said to be built by JavaScript")
	}
	if len(itemTitles(b, "p1")) != 3 {
		t.Errorf("the rendered page's best proposal: %q", itemTitles(b, "p1"))
	}

	// A page with its list in the HTML: no hint.
	fr.plain["https://example.org/list.html"] = listPage
	b.Get("/new")
	f = b.Form("/new", "url")
	f.Values.Del("render")
	b.Submit(f, "url", "https://example.org/list.html")
	if strings.Contains(b.Body, `id="script-built"`) {
		t.Error("a page with a list is said to be built by JavaScript")
	}

	// Without a browser: the hint says how to configure one, no button.
	_, _, b = newRenderEnv(t, false)
	b.Submit(b.Form("/new", "url"), "url", scriptURL)
	hint = section(b, "script-built")
	if !strings.Contains(hint, "This page seems to be built by JavaScript") || !strings.Contains(hint, "poller.browser.exec") {
		t.Errorf("without a browser, the hint:\n%s", hint)
	}
	if strings.Contains(hint, `name="render"`) {
		t.Error("without a browser, the hint offers to render")
	}
}

// TestScriptBuiltSigns: the heuristic's signs, one at a time.
func TestScriptBuiltSigns(t *testing.T) {
	long := strings.Repeat("Plenty of words in a paragraph a reader reads. ", 10)
	for _, c := range []struct {
		name, body string
		proposals  int
		want       bool
	}{
		{"little text", `<html><body><p>Loading…</p></body></html>`, 0, true},
		{"empty app root", `<html><body><p>` + long + `</p><div id="app"></div></body></html>`, 1, true},
		{"noscript", `<html><body><p>` + long + `</p><noscript>Please enable JavaScript.</noscript></body></html>`, 1, true},
		{"many scripts, no list", `<html><body><p>` + long + `</p>` + strings.Repeat(`<script src="/x.js"></script>`, 8) + `</body></html>`, 0, true},
		{"many scripts and a list", `<html><body><p>` + long + `</p>` + strings.Repeat(`<script src="/x.js"></script>`, 8) + `</body></html>`, 2, false},
		{"a page of text", `<html><body><p>` + long + `</p><div id="root"><p>Here.</p></div></body></html>`, 0, false},
	} {
		if got := scriptBuilt([]byte(c.body), c.proposals) != ""; got != c.want {
			t.Errorf("%s: %v, want %v (%q)", c.name, got, c.want, scriptBuilt([]byte(c.body), c.proposals))
		}
	}
}

// waitingRenderer is a fakeRenderer whose host's slot is wait away.
type waitingRenderer struct {
	*fakeRenderer
	wait time.Duration
}

func (w waitingRenderer) PageWait(string) time.Duration { return w.wait }

// TestRenderAfterAWait: "Render with JavaScript" chosen while the host's
// slot is not free: the page that waits renders the page when the slot
// comes, and the offer and Add keep the choice.
func TestRenderAfterAWait(t *testing.T) {
	fr := &fakeRenderer{plain: map[string]string{scriptURL: scriptBuiltPage}, rendered: map[string]string{scriptURL: renderedPage}}
	env := newPagesEnv(t, func(o *Options) { o.Fetch, o.Browser = waitingRenderer{fr, 3 * time.Second}, true })
	b := formclient.New(t, env.srv.URL)
	login(t, b)
	b.Get("/new")
	b.Submit(b.Form("/new", "url", "wait_for"), "url", scriptURL, "render", "1", "wait_for", "ul#news li")
	wait := checkWaitPage(t, b, "Waiting for example.org", "about 3 seconds")
	waitDone(env, wait)
	if code := b.Get(wait); code != http.StatusOK || !strings.Contains(section(b, "page"), "rendered with JavaScript") {
		t.Fatalf("the wait done: %d at %s\n%s", code, b.Last.Request.URL, b.Body)
	}
	fr.mu.Lock()
	renders, fetches := fr.renders, fr.fetches
	fr.mu.Unlock()
	if len(renders) != 1 || renders[0] != (renderCall{scriptURL, "ul#news li"}) || fetches != 0 {
		t.Fatalf("renders %v, plain fetches %d; want the render chosen, after the wait", renders, fetches)
	}
	add := b.Form("/new/add", "id", "render", "wait_for")
	if add.Values.Get("render") == "" || add.Values.Get("wait_for") != "ul#news li" {
		t.Errorf("the add form lost the choice: render %q wait_for %q", add.Values.Get("render"), add.Values.Get("wait_for"))
	}
}
