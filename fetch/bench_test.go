package fetch_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/dynamo-rss/dynamo/fetch"
)

// BenchmarkPage prices one page fetched as a poll fetches it (a GET through
// an http.Client) beside the same page rendered in the browser (a fresh
// incognito tab, the page's script fetching its JSON through the client,
// the DOM read once wait_for matches). The browser is started before the
// timer; starting it is measured apart (BenchmarkBrowserStart).
func BenchmarkPage(b *testing.B) {
	srv := scriptServer(b)
	client := &http.Client{}
	b.Run("get", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			resp, err := client.Get(srv.URL + "/")
			if err != nil {
				b.Fatal(err)
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close() //nolint:errcheck // read-only body
			if err != nil || !strings.Contains(string(body), `id="news"`) {
				b.Fatalf("GET: %v", err)
			}
		}
	})
	b.Run("render", func(b *testing.B) {
		r := benchRenderer(b, client)
		req := fetch.RenderRequest{URL: srv.URL + "/", WaitFor: "ul#news li"}
		if _, err := r.Render(b.Context(), req); err != nil { // starts the browser
			b.Fatal(err)
		}
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			out, err := r.Render(b.Context(), req)
			if err != nil || !strings.Contains(string(out.HTML), "Second story") {
				b.Fatalf("Render: %v", err)
			}
		}
	})
}

// BenchmarkBrowserStart prices a render that has to start the browser.
func BenchmarkBrowserStart(b *testing.B) {
	srv := scriptServer(b)
	req := fetch.RenderRequest{URL: srv.URL + "/", WaitFor: "ul#news li"}
	for b.Loop() {
		r := benchRenderer(b, &http.Client{})
		if _, err := r.Render(b.Context(), req); err != nil {
			b.Fatal(err)
		}
		if err := r.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

func scriptServer(b *testing.B) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, scriptPage)
	})
	mux.HandleFunc("/items.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `[{"title":"First story","link":"/a/1"},{"title":"Second story","link":"/a/2"}]`)
	})
	srv := httptest.NewServer(mux)
	b.Cleanup(srv.Close)
	return srv
}

func benchRenderer(b *testing.B, client *http.Client) *fetch.Renderer {
	p, err := fetch.FindBrowser("")
	if err != nil {
		b.Skip(err)
	}
	r, err := fetch.NewRenderer(fetch.BrowserOptions{Exec: p, Client: client})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = r.Close() }) // a second Close after the loop's is a no-op
	return r
}

// BenchmarkPicture prices a picture of a page (/new's "point at the
// list": a fresh tab, the page drawn 1280 wide, a JPEG screenshot and
// every element's box) beside a render of the same page in the same run,
// so that a picture's cost reads as a ratio of a render's: with the
// page's scripts (the same wait_for as the render), and without (read at
// the load event; its document is the bytes served). The browser is
// started before the timer.
func BenchmarkPicture(b *testing.B) {
	srv := scriptServer(b)
	r := benchRenderer(b, &http.Client{})
	page := srv.URL + "/"
	if _, err := r.Render(b.Context(), fetch.RenderRequest{URL: page, WaitFor: "ul#news li"}); err != nil { // starts the browser
		b.Fatal(err)
	}
	b.Run("render", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			out, err := r.Render(b.Context(), fetch.RenderRequest{URL: page, WaitFor: "ul#news li"})
			if err != nil || !strings.Contains(string(out.HTML), "Second story") {
				b.Fatalf("Render: %v", err)
			}
		}
	})
	for _, scripts := range []bool{true, false} {
		b.Run(fmt.Sprintf("picture/scripts=%v", scripts), func(b *testing.B) {
			req := fetch.PictureRequest{URL: page, WaitFor: "ul#news li", Scripts: scripts}
			b.ReportAllocs()
			var image int
			for b.Loop() {
				pic, err := r.Picture(b.Context(), req)
				if err != nil || len(pic.Image) == 0 || len(pic.Boxes) == 0 {
					b.Fatalf("Picture: %v", err)
				}
				image = len(pic.Image)
			}
			b.ReportMetric(float64(image), "image-bytes")
		})
	}
}
