package extractor

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
)

// TestResolveRef: the fast path gives what url.URL.Parse and String give.
func TestResolveRef(t *testing.T) {
	bases := []string{"https://example.org/a/b.html?q=1#f", "http://EXAMPLE.org:8080/", "http://[::1]:80/x/",
		"https://user:pw@example.org/", "http://example.org", "https://ex%C3%A9mple.org/a/"}
	refs := []string{"/", "/news/12/story.html", "/a/./b", "/a/../b", "//evil.org/x", "/a//b", "/a.b/c.d.e",
		"/~user/x-y_z", "/a b", "/a%20b", "/a?b", "/a#b", "story.html", "", "/.", "/..", "/é", "/a/b/", "/A:B"}
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
