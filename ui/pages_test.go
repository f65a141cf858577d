package ui

import (
	"context"
	"crypto/tls"
	"github.com/dynamo-rss/dynamo/api"
	"github.com/dynamo-rss/dynamo/internal/apitest"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dynamo-rss/dynamo/internal/formclient"
)

// itemTitles are the item headings of the section id of the last page.
func itemTitles(b *formclient.Client, section string) []string {
	i := strings.Index(b.Body, `id="`+section+`"`)
	if i < 0 {
		return nil
	}
	rest := b.Body[i:]
	if j := strings.Index(rest, "</section>"); j >= 0 {
		rest = rest[:j]
	}
	var out []string
	for _, m := range regexp.MustCompile(`(?s)<li class="item">\s*<h3>(?:<a [^>]*>)?(.*?)(?:</a>)?</h3>`).FindAllStringSubmatch(rest, -1) {
		out = append(out, m[1])
	}
	return out
}

// TestAddFeedWalk walks the pages as a browser without JavaScript does,
// forms discovered from the HTML and cookies kept: login refused, then
// accepted; a page fetched once whatever the number of previews; the best
// proposal is the list, not the menu; an edited block previewed and added;
// the landing view shows the first version; forms without their token
// register nothing.
func TestAddFeedWalk(t *testing.T) {
	env := newPagesEnv(t)
	b := formclient.New(t, env.srv.URL)

	// / says registration is open and offers a discreet login, no /new.
	if code := b.Get("/"); code != http.StatusOK {
		t.Fatalf("GET /: %d", code)
	}
	for _, want := range []string{`href="/register"`, `Registration is open`, `href="/login"`} {
		if !strings.Contains(b.Body, want) {
			t.Errorf("/ lacks %s", want)
		}
	}
	if strings.Contains(b.Body, `href="/new"`) {
		t.Error("/ links to /new before login")
	}
	// /new sends to the login page.
	if code := b.Get("/new"); code != http.StatusOK || b.Last.Request.URL.Path != "/login" {
		t.Fatalf("GET /new before login: %d at %s, want the login page", code, b.Last.Request.URL)
	}

	login := b.Form("/login", "token", "csrf")
	if code := b.Submit(login, "token", pagesToken+" "); code != http.StatusUnauthorized {
		t.Errorf("login with a padded token: %d, want 401", code)
	}
	if strings.Contains(b.Body, pagesToken) {
		t.Error("the login page shows the token back")
	}
	login = b.Form("/login", "token", "csrf")
	if code := b.Submit(login, "csrf", "forged", "token", pagesToken); code != http.StatusForbidden {
		t.Errorf("login with a wrong CSRF token: %d, want 403", code)
	}
	if code := b.Submit(login, "token", pagesToken); code != http.StatusOK || b.Last.Request.URL.Path != "/new" {
		t.Fatalf("login: %d at %s, want /new", code, b.Last.Request.URL)
	}
	if code := b.Get("/"); code != http.StatusOK || !strings.Contains(b.Body, `href="/new"`) {
		t.Errorf("/ after login: %d, no link to /new", code)
	}

	// A URL: fetched once, proposals shown.
	b.Get("/new")
	list := env.origin.URL + "/list.html"
	if code := b.Submit(b.Form("/new", "url"), "url", list); code != http.StatusOK || b.Last.Request.URL.Path != "/new" {
		t.Fatalf("fetch: %d at %s\n%s", code, b.Last.Request.URL, b.Body)
	}
	wantList := []string{"Budget approved for the new library wing", "Tram line 4 closed for works until March",
		"Winter opening hours of the town hall offices", "Public consultation on the river park project"}
	if got := itemTitles(b, "p1"); strings.Join(got, "|") != strings.Join(wantList, "|") {
		t.Errorf("best proposal's items %q, want the notices %q", got, wantList)
	}
	if !strings.Contains(b.Body, env.origin.URL+"/feed.xml") {
		t.Error("the page's own feed is not offered")
	}
	if !strings.Contains(b.Body, `id="annotations-none"`) {
		t.Error("the page is not said to be unannotated")
	}
	offerURL := b.Last.Request.URL.RequestURI()

	// Previews re-extract the kept bytes: three of them, and a reload.
	edited := "item: article.notice\ntitle: h3 a\nlink: h3 a @href\ndescription: p\ndate: time @datetime\n"
	for i := range 3 {
		f := b.Form("/new/preview", "select", "fetch")
		block := edited
		if i == 1 {
			block = "item: nav.menu li\ntitle: a\nlink: a @href\n"
		}
		if code := b.Submit(f, "select", block); code != http.StatusOK {
			t.Fatalf("preview %d: %d\n%s", i, code, b.Body)
		}
	}
	if got := itemTitles(b, "preview"); strings.Join(got, "|") != strings.Join(wantList, "|") {
		t.Errorf("preview items %q, want %q", got, wantList)
	}
	b.Get(offerURL)
	if n := env.origin.count("/list.html"); n != 1 {
		t.Errorf("the origin served the page %d times for one /new submission, want 1", n)
	}

	// Forms without their token change nothing.
	b.Submit(b.Form("/new/preview", "select"), "select", edited)
	add := b.Form("/new/add", "id", "select")
	if add.Values.Get("select") != edited {
		t.Errorf("the preview's add form carries %q, want the previewed block", add.Values.Get("select"))
	}
	if code := b.Submit(add, "csrf", ""); code != http.StatusForbidden {
		t.Errorf("add without a CSRF token: %d, want 403", code)
	}
	if code := b.Submit(add, "csrf", add.Values.Get("csrf")+"x"); code != http.StatusForbidden {
		t.Errorf("add with a wrong CSRF token: %d, want 403", code)
	}
	id := add.Values.Get("id")
	if _, ok := env.reg.Definition(id); ok {
		t.Fatalf("a refused form registered %q", id)
	}
	// A cross-site browser request is refused even with the token.
	code := b.Do(http.MethodPost, "/new/add", add.Values, "Sec-Fetch-Site", "cross-site")
	if _, ok := env.reg.Definition(id); ok || code != http.StatusForbidden {
		t.Fatalf("a cross-site add: %d, registered %v", code, ok)
	}

	// Mistakes come back next to their fields.
	if code := b.Submit(add, "weight", "heavy", "policy", "flat", "interval", "soon"); code != http.StatusUnprocessableEntity || !strings.Contains(b.Body, "is not a number") {
		t.Errorf("add with a bad weight: %d", code)
	}
	if code := b.Submit(add, "id", "file1"); code != http.StatusUnprocessableEntity || !strings.Contains(b.Body, "already the id of") {
		t.Errorf("add with a taken id: %d", code)
	}
	// The form comes back with what was typed (here the id alone: the
	// policy left to the server).
	if code := b.Submit(add, "id", "file1", "policy", ""); code != http.StatusUnprocessableEntity {
		t.Errorf("add with a taken id and no policy: %d", code)
	}
	if f := b.Form("/new/add", "id"); f.Values.Get("id") != "file1" {
		t.Errorf("the form shown again has id %q, want what was typed, file1", f.Values.Get("id"))
	}
	for _, field := range [][2]string{{"weight", "2.5"}, {"policy", "flat"}, {"interval", "2h"}} {
		values := map[string]string{"id": "", "policy": "", "weight": "", "interval": "", field[0]: field[1]}
		if code := b.Submit(add, "id", values["id"], "policy", values["policy"], "weight", values["weight"], "interval", values["interval"]); code != http.StatusUnprocessableEntity {
			t.Errorf("add without an id, with %s: %d", field[0], code)
		}
		if f := b.Form("/new/add", field[0]); f.Values.Get(field[0]) != field[1] {
			t.Errorf("the form shown again has %s %q, want what was typed, %s", field[0], f.Values.Get(field[0]), field[1])
		}
	}
	if code := b.Submit(add, "policy", "flat", "interval", "soon"); code != http.StatusUnprocessableEntity || !strings.Contains(b.Body, `interval`) {
		t.Errorf("add with a bad interval: %d", code)
	}
	if _, ok := env.reg.Definition(id); ok {
		t.Fatalf("a refused add registered %q", id)
	}

	// Add: registered as PUT does, polled at once, landing on the view.
	if code := b.Submit(add); code != http.StatusOK || b.Last.Request.URL.Path != "/view/"+id {
		t.Fatalf("add: %d at %s, want /view/%s\n%s", code, b.Last.Request.URL, id, b.Body)
	}
	d, ok := env.reg.Definition(id)
	if !ok || d.Resource.URL != list || d.Resource.Select.Item != "article.notice" || d.Resource.Select.Description != "p" {
		t.Fatalf("registered %+v, want the list page with the edited block", d.Resource)
	}
	if env.reg.polls.Load() != 1 {
		t.Errorf("%d polls after add, want 1", env.reg.polls.Load())
	}
	if !strings.Contains(b.Body, "Budget approved for the new library wing") {
		t.Error("the view does not show the first version's items")
	}
	if n := env.origin.count("/list.html"); n != 2 {
		t.Errorf("the origin served the page %d times, want 2 (the /new fetch and the first poll)", n)
	}

	// An annotated page: its annotations, as the feed they make, with an
	// add form that registers no block; no proposals to preview.
	b.Get("/new")
	if code := b.Submit(b.Form("/new", "url"), "url", env.origin.URL+"/club.html"); code != http.StatusOK {
		t.Fatalf("fetch the annotated page: %d", code)
	}
	if got := itemTitles(b, "annotations"); len(got) != 1 || got[0] != "Season opens" {
		t.Errorf("annotations' items %q, want the club's one", got)
	}
	if f := b.Form("/new/add", "id", "select"); f.Values.Get("select") != "" || f.Values.Get("from") != "annotations" {
		t.Errorf("the annotations' add form carries select %q from %q", f.Values.Get("select"), f.Values.Get("from"))
	}

	// Logout ends it.
	b.Get("/new")
	if code := b.Submit(b.Form("/logout", "csrf")); code != http.StatusOK || b.Last.Request.URL.Path != "/" {
		t.Errorf("logout: %d at %s", code, b.Last.Request.URL)
	}
	if b.Get("/new"); b.Last.Request.URL.Path != "/login" {
		t.Errorf("/new after logout answered at %s, want /login", b.Last.Request.URL)
	}
}

// TestLoginLimitAndCookies checks the cookie's attributes over http and
// behind a trusted proxy, the login rate limit and a session's expiry.
func TestLoginLimitAndCookies(t *testing.T) {
	env := newPagesEnv(t, func(o *api.Options) { o.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")} })
	b := formclient.New(t, env.srv.URL)
	b.C.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	b.Get("/login")
	login := b.Form("/login", "token", "csrf")
	if code := b.Submit(login, "token", pagesToken); code != http.StatusSeeOther {
		t.Fatalf("login: %d", code)
	}
	ck := formclient.SetCookie(b.Last, sessionCookie)
	if ck == nil || !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode || ck.Secure || ck.MaxAge != 12*3600 || ck.Path != "/" {
		t.Fatalf("session cookie over http: %+v, want HttpOnly, SameSite=Strict, not Secure, Max-Age 43200", ck)
	}
	// Behind the trusted proxy, over https: Secure.
	proxied := formclient.New(t, env.srv.URL)
	proxied.C.CheckRedirect = b.C.CheckRedirect
	proxied.Get("/login")
	form := proxied.Form("/login", "token")
	form.Values.Set("token", pagesToken)
	code := proxied.Do(http.MethodPost, "/login", form.Values, "X-Forwarded-Proto", "https")
	ck = formclient.SetCookie(proxied.Last, sessionCookie)
	if code != http.StatusSeeOther || ck == nil || !ck.Secure || !formclient.SetCookie(proxied.Last, csrfCookie).Secure {
		t.Errorf("login behind a trusted https proxy: %d, cookie %+v, want Secure", code, ck)
	}

	// Expiry: the cookie is checked on the server, against the clock.
	b.C.CheckRedirect = nil
	if b.Get("/new"); b.Last.Request.URL.Path != "/new" {
		t.Fatalf("/new with a fresh session answered at %s", b.Last.Request.URL)
	}
	env.clock.Advance(12*time.Hour + time.Second)
	if b.Get("/new"); b.Last.Request.URL.Path != "/login" || !strings.Contains(b.Body, "session expired") {
		t.Errorf("/new after 12 h: at %s, want /login saying the session expired", b.Last.Request.URL)
	}

	// Rate limit: five wrong tokens, then 429 whatever the token.
	other := formclient.New(t, env.srv.URL)
	other.Get("/login")
	for i := range loginBurst {
		if code := other.Submit(other.Form("/login", "token"), "token", "guess"); code != http.StatusUnauthorized {
			t.Fatalf("wrong token %d: %d, want 401", i+1, code)
		}
	}
	if code := other.Submit(other.Form("/login", "token"), "token", pagesToken); code != http.StatusTooManyRequests || other.Last.Header.Get("Retry-After") == "" {
		t.Fatalf("login past the limit: %d (Retry-After %q), want 429 with Retry-After", code, other.Last.Header.Get("Retry-After"))
	}
	if !strings.Contains(other.Body, "Too many login attempts") {
		t.Error("the 429 page does not say why")
	}
	env.clock.Advance(loginEvery)
	if code := other.Submit(other.Form("/login", "token"), "token", pagesToken); code != http.StatusOK || other.Last.Request.URL.Path != "/new" {
		t.Errorf("login once the bucket refilled: %d at %s", code, other.Last.Request.URL)
	}
}

// TestRegisterForm registers an annotated page through the webmasters'
// form and explains the refusal of a page that is not annotated.
func TestRegisterForm(t *testing.T) {
	env := newPagesEnv(t)
	b := formclient.New(t, env.srv.URL)
	b.Get("/register")
	if code := b.Submit(b.Form("/register", "url"), "url", env.origin.URL+"/plain.html"); code != http.StatusUnprocessableEntity {
		t.Fatalf("register an unannotated page: %d, want 422", code)
	}
	if !regexp.MustCompile(`<code>\d+:\d+: error: [^<]+</code>`).MatchString(b.Body) || !strings.Contains(b.Body, "not annotated") {
		t.Errorf("the refusal lacks lint diagnostics:\n%s", b.Body)
	}
	if code := b.Submit(b.Form("/register", "url"), "url", env.origin.URL+"/club.html"); code != http.StatusOK || b.Last.Request.URL.Path != "/register" {
		t.Fatalf("register an annotated page: %d at %s", code, b.Last.Request.URL)
	}
	id := b.Last.Request.URL.Query().Get("feed")
	if d, ok := env.reg.Definition(id); !ok || d.Resource.URL != env.origin.URL+"/club.html" {
		t.Fatalf("registered %q: %+v", id, d)
	}
	if !strings.Contains(b.Body, `id="feed"`) || !strings.Contains(b.Body, "/resources/"+id) {
		t.Errorf("the answer does not show the feed of %q", id)
	}
	// Without the token: 403, nothing registered.
	b.Get("/register")
	f := b.Form("/register", "url")
	if code := b.Submit(f, "csrf", "", "url", env.origin.URL+"/list.html"); code != http.StatusForbidden {
		t.Errorf("register without a token: %d, want 403", code)
	}
	if len(env.reg.Definitions()) != 2 {
		t.Errorf("%d definitions, want file1 and the club", len(env.reg.Definitions()))
	}
	// Closed registration: no form.
	closed := newPagesEnv(t, func(o *api.Options) { o.OpenRegistration = false })
	cb := formclient.New(t, closed.srv.URL)
	if code := cb.Get("/register"); code != http.StatusNotFound {
		t.Errorf("/register while closed: %d, want 404", code)
	}
	if cb.Get("/"); strings.Contains(cb.Body, `href="/register"`) {
		t.Error("/ links to /register while registration is closed")
	}
}

// TestAddFormDefinition checks the add form's body: what PUT
// /admin/resources would be sent, and the mistakes placed on their fields.
func TestAddFormDefinition(t *testing.T) {
	cases := []struct {
		name   string
		form   addForm
		want   string // the body, "" when refused
		errors []string
	}{
		{"annotations", addForm{URL: "https://example.org/", ID: "ex"}, `{"url":"https://example.org/"}`, nil},
		{"block with select key", addForm{URL: "https://e.org/", ID: "e", Select: "select:\n  item: li\n", Policy: "flat", Interval: "1h", Weight: "2"},
			`{"policy":{"interval":"1h","kind":"flat"},"select":{"item":"li"},"url":"https://e.org/","weight":2}`, nil},
		{"no id", addForm{URL: "https://e.org/"}, "", []string{fieldID}},
		{"bad weight and block", addForm{URL: "https://e.org/", ID: "e", Weight: "x", Select: "item: ["}, "", []string{fieldWeight, fieldSelect}},
		{"unknown selector key", addForm{URL: "https://e.org/", ID: "e", Select: "item: li\ntitel: h3\n"}, "", []string{fieldSelect}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := tc.form
			f.Errors = fieldErrors{}
			got := string(f.definition())
			if got != tc.want {
				t.Errorf("definition = %s, want %s", got, tc.want)
			}
			for _, field := range tc.errors {
				if f.Errors[field] == "" {
					t.Errorf("no error on %s: %v", field, f.Errors)
				}
			}
			if len(f.Errors) != len(tc.errors) {
				t.Errorf("errors %v, want on %v", f.Errors, tc.errors)
			}
		})
	}
	// Errors of the registry's validation go next to their fields.
	fe := fieldErrors{}
	_, _, err := api.RegisterDefinition(context.Background(), apitest.NewFakeRegistry(), "a b", []byte(`{"url":"ftp://x","policy":{"kind":"sometimes"},"weight":-1}`))
	definitionErrors(err, fe)
	for _, field := range []string{fieldURL, fieldID, fieldPolicy} {
		if fe[field] == "" {
			t.Errorf("no error on %s: %v", field, fe)
		}
	}
}

// TestSecureRequest: the cookie is Secure over TLS, or over https behind a
// trusted proxy; X-Forwarded-Proto from anyone else counts for nothing.
func TestSecureRequest(t *testing.T) {
	_, s := mountBoth(t, api.Options{Store: &apitest.SvcStore{}, TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}})
	cases := []struct {
		name, remote, proto string
		tls, want           bool
	}{
		{"plain http", "192.0.2.1:5000", "", false, false},
		{"tls", "192.0.2.1:5000", "", true, true},
		{"trusted proxy, https", "10.1.2.3:5000", "https", false, true},
		{"trusted proxy, http", "10.1.2.3:5000", "http", false, false},
		{"untrusted sender of the header", "192.0.2.1:5000", "https", false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, "/login", nil)
			req.RemoteAddr = tc.remote
			if tc.proto != "" {
				req.Header.Set("X-Forwarded-Proto", tc.proto)
			}
			if tc.tls {
				req.TLS = &tls.ConnectionState{}
			}
			if got := s.secureRequest(req); got != tc.want {
				t.Errorf("secureRequest = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestFetchedPages: the kept pages are bounded in count, kept
// fetchedTTL, and readable only by the session that fetched them.
func TestFetchedPages(t *testing.T) {
	var f fetchedPages
	t0 := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	first := f.put(&fetchedPage{SessionID: "a", Page: api.Page{Body: []byte("x")}}, t0)
	if _, ok := f.get(first, "b", t0); ok {
		t.Error("another session read the page")
	}
	if _, ok := f.get(first, "a", t0.Add(fetchedTTL-time.Second)); !ok {
		t.Error("the page expired early")
	}
	if _, ok := f.get(first, "a", t0.Add(fetchedTTL)); ok || f.len() != 0 {
		t.Errorf("the page outlived its TTL (%d kept)", f.len())
	}
	var ids []string
	for i := range fetchedMaxCount + 3 {
		ids = append(ids, f.put(&fetchedPage{SessionID: "a", Page: api.Page{Body: make([]byte, 10)}}, t0.Add(time.Duration(i)*time.Millisecond)))
	}
	if f.len() != fetchedMaxCount {
		t.Errorf("%d pages kept, want %d", f.len(), fetchedMaxCount)
	}
	if _, ok := f.get(ids[0], "a", t0); ok {
		t.Error("the oldest page was kept past the count bound")
	}
	if _, ok := f.get(ids[len(ids)-1], "a", t0); !ok {
		t.Error("the newest page was dropped")
	}
	big := f.put(&fetchedPage{SessionID: "a", Page: api.Page{Body: make([]byte, fetchedMaxBytes)}}, t0)
	if f.len() != 1 || f.bytes != fetchedMaxBytes {
		t.Errorf("after a page of the whole byte bound: %d pages, %d bytes", f.len(), f.bytes)
	}
	if _, ok := f.get(big, "a", t0); !ok {
		t.Error("the big page was not kept")
	}
}

// TestSessionEndsWithToken: a session is signed under the admin token, so
// a rotated token (or admin turned off) ends it.
func TestSessionEndsWithToken(t *testing.T) {
	env := newPagesEnv(t)
	b := formclient.New(t, env.srv.URL)
	b.Get("/login")
	if b.Submit(b.Form("/login", "token"), "token", pagesToken); b.Last.Request.URL.Path != "/new" {
		t.Fatalf("login: at %s", b.Last.Request.URL)
	}
	env.s.SetAdminToken("a new token") // as a reload does: the api and the pages
	env.ui.SetAdminToken("a new token")
	if b.Get("/new"); b.Last.Request.URL.Path != "/login" {
		t.Errorf("/new after the token changed: at %s, want /login", b.Last.Request.URL)
	}
	env.s.SetAdminToken("")
	env.ui.SetAdminToken("")
	if code := b.Get("/new"); code != http.StatusNotFound || !strings.Contains(b.Body, "admin.token") {
		t.Errorf("/new with admin off: %d, want 404 saying how to turn it on", code)
	}
	if code := b.Get("/login"); code != http.StatusNotFound {
		t.Errorf("/login with admin off: %d, want 404", code)
	}
}

// TestLogoutDeletesTheCookie: logging out tells the browser to delete the
// session cookie now (Max-Age=0), not to keep it a while.
func TestLogoutDeletesTheCookie(t *testing.T) {
	env := newPagesEnv(t)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Get(env.srv.URL + "/logout")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close() //nolint:errcheck // nothing read
	var session *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == sessionCookie {
			session = c
		}
	}
	if resp.StatusCode != http.StatusSeeOther || session == nil || session.MaxAge >= 0 || session.Value != "" {
		t.Errorf("GET /logout: %d, session cookie %v; want 303 and the cookie deleted", resp.StatusCode, session)
	}
}

// TestPublicOriginTrusted: behind a proxy that rewrites Host, a form sent
// from the public URL's own pages (Origin: the public URL, no
// Sec-Fetch-Site) is not taken for another site's; another origin is.
func TestPublicOriginTrusted(t *testing.T) {
	env := newPagesEnv(t, func(o *api.Options) { o.PublicURL = "https://feeds.example.org/dynamo" })
	for origin, want := range map[string]string{
		"https://feeds.example.org": "security token", // past the origin check, refused for its missing token
		"https://evil.example":      "from another site",
		"http://feeds.example.org":  "from another site",
	} {
		req, err := http.NewRequest(http.MethodPost, env.srv.URL+"/login", strings.NewReader("token=x"))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", origin)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close() //nolint:errcheck // read
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), want) {
			t.Errorf("a form from %s: %d %s, want 403 saying %q", origin, resp.StatusCode, body, want)
		}
	}
}

// TestAddAfterFetchExpired: the add form carries the whole definition (the
// URL too), so a person who submits it after the fetched page expired
// (fetchedTTL) still registers the page they chose, polled at once, and
// lands on its view: only the previews need the kept bytes. A form without
// its URL then has nothing to take it from: 410, fetch the page again.
func TestAddAfterFetchExpired(t *testing.T) {
	env := newPagesEnv(t)
	b := formclient.New(t, env.srv.URL)
	b.Get("/login")
	if b.Submit(b.Form("/login", "token"), "token", pagesToken); b.Last.Request.URL.Path != "/new" {
		t.Fatalf("login: at %s", b.Last.Request.URL)
	}
	list := env.origin.URL + "/list.html"
	if code := b.Submit(b.Form("/new", "url"), "url", list); code != http.StatusOK {
		t.Fatalf("fetch: %d\n%s", code, b.Body)
	}
	add := b.Form("/new/add", "id", "select")
	id := add.Values.Get("id")
	env.clock.Advance(fetchedTTL + time.Second)
	if code := b.Submit(add, "url", ""); code != http.StatusGone || !strings.Contains(b.Body, "fetch it again") {
		t.Errorf("add without its URL after the fetched page expired: %d, want 410 saying to fetch it again\n%s", code, b.Body)
	}
	if _, ok := env.reg.Definition(id); ok {
		t.Fatalf("a form without a URL registered %q", id)
	}
	if code := b.Submit(add); code != http.StatusOK || b.Last.Request.URL.Path != "/view/"+id {
		t.Fatalf("add after the fetched page expired: %d at %s, want /view/%s\n%s", code, b.Last.Request.URL, id, b.Body)
	}
	if d, ok := env.reg.Definition(id); !ok || d.Resource.URL != list {
		t.Errorf("registered %+v (%v), want the list page", d.Resource, ok)
	}
}
