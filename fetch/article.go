package fetch

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"strings"

	readability "codeberg.org/readeck/go-readability/v2"

	"github.com/dynamo-rss/dynamo/extractor"
)

// ErrNoArticle is wrapped when a page holds no text readability can take
// for its main article (an index page, a page of images, an empty page).
var ErrNoArticle = errors.New("fetch: no article text found in the page")

// Article is the main text of an article page.
type Article struct {
	Title string // the article's own title, as readability reads it; may be empty
	HTML  string // the main text, sanitized like every description; never empty
}

// ExtractArticle finds the main text of an article page (body, already
// read, and the URL it was read from, against which its links resolve)
// with readability (codeberg.org/readeck/go-readability, the port of
// Mozilla's Readability.js): navigation, sidebars, footers, forms and
// scripts are left out. The HTML that comes out is sanitized by
// [extractor.SanitizeHTML], as every description is. It is pure: no
// network, no clock; safe for concurrent use. body is expected in UTF-8 or
// with its charset declared in the document.
func ExtractArticle(body []byte, pageURL string) (Article, error) {
	u, err := url.Parse(pageURL)
	if err != nil {
		return Article{}, fmt.Errorf("article URL %q: %w", shown(pageURL), err)
	}
	a, err := readability.FromReader(bytes.NewReader(body), u)
	if err != nil {
		return Article{}, fmt.Errorf("article %s: %w", shown(pageURL), err)
	}
	if a.Node == nil {
		return Article{}, fmt.Errorf("article %s: %w", shown(pageURL), ErrNoArticle)
	}
	var raw strings.Builder
	if err := a.RenderHTML(&raw); err != nil {
		return Article{}, fmt.Errorf("article %s: render: %w", shown(pageURL), err)
	}
	clean := extractor.SanitizeHTML(raw.String())
	if strings.TrimSpace(textOf(clean)) == "" {
		return Article{}, fmt.Errorf("article %s: %w", shown(pageURL), ErrNoArticle)
	}
	return Article{Title: strings.TrimSpace(a.Title()), HTML: clean}, nil
}

// textOf is s without its tags: enough to tell an empty article (a few
// wrapper elements and nothing in them) from one with text.
func textOf(s string) string {
	var b strings.Builder
	in := false
	for _, r := range s {
		switch {
		case r == '<':
			in = true
		case r == '>':
			in = false
		case !in:
			b.WriteRune(r)
		}
	}
	return b.String()
}
