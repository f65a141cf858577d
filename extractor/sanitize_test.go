package extractor

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestResolveRef: the fast path gives what url.URL.Parse and String give.
func TestResolveRef(t *testing.T) {
	bases := []string{"https://example.org/a/b.html?q=1#f", "http://EXAMPLE.org:8080/", "http://[::1]:80/x/",
		"https://user:pw@example.org/", "http://example.org", "https://ex%C3%A9mple.org/a/"}
	refs := []string{"/", "/news/12/story.html", "/a/./b", "/a/../b", "//evil.org/x", "/a//b", "/a.b/c.d.e",
		"/~user/x-y_z", "/a b", "/a%20b", "/a?b", "/a#b", "story.html", "", "/.", "/..", "/é", "/a/b/", "/A:B",
		"//", "///", "//.", "/./"}
	for _, bs := range bases {
		bu, err := url.Parse(bs)
		if err != nil {
			t.Fatal(err)
		}
		base := newBaseURL(bu)
		for _, ref := range refs {
			want, err := bu.Parse(ref)
			got, ok := resolveRef(base, ref)
			if err != nil {
				if ok {
					t.Errorf("%s + %q: got %q, want an error", bs, ref, got)
				}
				continue
			}
			if !ok || got != want.String() {
				t.Errorf("%s + %q: got %q %v, want %q", bs, ref, got, ok, want.String())
			}
			// The link fields' fast path, where it answers, answers the same.
			if got, ok := base.fast(ref); ok && got != want.String() {
				t.Errorf("%s + %q: fast path %q, want %q", bs, ref, got, want.String())
			}
		}
	}
}

// FuzzSanitizeBatch: sanitizing batchable descriptions together gives, for
// each, what sanitizing it alone gives, and what bluemonday gives for it
// (no fast path).
func FuzzSanitizeBatch(f *testing.F) {
	f.Add("The <i>council</i> met <a href=\"/b\">x</a> <img src=x> &amp", "<p>a</p> &no", "</a>b<a>c", "x <")
	f.Add("<textarea>a", "<b>b", "<a href=javascript:x>y", "</object>")
	f.Add("<svg><p>a", "<math>b<", "&lt", "<!--")
	f.Add("<img>a</img>b", "c <b>d</b>", "<IMG/></IMG>e", "f")
	f.Add("<img alt=x></img>", "<h1>g</h1>", "<h6>h</h6> <i>i", "<z>j</z>")
	f.Add("<img>a", "b</img>c", "<img>", "d</img>")
	f.Fuzz(func(t *testing.T, a, b, c, d string) {
		frags := []string{a, b, c, d}
		// Descriptions as the builder collects them: whole tokens of a page.
		var page strings.Builder
		page.WriteString("<!-- <channel:title> -->t<!-- </channel:title> -->")
		for i, fr := range frags {
			fmt.Fprintf(&page, "<!-- <item:description index=\"%d\"> -->%s<!-- </item:description> -->", i+1, fr)
		}
		res := func(noBatch bool) []string {
			bld := newBuilder(Options{URL: "https://example.org/a/"})
			runBuilder(t, bld, page.String())
			var fs []*field
			if bld.channel.description.html != "" {
				fs = append(fs, &bld.channel.description)
			}
			for _, it := range bld.sortedItems() {
				if it.description.html != "" {
					if noBatch {
						it.description.batch = false
					}
					fs = append(fs, &it.description)
				}
			}
			bld.san.all(fs, newBaseURL(bld.page), nil)
			var out []string
			for _, f := range fs {
				out = append(out, f.sanitized)
			}
			return out
		}
		batched, alone := res(false), res(true)
		if fmt.Sprint(batched) != fmt.Sprint(alone) {
			t.Errorf("batched %q\nalone   %q", batched, alone)
		}
		bld := newBuilder(Options{URL: "https://example.org/a/"})
		runBuilder(t, bld, page.String())
		base := newBaseURL(bld.page)
		var plain []string
		for _, it := range bld.sortedItems() {
			if d := it.description; d.html != "" {
				plain = append(plain, one(resolvePlaceholders(d.html, d.urls, base)))
			}
		}
		if fmt.Sprint(batched) != fmt.Sprint(plain) {
			t.Errorf("batched    %q\nbluemonday %q", batched, plain)
		}
	})
}

func runBuilder(t *testing.T, b *builder, page string) {
	t.Helper()
	if err := b.read(strings.NewReader(page)); err != nil {
		t.Fatal(err)
	}
	b.closeAll()
}

// bluemondayOut is what bluemonday writes for h, with nothing trimmed.
func bluemondayOut(t testing.TB, h string) string {
	var out strings.Builder
	if err := feedPolicy().SanitizeReaderToWriter(strings.NewReader(h), &out); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// TestPassesUnchanged: the descriptions the fast path takes are those
// bluemonday gives back as they are; the others it changes, or may.
func TestPassesUnchanged(t *testing.T) {
	for h, want := range map[string]bool{
		"plain text, no markup at all":                         true,
		"The <i>council</i> met<br>on <b>Tuesday</b>.<br/>":    true,
		"<p>One</p>\n<ul><li>two</li><li>three</li></ul><hr/>": true,
		"<h1>T</h1><table><tr><td>1</td></tr></table>":         true,
		"<a>bare</a> é \u00a0 \t":                              true,
		"don't":                                                false, // ' is escaped
		`say "hi"`:                                             false, // " is escaped
		"fish &amp; chips":                                     false, // decoded, then escaped again
		"a > b":                                                false, // > is escaped
		"a < b":                                                false, // text, but not a tag we know
		"line\r\nbreak":                                        false, // CR becomes LF
		"nul\x00":                                              false,
		"<B>bold</B>":                                          false, // names are written lower-cased
		"<b >x</b>":                                            false,
		`<a href="https://example.org/">`:                      false, // rel="nofollow" is added
		"<img>":                                                false, // dropped without attributes
		"<font>x</font>":                                       false, // not allowed: dropped
		"<script>x</script>":                                   false,
		"</p/>":                                                false,
		"<!-- c -->":                                           false,
		"<i":                                                   false,
	} {
		if got := passesUnchanged(h); got != want {
			t.Errorf("passesUnchanged(%q) = %v, want %v", h, got, want)
		}
		if out := bluemondayOut(t, h); want && out != h {
			t.Errorf("bluemonday changes %q to %q", h, out)
		}
	}
}

// TestBareElements: each element the fast path lets through is written
// back by bluemonday as it came, as a start, end and self-closing tag.
func TestBareElements(t *testing.T) {
	for _, name := range []string{"p", "br", "b", "i", "em", "strong", "u", "s", "sub", "sup", "small", "code", "pre",
		"blockquote", "q", "ul", "ol", "li", "dl", "dt", "dd", "h1", "h2", "h3", "h4", "h5", "h6",
		"table", "thead", "tbody", "tr", "td", "th", "span", "div", "hr", "a"} {
		h := "x<" + name + ">y</" + name + ">z<" + name + "/>"
		if !passesUnchanged(h) {
			t.Errorf("%s: not taken by the fast path", name)
		}
		if out := bluemondayOut(t, h); out != h {
			t.Errorf("%s: bluemonday gives %q for %q", name, out, h)
		}
	}
}

// goldenDescriptions are the descriptions of the golden pages, resolved
// against each page's base as the sanitizer reads them.
func goldenDescriptions(t testing.TB) []string {
	pages, err := filepath.Glob(filepath.Join("..", "testdata", "extractor", "*.html"))
	if err != nil || len(pages) == 0 {
		t.Fatalf("golden pages: %v (%d)", err, len(pages))
	}
	var out []string
	for _, p := range pages {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		b := newBuilder(Options{URL: "https://example.org/news/" + filepath.Base(p)})
		if err := b.read(strings.NewReader(string(data))); err != nil {
			continue // a page over a limit
		}
		b.closeAll()
		base := newBaseURL(b.page)
		fs := []*field{&b.channel.description}
		for _, it := range b.sortedItems() {
			fs = append(fs, &it.description)
		}
		for _, f := range fs {
			if f.html != "" {
				out = append(out, resolvePlaceholders(f.html, f.urls, base))
			}
		}
	}
	return out
}

// TestSanitizeFastPathGolden: on the golden pages' descriptions, all gives
// what bluemonday gives description by description, and the fast path is
// taken where bluemonday changes nothing.
func TestSanitizeFastPathGolden(t *testing.T) {
	descs := goldenDescriptions(t)
	taken := 0
	for _, h := range descs {
		f := &field{html: h, batch: true}
		var s sanitizer
		s.all([]*field{f}, newBaseURL(pageURL("https://example.org/")), nil)
		if want := one(h); f.sanitized != want {
			t.Errorf("%q:\n got %q\nwant %q", h, f.sanitized, want)
		}
		if passesUnchanged(h) {
			taken++
			if out := bluemondayOut(t, h); out != h {
				t.Errorf("fast path for %q, which bluemonday changes to %q", h, out)
			}
		}
	}
	if taken == 0 {
		t.Errorf("the fast path takes none of the %d golden descriptions", len(descs))
	}
}

// FuzzSanitizeFastPath: whatever the input, when the fast path takes it,
// bluemonday gives it back byte for byte.
func FuzzSanitizeFastPath(f *testing.F) {
	for _, h := range goldenDescriptions(f) {
		f.Add(h)
	}
	for _, h := range []string{"a <b>b</b> c<br>", "<p>x</p><br/><hr>", "<ul><li>1</li></ul>", "</a><a>", "<h6>é</h6>\n\t"} {
		f.Add(h)
	}
	f.Fuzz(func(t *testing.T, h string) {
		if !passesUnchanged(h) {
			return
		}
		if out := bluemondayOut(t, h); out != h {
			t.Fatalf("fast path for %q, which bluemonday changes to %q", h, out)
		}
	})
}
