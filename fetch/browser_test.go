package fetch_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/dynamo-rss/dynamo/config"
	"github.com/dynamo-rss/dynamo/fetch"
	"github.com/dynamo-rss/dynamo/schema/schematest"
)

// chromium finds the browser the tests render with, skipping when there is
// none (failing under DYNAMO_REQUIRE_VALIDATORS=1).
func chromium(t *testing.T) string {
	t.Helper()
	p, err := fetch.FindBrowser("")
	if err != nil {
		return schematest.Tool(t, "chromium")
	}
	return p
}

// recorder is a RoundTripper that remembers every request it carried: the
// renderer's requests must all come through the client given.
type recorder struct {
	mu   sync.Mutex
	seen []string
	next http.RoundTripper
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	r.mu.Lock()
	r.seen = append(r.seen, req.URL.Path)
	r.mu.Unlock()
	return r.next.RoundTrip(req)
}

func (r *recorder) saw(path string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range r.seen {
		if p == path {
			return true
		}
	}
	return false
}

// newRenderer returns a renderer on chromium with a recording client that
// allows loopback (the origins are httptest servers).
func newRenderer(t *testing.T, o fetch.BrowserOptions) (*fetch.Renderer, *recorder) {
	t.Helper()
	if o.Exec == "" {
		o.Exec = chromium(t)
	}
	rec := &recorder{next: http.DefaultTransport}
	if o.Client == nil {
		o.Client = &http.Client{Transport: rec, Timeout: 10 * time.Second}
	}
	if o.Timeout == 0 {
		o.Timeout = 30 * time.Second
	}
	r, err := fetch.NewRenderer(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := r.Close(); err != nil {
			t.Error(err)
		}
	})
	return r, rec
}

const scriptPage = `<!doctype html><html><head><title>News</title></head><body>
<ul id="news"></ul>
<script>
fetch('/items.json').then(r => r.json()).then(items => {
  const ul = document.getElementById('news');
  for (const it of items) {
    const li = document.createElement('li');
    const a = document.createElement('a');
    a.href = it.link; a.textContent = it.title;
    li.appendChild(a); ul.appendChild(li);
  }
});
</script></body></html>`

func TestRenderScriptBuiltList(t *testing.T) {
	var gotHeader, otherHeader sync.Map
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		gotHeader.Store(r.URL.Path, r.Header.Get("X-Consent"))
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, scriptPage)
	})
	mux.HandleFunc("/items.json", func(w http.ResponseWriter, r *http.Request) {
		gotHeader.Store(r.URL.Path, r.Header.Get("X-Consent"))
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `[{"title":"First story","link":"/a/1"},{"title":"Second story","link":"/a/2"}]`)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	// The same server under another host name: no headers go there.
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		otherHeader.Store(r.URL.Path, r.Header.Get("X-Consent"))
		w.Header().Set("Content-Type", "image/gif")
	}))
	t.Cleanup(other.Close)

	r, rec := newRenderer(t, fetch.BrowserOptions{UserAgent: "dynamo-test"})
	page := srv.URL + "/"
	out, err := r.Render(t.Context(), fetch.RenderRequest{
		URL:     page,
		WaitFor: "ul#news li",
		Headers: http.Header{"X-Consent": {"yes"}},
	})
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	dom := string(out.HTML)
	for _, want := range []string{"First story", "Second story", `href="/a/1"`} {
		if !strings.Contains(dom, want) {
			t.Errorf("rendered DOM lacks %q:\n%s", want, dom)
		}
	}
	if !rec.saw("/items.json") {
		t.Errorf("the JSON endpoint was not fetched through the client; it carried %v", rec.seen)
	}
	for _, p := range []string{"/", "/items.json"} {
		if v, _ := gotHeader.Load(p); v != "yes" {
			t.Errorf("%s reached the origin with X-Consent %q, want the resource's header", p, v)
		}
	}
	if out.Requests < 2 {
		t.Errorf("Requests = %d, want at least the page and its JSON", out.Requests)
	}

	// A page that loads an image from another host: the header stays home.
	mux.HandleFunc("/img", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<img src="%s/pixel.gif"><p id="done">x</p>`, other.URL)
	})
	if _, err := r.Render(t.Context(), fetch.RenderRequest{URL: srv.URL + "/img", Headers: http.Header{"X-Consent": {"yes"}}}); err != nil {
		t.Fatalf("Render /img: %v", err)
	}
	v, ok := otherHeader.Load("/pixel.gif")
	if !ok {
		t.Fatalf("the other host's image was never requested")
	}
	if v != "" {
		t.Errorf("another host got the resource's header X-Consent %q", v)
	}
}

func TestRenderFileURLsNeverReachTheDOM(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret.txt")
	if err := os.WriteFile(secret, []byte("TOPSECRET-7f3a"), 0o600); err != nil {
		t.Fatal(err)
	}
	fileURL := "file://" + secret
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<!doctype html><body>
<iframe id="f" src="%[1]s"></iframe>
<img src="%[1]s">
<object data="%[1]s"></object>
<div id="out"></div>
<script>
const out = document.getElementById('out');
fetch('%[1]s').then(r => r.text()).then(t => out.append(t)).catch(e => out.append(' fetch refused'))
  .finally(() => {
    const x = new XMLHttpRequest();
    x.onload = () => out.append(x.responseText);
    x.onerror = () => { out.append(' xhr refused'); const d = document.createElement('p'); d.id = 'done'; out.after(d); };
    try { x.open('GET', '%[1]s'); x.send(); } catch (e) { out.append(' xhr refused'); const d = document.createElement('p'); d.id = 'done'; out.after(d); }
  });
</script></body>`, fileURL)
	}))
	t.Cleanup(srv.Close)
	r, rec := newRenderer(t, fetch.BrowserOptions{})
	out, err := r.Render(t.Context(), fetch.RenderRequest{URL: srv.URL + "/", WaitFor: "#done"})
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	dom := string(out.HTML)
	if strings.Contains(dom, "TOPSECRET") {
		t.Fatalf("a file: URL's content reached the DOM:\n%s", dom)
	}
	if !strings.Contains(dom, "refused") {
		t.Errorf("the page's script did not run to its end:\n%s", dom)
	}
	for _, p := range rec.seen {
		if strings.Contains(p, "secret") {
			t.Errorf("the client was asked for %s", p)
		}
	}
}

func TestRenderGuardRefusesPage(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "<p>private</p>")
	}))
	t.Cleanup(srv.Close)
	p := config.Default().Poller
	p.AllowPrivate = false
	r, _ := newRenderer(t, fetch.BrowserOptions{Client: fetch.NewGuardedClient(p, nil)})
	_, err := r.Render(t.Context(), fetch.RenderRequest{URL: srv.URL + "/"})
	if !errors.Is(err, fetch.ErrForbiddenAddress) {
		t.Fatalf("Render of a loopback page with allow_private false: %v, want the guard's ErrForbiddenAddress", err)
	}
}

func TestRenderTimeout(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<!doctype html><ul id=news></ul>")
	}))
	t.Cleanup(srv.Close)
	reg := prometheus.NewRegistry()
	r, _ := newRenderer(t, fetch.BrowserOptions{Timeout: 3 * time.Second, Registerer: reg})
	// The browser is started first: its start is bounded apart.
	if _, err := r.Render(t.Context(), fetch.RenderRequest{URL: srv.URL + "/", WaitFor: "ul#news"}); err != nil {
		t.Fatalf("first Render: %v", err)
	}
	start := time.Now()
	_, err := r.Render(t.Context(), fetch.RenderRequest{URL: srv.URL + "/", WaitFor: "ul#news li"})
	if !errors.Is(err, fetch.ErrRenderTimeout) {
		t.Fatalf("Render past its timeout: %v, want ErrRenderTimeout", err)
	}
	if !strings.Contains(err.Error(), "poller.browser.timeout") {
		t.Errorf("error %q does not name the setting", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the render took %s with a timeout of 3s", d)
	}
	if got := testutil.ToFloat64(rendersCounter(t, reg, fetch.RenderTimeout)); got != 1 {
		t.Errorf("renders{outcome=timeout} = %v, want 1", got)
	}
	// The renderer is usable after a timeout.
	if _, err := r.Render(t.Context(), fetch.RenderRequest{URL: srv.URL + "/", WaitFor: "ul#news"}); err != nil {
		t.Fatalf("Render after a timeout: %v", err)
	}
}

func TestRenderMissingBrowser(t *testing.T) {
	reg := prometheus.NewRegistry()
	missing := filepath.Join(t.TempDir(), "no-such-chromium")
	r, err := fetch.NewRenderer(fetch.BrowserOptions{Exec: missing, Client: http.DefaultClient, Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() }) // nothing was started
	_, err = r.Render(t.Context(), fetch.RenderRequest{URL: "http://example.invalid/"})
	if !errors.Is(err, fetch.ErrNoBrowser) {
		t.Fatalf("Render with a missing browser: %v, want ErrNoBrowser", err)
	}
	for _, want := range []string{missing, "poller.browser.exec"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
	if got := testutil.ToFloat64(rendersCounter(t, reg, fetch.RenderNoBrowser)); got != 1 {
		t.Errorf("renders{outcome=no_browser} = %v, want 1", got)
	}
	t.Setenv("PATH", t.TempDir())
	_, err = fetch.FindBrowser("")
	if !errors.Is(err, fetch.ErrNoBrowser) || !strings.Contains(err.Error(), "chromium") || !strings.Contains(err.Error(), "poller.browser.url") {
		t.Errorf("FindBrowser with an empty PATH: %v, want ErrNoBrowser naming chromium and the settings", err)
	}
}

func TestRenderDOMTooLarge(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<div id=x></div><script>document.getElementById('x').textContent = 'y'.repeat(50000)</script>`)
	}))
	t.Cleanup(srv.Close)
	r, _ := newRenderer(t, fetch.BrowserOptions{MaxBytes: 10000})
	_, err := r.Render(t.Context(), fetch.RenderRequest{URL: srv.URL + "/"})
	if !errors.Is(err, fetch.ErrTooLarge) {
		t.Fatalf("Render of a 50 kB DOM with MaxBytes 10000: %v, want ErrTooLarge", err)
	}
}

func TestRenderRestartsADeadBrowser(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<p id=a>alive</p>`)
	}))
	t.Cleanup(srv.Close)
	reg := prometheus.NewRegistry()
	r, _ := newRenderer(t, fetch.BrowserOptions{Registerer: reg})
	for i := range 2 { // one browser for both
		if _, err := r.Render(t.Context(), fetch.RenderRequest{URL: srv.URL + "/"}); err != nil {
			t.Fatalf("Render %d: %v", i+1, err)
		}
	}
	if n := restarts(t, reg); n != 0 {
		t.Fatalf("%v browser restarts after two renders of a live browser, want 0", n)
	}
	if err := fetch.KillBrowser(r); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	out, err := r.Render(ctx, fetch.RenderRequest{URL: srv.URL + "/", WaitFor: "#a"})
	if err != nil {
		t.Fatalf("Render after the browser died: %v", err)
	}
	if !strings.Contains(string(out.HTML), "alive") {
		t.Errorf("DOM after restart: %s", out.HTML)
	}
	if n := restarts(t, reg); n != 1 {
		t.Errorf("%v browser restarts after one died, want 1", n)
	}
}

// TestRenderRefusesOtherSchemes: only http and https pages are rendered;
// a file: or another scheme's page is refused before any tab opens.
func TestRenderRefusesOtherSchemes(t *testing.T) {
	r, _ := newRenderer(t, fetch.BrowserOptions{})
	for _, page := range []string{"file:///etc/passwd", "ftp://example.org/", "data:text/html,<p>x</p>", "chrome://version"} {
		if _, err := r.Render(t.Context(), fetch.RenderRequest{URL: page}); err == nil || !strings.Contains(err.Error(), "only http and https pages are rendered") {
			t.Errorf("Render(%q): %v; want it refused", page, err)
		}
	}
}

// restarts reads dynamo_fetch_browser_restarts_total from reg.
func restarts(t *testing.T, reg *prometheus.Registry) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "dynamo_fetch_browser_restarts_total" {
			return mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	t.Fatal("no dynamo_fetch_browser_restarts_total")
	return 0
}

func rendersCounter(t *testing.T, reg *prometheus.Registry, outcome string) prometheus.Collector {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "dynamo_fetch_renders_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "outcome" && l.GetValue() == outcome {
					return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "x", Help: "x"}, m.GetCounter().GetValue)
				}
			}
		}
	}
	t.Fatalf("no dynamo_fetch_renders_total{outcome=%q}", outcome)
	return nil
}

func TestRenderWaitFor(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		// The list is filled well after the load and the network's quiet.
		fmt.Fprint(w, `<!doctype html><ul class="news"></ul><script>
setTimeout(() => { document.querySelector('ul.news').innerHTML = '<li>Late story</li>' }, 1500)
</script>`)
	}))
	t.Cleanup(srv.Close)
	r, _ := newRenderer(t, fetch.BrowserOptions{})
	tests := []struct {
		name, waitFor string
		want          bool // Late story in the DOM
		wantErr       string
	}{
		{name: "wait_for matches once the script ran", waitFor: "ul.news li", want: true},
		{name: "no wait_for reads the DOM at the network's quiet", waitFor: "", want: false},
		{name: "a selector the page cannot parse", waitFor: "ul..news", wantErr: "not a CSS selector"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := r.Render(t.Context(), fetch.RenderRequest{URL: srv.URL + "/", WaitFor: tc.waitFor})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Render: %v, want an error saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Render: %v", err)
			}
			if got := strings.Contains(string(out.HTML), `<ul class="news"><li>Late story</li>`); got != tc.want {
				t.Errorf("Late story in the DOM = %v, want %v:\n%s", got, tc.want, out.HTML)
			}
		})
	}
}

// TestRenderMaxTabs: with MaxTabs 1, a second render waits for the first
// one's tab: its page is requested only once the first render has ended
// (here at its timeout).
func TestRenderMaxTabs(t *testing.T) {
	reqs := make(chan time.Time, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/favicon.ico" { // the browser asks for it too
			http.NotFound(w, r)
			return
		}
		reqs <- time.Now()
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<!doctype html><p id=here>here</p>")
	}))
	t.Cleanup(srv.Close)
	const timeout = 5 * time.Second
	r, _ := newRenderer(t, fetch.BrowserOptions{MaxTabs: 1, Timeout: timeout})
	if _, err := r.Render(t.Context(), fetch.RenderRequest{URL: srv.URL + "/warm", WaitFor: "#here"}); err != nil {
		t.Fatalf("warm-up Render: %v", err) // starts the browser
	}
	<-reqs
	var wg sync.WaitGroup
	wg.Go(func() {
		// Never matches: holds the only tab until its timeout.
		if _, err := r.Render(t.Context(), fetch.RenderRequest{URL: srv.URL + "/a", WaitFor: "#never"}); !errors.Is(err, fetch.ErrRenderTimeout) {
			t.Errorf("render a: %v, want its timeout", err)
		}
	})
	first := <-reqs
	wg.Go(func() {
		if _, err := r.Render(t.Context(), fetch.RenderRequest{URL: srv.URL + "/b", WaitFor: "#here"}); err != nil {
			t.Errorf("render b: %v", err)
		}
	})
	second := <-reqs
	wg.Wait()
	// Render a's page came at most ~1.5 s into its timeout (its tab opens
	// first); b's page can only come after a's timeout ended.
	if gap := second.Sub(first); gap < timeout-2*time.Second {
		t.Errorf("the second page was requested %s after the first, inside the first render's %s: two tabs at once with MaxTabs 1", gap, timeout)
	}
}

// boundsPage shows what became of its request for /data: its length, or
// that it failed.
const boundsPage = `<!doctype html><html><head><title>t</title></head><body><p id="s">wait</p><script>
const done = text => {
  document.getElementById('s').textContent = text;
  document.body.appendChild(document.createElement('i')).id = 'done';
};
fetch('/data' + location.search).then(r => r.text()).then(t => done('got ' + t.length), () => done('failed'));
</script></body></html>`

// TestRenderBounds checks a render's limits at their edges: the page's
// status (2xx renders, anything else is a StatusError), a request the page
// makes of exactly max_body bytes and of one more (with a length or
// chunked), and a DOM of exactly max_body bytes and of one more.
func TestRenderBounds(t *testing.T) {
	const limit = 2000
	mux := http.NewServeMux()
	mux.HandleFunc("/p", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, boundsPage)
	})
	mux.HandleFunc("/data", func(w http.ResponseWriter, r *http.Request) {
		var n int
		fmt.Sscan(r.URL.Query().Get("n"), &n) //nolint:errcheck // 0 when absent
		w.Header().Set("Content-Type", "text/plain")
		if r.URL.Query().Get("chunked") == "" {
			w.Header().Set("Content-Length", fmt.Sprint(n))
		} else {
			w.(http.Flusher).Flush() // no length: read until the end
		}
		fmt.Fprint(w, strings.Repeat("x", n))
	})
	mux.HandleFunc("/status/", func(w http.ResponseWriter, r *http.Request) {
		var code int
		fmt.Sscan(strings.TrimPrefix(r.URL.Path, "/status/"), &code) //nolint:errcheck // the path is ours
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(code)
		fmt.Fprintf(w, "<p>status %d</p>", code)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	r, _ := newRenderer(t, fetch.BrowserOptions{MaxBytes: limit})
	var out fetch.Rendered
	render := func(r *fetch.Renderer, path string) (string, error) {
		t.Helper()
		var err error
		out, err = r.Render(t.Context(), fetch.RenderRequest{URL: srv.URL + path, WaitFor: "#done"})
		if err != nil {
			return "", err
		}
		return string(out.HTML), nil
	}
	for _, code := range []int{200, 299} {
		if _, err := r.Render(t.Context(), fetch.RenderRequest{URL: fmt.Sprintf("%s/status/%d", srv.URL, code)}); err != nil {
			t.Errorf("a page answered with %d: %v, want it rendered", code, err)
		}
	}
	for _, code := range []int{300, 404, 503, 599, 999} {
		_, err := r.Render(t.Context(), fetch.RenderRequest{URL: fmt.Sprintf("%s/status/%d", srv.URL, code)})
		var se *fetch.StatusError
		if !errors.As(err, &se) || se.Code != code {
			t.Errorf("a page answered with %d: %v, want a StatusError %d", code, err, code)
		}
	}

	// What the page fetches: max_body bytes, not one more.
	for _, c := range []struct {
		query, want string
	}{
		{fmt.Sprintf("?n=%d", limit), fmt.Sprintf("got %d", limit)},
		{fmt.Sprintf("?n=%d", limit+1), "failed"},
		{fmt.Sprintf("?n=%d&chunked=1", limit), fmt.Sprintf("got %d", limit)},
		{fmt.Sprintf("?n=%d&chunked=1", limit+1), "failed"},
	} {
		dom, err := render(r, "/p"+c.query)
		if err != nil {
			t.Errorf("/p%s: %v", c.query, err)
			continue
		}
		if !strings.Contains(dom, `<p id="s">`+c.want+`</p>`) {
			t.Errorf("/p%s: the page's request ended %q, want %q", c.query, dom, c.want)
		}
		if refused := map[bool]int{true: 1, false: 0}[c.want == "failed"]; out.Refused != refused {
			t.Errorf("/p%s: %d requests refused, want %d", c.query, out.Refused, refused)
		}
	}

	// The DOM: max_body bytes, not one more.
	dom, err := render(r, "/p?n=10")
	if err != nil || !strings.Contains(dom, "got 10") {
		t.Fatalf("/p?n=10: %v\n%s", err, dom)
	}
	exact, _ := newRenderer(t, fetch.BrowserOptions{MaxBytes: int64(len(dom))})
	if got, err := render(exact, "/p?n=10"); err != nil || got != dom {
		t.Errorf("a DOM of exactly max_body (%d bytes): %v\n%s", len(dom), err, got)
	}
	under, _ := newRenderer(t, fetch.BrowserOptions{MaxBytes: int64(len(dom) - 1)})
	if _, err := render(under, "/p?n=10"); !errors.Is(err, fetch.ErrTooLarge) {
		t.Errorf("a DOM of max_body + 1 bytes: %v, want ErrTooLarge", err)
	}
}

// TestRendererDefaults: a renderer built with no limits set takes the
// defaults (tabs, time-out, max_body, idle wait), not zeros that would
// refuse or time out every page.
func TestRendererDefaults(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<!doctype html><title>t</title><p id="x">hello</p>`)
	}))
	t.Cleanup(srv.Close)
	r, err := fetch.NewRenderer(fetch.BrowserOptions{Exec: chromium(t), Client: &http.Client{Timeout: 10 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := r.Close(); err != nil {
			t.Error(err)
		}
	})
	out, err := r.Render(t.Context(), fetch.RenderRequest{URL: srv.URL + "/"})
	if err != nil || !strings.Contains(string(out.HTML), "hello") {
		t.Fatalf("Render with the default limits: %v\n%s", err, out.HTML)
	}
}

// TestRenderedURLIsTheDocuments: the URL a render reports, against which
// the page's relative links resolve, is the document's own at the end: a
// script that moves it (history.replaceState) is followed.
func TestRenderedURLIsTheDocuments(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<p id=a>here</p><script>history.replaceState(null, "", "/moved/index.html")</script>`)
	}))
	t.Cleanup(srv.Close)
	r, _ := newRenderer(t, fetch.BrowserOptions{})
	out, err := r.Render(t.Context(), fetch.RenderRequest{URL: srv.URL + "/start", WaitFor: "#a"})
	if err != nil {
		t.Fatal(err)
	}
	if want := srv.URL + "/moved/index.html"; out.URL != want {
		t.Errorf("rendered URL %q, want the document's %q", out.URL, want)
	}
}

// rawOrigin answers every request with the response head of its path in
// heads (the status line and headers, which Go's server would not write),
// the body after it.
func rawOrigin(t *testing.T, heads map[string]string, bodies map[string]string, seen ...func(path string)) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				line, err := br.ReadString('\n')
				if err != nil {
					return
				}
				for {
					h, err := br.ReadString('\n')
					if err != nil || h == "\r\n" {
						break
					}
				}
				path := strings.Fields(line + " /")[1]
				for _, f := range seen {
					f(path)
				}
				head, ok := heads[path]
				if !ok {
					head = "HTTP/1.1 404 Not Found\r\n"
				}
				body := bodies[path]
				fmt.Fprintf(c, "%sContent-Length: %d\r\nConnection: close\r\n\r\n%s", head, len(body), body)
			}()
		}
	}()
	return "http://" + l.Addr().String()
}

// TestRenderBrowserRefusesAnAnswer: Chromium refuses an answer whose
// header it cannot take (a name with a space, which Go's client reads).
// A script's such answer fails at once, so the page goes on (its onerror
// runs) and the render ends well before its timeout; the page's own such
// answer is the render's error, saying so.
func TestRenderBrowserRefusesAnAnswer(t *testing.T) {
	html := "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n"
	odd := "HTTP/1.1 200 OK\r\nContent-Type: text/javascript\r\nX Odd: yes\r\n"
	var favicons atomic.Int32 // the browser may ask for one, answered (404) like any request
	origin := rawOrigin(t, map[string]string{"/": html, "/odd.js": odd, "/odd.html": "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nX Odd: yes\r\n"},
		map[string]string{
			"/":         `<!doctype html><p id=a>page</p><script src="/odd.js" onerror="document.body.insertAdjacentHTML('beforeend', '<p id=failed>script failed</p>')"></script>`,
			"/odd.js":   `document.body.insertAdjacentHTML('beforeend', '<p id=ran>script ran</p>')`,
			"/odd.html": `<p>odd</p>`,
		}, func(path string) {
			if path == "/favicon.ico" {
				favicons.Add(1)
			}
		})
	const timeout = 20 * time.Second
	r, _ := newRenderer(t, fetch.BrowserOptions{Timeout: timeout})
	t0 := time.Now()
	out, err := r.Render(t.Context(), fetch.RenderRequest{URL: origin + "/", WaitFor: "#failed, #ran"})
	if err != nil {
		t.Fatalf("Render: %v (after %v)", err, time.Since(t0))
	}
	// A favicon the origin saw may still be on its way back when the DOM
	// is read: served or not yet.
	if most := 1 + int(favicons.Load()); !strings.Contains(string(out.HTML), "script failed") || out.Refused != 1 || out.Requests < 1 || out.Requests > most {
		t.Errorf("DOM %s; %d requests served, %d refused; want the script failed, 1 (%d with favicons) and 1", out.HTML, out.Requests, out.Refused, most)
	}
	_, err = r.Render(t.Context(), fetch.RenderRequest{URL: origin + "/odd.html"})
	if err == nil || !strings.Contains(err.Error(), "the browser refused the answer (HTTP 200)") || !strings.Contains(err.Error(), "X Odd") {
		t.Errorf("Render of a page whose header the browser refuses: %v", err)
	}
}

// TestRenderWaitsForTheNetworksQuiet: without wait_for, the DOM is read
// once no request has been in flight for Idle, so data a script asks for
// a moment after the load is in it.
func TestRenderWaitsForTheNetworksQuiet(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/data" {
			fmt.Fprint(w, "<li>From the data</li>")
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<!doctype html><ul id=news></ul><script>
addEventListener('load', () => setTimeout(() => fetch('/data').then(r => r.text()).then(t => { document.getElementById('news').innerHTML = t }), 100))
</script>`)
	}))
	t.Cleanup(srv.Close)
	r, _ := newRenderer(t, fetch.BrowserOptions{Idle: 2 * time.Second})
	out, err := r.Render(t.Context(), fetch.RenderRequest{URL: srv.URL + "/"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out.HTML), "<li>From the data</li>") {
		t.Errorf("the DOM was read before the network's quiet: %s", out.HTML)
	}
}
