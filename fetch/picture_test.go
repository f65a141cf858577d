package fetch_test

import (
	"bytes"
	"errors"
	"fmt"
	"image/jpeg"
	"math"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/dynamo-rss/dynamo/fetch"
)

// serve serves each path's body with its content type, on loopback.
func serve(t *testing.T, pages map[string][2]string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", p[0])
		fmt.Fprint(w, p[1])
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// markOf is the data-dynamo-box of the element with id in marked.
func markOf(t *testing.T, marked []byte, id string) int {
	t.Helper()
	m := regexp.MustCompile(`id="` + id + `"[^>]*data-dynamo-box="(\d+)"`).FindSubmatch(marked)
	if m == nil {
		t.Fatalf("no marked element #%s in:\n%s", id, marked)
	}
	i, _ := strconv.Atoi(string(m[1]))
	return i
}

// checkImage decodes pic's image as a JPEG of pic.Width x pic.Height.
func checkImage(t *testing.T, pic fetch.Picture) {
	t.Helper()
	if pic.ImageType != "image/jpeg" {
		t.Fatalf("ImageType %q, want image/jpeg", pic.ImageType)
	}
	cfg, err := jpeg.DecodeConfig(bytes.NewReader(pic.Image))
	if err != nil {
		t.Fatalf("the image does not decode as a JPEG: %v", err)
	}
	if cfg.Width != pic.Width || cfg.Height != pic.Height {
		t.Errorf("image of %dx%d, the picture says %dx%d", cfg.Width, cfg.Height, pic.Width, pic.Height)
	}
}

const positionedPage = `<!doctype html><html><head><style>body { margin: 0 } div { position: absolute }</style></head><body>
<div id="a" data-dynamo-box="page's own" style="left: 10px; top: 20px; width: 300px; height: 40px"></div>
<div id="b" style="left: 400px; top: 1500px; width: 120.5px; height: 60px"><span id="in" style="position: absolute; left: 5px; top: 7px; width: 10px; height: 10px; display: block"></span></div>
<div id="c" style="left: 0; top: 2990px; width: 1280px; height: 10px"></div>
</body></html>`

// TestPictureBoxes: the boxes of CSS-positioned elements are where CSS
// put them, in page coordinates beyond the viewport too, and the
// screenshot is the page, 1280 wide and as tall as the page; a
// data-dynamo-box of the page's own is marked over, and kept in Document.
func TestPictureBoxes(t *testing.T) {
	base := serve(t, map[string][2]string{"/": {"text/html; charset=utf-8", positionedPage}})
	r, _ := newRenderer(t, fetch.BrowserOptions{})
	for _, scripts := range []bool{false, true} {
		t.Run(fmt.Sprintf("scripts=%v", scripts), func(t *testing.T) {
			pic, err := r.Picture(t.Context(), fetch.PictureRequest{URL: base + "/", Scripts: scripts})
			if err != nil {
				t.Fatalf("Picture: %v", err)
			}
			if pic.Width != 1280 || pic.Height != 3000 {
				t.Errorf("picture of %dx%d, want 1280x3000 (the page)", pic.Width, pic.Height)
			}
			checkImage(t, pic)
			for id, want := range map[string]fetch.Box{
				"a":  {X: 10, Y: 20, W: 300, H: 40},
				"b":  {X: 400, Y: 1500, W: 120.5, H: 60},
				"in": {X: 405, Y: 1507, W: 10, H: 10},
				"c":  {X: 0, Y: 2990, W: 1280, H: 10},
			} {
				got := pic.Boxes[markOf(t, pic.Marked, id)]
				if math.Abs(got.X-want.X) > 1 || math.Abs(got.Y-want.Y) > 1 || math.Abs(got.W-want.W) > 1 || math.Abs(got.H-want.H) > 1 {
					t.Errorf("box of #%s = %+v, want %+v (±1)", id, got, want)
				}
			}
			if scripts && !bytes.Contains(pic.Document, []byte(`data-dynamo-box="page's own"`)) {
				t.Errorf("the page's own data-dynamo-box was lost:\n%s", pic.Document)
			}
			if b := pic.Boxes[0]; b.W != 1280 {
				t.Errorf("box of the root element %+v, want it 1280 wide", b)
			}
		})
	}
}

const scriptedPage = `<!doctype html><html><head><title>t</title></head><body><p id="s">static</p>
<script>
Element.prototype.getBoundingClientRect = () => ({left: -1, top: -1, width: -1, height: -1});
document.body.insertAdjacentHTML('beforeend', '<div id="added">by script</div>');
</script></body></html>`

// marks are the marks of a marked DOM.
var marks = regexp.MustCompile(` data-dynamo-box="\d+"`)

// TestPictureWithoutScripts: the page's scripts never run; Document is the
// bytes served, Marked the static DOM with each element marked in order.
func TestPictureWithoutScripts(t *testing.T) {
	base := serve(t, map[string][2]string{"/": {"text/html; charset=utf-8", scriptedPage}})
	r, _ := newRenderer(t, fetch.BrowserOptions{})
	pic, err := r.Picture(t.Context(), fetch.PictureRequest{URL: base + "/", WaitFor: "#added"})
	if err != nil {
		t.Fatalf("Picture: %v", err)
	}
	if string(pic.Document) != scriptedPage || pic.ContentType != "text/html; charset=utf-8" || pic.URL != base+"/" {
		t.Errorf("Document %q (%s, %s), want the bytes served (text/html; charset=utf-8, %s)", pic.Document, pic.ContentType, pic.URL, base+"/")
	}
	doc, err := html.Parse(bytes.NewReader(pic.Marked))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for e := range doc.Descendants() {
		if e.Type != html.ElementNode {
			continue
		}
		mark := ""
		for _, a := range e.Attr {
			switch {
			case a.Key == "data-dynamo-box":
				mark = a.Val
			case a.Key == "id" && a.Val == "added":
				t.Errorf("the page's script ran:\n%s", pic.Marked)
			}
		}
		if mark != strconv.Itoa(n) {
			t.Errorf("<%s>, element %d in document order, is marked %q", e.Data, n, mark)
		}
		n++
	}
	if n != len(pic.Boxes) || n < 6 {
		t.Errorf("%d elements, %d boxes", n, len(pic.Boxes))
	}
	if b := pic.Boxes[markOf(t, pic.Marked, "s")]; b.W <= 0 || b.H <= 0 {
		t.Errorf("box of #s %+v, want it drawn", b)
	}
	checkImage(t, pic)
}

// TestPictureWithScripts: the page's scripts ran; Document is Marked
// without its marks (one DOM), and the boxes
// are read past the page's own getBoundingClientRect.
func TestPictureWithScripts(t *testing.T) {
	base := serve(t, map[string][2]string{"/": {"text/html; charset=utf-8", scriptedPage}})
	r, _ := newRenderer(t, fetch.BrowserOptions{})
	pic, err := r.Picture(t.Context(), fetch.PictureRequest{URL: base + "/", Scripts: true, WaitFor: "#added"})
	if err != nil {
		t.Fatalf("Picture: %v", err)
	}
	if got := marks.ReplaceAll(pic.Marked, nil); !bytes.Equal(got, pic.Document) {
		t.Errorf("Marked without its marks:\n%s\nis not Document:\n%s", got, pic.Document)
	}
	if !bytes.Contains(pic.Document, []byte(`<div id="added">by script</div>`)) {
		t.Errorf("the script's element is not in the DOM:\n%s", pic.Document)
	}
	if pic.ContentType != "text/html; charset=utf-8" {
		t.Errorf("ContentType %q", pic.ContentType)
	}
	if b := pic.Boxes[markOf(t, pic.Marked, "added")]; b.W <= 0 || b.H <= 0 {
		t.Errorf("box of #added %+v, want it drawn (read past the page's getBoundingClientRect)", b)
	}
	checkImage(t, pic)
}

// TestPictureHeightCapped: a page taller than MaxHeight is drawn down to
// it; its boxes below are kept.
func TestPictureHeightCapped(t *testing.T) {
	base := serve(t, map[string][2]string{"/": {"text/html", `<!doctype html><body style="margin:0"><div style="height:20000px"></div><p id="end">end</p>`}})
	r, _ := newRenderer(t, fetch.BrowserOptions{})
	for _, tc := range []struct{ max, want int }{{0, fetch.DefaultPictureMaxHeight}, {5000, 5000}} {
		pic, err := r.Picture(t.Context(), fetch.PictureRequest{URL: base + "/", MaxHeight: tc.max})
		if err != nil {
			t.Fatalf("Picture: %v", err)
		}
		if pic.Height != tc.want || pic.Width != fetch.DefaultPictureWidth {
			t.Errorf("MaxHeight %d: picture of %dx%d, want %dx%d", tc.max, pic.Width, pic.Height, fetch.DefaultPictureWidth, tc.want)
		}
		checkImage(t, pic)
		if b := pic.Boxes[markOf(t, pic.Marked, "end")]; b.Y < 20000 {
			t.Errorf("box of #end %+v, want it kept below the picture", b)
		}
	}
}

// TestPictureNotHTML: a document that is not HTML is given as received,
// undrawn, without an error.
func TestPictureNotHTML(t *testing.T) {
	const rss = `<?xml version="1.0"?><rss version="2.0"><channel><title>t</title><item><title>i</title></item></channel></rss>`
	pages := map[string][2]string{
		"/plain":    {"text/plain; charset=utf-8", "just text\n"},
		"/feed.rss": {"application/rss+xml", rss},
		"/a.json":   {"application/json", `{"a":1}`},
		"/bin":      {"application/octet-stream", "\x00\x01\x02"},
	}
	base := serve(t, pages)
	r, _ := newRenderer(t, fetch.BrowserOptions{})
	for path, p := range pages {
		for _, scripts := range []bool{false, true} {
			pic, err := r.Picture(t.Context(), fetch.PictureRequest{URL: base + path, Scripts: scripts})
			if err != nil {
				t.Errorf("Picture of %s (scripts %v): %v", path, scripts, err)
				continue
			}
			if string(pic.Document) != p[1] || pic.ContentType != p[0] || pic.URL != base+path {
				t.Errorf("%s: Document %q (%s) at %s, want it as served", path, pic.Document, pic.ContentType, pic.URL)
			}
			if pic.Image != nil || pic.Marked != nil || pic.Boxes != nil || pic.Width != 0 {
				t.Errorf("%s: drawn: %d image bytes, %d marked bytes, %d boxes, width %d", path, len(pic.Image), len(pic.Marked), len(pic.Boxes), pic.Width)
			}
		}
	}
}

// TestPictureLimits: the DOM limit bounds the marked DOM; a page's own
// HTTP error fails the picture.
func TestPictureLimits(t *testing.T) {
	page := "<!doctype html><body>" + strings.Repeat("<i></i>", 1000) + "</body>" // 7 kB, 30 kB marked
	base := serve(t, map[string][2]string{"/": {"text/html", page}})
	r, _ := newRenderer(t, fetch.BrowserOptions{MaxBytes: 10000})
	_, err := r.Picture(t.Context(), fetch.PictureRequest{URL: base + "/"})
	if !errors.Is(err, fetch.ErrTooLarge) || !strings.Contains(err.Error(), "marked DOM") {
		t.Errorf("Picture of a page whose marked DOM is over MaxBytes: %v, want ErrTooLarge naming the marked DOM", err)
	}
	_, err = r.Picture(t.Context(), fetch.PictureRequest{URL: base + "/missing"})
	var se *fetch.StatusError
	if !errors.As(err, &se) || se.Code != http.StatusNotFound {
		t.Errorf("Picture of a 404: %v, want a StatusError 404", err)
	}
}

const pageWithStyle = `<!doctype html><link rel="stylesheet" href="/style.css"><p>hello</p>`

// TestFetcherPicture: a picture goes through the fetcher's checks as a
// render does: robots.txt, the guard, and the host's slot, waited for; a
// picture, its requests to the page's host included, is one visit of the
// host, whose next slot counts from its end (as TestRenderIsOneVisitOfItsHost).
func TestFetcherPicture(t *testing.T) {
	chromium(t)
	o := newOrigin(t)
	if _, err := newFetcher(t, pollerConfig(true), newStepClock()).Picture(t.Context(), o.URL+"/private/article", "", false); !errors.Is(err, fetch.ErrRobotsDenied) {
		t.Errorf("Picture of a page robots.txt disallows: %v, want ErrRobotsDenied", err)
	}
	if _, err := newFetcher(t, pollerConfig(false), newStepClock()).Picture(t.Context(), o.URL+"/page", "", false); !errors.Is(err, fetch.ErrForbiddenAddress) {
		t.Errorf("Picture of loopback without allow_private: %v, want ErrForbiddenAddress", err)
	}

	clk := newStepClock()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/style.css" {
			clk.NewTimer(4 * time.Second) // the picture's request takes four seconds of the fetcher's time
			w.Header().Set("Content-Type", "text/css")
			fmt.Fprint(w, "p { margin: 0 }")
			return
		}
		if r.URL.Path == "/page" {
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, pageWithStyle)
			return
		}
		http.Redirect(w, r, "/page", http.StatusFound)
	}))
	t.Cleanup(srv.Close)
	f, p, host := politeFetcher(t, srv.URL, clk)
	f.Reserve(host)
	t0 := clk.Now()
	pic, err := f.Picture(t.Context(), srv.URL+"/", "", false)
	if err != nil {
		t.Fatalf("Picture: %v", err)
	}
	if waited := clk.Now().Sub(t0) - 4*time.Second; waited != p.PerHostInterval.D() {
		t.Errorf("Picture waited %v for the host's slot, want per_host_interval %v", waited, p.PerHostInterval.D())
	}
	if string(pic.Document) != pageWithStyle || pic.URL != srv.URL+"/page" || pic.Image == nil {
		t.Errorf("Picture of a redirect: %q at %s, %d image bytes; want the page it redirects to, drawn", pic.Document, pic.URL, len(pic.Image))
	}
	if d := f.Reserve(host); d != p.PerHostInterval.D() {
		t.Errorf("after a picture, the host's next slot is %v away, want per_host_interval %v from the picture's end", d, p.PerHostInterval.D())
	}
}
