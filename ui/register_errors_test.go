package ui

import (
	"context"
	"fmt"
	"github.com/dynamo-rss/dynamo/api"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dynamo-rss/dynamo/fetch"
	"github.com/dynamo-rss/dynamo/internal/formclient"
	"github.com/dynamo-rss/dynamo/internal/syncbuf"
)

// fakeResolver resolves the test's made-up names; a name it lacks does
// not exist, as DNS would say (no query leaves the machine).
type fakeResolver map[string]string

func (r fakeResolver) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	a, ok := r[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return []net.IPAddr{{IP: net.IP(netip.MustParseAddr(a).AsSlice())}}, nil
}

// netFetcher fetches as the poller's retriever fails: through the real
// SSRF guard for guarded hosts, over loopback for the others, with a
// deadline.
type netFetcher struct {
	open, guarded *fetch.Dialer
	guardedHosts  map[string]bool
}

func (f netFetcher) FetchPage(ctx context.Context, u string) (api.Page, error) {
	pu, err := url.Parse(u)
	if err != nil {
		return api.Page{}, err
	}
	dl := f.open
	if f.guardedHosts[pu.Hostname()] {
		dl = f.guarded
	}
	c := &http.Client{Transport: &http.Transport{DialContext: dl.DialContext}, Timeout: 200 * time.Millisecond}
	defer c.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return api.Page{}, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return api.Page{}, fmt.Errorf("fetch %s: %w", u, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return api.Page{Body: body, ContentType: resp.Header.Get("Content-Type"), URL: u}, err
}

// TestRegistrationFetchErrorsUniform: a page that cannot be fetched is
// reported the same whatever the network said (connection refused, an
// address the guard refuses, a name that does not resolve, a timeout), on
// POST /resources and on /register, so that a visitor cannot map a
// network with them; the cause goes to the log, its URL without
// credentials.
func TestRegistrationFetchErrorsUniform(t *testing.T) {
	// A port nobody listens on: a listener opened and closed.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedPort := ln.Addr().(*net.TCPAddr).Port
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	// A server that never answers (until the test ends).
	stop := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-stop }))
	t.Cleanup(slow.Close)
	t.Cleanup(func() { close(stop) })
	slowPort := slow.Listener.Addr().(*net.TCPAddr).Port

	res := fakeResolver{"refused.example": "127.0.0.1", "slow.example": "127.0.0.1", "inside.example": "10.1.2.3"}
	fetcher := netFetcher{
		open:         fetch.NewDialer(true, time.Second, res),
		guarded:      fetch.NewDialer(false, time.Second, res),
		guardedHosts: map[string]bool{"inside.example": true},
	}
	var logs syncbuf.Buffer
	env := newPagesEnv(t, func(o *api.Options) {
		o.Fetch = fetcher
		o.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	})
	targets := []struct{ name, url, cause string }{
		{"connection refused", fmt.Sprintf("http://refused.example:%d/news.html", closedPort), "refused"},
		{"forbidden address", "http://inside.example/news.html", "not allowed"},
		{"no such host", "http://nowhere.example/news.html", "no such host"},
		{"timeout", fmt.Sprintf("http://slow.example:%d/news.html", slowPort), "Timeout"},
	}
	var api, form []string
	b := formclient.New(t, env.srv.URL)
	csrf := regexp.MustCompile(`name="csrf" value="[^"]*"`)
	for _, tg := range targets {
		env.clock.Advance(time.Hour) // a full bucket of registrations for each
		mark := len(logs.String())
		code, body := roundTrip(t, env.srv, http.MethodPost, "/resources", `{"url": "`+tg.url+`"}`)
		if code != http.StatusUnprocessableEntity || !strings.Contains(body, "could not be fetched") {
			t.Errorf("%s: POST /resources %d %s, want 422 saying the page could not be fetched", tg.name, code, body)
		}
		api = append(api, strings.ReplaceAll(body, tg.url, "URL"))
		if got := logs.String()[mark:]; !strings.Contains(got, tg.cause) {
			t.Errorf("%s: the log does not say why (%q):\n%s", tg.name, tg.cause, got)
		}

		b.Get("/register")
		code = b.Submit(b.Form("/register", "url"), "url", tg.url)
		if code != http.StatusUnprocessableEntity || !strings.Contains(b.Body, "could not be fetched") {
			t.Errorf("%s: /register %d, want 422 saying the page could not be fetched", tg.name, code)
		}
		form = append(form, csrf.ReplaceAllString(strings.ReplaceAll(b.Body, tg.url, "URL"), "csrf"))
	}
	for i := 1; i < len(targets); i++ {
		if api[i] != api[0] {
			t.Errorf("POST /resources tells %s from %s:\n%s\n%s", targets[i].name, targets[0].name, api[i], api[0])
		}
		if form[i] != form[0] {
			t.Errorf("/register tells %s from %s", targets[i].name, targets[0].name)
		}
	}
}

// TestRegistrationRefusesCredentials: anonymous registration refuses a URL
// with a user name or password, saying why, and never echoes them.
func TestRegistrationRefusesCredentials(t *testing.T) {
	env := newPagesEnv(t)
	u := strings.Replace(env.origin.URL, "http://", "http://webmaster:s3cret@", 1) + "/club.html"
	if code, body := roundTrip(t, env.srv, http.MethodPost, "/resources", `{"url": "`+u+`"}`); code != http.StatusBadRequest || !strings.Contains(body, "user name or password") || strings.Contains(body, "s3cret") {
		t.Errorf("POST /resources with credentials: %d %s, want 400 saying why, without them", code, body)
	}
	b := formclient.New(t, env.srv.URL)
	b.Get("/register")
	if code := b.Submit(b.Form("/register", "url"), "url", u); code != http.StatusBadRequest || !strings.Contains(b.Body, "user name or password") || strings.Contains(b.Body, "s3cret") {
		t.Errorf("/register with credentials: %d, want 400 saying why, without them", code)
	}
	if n := env.origin.count("/club.html"); n != 0 {
		t.Errorf("the page was fetched %d times", n)
	}
	if len(env.reg.Definitions()) != 1 {
		t.Errorf("%d definitions, want file1 alone", len(env.reg.Definitions()))
	}
}

// TestRegistrationNestedBodyRefused: a POST /resources JSON body nested
// deeper than 64 levels is a 400 naming where, before any parser reads it;
// at 64 levels the body is read (and refused for what it says, not its
// shape).
func TestRegistrationNestedBodyRefused(t *testing.T) {
	env := newPagesEnv(t)
	deep := `{"url": "` + env.origin.URL + `/club.html", "id": ` + strings.Repeat("[", 30000) + strings.Repeat("]", 30000) + `}`
	code, body := roundTrip(t, env.srv, http.MethodPost, "/resources", deep)
	if code != http.StatusBadRequest || !strings.Contains(body, "nested deeper than 64 levels") || !strings.Contains(body, `"parameter":"id[0]`) {
		t.Fatalf("POST /resources nested 30,000 deep: %d %s, want 400 naming id", code, body)
	}
	ok := `{"url": "` + env.origin.URL + `/club.html", "id": ` + strings.Repeat("[", 63) + strings.Repeat("]", 63) + `}`
	if code, body := roundTrip(t, env.srv, http.MethodPost, "/resources", ok); code != http.StatusBadRequest || strings.Contains(body, "nested deeper") {
		t.Errorf("POST /resources nested 64 deep: %d %s, want the ordinary 400 of a bad body", code, body)
	}
	if n := env.origin.count("/club.html"); n != 0 {
		t.Errorf("the page was fetched %d times", n)
	}
}
