package schema

import (
	"strings"
	"time"

	"github.com/araddon/dateparse"
)

// dateCleaner rewrites the decorations of human-written dates that the
// lenient parser does not know ("December 08, 2005 @ 08:25 AM").
var dateCleaner = strings.NewReplacer(" @ ", " ", "@", " ", " at ", " ", " h ", ":")

// rfc822Zones are the zone names of RFC 822 dates (RFC 1123 keeps them) with
// their offsets.
var rfc822Zones = map[string]string{
	"UT": "+0000", "GMT": "+0000", "UTC": "+0000", "Z": "+0000",
	"EST": "-0500", "EDT": "-0400", "CST": "-0600", "CDT": "-0500",
	"MST": "-0700", "MDT": "-0600", "PST": "-0800", "PDT": "-0700",
}

// ParseDate reads a date leniently ("December 08, 2005 @ 08:25 AM", RFC 1123
// with RFC 822 zone names, RFC 3339, ISO dates, and what
// github.com/araddon/dateparse reads); a date without a zone is UTC. It never
// panics, whatever the parser does with strange input.
func ParseDate(s string) (t time.Time, ok bool) {
	s = strings.TrimSpace(strings.TrimRight(strings.TrimSpace(s), ".,;"))
	if strings.Contains(s, "@") || strings.Contains(s, " at ") || strings.Contains(s, " h ") {
		s = dateCleaner.Replace(s)
	}
	if s == "" {
		return time.Time{}, false
	}
	if singleSpaced(s) { // strings.Fields and Join would give s back
		if k := strings.LastIndexByte(s, ' '); k > 0 {
			if off, ok := rfc822Zones[s[k+1:]]; ok {
				s = s[:k+1] + off // Go would read an unknown abbreviation as +0000
			}
		}
	} else {
		fields := strings.Fields(s)
		if len(fields) == 0 {
			return time.Time{}, false
		}
		if off, ok := rfc822Zones[fields[len(fields)-1]]; ok && len(fields) > 1 {
			fields[len(fields)-1] = off
		}
		s = strings.Join(fields, " ")
	}
	layouts := dateLayoutsAlpha
	if s[0] >= '0' && s[0] <= '9' {
		layouts = dateLayoutsDigit
	}
	for _, layout := range layouts {
		if t, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			return checkYear(t.UTC())
		}
	}
	defer func() {
		if recover() != nil {
			t, ok = time.Time{}, false
		}
	}()
	t, err := dateparse.ParseIn(s, time.UTC)
	if err != nil {
		return time.Time{}, false
	}
	return checkYear(t.UTC())
}

// singleSpaced reports whether s is ASCII with no white space but single
// spaces between other characters.
func singleSpaced(s string) bool {
	if s[0] == ' ' || s[len(s)-1] == ' ' {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= 0x80 || c != ' ' && (c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'):
			return false
		case c == ' ' && s[i+1] == ' ':
			return false
		}
	}
	return true
}

// checkYear refuses times RFC 3339 cannot write.
func checkYear(t time.Time) (time.Time, bool) {
	if t.Year() < 1 || t.Year() > 9999 {
		return time.Time{}, false
	}
	return t, true
}

// dateLayouts are tried, in UTC, before the lenient parser: the common forms
// are read faster and exactly.
var (
	dateLayoutsDigit = []string{time.RFC3339, "2006-01-02"}
	dateLayoutsAlpha = []string{"January 2, 2006 3:04 PM", "January 2, 2006 15:04", time.RFC1123Z}
)
