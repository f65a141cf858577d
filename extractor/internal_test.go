package extractor

import (
	"math/rand/v2"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

func TestParseAnnotation(t *testing.T) {
	for _, tc := range []struct {
		body      string
		looks, ok bool
		want      annotation
	}{
		{" <channel:title> ", true, true, annotation{name: "channel:title", kind: tagChannelTitle}},
		{"</ITEM:Link index='3'>", true, true, annotation{name: "item:link", kind: tagItemLink, closing: true, attrs: []attr{{"index", "3"}}}},
		{"<channel:image url=\"/a.png\"\n title='A \"quoted\" title' />", true, true,
			annotation{name: "channel:image", kind: tagChannelImage, empty: true, attrs: []attr{{"url", "/a.png"}, {"title", `A "quoted" title`}}}},
		{`<item:title index="1" index="2" Data-X="y">`, true, true,
			annotation{name: "item:title", kind: tagItemTitle, attrs: []attr{{"index", "1"}, {"data-x", "y"}}, dup: "index"}},
		{"<item:bogus>", true, true, annotation{name: "item:bogus"}},
		{"<item:title index=1>", true, false, annotation{}},
		{"<item:title index>", true, false, annotation{}},
		{"<item:title index=\"1>", true, false, annotation{}},
		{"<item:title>x", true, false, annotation{}},
		{"<item:title", true, false, annotation{}},
		{"<channel:", true, false, annotation{}},
		{"<item:", true, false, annotation{}},
		{"<item:title index=>", true, false, annotation{}},
		{"<item:title index = >", true, false, annotation{}},
		{"<item:title index >", true, false, annotation{}},
		{"<item:title index = '3' >", true, true, annotation{name: "item:title", kind: tagItemTitle, attrs: []attr{{"index", "3"}}}},
		{"<", false, false, annotation{}},
		{"<i", false, false, annotation{}},
		{"</item:title/>", true, false, annotation{}},
		{"<item:title a=\"1\"b=\"2\">", true, false, annotation{}},
		{"<p>", false, false, annotation{}},
		{"<itemx:title>", false, false, annotation{}},
		{"<channelfoo:title>", false, false, annotation{}},
		{"text <item:title>", false, false, annotation{}},
		{"", false, false, annotation{}},
	} {
		a, looks, ok, reason := parseAnnotation([]byte(tc.body), nil, nil)
		if looks != tc.looks || ok != tc.ok {
			t.Errorf("%q: looks %v ok %v (%s), want %v %v", tc.body, looks, ok, reason, tc.looks, tc.ok)
			continue
		}
		if ok && !reflect.DeepEqual(a, tc.want) {
			t.Errorf("%q: %+v, want %+v", tc.body, a, tc.want)
		}
		if looks != looksLikeAnnotation([]byte(tc.body)) && tc.body != "<channelfoo:title>" {
			t.Errorf("%q: looksLikeAnnotation disagrees", tc.body)
		}
	}
}

// TestInternerStr: str gives the value's own text, interned or not; small
// indexes come without an allocation.
func TestInternerStr(t *testing.T) {
	var in interner
	for _, v := range []string{"0", "7", "42", "99", "07", "100", "-1", "1a", "", "http://purl.org/dc/elements/1.1/", "dc", "7"} {
		if got := in.str([]byte(v)); got != v {
			t.Errorf("str(%q) = %q", v, got)
		}
	}
	b := []byte("42")
	var none *interner // no map to look in: still no allocation
	var kept []string
	if n := testing.AllocsPerRun(100, func() { kept = append(kept[:0], none.str(b)) }); n != 0 {
		t.Errorf("str(%q): %v allocations", b, n)
	}
}

func TestTagAtom(t *testing.T) {
	for raw, want := range map[string]atom.Atom{
		"<A HREF=x>": atom.A, "</Div>": atom.Div, "<br/>": atom.Br, "<script\n>": atom.Script,
		"<h1 class=x>": atom.H1, "<blockquotexxxxxxxxxxxxxxxxxxxx>": 0, "<x-custom>": 0,
	} {
		if got := tagAtom([]byte(raw)); got != want {
			t.Errorf("tagAtom(%q) = %v, want %v", raw, got, want)
		}
	}
}

// TestValueCut: a value is cut at its limit, never past it, wherever the
// cut falls: inside a word, right after a space (the space that would be
// written before the next word counts), inside a multi-byte character.
func TestValueCut(t *testing.T) {
	for _, tc := range []struct {
		in    string
		limit int
		want  string
		cut   bool
	}{
		{"ab  é€x", 5, "ab é", true},
		{"abc de", 5, "abc d", true},    // the space before "de" takes the fourth byte
		{"abc  de", 6, "abc de", false}, // exactly at the limit
		{"abc de", 4, "abc", true},      // the cut falls on the space: no room for a word after it
		{"abc d", 4, "abc", true},
		{"abcd ef", 5, "abcd", true},
		{"abc", 3, "abc", false},
		{"  abc", 3, "abc", false}, // a leading space is dropped, not counted
		{"abc ", 3, "abc", false},  // a trailing space is dropped, not counted
		{"abcd", 3, "abc", true},
		{"ab é", 4, "ab", true}, // "é" does not fit after the space: cut before it, no half character
		{"ab é", 5, "ab é", false},
	} {
		v := value{limit: tc.limit}
		v.addText([]byte(tc.in))
		if got := v.String(); got != tc.want || v.cut != tc.cut || len(got) > tc.limit {
			t.Errorf("%q limit %d: got %q cut %v, want %q cut %v", tc.in, tc.limit, got, v.cut, tc.want, tc.cut)
		}
	}
}

// TestValueInvalidUTF8: a byte that is not UTF-8 becomes U+FFFD wherever
// it stands, 0x80 (the lowest such byte) and 0xFF alike, beside ASCII
// that is copied a run at a time.
func TestValueInvalidUTF8(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"a\x80b", "a\uFFFDb"},
		{"\x80", "\uFFFD"},
		{"ab\xffc d", "ab\uFFFDc d"},
		{"a\x7fb", "a\x7fb"}, // DEL, the last ASCII byte, is an XML character: kept
	} {
		v := value{limit: 100}
		v.addText([]byte(tc.in))
		if got := v.String(); got != tc.want {
			t.Errorf("%q: got %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestCleanFastPaths: clean, and the checks that spare it work (isClean,
// blank), agree with the streaming value they stand for, on the strings
// where a fast path could go wrong: spaces leading, trailing and doubled,
// white space that is not ASCII, invalid UTF-8, control characters.
func TestCleanFastPaths(t *testing.T) {
	for _, s := range []string{
		"", " ", "a", "abc", "a b", "a  b", " a", "a ", " a ", "a\tb", "a\nb",
		"\u00a0", "a\u00a0", "\u00a0a", "é", "é x", "é  x", " é", "é ",
		"\x80", "a\x80", "\x01", "a\x01b", "\x7f", "\u2028", "ab cd ef", "ab cd  ef", "ab cd ef ",
	} {
		v := value{limit: len(s) + 1}
		v.addText([]byte(s))
		want := v.String()
		if got := clean(s); got != want {
			t.Errorf("clean(%q) = %q, want %q", s, got, want)
		}
		if got := isClean(s); got && want != s {
			t.Errorf("isClean(%q) = true, but clean makes it %q", s, want)
		}
		if got := blank(s); got != (want == "") {
			t.Errorf("blank(%q) = %v, but clean makes it %q", s, got, want)
		}
	}
}

func TestResolvePlaceholders(t *testing.T) {
	base, _ := url.Parse("https://example.org/a/b.html")
	got := resolvePlaceholders("<a href=\"\x000\x00\">x</a><img src=\"\x001\x00\">", []string{" c.html?x=1&y=2 ", "javascript:alert('x')"}, newBaseURL(base))
	want := `<a href="https://example.org/a/c.html?x=1&amp;y=2">x</a><img src="javascript:alert(&#39;x&#39;)">`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// TestResolvePlaceholdersEscapes: a URL goes into the attribute as
// resolveRef makes it, escaped for an attribute, whichever path resolves it
// (the fast path included, with a base whose host needs escaping).
func TestResolvePlaceholdersEscapes(t *testing.T) {
	for _, bs := range []string{"https://example.org/a/", "http://a&b.example/x/", "http://a'b.example/", "http://[::1]:80/"} {
		bu, err := url.Parse(bs)
		if err != nil {
			t.Fatal(err)
		}
		base := newBaseURL(bu)
		for _, ref := range []string{"/news/1/story.html", " /a-b_c~d ", "c.html?x=1&y=2", "/a b", "'\"<>"} {
			want, ok := resolveRef(base, strings.TrimSpace(ref))
			if !ok {
				want = strings.TrimSpace(ref)
			}
			want = `<a href="` + html.EscapeString(want) + `">`
			if got := resolvePlaceholders("<a href=\"\x000\x00\">", []string{ref}, base); got != want {
				t.Errorf("%s + %q: got %s, want %s", bs, ref, got, want)
			}
		}
	}
}

// TestAdvance checks pos.advance, fed in chunks as tokens are, against a rune-by-rune count.
func TestAdvance(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a", "b", " ", "<", "\n", "\r", "\r\n", "é", "€", "\xff", "abcdefghijklmnop"}
	for range 2000 {
		var sb strings.Builder
		for range rng.IntN(60) {
			sb.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		s := sb.String()
		want := pos{1, 1}
		for i := 0; i < len(s); {
			switch {
			case strings.HasPrefix(s[i:], "\r\n"):
				want, i = pos{want.line + 1, 1}, i+2
			case s[i] == '\n' || s[i] == '\r':
				want, i = pos{want.line + 1, 1}, i+1
			default:
				_, size := utf8.DecodeRuneInString(s[i:])
				want.col, i = want.col+1, i+size
			}
		}
		got, cr := pos{1, 1}, false
		for rest := s; len(rest) > 0; {
			n := 1 + rng.IntN(len(rest))
			for n < len(rest) && rest[n] >= utf8.RuneSelf {
				n++ // tokens split the page between ASCII bytes
			}
			cr = got.advance([]byte(rest[:n]), cr)
			rest = rest[n:]
		}
		if got != want {
			t.Fatalf("advance over %q: got %v, want %v", s, got, want)
		}
	}
}

// TestShorten: a quoted page string is kept whole up to 80 bytes and cut
// past it, never inside a character.
func TestShorten(t *testing.T) {
	a79 := strings.Repeat("a", 79)
	for _, tc := range []struct{ in, want string }{
		{a79 + "b", a79 + "b"},
		{a79 + "bc", a79 + "b…"},
		{a79 + "é", a79 + "…"},   // "é" would end at byte 81
		{a79 + " é", a79 + " …"}, // the space is the 80th byte
		{a79[:78] + "é", a79[:78] + "é"},
		{"", ""},
	} {
		if got := shorten(tc.in); got != tc.want {
			t.Errorf("shorten(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestSelectorLengthBound: a selector of 4096 bytes compiles, with white
// space around it too (trimmed first); one of 4097 is refused.
func TestSelectorLengthBound(t *testing.T) {
	at := "." + strings.Repeat("x", maxSelectorLen-1)
	for _, src := range []string{at, "  " + at + "\n"} {
		if _, err := compileSelector(src); err != nil {
			t.Errorf("%d bytes (%d trimmed): %v", len(src), len(strings.TrimSpace(src)), err)
		}
	}
	if _, err := compileSelector(at + "x"); err == nil || !strings.Contains(err.Error(), "longer than 4096 bytes") {
		t.Errorf("4097 bytes: %v, want refused", err)
	}
}

// TestLowerName: every name byte of every case lowered, in names short
// enough for the stack buffer (up to 32 bytes) and longer; known names come
// back as their constants without an allocation.
func TestLowerName(t *testing.T) {
	var name []byte
	for c := 0; c < 256; c++ {
		if isNameByte(byte(c)) {
			name = append(name, byte(c))
		}
	}
	for n := 1; n <= 40; n++ {
		for start := 0; start < len(name); start += n {
			b := name[start:min(start+n, len(name))]
			want := strings.ToLower(string(b))
			for _, tag := range []bool{true, false} {
				if got := lowerName(b, tag); got != want {
					t.Errorf("lowerName(%q, %v) = %q, want %q", b, tag, got, want)
				}
			}
		}
	}
	for _, tc := range []struct {
		name string
		tag  bool
	}{{"ITEM:Title", true}, {"channel:link", true}, {"Index", false}, {"URI", false}} {
		b := []byte(tc.name)
		var got string
		if n := testing.AllocsPerRun(100, func() { got = lowerName(b, tc.tag) }); n != 0 {
			t.Errorf("lowerName(%q): %v allocations, want none (a known name is a constant)", tc.name, n)
		}
		if got != strings.ToLower(tc.name) {
			t.Errorf("lowerName(%q) = %q", tc.name, got)
		}
	}
}

// TestNameBytes: the bytes of tag and attribute names are ASCII letters,
// digits, ':', '-', '_' and '.', each range to its ends.
func TestNameBytes(t *testing.T) {
	for c := 0; c < 256; c++ {
		want := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.ContainsRune(":-_.", rune(c))
		if got := isNameByte(byte(c)); got != want {
			t.Errorf("isNameByte(%q) = %v, want %v", rune(c), got, want)
		}
	}
}

// TestParseAnnotationAllocs: parsing an item's annotation again with its
// buffer and the page's interner allocates nothing: known names are
// constants, repeated values (a namespace's uri and prefix) interned, small
// indexes strconv's own.
func TestParseAnnotationAllocs(t *testing.T) {
	body := []byte(`<item:extension index="7" uri="http://purl.org/dc/elements/1.1/" prefix="dc" localName="creator">`)
	var in interner
	buf := make([]attr, 0, 8)
	a, _, ok, reason := parseAnnotation(body, buf, &in)
	if !ok {
		t.Fatalf("not parsed: %s", reason)
	}
	if n := testing.AllocsPerRun(100, func() { a, _, _, _ = parseAnnotation(body, buf, &in) }); n != 0 {
		t.Errorf("%v allocations parsing an annotation again, want none", n)
	}
	if v, _ := a.attr("uri"); v != "http://purl.org/dc/elements/1.1/" {
		t.Errorf("uri %q", v)
	}
	// Past maxInterned distinct values, a value gets a string of its own
	// (kept out of the map): the map stays at its bound.
	for i := range maxInterned + 10 {
		in.str([]byte("v" + strconv.Itoa(i)))
	}
	if len(in.m) != maxInterned {
		t.Errorf("interner holds %d values, want its bound %d", len(in.m), maxInterned)
	}
}

// TestUnknownTagSuggestion: the nearest known tag is suggested, the first
// of knownTags on a tie, nothing past distance 2; editDistance is
// Levenshtein's.
func TestUnknownTagSuggestion(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		d    int
	}{
		{"kitten", "sitting", 3}, {"", "abc", 3}, {"abc", "", 3}, {"abc", "abc", 0}, {"item:titel", "item:title", 2}, {"ab", "ba", 2}, {"item:tite", "item:title", 1},
	} {
		if got := editDistance(tc.a, tc.b); got != tc.d {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.d)
		}
	}
	for name, want := range map[string]string{
		"channel:imtle": "did you mean <channel:title>?", // as near to channel:image: the first wins
		"item:titl":     "did you mean <item:title>?",
		"item:tixxx":    "known tags are channel:title",
	} {
		if got := unknownTag(name, false); !strings.Contains(got, want) {
			t.Errorf("unknownTag(%q) = %q, want it to say %q", name, got, want)
		}
	}
}
