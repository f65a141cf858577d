package fetch

import (
	"context"
	"fmt"
	"math"
	"mime"
	"net/http"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Defaults and bounds of a [PictureRequest].
const (
	DefaultPictureWidth     = 1280    // viewport width, CSS pixels
	DefaultPictureMaxHeight = 12000   // screenshot height cap, CSS pixels
	MaxPictureImage         = 8 << 20 // bytes of a screenshot at most
	pictureViewportHeight   = 800     // the viewport's height; the screenshot goes beyond it
	pictureJPEGQuality      = 80      // see Renderer.Picture
	boxAttr                 = "data-dynamo-box"
	boxWorld                = "dynamo" // the isolated world the boxes are read in
)

// PictureRequest is one page to draw.
type PictureRequest struct {
	URL string
	// WaitFor, with Scripts, is the CSS selector the page is read once it
	// matches, as [RenderRequest].WaitFor; else the page is read once its
	// network stayed quiet for BrowserOptions.Idle. Without Scripts, the
	// page is read at its load event (its images and style sheets loaded):
	// nothing would change it after.
	WaitFor string
	// Headers are added to every request to the page's origin, as
	// [RenderRequest].Headers.
	Headers http.Header
	// Scripts lets the page's scripts run; false: they never do, and the
	// document drawn is the one the server sent.
	Scripts bool
	// Width is the viewport's width in CSS pixels (default
	// DefaultPictureWidth), the screenshot's too.
	Width int
	// MaxHeight caps the screenshot's height in CSS pixels (default
	// DefaultPictureMaxHeight): a longer page is drawn down to it.
	MaxHeight int
}

// Picture is a page as the browser drew it: its document, a screenshot
// from its top, and the box of its every element.
type Picture struct {
	// Document is the page: without scripts, the main frame's document as
	// the server sent it (after redirects), what a GET gives; with them,
	// document.documentElement.outerHTML once rendered, as [Rendered].HTML.
	Document    []byte
	ContentType string // Document's media type (with scripts, text/html; charset=utf-8)
	URL         string // the document's URL, after redirects
	// Marked is the DOM as drawn, each element carrying
	// data-dynamo-box="i", i its place in document order:
	// document.documentElement is 0, then querySelectorAll("*") from 1.
	// With scripts, Document is Marked without the marks: the same DOM.
	Marked []byte
	// Boxes[i] is the border box of the element marked i, in CSS pixels
	// of the page from its top left (as the screenshot); those beyond the
	// screenshot are kept. A zero width or height: not drawn.
	Boxes     []Box
	Image     []byte // the screenshot, Width x Height CSS pixels at scale 1; nil: the document was not HTML
	ImageType string // Image's media type: image/jpeg
	Width     int
	Height    int
	Requests  int // requests of the page fulfilled through the client
	Refused   int // requests refused or failed (the page went on without them)
}

// Box is a rectangle in CSS pixels.
type Box struct{ X, Y, W, H float64 }

// Picture draws req.URL in a fresh tab, as [Renderer.Render] renders it
// (the same tab slots, timeout, guard and limits), at a viewport req.Width
// wide: it gives the page's document, a screenshot of it from its top
// (page.captureScreenshot beyond the viewport, at most req.MaxHeight
// tall) and the box of each of its elements, read in one evaluation with
// the DOM they were read on. Without req.Scripts, the page's scripts are
// disabled before it loads (Emulation.setScriptExecutionDisabled). The
// boxes are read by one Runtime.evaluate in an isolated world of dynamo's
// own (Page.createIsolatedWorld): DevTools evaluations run with the
// page's scripts disabled, in the page's world too, but in its own world
// the page's scripts cannot tamper with what it calls (a page that
// redefines getBoundingClientRect or Array). A main document that is not HTML (a feed, JSON) is given
// as received, undrawn: no image, no boxes, no error. The DOM limit
// (MaxBytes) bounds Document and Marked; a screenshot over
// [MaxPictureImage] is an error wrapping [ErrTooLarge].
func (r *Renderer) Picture(ctx context.Context, req PictureRequest) (out Picture, err error) {
	t0 := time.Now()
	defer func() { r.m.observe(err, time.Since(t0)) }()
	if req.Width <= 0 {
		req.Width = DefaultPictureWidth
	}
	if req.MaxHeight <= 0 {
		req.MaxHeight = DefaultPictureMaxHeight
	}
	err = r.inTab(ctx, req.URL, req.Headers, &t0, func(ctx context.Context, t *tab) error {
		var err error
		out, err = r.pictureTab(ctx, t, req)
		return err
	})
	return out, err
}

// pictureTab draws req in the fresh tab t; ctx carries the render's
// deadline.
func (r *Renderer) pictureTab(ctx context.Context, t *tab, req PictureRequest) (Picture, error) {
	fail := func(what string, err error) (Picture, error) {
		return Picture{}, fmt.Errorf("picture of %s: %s: %w", shown(t.page.String()), what, r.ctxErr(ctx, err))
	}
	if _, err := chromedp.Call(t.run, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{
		Width: int64(req.Width), Height: pictureViewportHeight, DeviceScaleFactor: 1, Mobile: false,
	}); err != nil {
		return fail("set the viewport", err)
	}
	if !req.Scripts {
		if _, err := chromedp.Call(t.run, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
			return fail("disable its scripts", err)
		}
	}
	navErr := r.navigate(ctx, t)
	doc := t.ic.document()
	if doc.status >= 200 && doc.status <= 299 && !isHTML(doc) {
		// Nothing to draw; the browser may even have refused to show it
		// (a download, denied), which is no error here.
		out := t.picture()
		out.Document, out.ContentType, out.URL = doc.body, doc.contentType, doc.url
		return out, nil
	}
	if navErr != nil {
		return Picture{}, navErr
	}
	if req.Scripts { // without, nothing changes the page after its load event
		if err := r.settle(ctx, t, req.WaitFor); err != nil {
			return Picture{}, err
		}
	}
	boxes, err := readBoxes(t.run, req.Scripts)
	if err != nil {
		return fail("read the boxes of its elements", err)
	}
	if err := r.checkDOM(t, "marked DOM", len(boxes.Marked)); err != nil {
		return Picture{}, err
	}
	out := t.picture()
	out.URL, out.Marked = boxes.URL, []byte(boxes.Marked)
	if out.Boxes, err = boxes.boxes(); err != nil {
		return fail("read the boxes of its elements", err)
	}
	if req.Scripts {
		if err := r.checkDOM(t, "DOM", len(boxes.DOM)); err != nil {
			return Picture{}, err
		}
		out.Document, out.ContentType = []byte(boxes.DOM), "text/html; charset=utf-8" // as Fetcher.render's
	} else {
		out.Document, out.ContentType = doc.body, doc.contentType
	}
	metrics, err := chromedp.Call(t.run, page.GetLayoutMetrics, cdp.Empty{})
	if err != nil {
		return fail("measure the page", err)
	}
	out.Width, out.Height = req.Width, pictureHeight(metrics.CSSContentSize, req.MaxHeight)
	// JPEG, not PNG: a screen of text and pictures several thousand pixels
	// tall is a few hundred kB at quality 80, where PNG takes megabytes
	// (photos) and longer to encode; the picture is only pointed at.
	quality, beyond := int64(pictureJPEGQuality), true
	shot, err := chromedp.Call(t.run, page.CaptureScreenshot, page.CaptureScreenshotParams{
		Format:                page.CaptureScreenshotFormatJpeg,
		Quality:               &quality,
		Clip:                  &page.Viewport{X: 0, Y: 0, Width: float64(out.Width), Height: float64(out.Height), Scale: 1},
		CaptureBeyondViewport: &beyond,
	})
	if err != nil {
		return fail("take the screenshot", err)
	}
	out.Image = shot.Data
	if len(out.Image) > MaxPictureImage {
		return Picture{}, fmt.Errorf("picture of %s: screenshot of %d bytes > %d (8 MiB): %w; draw it narrower or less tall (Width, MaxHeight)", shown(t.page.String()), len(out.Image), MaxPictureImage, ErrTooLarge)
	}
	out.ImageType = "image/jpeg"
	return out, nil
}

// picture is a Picture of t with its request counts.
func (t *tab) picture() Picture {
	res := t.ic.result(nil)
	return Picture{URL: res.URL, Requests: res.Requests, Refused: res.Refused}
}

// pictureHeight is the screenshot's height: the page's, at least one
// pixel, at most maxHeight.
func pictureHeight(content *dom.Rect, maxHeight int) int {
	h := 1
	if content != nil {
		h = max(int(math.Ceil(content.Height)), 1)
	}
	return min(h, maxHeight)
}

// isHTML reports whether doc is an HTML document, to draw: text/html or
// XHTML, or with no media type, what the browser would sniff as HTML.
func isHTML(doc document) bool {
	ct := doc.contentType
	if ct == "" {
		ct = http.DetectContentType(doc.body)
	}
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && (mt == "text/html" || mt == "application/xhtml+xml")
}

// boxesScript marks and measures every element in one go: it reads the
// boxes first (one layout), then marks the elements, serializes the
// marked DOM, removes the marks (putting back any value the page had
// given the attribute) and, with scripts (%t), serializes the clean DOM.
// Boxes are flat, four numbers an element, to one decimal.
const boxesScript = `(() => {
  const A = %q, root = document.documentElement, withDOM = %t;
  const els = [root, ...root.querySelectorAll('*')];
  const sx = window.scrollX, sy = window.scrollY, d = v => Math.round(v * 10) / 10;
  const b = new Array(els.length * 4);
  for (let i = 0; i < els.length; i++) {
    const r = els[i].getBoundingClientRect();
    b[4*i] = d(r.left + sx); b[4*i+1] = d(r.top + sy); b[4*i+2] = d(r.width); b[4*i+3] = d(r.height);
  }
  const had = [];
  for (let i = 0; i < els.length; i++) {
    if (els[i].hasAttribute(A)) had.push([els[i], els[i].getAttribute(A)]);
    els[i].setAttribute(A, String(i));
  }
  const marked = root.outerHTML;
  for (const e of els) e.removeAttribute(A);
  for (const [e, v] of had) e.setAttribute(A, v);
  return {marked, boxes: b, url: document.URL, dom: withDOM ? root.outerHTML : ''};
})()`

// boxesRead is what boxesScript returns.
type boxesRead struct {
	Marked string    `json:"marked"`
	Boxes  []float64 `json:"boxes"`
	URL    string    `json:"url"`
	DOM    string    `json:"dom"`
}

func (b boxesRead) boxes() ([]Box, error) {
	if len(b.Boxes)%4 != 0 {
		return nil, fmt.Errorf("%d numbers, not four a box", len(b.Boxes))
	}
	out := make([]Box, len(b.Boxes)/4)
	for i := range out {
		f := b.Boxes[4*i:]
		out[i] = Box{X: f[0], Y: f[1], W: f[2], H: f[3]}
	}
	return out, nil
}

// readBoxes runs boxesScript once in an isolated world of the tab's main
// frame: it runs with the page's scripts disabled, and the page's own
// globals (a redefined Array or getBoundingClientRect) do not reach it.
func readBoxes(run context.Context, scripts bool) (boxesRead, error) {
	frame := cdp.FrameID(chromedp.FromContext(run).Target.TargetID) // a tab's main frame has its target's id
	world, err := chromedp.Call(run, page.CreateIsolatedWorld, page.CreateIsolatedWorldParams{FrameID: frame, WorldName: boxWorld})
	if err != nil {
		return boxesRead{}, fmt.Errorf("create an isolated world: %w", err)
	}
	return chromedp.Run(run, chromedp.Evaluate[boxesRead](fmt.Sprintf(boxesScript, boxAttr, scripts), func(p *runtime.EvaluateParams) {
		p.ContextID = world.ExecutionContextID
	}))
}
