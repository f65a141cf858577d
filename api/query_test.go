package api

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dynamo-rss/dynamo/schema"
)

// TestParseFeedQuery checks the raw query parser: order of terms and ops,
// separators, escapes, unknown parameters and the normal form.
func TestParseFeedQuery(t *testing.T) {
	tests := []struct {
		raw       string
		canonical string
	}{
		{"", ""},
		{"index=2&max=5", "index=2&max=5"},
		{"max=5&index=2", "index=2&max=5"},
		{"title=a&op=or&title=b&desc=c", "title=a&op=or&title=b&op=and&description=c"},
		{"desc=c;op=or;title=a", "description=c&op=or&title=a"},
		{"op=or&op=and&title=x", "title=x"},
		{"title=x&op=or", "title=x"},
		{"title=a+b&link=%2Fnews%2F", "title=a+b&op=and&link=%2Fnews%2F"},
		{"utm_source=x&_=123&title=y&&;", "title=y"},
		{"%ZZ=1&title=y", "title=y"},
		{"type=ATOM", "type=atom"},
		{"index=1&index=3", "index=3"},
		{"xpath=count(item)%3E0", "xpath=count%28item%29%3E0"},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			q, err := parseFeedQuery(tt.raw)
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			if got := q.canonical(q.format); got != tt.canonical {
				t.Errorf("canonical = %q, want %q", got, tt.canonical)
			}
			again, err := parseFeedQuery(q.canonical(q.format))
			if err != nil || again.canonical(again.format) != tt.canonical {
				t.Errorf("the normal form does not parse back to itself: %v", err)
			}
		})
	}
}

// FuzzParseFeedQuery checks that no query string panics the parser, that
// every error is a 400 problem, and that the normal form is a fixed point.
func FuzzParseFeedQuery(f *testing.F) {
	for _, seed := range []string{"", "index=1&max=2", "title=a&op=or&title=b&desc=c", "xpath=contains(title,'x')", "type=rss1;op=xor", "title=%zz", "xpath=((", "max=99999999999"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := parseFeedQuery(raw)
		if err != nil {
			var p *Problem
			if !errors.As(err, &p) || p.Status != http.StatusBadRequest || p.Detail == "" {
				t.Fatalf("error %v is not a 400 problem with a detail", err)
			}
			return
		}
		c := q.canonical(q.format)
		q2, err := parseFeedQuery(c)
		if err != nil {
			t.Fatalf("normal form %q does not parse: %v", c, err)
		}
		if c2 := q2.canonical(q2.format); c2 != c {
			t.Fatalf("normal form not stable: %q -> %q", c, c2)
		}
	})
}

func TestSyndication(t *testing.T) {
	tests := []struct {
		d      time.Duration
		period string
		freq   int
		ttl    int
	}{
		{0, "", 0, 0},
		{90 * time.Second, "hourly", 40, 2},
		{15 * time.Minute, "hourly", 4, 15},
		{time.Hour, "hourly", 1, 60},
		{6 * time.Hour, "daily", 4, 360},
		{36 * time.Hour, "weekly", 5, 2160},
		{400 * 24 * time.Hour, "yearly", 1, 576000},
	}
	for _, tt := range tests {
		p, f := syndication(tt.d)
		if p != tt.period || f != tt.freq || ttlMinutes(tt.d) != tt.ttl {
			t.Errorf("%v: %s/%d ttl %d, want %s/%d ttl %d", tt.d, p, f, ttlMinutes(tt.d), tt.period, tt.freq, tt.ttl)
		}
	}
}

// TestRSS1Abouts checks that rdf:about values are unique URIs whatever the links.
func TestRSS1Abouts(t *testing.T) {
	m := &feedModel{Self: "https://f.example/resources/x?type=rss1", Image: &schema.Image{URL: "https://e.example/logo.png"}, Items: []feedItem{
		{GUID: "1", Link: "https://e.example/a"},
		{GUID: "2", Link: "https://e.example/shared"},
		{GUID: "3", Link: "https://e.example/shared"},
		{GUID: "4", Link: "https://e.example/b#frag"},
		{GUID: "5", Link: "https://f.example/resources/x?type=rss1"}, // the channel's own URI
		{GUID: "6", Link: "https://e.example/logo.png"},
		{GUID: "a b/c", Link: "https://e.example/shared"},
	}}
	want := []string{
		"https://e.example/a",
		"https://e.example/shared#2",
		"https://e.example/shared#3",
		"https://e.example/b#frag",
		"https://f.example/resources/x?type=rss1#5",
		"https://e.example/logo.png#6",
		"https://e.example/shared#a%20b/c",
	}
	got := rss1Abouts(m)
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("item %d: about %q, want %q", i, got[i], want[i])
		}
	}
}

// TestXPathBounds checks that xpath evaluation stops at its item budget
// with a 400 instead of truncating silently.
func TestXPathBounds(t *testing.T) {
	store := newFDStore()
	doc := benchDoc("many", fdT0, 0, maxXPathItems+5)
	for i := range doc.Items {
		doc.Items[i].Extensions = nil
		doc.Items[i].Description = "short"
	}
	store.Save(doc)
	s := newFDServer(t, store)
	for _, path := range []string{"/resources/many?index=1&xpath=@id='none'", "/resources/many?max=1&xpath=@id='none'"} {
		// A version's items, and the items over the history (where storage
		// must hand over one item more than the evaluation bound).
		p := svcProblem(t, fdDo(s, http.MethodGet, path), http.StatusBadRequest)
		if p.Param != "xpath" {
			t.Errorf("%s: problem %+v, want the xpath parameter named", path, p)
		}
	}
	// Enough matches early: no error however long the page.
	if rec := fdDo(s, http.MethodGet, "/resources/many?index=1&max=2&xpath=title"); rec.Code != http.StatusOK {
		t.Errorf("status %d\n%s", rec.Code, rec.Body)
	}
	// At the bound: maxXPathItems items evaluated without a match is an
	// empty answer; one more item is the 400.
	q, err := parseFeedQuery("xpath=@id='none'")
	if err != nil {
		t.Fatal(err)
	}
	q.xpathTimeout = time.Hour // the item bound is under test, not the time bound (a loaded machine under -race takes seconds)
	items := doc.Items[:maxXPathItems+1]
	if keep, err := q.selectItems(context.Background(), items[:maxXPathItems], true, 0); err != nil || len(keep) != 0 {
		t.Errorf("%d items, none matching: %v, %v; want none and no error", maxXPathItems, keep, err)
	}
	if _, err := q.selectItems(context.Background(), items, true, 0); err == nil {
		t.Errorf("%d items, none matching: no error, want the evaluation bound's", maxXPathItems+1)
	}
}

// TestXPathResultKinds: an expression's result is read as XPath's
// boolean() reads it: a node-set is true when not empty, a number when
// neither 0 nor NaN, a string when not empty.
func TestXPathResultKinds(t *testing.T) {
	items := []schema.Item{
		{ID: "a", Title: "First", Description: "words"},
		{ID: "b", Title: "", Description: "more"},
		{ID: "c", Title: "Third"},
	}
	for _, tc := range []struct {
		expr string
		want []int
	}{
		{"title", []int{0, 1, 2}},      // node-sets, an empty title included
		{"string(title)", []int{0, 2}}, // strings: the empty one false
		{"concat(title, description)", []int{0, 1, 2}},
		{"string-length(title)", []int{0, 2}},  // numbers: 0 false
		{"number(title)", nil},                 // NaN false
		{"count(description)", []int{0, 1, 2}}, // every item has the element
		{"@id = 'b'", []int{1}},                // a boolean
	} {
		q, err := parseFeedQuery("xpath=" + url.QueryEscape(tc.expr))
		if err != nil {
			t.Fatalf("%s: %v", tc.expr, err)
		}
		got, err := q.selectItems(context.Background(), items, true, 0)
		if err != nil {
			t.Fatalf("%s: %v", tc.expr, err)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("xpath %s keeps items %v, want %v", tc.expr, got, tc.want)
		}
	}
}

// TestXPathStopsOnContext checks that evaluation stops between items when
// the request's context ends.
func TestXPathStopsOnContext(t *testing.T) {
	q, err := parseFeedQuery("xpath=title")
	if err != nil {
		t.Fatal(err)
	}
	items := benchDoc("x", fdT0, 0, 3).Items
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := q.selectItems(ctx, items, true, 0); !errors.Is(err, context.Canceled) {
		t.Errorf("selectItems on a cancelled context = %v, want context.Canceled", err)
	}
	keep, err := q.selectItems(context.Background(), items, true, 2)
	if err != nil || len(keep) != 2 {
		t.Errorf("selectItems = %v, %v; want the first 2", keep, err)
	}
}

// TestParseFeedQueryBounds: index and max at their bounds and on both sides,
// with spaces around a number (a 400, not a silent reading), and xpath at
// its byte limit, white space counted.
func TestParseFeedQueryBounds(t *testing.T) {
	pad := func(n int) string { // a valid XPath of n bytes, ending in spaces
		const e = "title"
		return e + strings.Repeat("%20", n-len(e))
	}
	tests := []struct {
		raw       string
		canonical string // "" with param set: a 400 naming param
		param     string
	}{
		{"index=1", "index=1", ""},
		{"max=1", "max=1", ""},
		{"index=0", "", "index"},
		{"max=0", "", "max"},
		{"max=00", "", "max"},
		{"max=01", "max=1", ""},
		{"max=-1", "", "max"},
		{"max=+1", "", "max"},
		{"max=%201", "", "max"},
		{"max=1%20", "", "max"},
		{"max=1+", "", "max"},
		{"max=", "", "max"},
		{"max=2147483647", "max=2147483647", ""},
		{"max=2147483648", "max=2147483647", ""}, // past int32: the largest, still a positive integer
		{"index=99999999999999999999", "index=2147483647", ""},
		{"xpath=" + pad(maxXPathLen), "xpath=" + strings.ReplaceAll(pad(maxXPathLen), "%20", "+"), ""},
		{"xpath=" + pad(maxXPathLen+1), "", "xpath"},
		{"xpath=%20", "", "xpath"},
		{"title=", "", "title"},
		{"title=%20a%20", "title=+a+", ""},
	}
	for _, tt := range tests {
		name := tt.raw
		if len(name) > 40 {
			name = name[:40]
		}
		t.Run(name, func(t *testing.T) {
			q, err := parseFeedQuery(tt.raw)
			if tt.param != "" {
				var p *Problem
				if !errors.As(err, &p) || p.Status != http.StatusBadRequest || p.Param != tt.param {
					t.Fatalf("parse = %v, want a 400 naming %s", err, tt.param)
				}
				return
			}
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			if got := q.canonical(q.format); got != tt.canonical {
				t.Errorf("canonical = %.60q, want %.60q", got, tt.canonical)
			}
		})
	}
}

// TestUpdateHints: the interval a feed announces is τ for a smart resource
// that has one, else its interval; /resources announces the shortest of its
// resources', whatever their order, ignoring those without one.
func TestUpdateHints(t *testing.T) {
	for _, tc := range []struct {
		st   ResourceStatus
		want time.Duration
	}{
		{ResourceStatus{Policy: "smart", Tau: 2 * time.Hour, Interval: 10 * time.Minute}, 2 * time.Hour},
		{ResourceStatus{Policy: "smart", Interval: 30 * time.Minute}, 30 * time.Minute},
		{ResourceStatus{Policy: "flat", Tau: 2 * time.Hour, Interval: 10 * time.Minute}, 10 * time.Minute},
	} {
		if got := updateHint(tc.st); got != tc.want {
			t.Errorf("%+v: hint %v, want %v", tc.st, got, tc.want)
		}
	}
	for _, order := range [][]time.Duration{{10 * time.Minute, 0, 30 * time.Minute}, {0, 30 * time.Minute, 10 * time.Minute}, {30 * time.Minute, 10 * time.Minute, 0}} {
		p := &svcPoller{}
		for i, iv := range order {
			p.List = append(p.List, ResourceStatus{ID: strconv.Itoa(i), Policy: "flat", Interval: iv})
		}
		s := &Server{opts: Options{Poller: p}}
		if _, got := s.listFreshness(); got != 10*time.Minute {
			t.Errorf("intervals %v: /resources announces %v, want the shortest, 10m", order, got)
		}
	}
}

// TestXPathRenderDeadline: when the feed's own render bound (renderTimeout,
// the context selectItems gets) has passed, say after slow storage reads,
// evaluation stops with that context's error, which the request answers
// as a 503, not with the 400 that blames the client's expression for
// taking longer than the xpath budget: that 400 is for xpath's own
// deadline only.
func TestXPathRenderDeadline(t *testing.T) {
	q, err := parseFeedQuery("xpath=title")
	if err != nil {
		t.Fatal(err)
	}
	items := benchDoc("x", fdT0, 0, 3).Items
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	_, err = q.selectItems(ctx, items, true, 0)
	var p *Problem
	if !errors.Is(err, context.DeadlineExceeded) || errors.As(err, &p) {
		t.Errorf("selectItems past the render deadline = %v, want context.DeadlineExceeded and no 400", err)
	}
}
