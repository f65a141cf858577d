package suggest_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/dynamo-rss/dynamo/extractor"
	"github.com/dynamo-rss/dynamo/suggest"
)

// TestDescribe: an element for people is the start of its text, else its
// tag; an element not on the page is "".
func TestDescribe(t *testing.T) {
	page := []byte(`<html><head><title>T</title></head><body><p>Hello <b>there</b></p><img src="/a.png"></body></html>`)
	long := []byte(`<html><body><p>Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore</p></body></html>`)
	for _, c := range []struct {
		page []byte
		n    int
		want string
	}{
		{page, 4, "Hello there"}, // html, head, title, body, p
		{page, 5, "there"},
		{page, 6, "<img>"},
		{page, 7, ""},
		{page, -1, ""},
		{long, 3, "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor …"},
	} {
		if got := suggest.Describe(c.page, extractor.Options{}, c.n); got != c.want {
			t.Errorf("element %d: %q, want %q", c.n, got, c.want)
		}
	}
}

// TestWhereFooter: a footer's list is said to be in the footer, even when
// the footer holds most of a small page's text (it said “under” the main
// list's heading before).
func TestWhereFooter(t *testing.T) {
	page, err := os.ReadFile(filepath.Join("testdata", "point", "footer.html"))
	if err != nil {
		t.Fatal(err)
	}
	sugs, err := suggest.Page(page, extractor.Options{URL: "https://example.org/"})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, p := range sugs.Proposals {
		if p.Count >= 30 {
			found = true
			if p.Where != "in the footer" {
				t.Errorf("the footer's list is %q", p.Where)
			}
		}
	}
	if !found {
		t.Fatalf("no footer list proposed: %+v", sugs.Proposals)
	}
}
