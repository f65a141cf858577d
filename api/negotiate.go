package api

import (
	"bytes"
	"mime"
	"strconv"
	"strings"
)

// feedFormat is one output format: adding a format is one render_*.go file
// that defines a feedFormat, plus its line in [feedFormats].
type feedFormat struct {
	name        string // the value of type=…
	label       string // its name for people (subscribe links on GET /)
	contentType string // the Content-Type of responses, charset included
	// contentTypeHeader is contentType as a header value, shared by responses
	// (capacity = length, so an Add elsewhere copies it).
	contentTypeHeader []string
	accepts           []string // media types in Accept that ask for it, most specific first
	render            func(buf *bytes.Buffer, m *feedModel) error
}

// feedFormats lists the formats; the first is the default (RSS 2.0), and on a
// tie in Accept the earlier one wins.
var feedFormats = [...]*feedFormat{&rss2Format, &atomFormat, &rss1Format, &jsonFormat}

// formatByName returns the format type=name asks for.
func formatByName(name string) (*feedFormat, bool) {
	for _, f := range feedFormats {
		if f.name == name {
			return f, true
		}
	}
	return nil, false
}

// formatNames lists the values type= accepts.
func formatNames() []string {
	out := make([]string, 0, len(feedFormats))
	for _, f := range feedFormats {
		out = append(out, f.name)
	}
	return out
}

// acceptRange is one media range of an Accept header.
type acceptRange struct {
	typ, sub string
	q        float64
}

// parseAccept reads an Accept header leniently: malformed ranges are
// skipped. It appends the ranges to dst, so that a caller's array spares the
// slice; the ranges clients send (see parseSimpleRange) are read in place,
// the others by mime.ParseMediaType.
func parseAccept(dst []acceptRange, h string) []acceptRange {
	for part := range strings.SplitSeq(h, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		r, keep, ok := parseSimpleRange(part)
		if !ok {
			r, keep = parseRange(part)
		}
		if keep {
			dst = append(dst, r)
		}
	}
	return dst
}

// parseRange reads one media range; keep is false when it is malformed.
func parseRange(part string) (r acceptRange, keep bool) {
	mt, params, err := mime.ParseMediaType(part)
	if err != nil {
		return acceptRange{}, false
	}
	typ, sub, ok := strings.Cut(mt, "/")
	if !ok {
		return acceptRange{}, false
	}
	r = acceptRange{typ: typ, sub: sub, q: 1}
	if qs, ok := params["q"]; ok {
		q, err := strconv.ParseFloat(qs, 64)
		if err != nil || q < 0 || q > 1 {
			return acceptRange{}, false
		}
		r.q = q
	}
	return r, true
}

// parseSimpleRange reads a range of the form clients send, type/subtype in
// lower-case token characters with at most a ";q=" of digits and dots
// (spaces or tabs before and after the ;), as parseRange would read it,
// without allocating. ok is false for any other form: parseRange reads it.
func parseSimpleRange(part string) (r acceptRange, keep, ok bool) {
	mt, param, hasParam := strings.Cut(part, ";")
	typ, sub, slash := strings.Cut(strings.TrimRight(mt, " \t"), "/")
	if !slash || !lowerToken(typ) || !lowerToken(sub) {
		return acceptRange{}, false, false
	}
	r = acceptRange{typ: typ, sub: sub, q: 1}
	if !hasParam {
		return r, true, true
	}
	qs, isQ := strings.CutPrefix(strings.TrimLeft(param, " \t"), "q=")
	if !isQ || qs == "" || strings.Trim(qs, "0123456789.") != "" {
		return acceptRange{}, false, false
	}
	q, err := strconv.ParseFloat(qs, 64)
	if err != nil || q < 0 || q > 1 {
		return acceptRange{}, false, true
	}
	r.q = q
	return r, true, true
}

// lowerToken reports whether s is a non-empty token (RFC 2045, as mime reads
// it) without upper-case letters, which mime.ParseMediaType would lower.
func lowerToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		b := s[i]
		if b <= ' ' || b >= 0x7f || b >= 'A' && b <= 'Z' || strings.IndexByte(`()<>@,;:\"/[]?=`, b) >= 0 {
			return false
		}
	}
	return true
}

// quality returns the q the ranges give media type mt: the q of the most
// specific matching range (RFC 9110 §12.5.1), and -1 when none matches.
func quality(ranges []acceptRange, mt string) float64 {
	typ, sub, _ := strings.Cut(mt, "/")
	best, spec := -1.0, -1
	for _, r := range ranges {
		s := -1
		switch {
		case r.typ == typ && r.sub == sub:
			s = 2
		case r.typ == typ && r.sub == "*":
			s = 1
		case r.typ == "*" && r.sub == "*":
			s = 0
		}
		if s > spec {
			best, spec = r.q, s
		}
	}
	return best
}

// negotiateRanges picks the format for a request without type= (see
// negotiateFeed) from its parsed Accept header: the format whose media types
// it rates highest, else RSS 2.0. Ties go to the earlier format of
// [feedFormats], so */* and generic XML (application/xml, text/xml) get RSS
// 2.0.
func negotiateRanges(ranges []acceptRange) *feedFormat {
	if len(ranges) == 0 {
		return feedFormats[0]
	}
	var (
		best  *feedFormat
		bestQ float64
	)
	for _, f := range feedFormats {
		for _, mt := range f.accepts {
			q := quality(ranges, mt)
			if q > bestQ {
				best, bestQ = f, q
			}
		}
	}
	if best == nil {
		return feedFormats[0]
	}
	return best
}
