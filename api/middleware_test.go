package api

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/dynamo-rss/dynamo/storage"
)

func TestGzip(t *testing.T) {
	store, poller := svcFixture()
	s := newSvcServer(t, Options{Store: store, Poller: poller})
	plain := svcDo(s, http.MethodGet, "/", nil)
	if plain.Header().Get("Content-Encoding") != "" {
		t.Fatal("compressed without Accept-Encoding")
	}
	for _, tc := range []struct {
		name, method, path string
		wantGzip           bool
	}{
		{"GET page", http.MethodGet, "/", true},
		{"HEAD page", http.MethodHead, "/", true}, // GET's headers (RFC 9110 §9.3.2)
		{"small body", http.MethodGet, "/healthz", false},
		{"admin write", http.MethodPost, "/admin/resources/news/poll", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plain := svcDo(s, http.MethodGet, tc.path, nil)
			rec := svcDo(s, tc.method, tc.path, nil, "Accept-Encoding", "gzip, deflate")
			if got := rec.Header().Get("Content-Encoding") == "gzip"; got != tc.wantGzip {
				t.Fatalf("Content-Encoding = %q, want gzip: %v", rec.Header().Get("Content-Encoding"), tc.wantGzip)
			}
			if !strings.Contains(rec.Header().Get("Vary"), "Accept-Encoding") && tc.method == http.MethodGet {
				t.Error("no Vary: Accept-Encoding")
			}
			if strings.Contains(rec.Header().Get("Vary"), "Accept-Encoding") && tc.method == http.MethodPost {
				t.Error("an admin write went through the gzip middleware")
			}
			if !tc.wantGzip {
				return
			}
			zr, err := gzip.NewReader(rec.Body)
			if err != nil {
				t.Fatalf("gzip: %v", err)
			}
			got, err := io.ReadAll(zr)
			if err != nil {
				t.Fatalf("gunzip: %v", err)
			}
			if !bytes.Equal(got, plain.Body.Bytes()) {
				t.Error("gunzipped body differs from the plain one")
			}
		})
	}
}

// The OPML list is compressed by the middleware (feeds under /resources
// compress themselves and skip it; /resources.opml is not one of them).
func TestGzipOPML(t *testing.T) {
	store := &svcStore{}
	for i := range 40 {
		store.Infos = append(store.Infos, storage.ResourceInfo{ID: fmt.Sprintf("page-%02d", i), URL: fmt.Sprintf("https://example.org/%02d.html", i),
			Title: "A page of the town", Versions: 1, LatestSeq: 1, Updated: svcNow})
	}
	s := newSvcServer(t, Options{Store: store})
	plain := svcDo(s, http.MethodGet, "/resources.opml", nil)
	if plain.Code != http.StatusOK || plain.Body.Len() < gzipMinLength {
		t.Fatalf("OPML: %d, %d bytes: too small to test", plain.Code, plain.Body.Len())
	}
	rec := svcDo(s, http.MethodGet, "/resources.opml", nil, "Accept-Encoding", "gzip")
	if rec.Header().Get("Content-Encoding") != "gzip" {
		t.Fatalf("OPML of %d bytes not compressed", plain.Body.Len())
	}
	zr, err := gzip.NewReader(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := io.ReadAll(zr); err != nil || !bytes.Equal(got, plain.Body.Bytes()) {
		t.Errorf("gunzipped OPML differs (%v)", err)
	}
}

func TestRecoverAndLog(t *testing.T) {
	var logs bytes.Buffer
	s := newSvcServer(t, Options{AccessLog: true, Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	s.e.GET("/test/panic", func(echo.Context) error { panic("boom") })
	rec := svcDo(s, http.MethodGet, "/test/panic", nil, "Accept-Encoding", "gzip")
	p := svcProblem(t, rec, http.StatusInternalServerError)
	if strings.Contains(p.Detail, "boom") {
		t.Errorf("a 500 leaked its cause: %q", p.Detail)
	}
	var sawPanic, sawAccess bool
	for line := range strings.SplitSeq(strings.TrimSpace(logs.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		switch rec["msg"] {
		case "handler panicked":
			sawPanic = strings.Contains(rec["error"].(string), "boom") && rec["stack"] != ""
		case "http request":
			sawAccess = rec["status"] == float64(500) && rec["route"] == "/test/panic" && rec["level"] == "ERROR"
		}
	}
	if !sawPanic || !sawAccess {
		t.Errorf("logs lack the panic (%v) or the access line (%v):\n%s", sawPanic, sawAccess, logs.String())
	}
}

// Without log.access, requests leave no line in the log (a busy server
// would log thousands a second); 5xx causes still do.
func TestAccessLogOffByDefault(t *testing.T) {
	var logs bytes.Buffer
	s := newSvcServer(t, Options{Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	s.e.GET("/test/fail", func(echo.Context) error { return errors.New("broken") })
	for range 3 {
		svcDo(s, http.MethodGet, "/healthz", nil)
		svcDo(s, http.MethodGet, "/resources/nope", nil)
	}
	svcProblem(t, svcDo(s, http.MethodGet, "/test/fail", nil), http.StatusInternalServerError)
	out := logs.String()
	if strings.Contains(out, `"http request"`) {
		t.Errorf("access lines with log.access off:\n%s", out)
	}
	if !strings.Contains(out, "broken") {
		t.Errorf("the 500's cause is not logged:\n%s", out)
	}
}

func TestBodyLimit(t *testing.T) {
	s := newSvcServer(t, Options{AdminToken: "t", Reload: func(context.Context) error { return nil }})
	big := strings.Repeat("x", maxAdminBodyBytes+1)
	svcProblem(t, svcDo(s, http.MethodPost, "/admin/reload", strings.NewReader(big), "Authorization", "Bearer t"), http.StatusRequestEntityTooLarge)
}

func TestRequestTimeout(t *testing.T) {
	s := newSvcServer(t, Options{RequestTimeout: 20 * time.Millisecond})
	s.e.GET("/test/slow", func(c echo.Context) error {
		<-c.Request().Context().Done() // a handler that honours its ctx
		return c.Request().Context().Err()
	})
	svcProblem(t, svcDo(s, http.MethodGet, "/test/slow", nil), http.StatusServiceUnavailable)
}

// TestAccessLogFields checks an access log line: method, path with its
// query, status, bytes, duration, client and User-Agent.
func TestAccessLogFields(t *testing.T) {
	var logs bytes.Buffer
	s := newFDServer(t, fdFixture(), func(o *Options) {
		o.AccessLog = true
		o.Logger = slog.New(slog.NewJSONHandler(&logs, nil))
	})
	req := httptest.NewRequest(http.MethodGet, "/resources/news?max=2&type=atom", nil)
	req.Header.Set("User-Agent", "Miniflux/2.3.5")
	req.RemoteAddr = "192.0.2.7:5555"
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	var line map[string]any
	if err := json.Unmarshal(logs.Bytes(), &line); err != nil {
		t.Fatalf("log %q: %v", logs.String(), err)
	}
	want := map[string]any{"method": "GET", "path": "/resources/news?max=2&type=atom", "status": float64(200),
		"bytes": float64(rec.Body.Len()), "client": "192.0.2.7", "user_agent": "Miniflux/2.3.5"}
	for k, v := range want {
		if line[k] != v {
			t.Errorf("%s = %v, want %v", k, line[k], v)
		}
	}
	if _, ok := line["duration"]; !ok {
		t.Error("no duration")
	}
	if line["level"] != "INFO" {
		t.Errorf("a 200 logged at %v, want INFO", line["level"])
	}
	// A client's mistake is a warning (a 500 is an error: TestRecoverAndLog);
	// a 304 is no mistake.
	for _, tc := range []struct {
		path, header string
		status       int
		level        string
	}{
		{"/resources/news?max=x", "", http.StatusBadRequest, "WARN"},
		{"/resources/nope", "", http.StatusNotFound, "WARN"},
		{"/resources/news?max=2&type=atom", rec.Header().Get("ETag"), http.StatusNotModified, "INFO"},
	} {
		logs.Reset()
		req := httptest.NewRequest(http.MethodGet, tc.path, nil)
		if tc.header != "" {
			req.Header.Set("If-None-Match", tc.header)
		}
		got := httptest.NewRecorder()
		s.ServeHTTP(got, req)
		var line map[string]any
		if err := json.Unmarshal(logs.Bytes(), &line); err != nil {
			t.Fatalf("log %q: %v", logs.String(), err)
		}
		if got.Code != tc.status || line["level"] != tc.level {
			t.Errorf("GET %s: %d logged at %v, want %d at %s", tc.path, got.Code, line["level"], tc.status, tc.level)
		}
	}
}

// TestFavicon checks GET /favicon.ico: an icon, cacheable, revalidated.
func TestFavicon(t *testing.T) {
	s := newFDServer(t, fdFixture())
	rec := fdDo(s, http.MethodGet, "/favicon.ico")
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "image/x-icon" || !bytes.HasPrefix(rec.Body.Bytes(), []byte{0, 0, 1, 0}) {
		t.Fatalf("GET /favicon.ico = %d %s, %d bytes", rec.Code, rec.Header().Get("Content-Type"), rec.Body.Len())
	}
	if cc := rec.Header().Get("Cache-Control"); !strings.Contains(cc, "max-age=") {
		t.Errorf("Cache-Control %q: not cacheable", cc)
	}
	if got := fdDo(s, http.MethodGet, "/favicon.ico", "If-None-Match", rec.Header().Get("ETag")).Code; got != http.StatusNotModified {
		t.Errorf("revalidation = %d, want 304", got)
	}
	if got := fdDo(s, http.MethodHead, "/favicon.ico"); got.Code != http.StatusOK || got.Body.Len() != 0 {
		t.Errorf("HEAD = %d with %d bytes", got.Code, got.Body.Len())
	}
}
