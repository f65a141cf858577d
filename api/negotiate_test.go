package api

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
)

// parseAcceptMIME is parseAccept reading every range with
// mime.ParseMediaType: what parseSimpleRange must agree with.
func parseAcceptMIME(h string) []acceptRange {
	var out []acceptRange
	for part := range strings.SplitSeq(h, ",") {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		if r, keep := parseRange(part); keep {
			out = append(out, r)
		}
	}
	return out
}

var acceptSeeds = []string{
	"",
	"*/*",
	"application/rss+xml, application/rdf+xml;q=0.8, application/atom+xml;q=0.6, application/xml;q=0.4, text/xml;q=0.4",
	"text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8",
	"application/atom+xml; q=1.0 , text/*;q=.5",
	"text/xml ;q=0.4, text/xml;Q=0.3, Text/HTML, text/html;level=1;q=0.2",
	"text/xml;q=1.5, text/xml;q=-1, text/xml;q=0.5., text/xml;q=, text/xml;q = 0.5",
	"text/xml;, text, /xml, text/, text/xml/x, te xt/xml, text/xml;q=0.5;q=0.4",
	"text/xml;q=\"0.5\", application/json;charset=utf-8, a/b;q=0.1\t",
	"téxt/xml, text/\x7f, text/x@ml, text/[xml], *;q=0",
}

func TestParseAcceptMatchesMIME(t *testing.T) {
	heads := slices.Clone(acceptSeeds)
	// Every ASCII byte in a type, in a subtype, and q at its bounds.
	for b := range 128 {
		c := string(rune(b))
		heads = append(heads, "appl"+c+"cation/rss+xml", "application/rss"+c+"xml;q=0.5", c+"/x", "x/"+c)
	}
	heads = append(heads, "a/b;q=0", "a/b;q=1", "a/b;q=0.0", "a/b;q=1.0", "a/b;q=1.001", "a/b; charset=x; q=0", "a/b; charset=x; q=1")
	for _, h := range heads {
		if got, want := parseAccept(nil, h), parseAcceptMIME(h); !slices.Equal(got, want) {
			t.Errorf("%q:\n%v, mime reads\n%v", h, got, want)
		}
	}
	// q=0 keeps a range, as "not acceptable": Atom refused, the rest at
	// 0.5, gives RSS 1.0 (the RSS 2.0 types refused too) rather than Atom
	// through */*.
	for _, h := range []string{
		"application/rss+xml;q=0, application/xml;q=0, text/xml;q=0, application/atom+xml;q=0, */*;q=0.5",
		"application/rss+xml;q=0, application/xml;q=0, text/xml;q=0, application/atom+xml; charset=utf-8; q=0, */*;q=0.5",
	} {
		if f := negotiateRanges(parseAccept(nil, h)); f != &rss1Format {
			t.Errorf("%q: %s, want RSS 1.0", h, f.name)
		}
	}
}

func FuzzParseAccept(f *testing.F) {
	for _, h := range acceptSeeds {
		f.Add(h)
	}
	f.Fuzz(func(t *testing.T, h string) {
		if got, want := parseAccept(nil, h), parseAcceptMIME(h); !slices.Equal(got, want) {
			t.Fatalf("%q:\n%v, mime reads\n%v", h, got, want)
		}
	})
}

// The Accept headers of feed readers are read without allocating.
func TestParseAcceptAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	h := acceptSeeds[2]
	var buf [8]acceptRange
	if n := testing.AllocsPerRun(100, func() { parseAccept(buf[:0], h) }); n != 0 {
		t.Errorf("%v allocations", n)
	}
}

// negotiateFeed reads Accept once for both decisions: they must be
// wantsFeedPage's and the format type= or Accept (read by mime) picks.
func TestNegotiateFeedMatchesSeparateDecisions(t *testing.T) {
	accepts := append(slices.Clone(acceptSeeds), acceptFirefox, "text/html", "text/html, application/atom+xml;q=0.5")
	for _, accept := range accepts {
		for _, query := range []string{"", "max=3", "type=atom", "type=", "max=3;type=json", "typ=x"} {
			req := httptest.NewRequest(http.MethodGet, "/resources/x?"+query, nil)
			req.Header.Set("Accept", accept)
			explicit := req.URL.Query().Get("type")
			format, page := negotiateFeed(explicit, req)
			want, ok := formatByName(explicit)
			if !ok {
				want = negotiateRanges(parseAcceptMIME(accept))
			}
			if format != want || page != wantsFeedPage(req) {
				t.Errorf("Accept %q, ?%s: %s, page %v; want %s, page %v", accept, query, format.name, page, want.name, wantsFeedPage(req))
			}
		}
	}
}

// TestPrefersHTML checks who gets the page: text/html rated strictly above
// every feed type, application/xml and text/xml. A tie goes to the feed.
func TestPrefersHTML(t *testing.T) {
	for accept, want := range map[string]bool{
		acceptFirefox:                           true,
		"text/html":                             true,
		"text/html, application/atom+xml;q=0.5": true,
		"text/html;q=0.6, text/xml;q=0.5":       true,
		"":                                      false,
		"*/*":                                   false,
		"text/html;q=0":                         false,
		"application/rss+xml, text/html":        false, // a tie
		"application/atom+xml;q=0.5, text/html;q=0.5": false,
		"text/html;q=0.5, application/xml;q=0.5":      false,
		"text/html;q=0.5, text/xml;q=0.5":             false,
		"application/feed+json, text/html":            false,
		"text/html;q=0.5, application/xml":            false,
		"text/html;q=0.4, */*;q=0.5":                  false,
	} {
		if got := prefersHTML(accept); got != want {
			t.Errorf("prefersHTML(%q) = %v, want %v", accept, got, want)
		}
	}
}

// TestAcceptOddRanges checks what a feed reader gets for Accept headers
// with an empty element (",," or a leading comma, which some clients send
// when they join lists) and a parameter that is a bare number rather than
// q=: the empty element is skipped and the ranges after it still count;
// the bare number is a malformed range, dropped as mime drops it, not read
// as a q.
func TestAcceptOddRanges(t *testing.T) {
	s := newFDServer(t, fdFixture())
	for _, tc := range []struct{ accept, want string }{
		{"application/rss+xml;q=0.1,,application/atom+xml", "application/atom+xml"},
		{", application/atom+xml", "application/atom+xml"},
		{"application/rss+xml;q=0.1, , application/feed+json;q=0.5", "application/feed+json"},
		{"application/atom+xml;0.5, application/rss+xml;q=0.1", "application/rss+xml"},
		{"application/feed+json; 1, application/atom+xml;q=0.2", "application/atom+xml"},
	} {
		rec := fdDo(s, http.MethodGet, "/resources/news", "Accept", tc.accept)
		if ct := rec.Header().Get("Content-Type"); rec.Code != http.StatusOK || !strings.HasPrefix(ct, tc.want) {
			t.Errorf("Accept %q: %d %s, want %s", tc.accept, rec.Code, ct, tc.want)
		}
	}
	for _, h := range []string{"a/b;q=0.1,,c/d", "a/b;0.5", "a/b; 1, c/d;q=0.2"} {
		if got, want := parseAccept(nil, h), parseAcceptMIME(h); !slices.Equal(got, want) {
			t.Errorf("%q:\n%v, mime reads\n%v", h, got, want)
		}
	}
}
