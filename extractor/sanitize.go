package extractor

import (
	"net/url"
	"strconv"
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

// sanitize turns a description's collected HTML into the content:encoded
// value: URL placeholders replaced by the URLs resolved against base, then
// sanitized by bluemonday (which sees absolute URLs, so its scheme policy
// applies to what readers will follow), then stripped of characters XML does
// not allow.
func (b *builder) sanitize(raw string, urls []string, base *url.URL) string {
	b.sanitized.Reset() // one buffer for all the descriptions of a page
	err := ugcPolicy().SanitizeReaderToWriter(strings.NewReader(resolvePlaceholders(raw, urls, base)), &b.sanitized)
	if err != nil {
		// Reading a strings.Reader and writing a bytes.Buffer do not fail;
		// were it to happen, keep no HTML rather than half-sanitized HTML.
		return ""
	}
	return strings.TrimSpace(legal(b.sanitized.String()))
}

// resolvePlaceholders replaces each NUL index NUL written by
// [region.appendTag] with its URL made absolute and escaped for an attribute.
// The collected HTML has no other NUL (appendHTML drops them).
func resolvePlaceholders(raw string, urls []string, base *url.URL) string {
	if len(urls) == 0 {
		return raw
	}
	var sb strings.Builder
	sb.Grow(len(raw) + 32*len(urls))
	for {
		i := strings.IndexByte(raw, 0)
		if i < 0 {
			sb.WriteString(raw)
			return sb.String()
		}
		j := strings.IndexByte(raw[i+1:], 0)
		if j < 0 { // cannot happen: placeholders come in pairs
			sb.WriteString(raw[:i])
			return sb.String()
		}
		sb.WriteString(raw[:i])
		if n, err := strconv.Atoi(raw[i+1 : i+1+j]); err == nil && n >= 0 && n < len(urls) {
			u := strings.TrimSpace(urls[n])
			if abs, err := base.Parse(u); err == nil {
				u = abs.String()
			}
			sb.WriteString(html.EscapeString(u))
		}
		raw = raw[i+j+2:]
	}
}

// mayHaveURL reports whether a raw start tag may carry an href, src or cite
// attribute (a cheap, case-insensitive test that allows false positives).
func mayHaveURL(raw []byte) bool {
	for i := 0; i+3 <= len(raw); i++ {
		var w [3]byte
		for k := range w {
			w[k] = raw[i+k] | 0x20
		}
		switch string(w[:]) {
		case "hre", "src", "cit":
			return true
		}
	}
	return false
}
