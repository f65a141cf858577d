package ui

import (
	"context"
	"github.com/dynamo-rss/dynamo/api"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/dynamo-rss/dynamo/config"
	"github.com/dynamo-rss/dynamo/internal/syncbuf"
)

// TestCredentialsNeverShown: a resource whose URL carries a user name and
// password is fetched with them, and they are shown nowhere: not on /,
// /view, feeds in every format, feed pages, OPML, the admin JSON (an
// operator's secret, like its headers) nor the api's logs; a visitor
// cannot find them with /'s search either.
func TestCredentialsNeverShown(t *testing.T) {
	var authorized atomic.Int64
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "webmaster" || p != "s3cret" {
			w.Header().Set("WWW-Authenticate", `Basic realm="club"`)
			http.Error(w, "who are you?", http.StatusUnauthorized)
			return
		}
		authorized.Add(1)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, `<html><body><h1><!-- <channel:title> -->Club news<!-- </channel:title> --></h1>
<p><!-- <item:link index="1"> --><a href="/c/1.html"><!-- <item:title index="1"> -->Season opens<!-- </item:title> --></a><!-- </item:link> -->
<!-- <item:description index="1"> -->See <a href="/c/1.html">the programme</a> at `+"//webmaster:s3cret@"+`club.example/p<!-- </item:description> --></p>
</body></html>`)
	}))
	t.Cleanup(origin.Close)
	secretURL := strings.Replace(origin.URL, "http://", "http://webmaster:s3cret@", 1) + "/club.html"

	var logs syncbuf.Buffer
	env := newPagesEnv(t, func(o *api.Options) {
		o.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		o.AccessLog = true
	})
	ctx := context.Background()
	if _, err := env.reg.Register(ctx, config.ResourceEntry{ID: "club", URL: secretURL}); err != nil {
		t.Fatal(err)
	}
	if _, err := env.reg.PollNow(ctx, "club"); err != nil {
		t.Fatalf("poll: %v", err)
	}
	if authorized.Load() != 1 {
		t.Fatalf("the origin was fetched with its credentials %d times, want 1", authorized.Load())
	}
	// A poll error that quotes the URL, as Go's HTTP client does.
	env.reg.Mu.Lock()
	d := env.reg.Defs["club"]
	d.Status.LastError = `Get "` + secretURL + `": connection reset by peer`
	d.Status.Diagnostics = []string{"1:1: warning: link " + secretURL + " is the page itself"}
	env.reg.Defs["club"] = d
	env.reg.Mu.Unlock()

	htmlAccept := "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
	gets := []struct{ path, accept, bearer string }{
		{"/", htmlAccept, ""},
		{"/view/club", htmlAccept, ""},
		{"/resources/club?type=rss2", "", ""},
		{"/resources/club?type=atom", "", ""},
		{"/resources/club?type=rss1", "", ""},
		{"/resources/club?type=json", "", ""},
		{"/resources/club?max=50&type=rss2", "", ""},
		{"/resources/club?max=50&type=atom", "", ""},
		{"/resources/club?max=50&type=json", "", ""},
		{"/resources/club?max=50", htmlAccept, ""},
		{"/resources/club", htmlAccept, ""},
		{"/resources/club/versions/1?type=rss2", "", ""},
		{"/resources?type=atom", "", ""},
		{"/resources.opml", "", ""},
		{"/register?url=" + url.QueryEscape(secretURL), htmlAccept, ""},
		{"/admin/resources", "", pagesToken},
		{"/admin/resources/club", "", pagesToken},
	}
	for _, g := range gets {
		header := []string{"Accept", g.accept}
		if g.bearer != "" {
			header = append(header, "Authorization", "Bearer "+g.bearer)
		}
		code, body := roundTrip(t, env.srv, http.MethodGet, g.path, "", header...)
		if code != http.StatusOK {
			t.Errorf("GET %s: %d", g.path, code)
		}
		for _, secret := range []string{"s3cret", "webmaster:", "webmaster@"} {
			if i := strings.Index(body, secret); i >= 0 {
				t.Errorf("GET %s shows the credentials: …%s…", g.path, body[max(0, i-80):min(len(body), i+40)])
				break
			}
		}
	}
	// The search does not see them either.
	if _, body := roundTrip(t, env.srv, http.MethodGet, "/?q=s3cret", ""); strings.Contains(body, "/view/club") {
		t.Error("/?q=s3cret finds the resource: its password can be guessed with the search")
	}
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, "webmaster:s3cret") || strings.Contains(line, "webmaster%3As3cret") {
			t.Errorf("the api's log shows the credentials: %s", line)
		}
	}
}

// roundTrip sends a request to srv (a JSON body when body is not empty)
// with header pairs (an empty value is not sent) and returns the status
// and the body.
func roundTrip(t *testing.T, srv *httptest.Server, method, path, body string, header ...string) (int, string) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, srv.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		if header[i+1] != "" {
			req.Header.Set(header[i], header[i+1])
		}
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(data)
}
