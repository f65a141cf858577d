// Package redact hides the credentials of URLs (https://user:pass@host/)
// wherever dynamo shows or logs them: the HTTP packages (api, ui) call it
// for everything they show, and their loggers pass through [Logger].
//
// Credentials inside a resource's URL (https://user:pass@host/) are the
// operator's: the resource is fetched with them, but they are never shown
// (pages, feeds, OPML, the admin JSON) nor logged. The page's own URL
// carries them into what is stored: its links resolved against it, the
// document's URL, a poll's error; so they are hidden where shown, not where
// stored.
package redact

import (
	"context"
	"log/slog"
	"net/url"
	"regexp"
	"strings"

	"github.com/dynamo-rss/dynamo/config"
	"github.com/dynamo-rss/dynamo/schema"
)

// credentialsInText is a URL's authority up to its last "@": the scheme
// (if any), "//", then user info, which stops at the path, query,
// fragment, white space or a quote or angle bracket of the text around.
var credentialsInText = regexp.MustCompile(`((?:[A-Za-z][A-Za-z0-9+.-]*:)?//)[^/?#\s"'<>]*@`)

// URL is a URL as people and logs see it: credentials become ***
// (config.RedactURL).
func URL(raw string) string { return config.RedactURL(raw) }

// Text is text (an error message, a description, HTML) with the
// credentials of every URL in it hidden as URL hides them.
func Text(s string) string {
	if !strings.Contains(s, "@") || !strings.Contains(s, "//") {
		return s // the common case: nothing to hide, nothing allocated
	}
	return credentialsInText.ReplaceAllString(s, "${1}***@")
}

// Texts is ss with Text applied to each; ss itself (not a copy)
// when none changes.
func Texts(ss []string) []string {
	for i, s := range ss {
		if Text(s) != s {
			out := make([]string, len(ss))
			copy(out, ss[:i])
			for j := i; j < len(ss); j++ {
				out[j] = Text(ss[j])
			}
			return out
		}
	}
	return ss
}

// URI is a request's path and query as the access log writes it:
// a URL given in the query (?url=…, percent-encoded) with its credentials
// hidden.
func URI(u *url.URL) string {
	uri := u.RequestURI()
	if !strings.Contains(u.RawQuery, "@") && !strings.Contains(strings.ToLower(u.RawQuery), "%40") {
		return uri
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return Text(uri)
	}
	for _, vs := range q {
		for i, v := range vs {
			vs[i] = Text(v)
		}
	}
	return u.EscapedPath() + "?" + q.Encode()
}

// Extensions is ext with Text applied to every value; ext itself
// when no value changes.
func Extensions(ext schema.Extensions) schema.Extensions {
	var out schema.Extensions
	for i, x := range ext {
		v := Text(x.Value)
		if v == x.Value && out == nil {
			continue
		}
		if out == nil {
			out = append(make(schema.Extensions, 0, len(ext)), ext[:i]...)
		}
		x.Value = v
		out = append(out, x)
	}
	if out == nil {
		return ext
	}
	return out
}

// Image is a copy of img with its URLs shown (nil stays nil).
func Image(img *schema.Image) *schema.Image {
	if img == nil {
		return nil
	}
	cp := *img
	cp.URL, cp.Link = URL(cp.URL), URL(cp.Link)
	return &cp
}

// redactingHandler is the api's log handler: every string and error
// attribute goes out with the credentials of its URLs hidden, whichever
// message logs it.
type redactingHandler struct{ h slog.Handler }

func (r redactingHandler) Enabled(ctx context.Context, l slog.Level) bool { return r.h.Enabled(ctx, l) }

func (r redactingHandler) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, Text(rec.Message), rec.PC) // net/http's error log writes text
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(redactAttr(a))
		return true
	})
	return r.h.Handle(ctx, out)
}

func (r redactingHandler) WithAttrs(as []slog.Attr) slog.Handler {
	red := make([]slog.Attr, len(as))
	for i, a := range as {
		red[i] = redactAttr(a)
	}
	return redactingHandler{h: r.h.WithAttrs(red)}
}

func (r redactingHandler) WithGroup(name string) slog.Handler {
	return redactingHandler{h: r.h.WithGroup(name)}
}

// redactAttr hides credentials in a string or error attribute (and in
// groups of them); other kinds are left as they are.
func redactAttr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		if s := v.String(); Text(s) != s {
			return slog.String(a.Key, Text(s))
		}
	case slog.KindGroup:
		g := v.Group()
		red := make([]slog.Attr, len(g))
		for i, x := range g {
			red[i] = redactAttr(x)
		}
		return slog.Attr{Key: a.Key, Value: slog.GroupValue(red...)}
	case slog.KindAny:
		if err, ok := v.Any().(error); ok {
			if s := err.Error(); Text(s) != s {
				return slog.String(a.Key, Text(s))
			}
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}

// Logger is l with the credentials of URLs hidden in every string
// and error it logs, as the api's own logs are; nil: a logger that
// discards.
func Logger(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return slog.New(redactingHandler{h: l.Handler()})
}
