package extractor_test

import (
	"cmp"
	"errors"
	"strings"
	"testing"

	"github.com/dynamo-rss/dynamo/extractor"
	"github.com/dynamo-rss/dynamo/schema"
)

// TestSeverities checks each diagnostic of ANNOTATIONS.md "Diagnostics"
// with its severity, position and whole message: errors for what loses
// data, warnings for the rest.
func TestSeverities(t *testing.T) {
	const title = "<!-- <channel:title> -->T<!-- </channel:title> -->\n"
	const dc = `uri="http://purl.org/dc/elements/1.1/" prefix="dc"`
	for _, tc := range []struct {
		name string
		page string
		want []string
	}{
		// Errors.
		{"unknown tag, a typo", title + `<!-- <item:titel index="1"> -->lost<!-- </item:titel> -->`,
			[]string{`2:1: error: unknown annotation <item:titel> ignored with its region; did you mean <item:title>?`}},
		{"unknown tag, transposed letters", title + `<!-- <channel:lnik/> -->`,
			[]string{`2:1: error: unknown annotation <channel:lnik> ignored with its region; did you mean <channel:link>?`}},
		{"unknown tag, no close match", title + `<!-- <channel:author> -->Jo<!-- </channel:author> -->`,
			[]string{`2:1: error: unknown annotation <channel:author> ignored with its region; known tags are channel:title, channel:link, channel:description, channel:image, channel:extension, item:title, item:link, item:description, item:image, item:extension`}},
		{"unknown closing tag alone", title + `<!-- </item:titel> -->`,
			[]string{`2:1: error: unknown annotation </item:titel> ignored with its region; did you mean </item:title>?`}},
		{"unclosed region", title + "<!-- <item:title index=\"1\"> -->x\n  end",
			[]string{`2:1: error: unclosed <item:title index="1"> opened at 2:1: expected </item:title>; it is closed at the end of the page`}},
		{"closing that does not match the innermost region",
			title + "\n\n\n\n\n\n\n\n\n" +
				`<!-- <item:title index="2"> -->t` + "\n    " +
				`<!-- <item:link index="1"> -->/l` + "\n\n        " +
				`<!-- </item:title index="2"> --><!-- <item:title index="1"> -->one<!-- </item:title> -->`,
			[]string{`14:9: error: closing </item:title index="2"> at 14:9 does not match <item:link index="1"> opened at 12:5; both are closed here`}},
		{"closing with nothing of its name open", title + `<!-- <item:title index="1"> -->t<!-- </item:link> --><!-- </item:title> -->`,
			[]string{`2:33: error: closing </item:link> at 2:33 does not match <item:title index="1"> opened at 2:1, and no <item:link> is open; ignored`}},
		{"closing index that does not agree", title + `<!-- <item:title index="1"> -->t<!-- </item:title index="3"> -->`,
			[]string{`2:33: error: closing </item:title index="3"> at 2:33 does not match <item:title index="1"> opened at 2:1`}},
		{"annotation missing its '>'", title + `<!-- <item:title index="1" -->`,
			[]string{`2:1: error: annotation "<item:title index=\"1\"" does not parse: annotation does not end with '>'; expected a tag such as <!-- <item:title index="1"> -->; it is ignored`}},
		{"attribute without a value", title + `<!-- <item:title index> -->`,
			[]string{`2:1: error: annotation "<item:title index>" does not parse: attribute index has no value; expected a tag such as <!-- <item:title index="1"> -->; it is ignored`}},
		{"unclosed quote", title + `<!-- <item:title index="1> -->`,
			[]string{`2:1: error: annotation "<item:title index=\"1>" does not parse: attribute index value is not closed; expected a tag such as <!-- <item:title index="1"> -->; it is ignored`}},
		{"missing required attribute", title + `<!-- <item:title> -->x<!-- </item:title> -->`,
			[]string{`2:1: error: <item:title> ignored: missing required attribute index`}},
		{"empty required attribute", title + `<!-- <channel:image url=" "/> -->`,
			[]string{`2:1: error: <channel:image> ignored: empty required attribute url`}},
		{"malformed required attribute", title + `<!-- <channel:extension uri="u" prefix="1p" localName="x"> -->v<!-- </channel:extension> -->`,
			[]string{`2:1: error: <channel:extension> ignored: prefix "1p" is not an XML name without a colon`}},
		{"non-integer index", title + `<!-- <item:title index="two"> -->x<!-- </item:title> -->`,
			[]string{`2:1: error: <item:title> ignored: index "two" is not a positive integer`}},
		{"dropped item", title + `<!-- <item:link index="1"> -->/a<!-- </item:link> -->`,
			[]string{`2:1: error: item 1 has neither title nor description: dropped`}},
		{"page without channel:title", `<p>hello</p>`,
			[]string{`1:1: error: page is not annotated: no channel:title`}},

		// Warnings.
		{"duplicate singleton", title + `<!-- <channel:title> -->U<!-- </channel:title> -->`,
			[]string{`2:1: warning: channel:title given twice (first at 1:1): the first wins`}},
		{"duplicate index", title + `<!-- <item:title index="1"> -->a<!-- </item:title> -->` + "\n" + `<!-- <item:title index="1"> -->b<!-- </item:title> -->`,
			[]string{`3:1: warning: item:title of item 1 given twice (first at 2:1): the first wins`}},
		{"duplicate id", title + `<!-- <item:title index="1" id="a"> -->a<!-- </item:title> -->` + "\n" + `<!-- <item:title index="2" id="a"> -->b<!-- </item:title> -->`,
			[]string{`3:1: warning: duplicate item id "a": item 2 gets "a-2"`}},
		{"dropped URL", title + `<!-- <channel:link> -->javascript:x()<!-- </channel:link> -->`,
			[]string{`2:1: warning: channel:link "javascript:x()" is a javascript: URL, only http and https are kept: dropped`}},
		{"unreadable date", title + `<!-- <item:title index="1"> -->a<!-- </item:title> --><!-- <item:extension index="1" ` + dc + ` localName="date"> -->soon<!-- </item:extension> -->`,
			[]string{`2:55: warning: unreadable date "soon" in dc:date: kept as text, not a publication time`}},
		{"closing with no opening at all", title + `<!-- </item:title> -->`,
			[]string{`2:1: warning: closing </item:title> has no open region; ignored`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := extractor.Extract(strings.NewReader(tc.page), extractor.Options{URL: page})
			if err != nil && !errors.Is(err, extractor.ErrNotAnnotated) {
				t.Fatal(err)
			}
			got := diagStrings(res.Diagnostics)
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("diagnostics:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			wantErr := strings.Contains(strings.Join(tc.want, "\n"), ": error: ")
			if res.HasErrors() != wantErr {
				t.Errorf("HasErrors() = %v, want %v", res.HasErrors(), wantErr)
			}
		})
	}
}

// TestRelativeLinkOnOtherBase: a link by absolute path on a page whose URL is
// not http or https resolves to that scheme and is dropped, however plain
// the link (the fast path for unreserved characters included).
func TestRelativeLinkOnOtherBase(t *testing.T) {
	src := "<!-- <channel:title> -->T<!-- </channel:title> -->" +
		`<!-- <item:title index="1"> -->a<!-- </item:title> --><!-- <item:link index="1"> -->/news.html<!-- </item:link> -->`
	for _, tc := range []struct{ base, want string }{
		{"https://example.org/dir/page.html", "https://example.org/news.html"},
		{"http://example.org/dir/page.html", "http://example.org/news.html"},
		{"ftp://example.org/dir/page.html", ""}, // dropped: the item falls back to the page's URL
		{"file:///srv/dir/page.html", ""},
	} {
		res, err := extractor.Extract(strings.NewReader(src), extractor.Options{URL: tc.base})
		if err != nil {
			t.Fatalf("%s: %v", tc.base, err)
		}
		if got := res.Document.Items[0].Link; tc.want != "" && got != tc.want || tc.want == "" && got != tc.base {
			t.Errorf("base %s: item link %q, want %q", tc.base, got, cmp.Or(tc.want, tc.base))
		}
		if dropped := strings.Contains(strings.Join(diagStrings(res.Diagnostics), "\n"), "only http and https are kept"); dropped != (tc.want == "") {
			t.Errorf("base %s: diagnostics %q", tc.base, diagStrings(res.Diagnostics))
		}
	}
}

// TestDescriptionNUL: a NUL byte in a description's HTML (it marks URL
// placeholders inside) is dropped wherever it stands, a text's first byte
// included, and the links after it are resolved.
func TestDescriptionNUL(t *testing.T) {
	for _, tc := range []struct{ desc, want string }{
		{"<i>x</i>\x00y <a href=\"/a\">l</a>", `<i>x</i>y <a href="https://example.org/a" rel="nofollow">l</a>`},
		{"\x00<i>x</i> <a href=\"/a\">l</a>", `<i>x</i> <a href="https://example.org/a" rel="nofollow">l</a>`},
		{"<a \x00x=\"b\" href=\"/a\">l</a> <img src=/b.png>", `<a href="https://example.org/a" rel="nofollow">l</a> <img src="https://example.org/b.png">`},
	} {
		page := `<!-- <channel:title> -->T<!-- </channel:title> --><!-- <item:title index="1"> -->t<!-- </item:title> -->` +
			`<!-- <item:description index="1"> -->` + tc.desc + `<!-- </item:description> -->`
		res, err := extractor.Extract(strings.NewReader(page), extractor.Options{URL: "https://example.org/"})
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := res.Document.Items[0].Extensions.Lookup(schema.ContentNamespace, "encoded"); got != tc.want {
			t.Errorf("%q: HTML %q, want %q", tc.desc, got, tc.want)
		}
	}
}
