package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/dynamo-rss/dynamo/config"
	"github.com/dynamo-rss/dynamo/fetch"
	"github.com/dynamo-rss/dynamo/poller"
	"github.com/dynamo-rss/dynamo/schema/schematest"
	"github.com/dynamo-rss/dynamo/storage/badger"
)

// TestPicturePage: the api's PicturePage draws a page through the engine:
// the page as served (scripts off), its picture converted box for box; a
// document that is not HTML has no picture.
func TestPicturePage(t *testing.T) {
	if _, err := fetch.FindBrowser(""); err != nil {
		schematest.Tool(t, "chromium")
	}
	const page = `<!doctype html><body style="margin:0"><div style="position:absolute;left:10px;top:20px;width:30px;height:40px"></div></body>`
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/feed" {
			w.Header().Set("Content-Type", "application/rss+xml")
			fmt.Fprint(w, `<rss version="2.0"><channel><title>t</title></channel></rss>`)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, page)
	}))
	t.Cleanup(origin.Close)
	cfg := config.Default()
	cfg.Poller.AllowPrivate, cfg.Poller.Robots = true, false
	db, err := badger.Open("", badger.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	e, err := poller.New(t.Context(), &cfg, db, poller.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	f := apiFetcher{e: e}

	p, pic, err := f.PicturePage(t.Context(), origin.URL+"/", "", false)
	if err != nil || string(p.Body) != page || p.URL != origin.URL+"/" || p.ContentType != "text/html; charset=utf-8" {
		t.Fatalf("PicturePage: %+v, %v; want the page as served", p, err)
	}
	if pic == nil || pic.ImageType != "image/jpeg" || len(pic.Image) == 0 || pic.Width != 1280 || len(pic.Boxes) != 4 || len(pic.Marked) == 0 {
		t.Fatalf("PicturePage's picture: %+v", pic)
	}
	if b := pic.Boxes[3]; b.X != 10 || b.Y != 20 || b.W != 30 || b.H != 40 {
		t.Errorf("box of the div %+v, want {10 20 30 40}", b)
	}
	p, pic, err = f.PicturePage(t.Context(), origin.URL+"/feed", "", true)
	if err != nil || pic != nil || p.ContentType != "application/rss+xml" {
		t.Errorf("PicturePage of a feed: %+v, picture %v, %v; want the feed, undrawn", p, pic != nil, err)
	}
}
