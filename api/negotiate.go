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

// parseAccept reads an Accept header leniently: malformed ranges are skipped.
func parseAccept(h string) []acceptRange {
	var out []acceptRange
	for part := range strings.SplitSeq(h, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		mt, params, err := mime.ParseMediaType(part)
		if err != nil {
			continue
		}
		typ, sub, ok := strings.Cut(mt, "/")
		if !ok {
			continue
		}
		r := acceptRange{typ: typ, sub: sub, q: 1}
		if qs, ok := params["q"]; ok {
			q, err := strconv.ParseFloat(qs, 64)
			if err != nil || q < 0 || q > 1 {
				continue
			}
			r.q = q
		}
		out = append(out, r)
	}
	return out
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

// negotiate picks the format for a request: type= when given, else the
// format whose media types the Accept header rates highest, else RSS 2.0.
// Ties go to the earlier format of [feedFormats], so */* and generic XML
// (application/xml, text/xml) get RSS 2.0.
func negotiate(explicit, accept string) *feedFormat {
	if f, ok := formatByName(explicit); ok {
		return f
	}
	ranges := parseAccept(accept)
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
