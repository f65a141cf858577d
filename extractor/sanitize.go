package extractor

import (
	"errors"
	"io"
	"net/url"
	"strings"
	"sync"

	"github.com/microcosm-cc/bluemonday"
	"golang.org/x/net/html"
)

// ugcPolicy is bluemonday's policy for user-generated content: no script,
// style, event handlers or form elements, URLs only http, https and mailto,
// rel="nofollow" on links. Building it compiles regular expressions, so it is
// built once; a built Policy is never modified and is safe for concurrent use.
var ugcPolicy = sync.OnceValue(bluemonday.UGCPolicy)

// sanitize turns a description's raw HTML into the content:encoded value:
// relative href, src and cite URLs made absolute against base, then
// sanitized, then stripped of characters XML does not allow.
func sanitize(raw string, base *url.URL) string {
	return strings.TrimSpace(legal(ugcPolicy().Sanitize(absolutize(raw, base))))
}

// absolutize re-tokenizes an HTML fragment and resolves the URL attributes
// of its start tags against base; everything else is copied unchanged.
func absolutize(raw string, base *url.URL) string {
	var sb strings.Builder
	sb.Grow(len(raw) + len(raw)/8)
	z := html.NewTokenizer(strings.NewReader(raw))
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			if !errors.Is(z.Err(), io.EOF) {
				sb.Write(z.Raw()) // cannot happen on a strings.Reader without a buffer limit
			}
			return sb.String()
		case html.StartTagToken, html.SelfClosingTagToken:
			raw := z.Raw()
			if !mayHaveURL(raw) {
				sb.Write(raw)
				continue
			}
			t := z.Token()
			for i := range t.Attr {
				switch t.Attr[i].Key {
				case "href", "src", "cite":
					if u, err := base.Parse(strings.TrimSpace(t.Attr[i].Val)); err == nil {
						t.Attr[i].Val = u.String()
					}
				}
			}
			sb.WriteString(t.String())
		default:
			sb.Write(z.Raw())
		}
	}
}

// mayHaveURL reports whether a raw start tag may carry an href, src or cite
// attribute (a cheap, case-insensitive test that allows false positives).
func mayHaveURL(raw []byte) bool {
	for i := 0; i+3 <= len(raw); i++ {
		switch raw[i] | 0x20 {
		case 'h', 's', 'c':
			w := string([]byte{raw[i] | 0x20, raw[i+1] | 0x20, raw[i+2] | 0x20})
			if w == "hre" || w == "src" || w == "cit" {
				return true
			}
		}
	}
	return false
}
