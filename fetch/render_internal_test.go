package fetch

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	cdpfetch "github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// TestWaitUntil: wait_for's loop, answer by answer. A document being
// replaced has no context to evaluate in for a moment: that error is
// tried again, never taken for a match; an exception (a selector the page
// refuses) ends the wait at once; the render's end ends it with its own
// error.
func TestWaitUntil(t *testing.T) {
	errNoContext := errors.New("Cannot find context with specified id (-32000)")
	exception := &chromedp.ExceptionError{ExceptionDetails: &runtime.ExceptionDetails{Text: "SyntaxError: 'ul..news' is not a valid selector"}}
	type answer struct {
		ok  bool
		err error
	}
	for _, tc := range []struct {
		name    string
		answers []answer
		cancel  int // cancel the context at this call (0: never)
		want    string
		calls   int
	}{
		{name: "a match", answers: []answer{{ok: true}}, calls: 1},
		{name: "no match, then a match", answers: []answer{{}, {}, {ok: true}}, calls: 3},
		{name: "no document for a moment, then a match", answers: []answer{{err: errNoContext}, {err: errNoContext}, {ok: true}}, calls: 3},
		{name: "a selector the page refuses", answers: []answer{{err: exception}}, want: "not a CSS selector the page accepts", calls: 1},
		{name: "the render ends while the page has no document", answers: []answer{{err: errNoContext}, {err: context.Canceled}}, cancel: 2, want: context.Canceled.Error(), calls: 2},
		{name: "the render ends while nothing matches", answers: []answer{{}, {}}, cancel: 2, want: context.Canceled.Error(), calls: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			calls := 0
			err := waitUntil(ctx, func(context.Context) (bool, error) {
				calls++
				if calls > len(tc.answers) {
					t.Fatalf("asked %d times, after %d answers", calls, len(tc.answers))
				}
				if calls == tc.cancel {
					cancel()
				}
				a := tc.answers[calls-1]
				return a.ok, a.err
			})
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("waitUntil = %v, want a match", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("waitUntil = %v, want an error saying %q", err, tc.want)
			}
			if calls != tc.calls {
				t.Errorf("asked %d times, want %d", calls, tc.calls)
			}
		})
	}
}

// TestFailReason: a request dynamo refused is "access denied" to the
// browser; one cut short because the render ended is "aborted".
func TestFailReason(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	if got := failReason(ctx); got != network.ErrorReasonAccessDenied {
		t.Errorf("failReason during the render = %v, want %v", got, network.ErrorReasonAccessDenied)
	}
	cancel()
	if got := failReason(ctx); got != network.ErrorReasonAborted {
		t.Errorf("failReason after it = %v, want %v", got, network.ErrorReasonAborted)
	}
}

// TestSubrequestSchemes: a request of a rendered page that is not http or
// https is refused by name before it reaches the client. Chromium pauses
// only http(s) requests today; this holds if it pauses more.
func TestSubrequestSchemes(t *testing.T) {
	var sent []string
	client := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		sent = append(sent, r.URL.String())
		return nil, errors.New("not on this test's network")
	})}
	page, err := url.Parse("https://news.example/")
	if err != nil {
		t.Fatal(err)
	}
	ic := newInterceptor(BrowserOptions{Client: client, MaxBytes: 1 << 20}, page, nil)
	for _, u := range []string{"file:///etc/passwd", "ftp://news.example/list", "ws://news.example/live", "gopher://news.example/"} {
		ev := &cdpfetch.EventRequestPaused{RequestID: "1", Request: &network.Request{URL: u, Method: http.MethodGet}}
		_, _, err := ic.do(t.Context(), ev)
		if err == nil || !strings.Contains(err.Error(), "only http and https are fetched") {
			t.Errorf("request %s: %v, want it refused by scheme", u, err)
		}
	}
	if len(sent) > 0 {
		t.Errorf("requests that reached the client: %q", sent)
	}
	// An http request goes to the client, the guarded one.
	ev := &cdpfetch.EventRequestPaused{RequestID: "2", Request: &network.Request{URL: "https://news.example/data.json", Method: http.MethodGet}}
	if _, _, err := ic.do(t.Context(), ev); err == nil || len(sent) != 1 {
		t.Errorf("an https request: %v, sent %q; want it sent once, and its error", err, sent)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestTextOf: an article's text is its HTML without the tags; wrappers with
// nothing in them have none. (Readability itself returns no article for
// the pages tried, so ExtractArticle's own check is tested here.)
func TestTextOf(t *testing.T) {
	for in, want := range map[string]string{
		"":                                      "",
		"<div><p></p><p> </p></div>":            " ",
		`<p class="a">The <b>budget</b></p>`:    "The budget",
		"<figure><img src=\"/a.png\"></figure>": "",
		"no tags":                               "no tags",
		"3 &lt; 4<br>":                          "3 &lt; 4",
	} {
		if got := textOf(in); got != want {
			t.Errorf("textOf(%q) = %q, want %q", in, got, want)
		}
	}
}
