package fetch_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dynamo-rss/dynamo/fetch"
)

func TestExtractArticle(t *testing.T) {
	tests := []struct {
		file, url string
		want      []string // text and markup of the article that must come out
		notWant   []string // boilerplate and anything unsafe that must not
	}{
		{
			file: "article-blog.html", url: "https://gazette.example/news/river",
			want: []string{"rose by almost two metres overnight", "We have seen the river this high", "market moves to the upper car park",
				`href="https://gazette.example/maps/flood"`},
			notWant: []string{"NAVLINK", "SIDEBAR", "FOOTER", "TRACKER-SCRIPT", "<script", "<style", "<form", "<input"},
		},
		{
			file: "article-divs.html", url: "https://sanvito.example/notices/42",
			want:    []string{"Via Roma will be closed", "Buses 2 and 5 will be diverted", "information meeting on Thursday", `src="https://sanvito.example/img/map.png"`},
			notWant: []string{"MENU", "LEFTBOX", "BOTTOM", "javascript:", "onclick", "alert("},
		},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			body, err := os.ReadFile(filepath.Join("testdata", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			a, err := fetch.ExtractArticle(body, tc.url)
			if err != nil {
				t.Fatalf("ExtractArticle: %v", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(a.HTML, w) {
					t.Errorf("article lacks %q:\n%s", w, a.HTML)
				}
			}
			for _, nw := range tc.notWant {
				if strings.Contains(a.HTML, nw) {
					t.Errorf("article keeps %q:\n%s", nw, a.HTML)
				}
			}
		})
	}
}

func TestExtractArticleNone(t *testing.T) {
	for name, body := range map[string]string{
		"empty":       "",
		"images only": `<html><body><img src="/a.png"><img src="/b.png"></body></html>`,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := fetch.ExtractArticle([]byte(body), "https://example.org/x")
			if !errors.Is(err, fetch.ErrNoArticle) {
				t.Errorf("ExtractArticle(%s) = %v, want ErrNoArticle", name, err)
			}
		})
	}
}

func FuzzExtractArticle(f *testing.F) {
	for _, name := range []string{"article-blog.html", "article-divs.html"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		a, err := fetch.ExtractArticle(body, "https://example.org/a")
		if err == nil && (a.HTML == "" || strings.Contains(strings.ToLower(a.HTML), "<script")) {
			t.Errorf("article %q from %q", a.HTML, body)
		}
	})
}
