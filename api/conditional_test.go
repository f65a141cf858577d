package api

import (
	"net/http"
	"testing"
	"time"
)

// TestConditionalRequestsOnStorage checks If-None-Match and If-Modified-Since on a
// feed of a real store: weak comparison over a list, "*", If-None-Match
// before If-Modified-Since, second precision, a date in the future or not a
// date, and what a 304 carries.
func TestConditionalRequestsOnStorage(t *testing.T) {
	db := openFixtureDB(t)
	s := newFDServer(t, db)
	const target = "/resources/news?type=atom"
	full := fdDo(s, http.MethodGet, target)
	etag := full.Header().Get("ETag")
	lm := fdT0.Add(2 * time.Hour) // the latest version of news
	date := func(t time.Time) string { return t.UTC().Format(http.TimeFormat) }
	gzTag := etag[:len(etag)-1] + `-gzip"`
	tests := []struct {
		name   string
		method string
		header []string
		want   int
	}{
		{"its tag", "GET", []string{"If-None-Match", etag}, 304},
		{"its tag, HEAD", "HEAD", []string{"If-None-Match", etag}, 304},
		{"weak form", "GET", []string{"If-None-Match", "W/" + etag}, 304},
		{"in a list", "GET", []string{"If-None-Match", `"a", W/"b",` + etag}, 304},
		{"star", "GET", []string{"If-None-Match", "*"}, 304},
		{"the gzip tag, identity asked", "GET", []string{"If-None-Match", gzTag}, 304},
		{"another tag", "GET", []string{"If-None-Match", `"other"`}, 200},
		{"another tag wins over a matching date", "GET", []string{"If-None-Match", `"other"`, "If-Modified-Since", date(lm)}, 200},
		{"matching tag wins over an old date", "GET", []string{"If-None-Match", etag, "If-Modified-Since", date(lm.Add(-time.Hour))}, 304},
		{"Last-Modified itself", "GET", []string{"If-Modified-Since", date(lm)}, 304},
		{"a second before", "GET", []string{"If-Modified-Since", date(lm.Add(-time.Second))}, 200},
		{"later, before now", "GET", []string{"If-Modified-Since", date(fdNow.Add(-time.Minute))}, 304},
		{"now", "GET", []string{"If-Modified-Since", date(fdNow)}, 304},
		{"in the future", "GET", []string{"If-Modified-Since", date(fdNow.Add(time.Hour))}, 200},
		{"not a date", "GET", []string{"If-Modified-Since", "yesterday"}, 200},
		{"RFC 850 date", "GET", []string{"If-Modified-Since", lm.Format("Monday, 02-Jan-06 15:04:05 GMT")}, 304},
		{"not for POST", "POST", []string{"If-None-Match", etag}, 405},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := fdDo(s, tt.method, target, tt.header...)
			if rec.Code != tt.want {
				t.Fatalf("%s %s %q = %d, want %d", tt.method, target, tt.header, rec.Code, tt.want)
			}
			if rec.Code != http.StatusNotModified {
				return
			}
			if rec.Body.Len() != 0 {
				t.Errorf("304 with a body: %q", rec.Body)
			}
			for _, h := range []string{"ETag", "Last-Modified", "Cache-Control", "Vary"} {
				if rec.Header().Get(h) != full.Header().Get(h) {
					t.Errorf("304 %s = %q, the 200 had %q", h, rec.Header().Get(h), full.Header().Get(h))
				}
			}
			if ct := rec.Header().Get("Content-Type"); ct != "" {
				t.Errorf("304 with Content-Type %q", ct)
			}
		})
	}
	// Errors are never 304, whatever the client holds.
	for _, target := range []string{"/resources/nope", "/resources/news?index=9", "/resources/news/versions/99", "/resources/news?type=nope"} {
		if rec := fdDo(s, http.MethodGet, target, "If-None-Match", "*", "If-Modified-Since", date(fdNow)); rec.Code < 400 || rec.Header().Get("ETag") != "" || rec.Header().Get("Cache-Control") != "no-store" {
			t.Errorf("GET %s with validators = %d, ETag %q, Cache-Control %q", target, rec.Code, rec.Header().Get("ETag"), rec.Header().Get("Cache-Control"))
		}
	}
}
