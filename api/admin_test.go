package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestBearerMatches(t *testing.T) {
	const token = "s3cret-token"
	for _, tc := range []struct {
		name, header string
		want         bool
	}{
		{"exact", "Bearer s3cret-token", true},
		{"scheme is case-insensitive", "bearer s3cret-token", true},
		{"two spaces", "Bearer  s3cret-token", false},
		{"trailing space", "Bearer s3cret-token ", false},
		{"NBSP padding", "Bearer s3cret-token\u00a0", false},
		{"em space padding", "Bearer \u2003s3cret-token", false},
		{"tab instead of space", "Bearer\ts3cret-token", false},
		{"empty", "", false},
		{"no scheme", "s3cret-token", false},
		{"basic scheme", "Basic s3cret-token", false},
		{"prefix of the token", "Bearer s3cret", false},
		{"token plus more", "Bearer s3cret-token2", false},
		{"same length, one byte off", "Bearer s3cret-tokeN", false},
		{"empty credential", "Bearer ", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := bearerMatches(tc.header, token); got != tc.want {
				t.Errorf("bearerMatches(%q) = %v, want %v", tc.header, got, tc.want)
			}
		})
	}
}

func TestAdminOffWithoutToken(t *testing.T) {
	store, poller := svcFixture()
	s := newSvcServer(t, Options{Store: store, Poller: poller, Reload: func(context.Context) error { return nil }})
	for _, r := range []struct{ method, path string }{
		{http.MethodPost, "/admin/reload"},
		{http.MethodGet, "/admin/resources/news"},
		{http.MethodPost, "/admin/resources/news/poll"},
	} {
		rec := svcDo(s, r.method, r.path, nil, "Authorization", "Bearer anything")
		p := svcProblem(t, rec, http.StatusNotFound)
		if !strings.Contains(p.Detail, "admin.token") {
			t.Errorf("%s %s: detail %q does not say how to turn admin on", r.method, r.path, p.Detail)
		}
	}
	if len(poller.Polled) != 0 {
		t.Errorf("polled %v with admin off", poller.Polled)
	}
}

func TestAdminAuth(t *testing.T) {
	store, poller := svcFixture()
	reloads := 0
	s := newSvcServer(t, Options{Store: store, Poller: poller, AdminToken: "tok-123",
		Reload: func(ctx context.Context) error { reloads++; return nil }})
	for _, tc := range []struct {
		name, auth string
		status     int
	}{
		{"missing", "", http.StatusUnauthorized},
		{"wrong", "Bearer tok-124", http.StatusUnauthorized},
		{"prefix", "Bearer tok-12", http.StatusUnauthorized},
		{"basic", "Basic dG9rLTEyMw==", http.StatusUnauthorized},
		{"no scheme", "tok-123", http.StatusUnauthorized},
		{"two spaces", "Bearer  tok-123", http.StatusUnauthorized},
		{"trailing space", "Bearer tok-123 ", http.StatusUnauthorized},
		{"right", "Bearer tok-123", http.StatusOK},
		{"scheme in any case", "bEARER tok-123", http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var h []string
			if tc.auth != "" {
				h = []string{"Authorization", tc.auth}
			}
			before := reloads
			rec := svcDo(s, http.MethodPost, "/admin/reload", nil, h...)
			if tc.status != http.StatusOK {
				p := svcProblem(t, rec, tc.status)
				if !strings.HasPrefix(rec.Header().Get("WWW-Authenticate"), "Bearer") {
					t.Errorf("WWW-Authenticate = %q, want a Bearer challenge", rec.Header().Get("WWW-Authenticate"))
				}
				// RFC 6750 §3.1: invalid_token when a token was sent and
				// refused, no error code when none was sent.
				if got, want := strings.Contains(rec.Header().Get("WWW-Authenticate"), `error="invalid_token"`), tc.auth != ""; got != want {
					t.Errorf("WWW-Authenticate = %q: invalid_token %v, want %v", rec.Header().Get("WWW-Authenticate"), got, want)
				}
				if p.Detail == "" {
					t.Error("401 without a detail")
				}
				if reloads != before {
					t.Error("reload ran without the right token")
				}
				return
			}
			if rec.Code != http.StatusOK || reloads != before+1 {
				t.Fatalf("status %d, reloads %d→%d; body %s", rec.Code, before, reloads, rec.Body)
			}
		})
	}
}

func TestAdminReload(t *testing.T) {
	store, poller := svcFixture()
	const auth = "Bearer t"
	for _, tc := range []struct {
		name   string
		reload func(context.Context) error
		status int
		want   string // in the body
	}{
		{"ok", func(context.Context) error { return nil }, http.StatusOK, `"status":"reloaded"`},
		{"refused", func(context.Context) error {
			return errors.New("config line 4: resources[0].url: not an absolute URL")
		}, http.StatusUnprocessableEntity, "resources[0].url: not an absolute URL"},
		{"no reloader", nil, http.StatusNotImplemented, "no configuration file"},
		// A reload cut short (the request's deadline, a client gone) is
		// no verdict on the configuration: 503, try again.
		{"timed out", func(context.Context) error {
			return fmt.Errorf("wait for the poller: %w", context.DeadlineExceeded)
		}, http.StatusServiceUnavailable, "did not complete"},
		{"canceled", func(context.Context) error {
			return fmt.Errorf("wait for the poller: %w", context.Canceled)
		}, http.StatusServiceUnavailable, "did not complete"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSvcServer(t, Options{Store: store, Poller: poller, AdminToken: "t", Reload: tc.reload})
			rec := svcDo(s, http.MethodPost, "/admin/reload", nil, "Authorization", auth)
			if tc.status != http.StatusOK {
				p := svcProblem(t, rec, tc.status)
				if !strings.Contains(p.Detail, tc.want) {
					t.Errorf("detail %q does not contain %q", p.Detail, tc.want)
				}
				return
			}
			if rec.Code != tc.status || !strings.Contains(rec.Body.String(), tc.want) {
				t.Errorf("got %d %s, want %d with %s", rec.Code, rec.Body, tc.status, tc.want)
			}
		})
	}
}

func TestAdminResource(t *testing.T) {
	store, poller := svcFixture()
	s := newSvcServer(t, Options{Store: store, Poller: poller, AdminToken: "t"})
	rec := svcDo(s, http.MethodGet, "/admin/resources/forum", nil, "Authorization", "Bearer t")
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	var got adminStatus
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatalf("decode: %v", err)
	}
	next := svcNow.Add(40 * time.Minute)
	if got.ID != "forum" || got.Policy != "smart" || got.TauSeconds != 2400 || got.Tau != "40m0s" ||
		got.Interval != "42m0s" || got.Alpha != 0.37 || !got.AlphaAuto || got.NextPoll == nil || !got.NextPoll.Equal(next) ||
		got.LastOutcome != "error" || got.Errors != 3 || got.LastError == "" {
		t.Errorf("status JSON = %+v", got)
	}
	svcProblem(t, svcDo(s, http.MethodGet, "/admin/resources/nope", nil, "Authorization", "Bearer t"), http.StatusNotFound)
}

func TestAdminPoll(t *testing.T) {
	store, poller := svcFixture()
	s := newSvcServer(t, Options{Store: store, Poller: poller, AdminToken: "t"})
	rec := svcDo(s, http.MethodPost, "/admin/resources/news/poll", nil, "Authorization", "Bearer t")
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	var got adminStatus
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatalf("decode: %v", err)
	}
	if got.Polls != 10 || got.LastOutcome != "unchanged" || len(poller.Polled) != 1 {
		t.Errorf("after poll: %+v, polled %v", got, poller.Polled)
	}
	svcProblem(t, svcDo(s, http.MethodPost, "/admin/resources/nope/poll", nil, "Authorization", "Bearer t"), http.StatusNotFound)
	if len(poller.Polled) != 1 {
		t.Errorf("unknown id was polled: %v", poller.Polled)
	}
	poller.PollErr = context.Canceled
	svcProblem(t, svcDo(s, http.MethodPost, "/admin/resources/news/poll", nil, "Authorization", "Bearer t"), http.StatusServiceUnavailable)
}

func TestAdminTokenRotation(t *testing.T) {
	store, poller := svcFixture()
	s := newSvcServer(t, Options{Store: store, Poller: poller})
	get := func(token string) int {
		return svcDo(s, http.MethodGet, "/admin/resources/news", nil, "Authorization", "Bearer "+token).Code
	}
	if code := get("a"); code != http.StatusNotFound {
		t.Errorf("no token: %d, want 404", code)
	}
	s.SetAdminToken("a")
	if code := get("a"); code != http.StatusOK {
		t.Errorf("token a: %d, want 200", code)
	}
	s.SetAdminToken("b")
	if get("a") != http.StatusUnauthorized || get("b") != http.StatusOK {
		t.Errorf("after rotation: old %d, new %d", get("a"), get("b"))
	}
	s.SetAdminToken("")
	if code := get("b"); code != http.StatusNotFound {
		t.Errorf("token removed: %d, want 404", code)
	}
}

func TestAdminWrongMethod(t *testing.T) {
	store, poller := svcFixture()
	for _, token := range []string{"tok-123", ""} {
		s := newSvcServer(t, Options{Store: store, Poller: poller, AdminToken: token,
			Reload: func(context.Context) error { return nil }})
		for _, r := range []struct{ method, path string }{
			{http.MethodGet, "/admin/reload"},
			{http.MethodPost, "/admin/resources"},
			{http.MethodPatch, "/admin/resources/news"},
			{http.MethodGet, "/admin/resources/news/poll"},
		} {
			rec := svcDo(s, r.method, r.path, nil, "Authorization", "Bearer "+token)
			p := svcProblem(t, rec, http.StatusMethodNotAllowed)
			if !strings.Contains(p.Detail, "Allow") || strings.Contains(p.Detail, "GET and HEAD") {
				t.Errorf("token %q: %s %s: the detail %q should point at Allow, not name other routes' methods", token, r.method, r.path, p.Detail)
			}
			if rec.Header().Get("Allow") == "" {
				t.Errorf("token %q: %s %s: 405 without Allow", token, r.method, r.path)
			}
		}
	}
}

// The runtime profiles are behind the admin token.
func TestAdminPprof(t *testing.T) {
	store, poller := svcFixture()
	s := newSvcServer(t, Options{Store: store, Poller: poller, AdminToken: "tok-123"})
	svcProblem(t, svcDo(s, http.MethodGet, "/admin/debug/pprof/heap", nil), http.StatusUnauthorized)
	rec := svcDo(s, http.MethodGet, "/admin/debug/pprof/heap", nil, "Authorization", "Bearer tok-123")
	if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Body.String(), "\x1f\x8b") {
		t.Fatalf("heap profile: status %d, body starts %q", rec.Code, rec.Body.String()[:min(8, rec.Body.Len())])
	}
	rec = svcDo(s, http.MethodGet, "/admin/debug/pprof/", nil, "Authorization", "Bearer tok-123")
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "goroutine") {
		t.Fatalf("index: status %d", rec.Code)
	}
	rec = svcDo(s, http.MethodGet, "/admin/debug/pprof", nil, "Authorization", "Bearer tok-123")
	if rec.Code != http.StatusMovedPermanently || rec.Header().Get("Location") != "/admin/debug/pprof/" {
		t.Errorf("bare path: status %d, Location %q", rec.Code, rec.Header().Get("Location"))
	}
	rec = svcDo(s, http.MethodGet, "/admin/debug/pprof/nosuch", nil, "Authorization", "Bearer tok-123")
	if rec.Code != http.StatusNotFound {
		t.Errorf("unknown profile: status %d, want 404", rec.Code)
	}
}

// TestTokenMatches: the admin token matches itself only, byte for byte;
// an empty token, sent or configured, matches nothing (not even another
// empty one).
func TestTokenMatches(t *testing.T) {
	for _, tc := range []struct {
		got, token string
		want       bool
	}{
		{"tok", "tok", true},
		{"tok ", "tok", false},
		{"to", "tok", false},
		{"", "tok", false},
		{"tok", "", false},
		{"", "", false},
	} {
		if got := TokenMatches(tc.got, tc.token); got != tc.want {
			t.Errorf("TokenMatches(%q, %q) = %v, want %v", tc.got, tc.token, got, tc.want)
		}
	}
}
