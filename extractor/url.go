package extractor

import (
	"net/url"
	"strings"
)

// baseURL is the URL relative references resolve against, with the prefix
// the fast path of [resolveRef] uses.
type baseURL struct {
	*url.URL
	prefix string // "scheme://host" when the fast path applies, else ""
	// plain: prefix has no character that html.EscapeString changes, so a
	// fast-path URL goes into an attribute as it is
	plain bool
}

func newBaseURL(u *url.URL) *baseURL {
	b := &baseURL{URL: u}
	if u.Scheme != "" && u.Host != "" && u.Opaque == "" && u.User == nil {
		b.prefix = (&url.URL{Scheme: u.Scheme, Host: u.Host}).String()
		b.plain = !strings.ContainsAny(b.prefix, "&'<>\"\r")
	}
	return b
}

// resolveRef is base.Parse(ref) then String, with a fast path for the most
// common reference of legacy pages, an absolute path made only of
// unreserved characters and "/" without dot segments or empty segments
// ("/news/12/story.html"): then the result is the base's scheme and host
// followed by the path, as url.URL.ResolveReference makes it. ok is false
// when ref does not parse.
func resolveRef(base *baseURL, ref string) (string, bool) {
	if u, ok := base.fast(ref); ok {
		return u, true
	}
	u, err := base.Parse(ref)
	if err != nil {
		return "", false
	}
	return u.String(), true
}

// fast is the fast path of [resolveRef], when it applies.
func (b *baseURL) fast(ref string) (string, bool) {
	if b.prefix == "" || !plainPath(ref) {
		return "", false
	}
	return b.prefix + ref, true
}

// plainPath reports whether ref is an absolute path of unreserved characters
// (RFC 3986) and "/", with no "." or ".." segment and no empty segment.
func plainPath(ref string) bool {
	if len(ref) == 0 || ref[0] != '/' {
		return false
	}
	for i := 0; i < len(ref); i++ {
		c := ref[i]
		switch {
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '~':
		case c == '/':
			if i+1 < len(ref) && (ref[i+1] == '/' || ref[i+1] == '.') {
				return false
			}
		case c == '.':
		default:
			return false
		}
	}
	return true
}
