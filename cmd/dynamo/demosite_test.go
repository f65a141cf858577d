package main

import (
	"bytes"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/dynamo-rss/dynamo/extractor"
)

// demoClock is a settable clock for the demo site.
type demoClock struct{ t time.Time }

func (c *demoClock) now() time.Time { return c.t }

func demoGet(t *testing.T, h http.Handler, path string) (*http.Response, []byte) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	resp := rec.Result()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

func TestDemoSitePages(t *testing.T) {
	start := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	clock := &demoClock{start}
	site := newDemoSite(42, start, clock.now)
	for _, tc := range []struct {
		path, charset, title string
		latin1               bool
	}{
		{"/news.html", "utf-8", "Harbour Town Daily", false},
		{"/cronaca.html", "ISO-8859-1", "Cronaca di Città Vecchia", true},
	} {
		t.Run(tc.path, func(t *testing.T) {
			resp, body := demoGet(t, site, tc.path)
			if resp.StatusCode != http.StatusOK || !strings.Contains(resp.Header.Get("Content-Type"), tc.charset) {
				t.Fatalf("%d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
			}
			if tc.latin1 {
				if utf8.Valid(body) || !bytes.Contains(body, []byte("Citt\xe0")) {
					t.Error("the Latin-1 page is not Latin-1 bytes")
				}
			}
			res, err := extractor.Extract(bytes.NewReader(body), extractor.Options{
				URL: "http://127.0.0.1:1" + tc.path, RSSID: "demo", ContentType: resp.Header.Get("Content-Type"), Timestamp: start})
			if err != nil {
				t.Fatalf("extract: %v", err)
			}
			for _, d := range res.Diagnostics {
				t.Errorf("diagnostic %d:%d %s", d.Line, d.Col, d.Message)
			}
			doc := res.Document
			if doc.Channel.Title != tc.title || len(doc.Items) != 3 {
				t.Fatalf("channel %q with %d items at start, want %q with the 3 back-catalogue items", doc.Channel.Title, len(doc.Items), tc.title)
			}
			if _, ok := doc.Items[0].Extensions.Published(); !ok {
				t.Errorf("item without a readable date: %+v", doc.Items[0].Extensions)
			}
			if resp, _ := demoGet(t, site, strings.TrimPrefix(doc.Items[0].Link, "http://127.0.0.1:1")); resp.StatusCode != http.StatusOK {
				t.Errorf("article %s: %d", doc.Items[0].Link, resp.StatusCode)
			}
			for _, it := range doc.Items {
				if strings.Contains(it.Description, "Read more") || strings.Contains(it.Description, "Continua") {
					t.Errorf("the read-more link's word is in the description: %q", it.Description)
				}
			}
			// A restarted demo serves the site on another port: the item ids
			// must not move with it, or every item would be new again.
			again, err := extractor.Extract(bytes.NewReader(body), extractor.Options{
				URL: "http://127.0.0.1:2" + tc.path, RSSID: "demo", ContentType: resp.Header.Get("Content-Type"), Timestamp: start})
			if err != nil {
				t.Fatalf("extract: %v", err)
			}
			for i, it := range again.Document.Items {
				if it.ID != doc.Items[i].ID {
					t.Errorf("item %d: id %q on port 2, %q on port 1", i+1, it.ID, doc.Items[i].ID)
				}
			}
		})
	}
	if resp, body := demoGet(t, site, "/robots.txt"); resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "Allow: /") {
		t.Errorf("robots.txt: %d %s", resp.StatusCode, body)
	}
	if resp, _ := demoGet(t, site, "/news/999.html"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("unknown article: %d", resp.StatusCode)
	}
}

// TestDemoSiteProcess checks the arrivals: deterministic for a seed whatever
// the request times, something new within the first minute, and bursty
// (gaps vary more than a Poisson process's, whose coefficient of variation is 1).
func TestDemoSiteProcess(t *testing.T) {
	start := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	a, b := &demoClock{start}, &demoClock{start}
	siteA, siteB := newDemoSite(7, start, a.now), newDemoSite(7, start, b.now)
	// A is asked every second, B only at the end: same pages.
	for i := 1; i <= 600; i++ {
		a.t = start.Add(time.Duration(i) * time.Second)
		if i == 60 {
			demoGet(t, siteA, "/news.html")
			p := siteA.pages["/news.html"]
			p.mu.Lock()
			if len(p.articles) <= 3+1 {
				t.Errorf("only %d new articles within the first minute", len(p.articles)-3)
			}
			p.mu.Unlock()
		}
		demoGet(t, siteA, "/news.html")
	}
	b.t = a.t
	_, pa := demoGet(t, siteA, "/news.html")
	_, pb := demoGet(t, siteB, "/news.html")
	if !bytes.Equal(pa, pb) {
		t.Error("the same seed gave different pages at the same time")
	}
	// Burstiness over a long simulated run.
	b.t = start.Add(48 * time.Hour)
	demoGet(t, siteB, "/cronaca.html")
	arts := siteB.pages["/cronaca.html"].articles[3:]
	if len(arts) < 1000 {
		t.Fatalf("only %d articles in 48h", len(arts))
	}
	var sum, sq float64
	for i := 1; i < len(arts); i++ {
		g := arts[i].at.Sub(arts[i-1].at).Seconds()
		if g < 0 {
			t.Fatalf("articles out of order at %d", i)
		}
		sum += g
		sq += g * g
	}
	n := float64(len(arts) - 1)
	mean := sum / n
	cv := math.Sqrt(sq/n-mean*mean) / mean
	if cv < 1.3 {
		t.Errorf("coefficient of variation of the gaps = %.2f, want > 1.3 (bursty)", cv)
	}
	t.Logf("48h: %d articles, mean gap %.1fs, CV %.2f", len(arts), mean, cv)
}
