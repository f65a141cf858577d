package ui

import (
	"context"
	"fmt"
	"github.com/dynamo-rss/dynamo/api"
	"github.com/dynamo-rss/dynamo/internal/apitest"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dynamo-rss/dynamo/internal/formclient"
	"github.com/dynamo-rss/dynamo/storage"
)

// TestLoginReturnPath logs in with ?next= spelled in every way a browser
// could take for another site, or that hides a control character or white
// space: only a plain path of this site is followed, everything else goes
// to /.
func TestLoginReturnPath(t *testing.T) {
	env := newPagesEnv(t)
	cases := []struct {
		name, next, want string
	}{
		{"a path of ours", "/view/file1", "/view/file1"},
		{"a path with a query", "/new?url=https%3A%2F%2Fexample.org%2F", "/new?url=https%3A%2F%2Fexample.org%2F"},
		{"the root", "/", "/"},
		{"none: the page a login is for", "", "/new"},
		{"relative", "view/file1", "/"},
		{"scheme-relative", "//evil.example/a", "/"},
		{"absolute", "https://evil.example/a", "/"},
		{"absolute http", "http://evil.example/", "/"},
		{"javascript", "javascript:alert(1)", "/"},
		{"data", "data:text/html,<script>alert(1)</script>", "/"},
		{"backslash after slash", `/\evil.example/a`, "/"},
		{"two backslashes", `\\evil.example/a`, "/"},
		{"backslash first", `\/evil.example/a`, "/"},
		{"tab between slashes", "/\t/evil.example/a", "/"},
		{"encoded tab between slashes", "/%09/evil.example/a", "/"},
		{"encoded slash", "/%2F/evil.example/a", "/"},
		{"encoded slash lower case", "/%2f%2fevil.example/a", "/"},
		{"encoded backslash", "/%5Cevil.example/a", "/"},
		{"encoded backslash lower case", "/%5cevil.example", "/"},
		{"CR LF", "/\r\nLocation: https://evil.example/", "/"},
		{"encoded CR LF", "/%0d%0aSet-Cookie:x=1", "/"},
		{"encoded NUL", "/view/%00", "/"},
		{"space", "/view/a b", "/"},
		{"encoded space", "/view/a%20b", "/"},
		{"plus is not a space here but kept", "/view/a+b", "/view/a+b"},
		{"no-break space", "/\u00a0/evil.example", "/"},
		{"encoded no-break space", "/%C2%A0/evil.example", "/"},
		{"ideographic space", "/\u3000evil.example", "/"},
		{"line separator", "/view/\u2028", "/"},
		{"encoded line separator", "/view/%E2%80%A8", "/"},
		{"DEL", "/view/\x7f", "/"},
		{"encoded DEL", "/view/%7F", "/"},
		{"C1 control", "/view/\u0085", "/"},
		{"vertical tab", "/\v/evil.example", "/"},
		{"double encoded tab", "/%2509/evil.example", "/"},
		{"double encoded slash", "/%252F/evil.example", "/"},
		{"zero-width space", "/\u200b/evil.example", "/"},
		{"bad percent encoding", "/view/%zz", "/"},
		{"invalid UTF-8", "/view/\xff", "/"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := formclient.New(t, env.srv.URL)
			b.C.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
			if code := b.Get("/login?" + url.Values{"next": {tc.next}}.Encode()); code != http.StatusOK {
				t.Fatalf("GET /login: %d", code)
			}
			if code := b.Submit(b.Form("/login", "token"), "token", pagesToken); code != http.StatusSeeOther {
				t.Fatalf("login: %d, want 303", code)
			}
			if loc := b.Last.Header.Get("Location"); loc != tc.want {
				t.Errorf("next %q: Location %q, want %q", tc.next, loc, tc.want)
			}
			// The form field is checked on its own too: a page that posts
			// its own next never gets further.
			b = formclient.New(t, env.srv.URL)
			b.C.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
			b.Get("/login")
			f := b.Form("/login", "token")
			f.Values.Set("next", tc.next)
			if code := b.Submit(f, "token", pagesToken); code != http.StatusSeeOther {
				t.Fatalf("login with next posted: %d, want 303", code)
			}
			if loc := b.Last.Header.Get("Location"); loc != tc.want {
				t.Errorf("next %q posted: Location %q, want %q", tc.next, loc, tc.want)
			}
		})
	}
}

// TestLoginRightTokensNotLimited: more logins with the right token than
// the limiter's burst all succeed; wrong tokens are limited as before.
func TestLoginRightTokensNotLimited(t *testing.T) {
	env := newPagesEnv(t)
	for i := range 3 * loginBurst {
		b := formclient.New(t, env.srv.URL) // a browser of the same address, not logged in
		b.C.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		b.Get("/login")
		if code := b.Submit(b.Form("/login", "token"), "token", pagesToken); code != http.StatusSeeOther {
			t.Fatalf("right token %d: %d, want 303", i+1, code)
		}
	}
	b := formclient.New(t, env.srv.URL)
	for i := range loginBurst {
		b.Get("/login")
		if code := b.Submit(b.Form("/login", "token"), "token", "guess"); code != http.StatusUnauthorized {
			t.Fatalf("wrong token %d: %d, want 401", i+1, code)
		}
	}
	b.Get("/login")
	if code := b.Submit(b.Form("/login", "token"), "token", "guess"); code != http.StatusTooManyRequests {
		t.Fatalf("wrong token past the burst: %d, want 429", code)
	}
}

// sessionCopy is a browser that carries a copy of b's session cookie (and
// none of its other cookies), as someone who took it would, at base.
func sessionCopy(t *testing.T, b *formclient.Client, from, base string) *formclient.Client {
	t.Helper()
	u, err := url.Parse(from)
	if err != nil {
		t.Fatal(err)
	}
	var value string
	for _, ck := range b.C.Jar.Cookies(u) {
		if ck.Name == sessionCookie {
			value = ck.Value
		}
	}
	if value == "" {
		t.Fatal("the browser has no session cookie")
	}
	thief := formclient.New(t, base)
	to, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	thief.C.Jar.SetCookies(to, []*http.Cookie{{Name: sessionCookie, Value: value, Path: "/"}})
	return thief
}

// login logs b in and fails t otherwise.
func login(t *testing.T, b *formclient.Client) {
	t.Helper()
	b.Get("/login?next=/new")
	if code := b.Submit(b.Form("/login", "token"), "token", pagesToken); code != http.StatusOK || b.Last.Request.URL.Path != "/new" {
		t.Fatalf("login: %d at %s, want /new", code, b.Last.Request.URL)
	}
}

// TestLogoutEndsSessionEverywhere: a copy of the session cookie taken
// before logout stops working, on the node that logged out and on another
// sharing the store: /new sends to the login page, and a form fetched with
// the copy before is refused.
func TestLogoutEndsSessionEverywhere(t *testing.T) {
	for _, shared := range []bool{false, true} {
		name := map[bool]string{false: "one node, no store", true: "two nodes sharing a store"}[shared]
		t.Run(name, func(t *testing.T) {
			clock := &apitest.Clock{At: time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)} // one time for both nodes
			mod := []any{func(o *api.Options) { o.Now = clock.Now }}
			if shared {
				db := apitest.OpenDB(t)
				mod = append(mod, func(o *Options) { o.Sessions = db })
			}
			one := newPagesEnv(t, mod...)
			other := one
			if shared {
				other = newPagesEnv(t, mod...)
			}
			b := formclient.New(t, one.srv.URL)
			login(t, b)
			thief := sessionCopy(t, b, one.srv.URL, other.srv.URL)
			if code := thief.Get("/new"); code != http.StatusOK || thief.Last.Request.URL.Path != "/new" {
				t.Fatalf("the copy before logout: %d at %s, want /new", code, thief.Last.Request.URL)
			}
			form := thief.Form("/new", "url")

			if code := b.Submit(b.Form("/logout", "csrf")); code != http.StatusOK || b.Last.Request.URL.Path != "/" {
				t.Fatalf("logout: %d at %s", code, b.Last.Request.URL)
			}
			if code := thief.Get("/new"); code != http.StatusOK || thief.Last.Request.URL.Path != "/login" {
				t.Errorf("the copy after logout: %d at %s, want the login page", code, thief.Last.Request.URL)
			}
			if strings.Contains(thief.Body, `id="logged-in"`) {
				t.Error("the login page says the copy is logged in")
			}
			thief.C.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
			if code := thief.Submit(form, "url", one.origin.URL+"/list.html"); code != http.StatusSeeOther || !strings.HasPrefix(thief.Last.Header.Get("Location"), "/login") {
				t.Errorf("a form of the copy after logout: %d to %q, want 303 to the login page", code, thief.Last.Header.Get("Location"))
			}
			if n := one.origin.count("/list.html"); n != 0 {
				t.Errorf("the origin was fetched %d times for the copy's form", n)
			}
			// Logging in again is a new session, which works.
			login(t, b)
		})
	}
}

// flakySessions is a storage.Sessions whose store can be cut off.
type flakySessions struct {
	storage.Sessions
	down atomic.Bool
}

func (f *flakySessions) RevokeSession(ctx context.Context, id string, until, now time.Time) error {
	if f.down.Load() {
		return fmt.Errorf("revoke: %w", storage.ErrUnavailable)
	}
	return f.Sessions.RevokeSession(ctx, id, until, now)
}

func (f *flakySessions) SessionRevoked(ctx context.Context, id string) (bool, error) {
	if f.down.Load() {
		return false, fmt.Errorf("read: %w", storage.ErrUnavailable)
	}
	return f.Sessions.SessionRevoked(ctx, id)
}

// TestSessionStoreDown: while the store cannot say whether a session was
// ended, the session opens nothing (503) and a logout is not pretended
// (503, the cookie kept, so logging out again finishes it).
func TestSessionStoreDown(t *testing.T) {
	store := &flakySessions{Sessions: apitest.OpenDB(t)}
	env := newPagesEnv(t, func(o *Options) { o.Sessions = store })
	b := formclient.New(t, env.srv.URL)
	login(t, b)
	form := b.Form("/new", "url")
	logout := b.Form("/logout", "csrf")
	thief := sessionCopy(t, b, env.srv.URL, env.srv.URL)

	store.down.Store(true)
	if code := b.Get("/new"); code != http.StatusServiceUnavailable || b.Last.Header.Get("Retry-After") == "" {
		t.Errorf("/new with the store down: %d (Retry-After %q), want 503", code, b.Last.Header.Get("Retry-After"))
	}
	if code := b.Submit(form, "url", env.origin.URL+"/list.html"); code != http.StatusServiceUnavailable {
		t.Errorf("a form with the store down: %d, want 503", code)
	}
	if n := env.origin.count("/list.html"); n != 0 {
		t.Errorf("the origin was fetched %d times with the store down", n)
	}
	b.C.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	if code := b.Submit(logout); code != http.StatusServiceUnavailable || formclient.SetCookie(b.Last, sessionCookie) != nil {
		t.Errorf("logout with the store down: %d, want 503 and the cookie kept", code)
	}
	if !strings.Contains(b.Body, "not logged out yet") {
		t.Error("the 503 of a logout does not say it did not happen")
	}
	if code := b.Get("/logout"); code != http.StatusServiceUnavailable {
		t.Errorf("GET /logout with the store down: %d, want 503", code)
	}
	// A page that only reads still answers, without the session.
	if code := b.Get("/"); code != http.StatusOK || strings.Contains(b.Body, `href="/new"`) {
		t.Errorf("/ with the store down: %d (links to /new: %v), want 200 as for a visitor", code, strings.Contains(b.Body, `href="/new"`))
	}

	store.down.Store(false)
	if code := b.Submit(logout); code != http.StatusSeeOther {
		t.Fatalf("logout once the store is back: %d, want 303", code)
	}
	if code := thief.Get("/new"); thief.Last.Request.URL.Path != "/login" {
		t.Errorf("the copy after logout: %d at %s, want the login page", code, thief.Last.Request.URL)
	}
}
