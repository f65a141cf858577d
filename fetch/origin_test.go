package fetch_test

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/dynamo-rss/dynamo/fetch"
)

// headerLog records, by path, the secret headers each request came with.
type headerLog struct {
	mu  sync.Mutex
	got map[string]string
}

func (l *headerLog) record(r *http.Request) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.got == nil {
		l.got = map[string]string{}
	}
	l.got[r.URL.Path] = r.Header.Get("Authorization") + "|" + r.Header.Get("Cookie") + "|" + r.Header.Get("X-Api-Key")
}

func (l *headerLog) of(path string) (string, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	v, ok := l.got[path]
	return v, ok
}

// newBouncer is another origin on 127.0.0.1 (another port): it records
// the headers it is sent, redirects to its query's to when given, and
// lets any page read its answers.
func newBouncer(t *testing.T, log *headerLog) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log.record(r)
		w.Header().Set("Access-Control-Allow-Origin", "*")
		if to := r.URL.Query().Get("to"); to != "" {
			http.Redirect(w, r, to, http.StatusFound)
			return
		}
		fmt.Fprint(w, "elsewhere")
	}))
	t.Cleanup(srv.Close)
	return srv
}

var secrets = map[string]string{"Authorization": "Bearer s3cret", "Cookie": "s=1", "X-Api-Key": "k3y"}

const withSecrets, withoutSecrets = "Bearer s3cret|s=1|k3y", "||"

// TestHeadersStayOnTheirOrigin: a resource's headers go to its page's
// origin only, the same scheme, host and port: not to another port of the
// same host after a redirect, nor back to the page's origin once a
// redirect left it; a page fetched as an article neither.
func TestHeadersStayOnTheirOrigin(t *testing.T) {
	var log headerLog
	other := newBouncer(t, &log)
	var page *httptest.Server
	page = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log.record(r)
		switch r.URL.Path {
		case "/to-other-port": // 127.0.0.1 both: only the port differs
			http.Redirect(w, r, other.URL+"/landed", http.StatusFound)
		case "/there-and-back":
			http.Redirect(w, r, other.URL+"/bounce?to="+page.URL+"/back", http.StatusFound)
		default:
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, article)
		}
	}))
	t.Cleanup(page.Close)
	p := pollerConfig(true)
	p.Robots = false
	f := newFetcher(t, p, newStepClock())
	for _, c := range []struct{ path, landed string }{{"/to-other-port", "/landed"}, {"/there-and-back", "/back"}} {
		res, err := f.Get(t.Context(), fetch.Request{URL: page.URL + c.path, Headers: secrets})
		if err != nil {
			t.Fatalf("Get %s: %v", c.path, err)
		}
		f.Release(&res)
		if h, _ := log.of(c.path); h != withSecrets {
			t.Errorf("the page's own origin got %q on %s, want its headers", h, c.path)
		}
		if h, ok := log.of(c.landed); !ok || h != withoutSecrets {
			t.Errorf("after %s, %s got the headers %q, want none", c.path, c.landed, h)
		}
	}
	if h, _ := log.of("/bounce"); h != withoutSecrets {
		t.Errorf("another port of the page's host got the headers %q", h)
	}
	// An article is fetched by the same rule.
	_, _ = f.Article(t.Context(), page.URL+"/to-other-port", secrets) // "elsewhere" is no article: only the headers matter
	if h, _ := log.of("/landed"); h != withoutSecrets {
		t.Errorf("an article's redirect carried the headers %q to another port", h)
	}
}

// dualServer serves https and plain http on one loopback port (the first
// byte of a connection tells a TLS handshake), so that a redirect from
// https to http changes nothing but the scheme.
func dualServer(t *testing.T, h http.Handler) (addr string, client *http.Client) {
	t.Helper()
	tlsSrv := httptest.NewTLSServer(h) // for its certificate and a client trusting it
	t.Cleanup(tlsSrv.Close)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	t.Cleanup(func() { _ = srv.Close() })
	go func() { _ = srv.Serve(sniffListener{ln, tlsSrv.TLS}) }()
	return ln.Addr().String(), tlsSrv.Client()
}

type sniffListener struct {
	net.Listener
	cfg *tls.Config
}

func (l sniffListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	br := bufio.NewReader(c)
	b, err := br.Peek(1)
	pc := peekedConn{c, br}
	if err == nil && b[0] == 0x16 { // a TLS handshake record
		return tls.Server(pc, l.cfg), nil
	}
	return pc, nil
}

type peekedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c peekedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// TestHeadersNotSentInClear: a redirect from https to http on the very
// same host and port is another origin: the headers are not sent in clear.
func TestHeadersNotSentInClear(t *testing.T) {
	var log headerLog
	var addr string
	addr, client := dualServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log.record(r)
		if r.URL.Path == "/start" {
			if r.TLS == nil {
				http.Error(w, "want https", http.StatusBadRequest)
				return
			}
			http.Redirect(w, r, "http://"+addr+"/plain", http.StatusFound)
			return
		}
		if r.TLS != nil {
			http.Error(w, "want http", http.StatusBadRequest)
			return
		}
		fmt.Fprint(w, "in clear")
	}))
	p := pollerConfig(true)
	f, err := fetch.New(p, fetch.Options{Clock: newStepClock(), Transport: client.Transport})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	res, err := f.Get(t.Context(), fetch.Request{URL: "https://" + addr + "/start", Headers: secrets})
	if err != nil || string(res.Body) != "in clear" {
		t.Fatalf("Get: %q, %v", res.Body, err)
	}
	f.Release(&res)
	if h, _ := log.of("/start"); h != withSecrets {
		t.Errorf("the https page got %q, want its headers", h)
	}
	if h, _ := log.of("/plain"); h != withoutSecrets {
		t.Errorf("the headers %q went in clear after a redirect from https to http", h)
	}
}

// TestRenderHeadersStayOnTheirOrigin: a render's requests follow the same
// rule: no headers to another port of the page's host, nor to the page's
// origin at the end of a redirect chain that left it.
func TestRenderHeadersStayOnTheirOrigin(t *testing.T) {
	var log headerLog
	other := newBouncer(t, &log)
	var page *httptest.Server
	page = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log.record(r)
		switch r.URL.Path {
		case "/":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprintf(w, `<!doctype html><p id=s>wait</p><script>
const hop = '%[1]s/bounce?to=' + encodeURIComponent('%[2]s/back');
Promise.allSettled([fetch('%[1]s/port'), fetch('/same'), fetch(hop)]).then(() => {
  document.body.appendChild(document.createElement('i')).id = 'done';
});
</script>`, other.URL, page.URL)
		default:
			w.Header().Set("Access-Control-Allow-Origin", "*")
			fmt.Fprint(w, "ok")
		}
	}))
	t.Cleanup(page.Close)
	r, _ := newRenderer(t, fetch.BrowserOptions{})
	hdr := http.Header{}
	for k, v := range secrets {
		hdr.Set(k, v)
	}
	if _, err := r.Render(t.Context(), fetch.RenderRequest{URL: page.URL + "/", WaitFor: "#done", Headers: hdr}); err != nil {
		t.Fatalf("Render: %v", err)
	}
	for path, want := range map[string]string{"/": withSecrets, "/same": withSecrets, "/port": withoutSecrets, "/bounce": withoutSecrets, "/back": withoutSecrets} {
		if h, ok := log.of(path); !ok || h != want {
			t.Errorf("%s got %q (requested %v), want %q", path, h, ok, want)
		}
	}
}

// TestErrorsHideCredentials: credentials inside a URL never show in an
// error fetch returns, whatever failed (an HTTP status, the guard, a body
// too large, robots.txt, a render).
func TestErrorsHideCredentials(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprint(w, "User-agent: *\nDisallow: /private\n")
		case "/big":
			fmt.Fprint(w, strings.Repeat("x", 2000))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	cred := strings.Replace(srv.URL, "://", "://alice:hunter2@", 1)
	p := pollerConfig(true)
	p.MaxBody = 1000
	f := newFetcher(t, p, newStepClock())
	refusing := newFetcher(t, pollerConfig(false), newStepClock())
	check := func(what string, err error) {
		t.Helper()
		if err == nil {
			t.Errorf("%s: no error", what)
			return
		}
		if s := err.Error(); strings.Contains(s, "alice") || strings.Contains(s, "hunter2") {
			t.Errorf("%s: the error shows the credentials: %s", what, s)
		} else if !strings.Contains(s, "***@") {
			t.Errorf("%s: the error does not name the URL as ***@host: %s", what, s)
		}
	}
	_, err := f.Get(t.Context(), fetch.Request{URL: cred + "/missing"})
	check("a 404", err)
	_, err = f.Get(t.Context(), fetch.Request{URL: cred + "/big"})
	check("a body too large", err)
	_, err = refusing.Get(t.Context(), fetch.Request{URL: cred + "/"})
	check("a refused address", err)
	_, err = f.Once(t.Context(), cred+"/private")
	check("robots.txt", err)
	_, err = f.Article(t.Context(), cred+"/private", nil)
	check("an article disallowed", err)
	_, err = f.Once(t.Context(), "gopher://alice:hunter2@example.org/")
	check("not http", err)
	_, err = f.Article(t.Context(), "gopher://alice:hunter2@example.org/", nil)
	check("an article not http", err)
	chromium(t)
	_, err = f.Get(t.Context(), fetch.Request{URL: cred + "/missing", Browser: true})
	check("a render of a 404", err)
	_, err = refusing.Get(t.Context(), fetch.Request{URL: cred + "/", Browser: true})
	check("a render of a refused address", err)
}
