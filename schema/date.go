package schema

import (
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/araddon/dateparse"
)

// dateCleaner rewrites the decorations of human-written dates that the
// lenient parser does not know ("December 08, 2005 @ 08:25 AM").
var dateCleaner = strings.NewReplacer(" @ ", " ", "@", " ", " at ", " ", " h ", ":")

// rfc822Zones are the zone names of RFC 822 dates (RFC 1123 keeps them), and
// the common European ones, with their offsets.
var rfc822Zones = map[string]string{
	"UT": "+0000", "GMT": "+0000", "UTC": "+0000", "Z": "+0000",
	"EST": "-0500", "EDT": "-0400", "CST": "-0600", "CDT": "-0500",
	"MST": "-0700", "MDT": "-0600", "PST": "-0800", "PDT": "-0700",
	// European zones legacy pages write after the time.
	"WET": "+0000", "WEST": "+0100", "BST": "+0100", "CET": "+0100", "CEST": "+0200",
	"MEZ": "+0100", "MESZ": "+0200", "EET": "+0200", "EEST": "+0300", "MSK": "+0300",
}

// DateRules say how a resource's dates are read: Layout (its date_format,
// a Go time layout) is tried first, then the lenient parser; Location is the
// zone of dates that carry none (nil: UTC). The zero value reads as
// [ParseDate] does.
type DateRules struct {
	Layout   string
	Location *time.Location
}

// ParseDate reads a date leniently ("December 08, 2005 @ 08:25 AM", RFC 1123
// with RFC 822 zone names, RFC 3339, ISO dates, day-first numeric dates
// such as 21.11.2026 and 21/11/2026 14:30, dates whose month is a word in
// English, Italian, French, German, Spanish, Portuguese or Dutch — a day, a
// month and a four-digit year in any order, with weekday names, the little
// words of those languages, a time and a zone ("sabato 21 novembre 2026, ore
// 14:30", "le 1er mars 2026 à 14h30", "21 de noviembre de 2026") — and what
// github.com/araddon/dateparse reads); a date without a zone is UTC. It never
// panics, whatever the parser does with strange input.
func ParseDate(s string) (t time.Time, ok bool) { return DateRules{}.Parse(s) }

// Published reads the publication time of extensions under these rules:
// the first extension named date or pubDate whose value is a date.
func (r DateRules) Published(e Extensions) (time.Time, bool) {
	for _, x := range e {
		if x.LocalName != "date" && x.LocalName != "pubDate" {
			continue
		}
		if t, ok := r.Parse(x.Value); ok {
			return t, true
		}
	}
	return time.Time{}, false
}

// Parse reads a date under the rules: the layout first (in Location when
// the layout has no zone), then as [ParseDate] does, with Location for dates
// without a zone. The result is in UTC.
func (r DateRules) Parse(s string) (t time.Time, ok bool) {
	t, _, ok = r.read(s)
	return t, ok
}

// Read reads a date as [DateRules.Parse] does and, when that fails and now
// is not zero, as a date relative to now ([ParseRelative] in Location):
// the extractor reads pages so, against the poll's time. It also says
// which rule read it ("date_format", "RFC 3339", "day-first dotted",
// "relative"…), for people (`dynamo lint --dates`). The time is in UTC.
func (r DateRules) Read(s string, now time.Time) (t time.Time, rule string, ok bool) {
	if t, rule, ok = r.read(s); ok {
		return t, rule, true
	}
	if t, ok = ParseRelative(s, now, r.Location); ok {
		return t.UTC(), RuleRelative, true
	}
	return time.Time{}, "", false
}

// RuleRelative is the rule [DateRules.Read] names for a date read relative
// to the poll's time.
const RuleRelative = "relative to the poll time"

func (r DateRules) read(s string) (t time.Time, rule string, ok bool) {
	loc := r.Location
	if loc == nil {
		loc = time.UTC
	}
	if r.Layout != "" {
		if t, err := time.ParseInLocation(r.Layout, strings.TrimSpace(s), loc); err == nil {
			t, ok = checkYear(t.UTC())
			return t, "date_format", ok
		}
	}
	return parseLenient(s, loc)
}

// dayFirst matches numeric dates written day first, the European way:
// 21.11.2026, 21/11/2026 14:30, 21-11-2026 14:30:05, 03.11.26 18:00.
var dayFirst = regexp.MustCompile(`^(\d{1,2})([./-])(\d{1,2})([./-])(\d{4}|\d{2})(?:[ T,]+(\d{1,2}):(\d{2})(?::(\d{2}))?)?$`)

// parseDayFirst reads a numeric d.m.yyyy date. The day comes first unless
// that cannot be (11/21/2026: the second number is over 12, a US date);
// 03/04/2026 is the 3rd of April. A two-digit year is taken only with
// dots (03.11.26, as German and Italian pages write it): 69-99 are
// 1969-1999, 00-68 are 2000-2068, as Go's "06" reads them.
func parseDayFirst(s string, loc *time.Location) (time.Time, string, bool) {
	m := dayFirst.FindStringSubmatch(s)
	if m == nil || m[2] != m[4] {
		return time.Time{}, "", false
	}
	dotted := m[2] == "."
	if len(m[5]) == 2 && !dotted {
		return time.Time{}, "", false
	}
	n := func(i int) int {
		v, _ := strconv.Atoi(m[i])
		return v
	}
	day, month, year := n(1), n(3), n(5)
	if len(m[5]) == 2 {
		year = twoDigitYear(year)
	}
	if month > 12 && day <= 12 {
		day, month = month, day
	}
	hour, minute, sec := 0, 0, 0
	if m[6] != "" {
		hour, minute = n(6), n(7)
		if m[8] != "" {
			sec = n(8)
		}
	}
	if month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || sec > 59 {
		return time.Time{}, "", false
	}
	t := time.Date(year, time.Month(month), day, hour, minute, sec, 0, loc)
	if t.Day() != day { // 31.02.2026 does not exist
		return time.Time{}, "", false
	}
	rule := "day-first numeric"
	if dotted {
		rule = "day-first dotted"
	}
	t, ok := checkYear(t.UTC())
	return t, rule, ok
}

// twoDigitYear is the year a two-digit year means, as Go's "06" reads it.
func twoDigitYear(y int) int {
	if y >= 69 {
		return 1900 + y
	}
	return 2000 + y
}

// parseLenient is ParseDate with loc for dates that carry no zone; it
// also names the rule that read the date.
func parseLenient(s string, loc *time.Location) (t time.Time, rule string, ok bool) {
	s = strings.TrimSpace(strings.TrimRight(strings.TrimSpace(s), ".,;"))
	for len(s) > 1 && (s[0] == '(' && s[len(s)-1] == ')' || s[0] == '[' && s[len(s)-1] == ']') {
		s = strings.TrimSpace(s[1 : len(s)-1]) // "(21.11.2026)", as pages print dates beside titles
	}
	if strings.Contains(s, "@") || strings.Contains(s, " at ") || strings.Contains(s, " h ") {
		s = dateCleaner.Replace(s)
	}
	if s == "" {
		return time.Time{}, "", false
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
			return time.Time{}, "", false
		}
		if off, ok := rfc822Zones[fields[len(fields)-1]]; ok && len(fields) > 1 {
			fields[len(fields)-1] = off
		}
		s = strings.Join(fields, " ")
	}
	layouts := dateLayoutsAlpha
	if s[0] >= '0' && s[0] <= '9' {
		layouts = dateLayoutsDigit
		if t, rule, ok := parseDayFirst(s, loc); ok {
			return t, rule, true
		}
	}
	for _, layout := range layouts {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			t, ok := checkYear(t.UTC())
			return t, layoutRules[layout], ok
		}
	}
	// Day, month name and year in any order, in the page's language, with
	// a time and a zone (21 novembre 2026, le 1er mars 2026 à 14h30).
	if t, ok := parseWords(s, loc); ok {
		t, ok := checkYear(t.UTC())
		return t, "day, month and year in words", ok
	}
	defer func() {
		if recover() != nil {
			t, rule, ok = time.Time{}, "", false
		}
	}()
	t, err := dateparse.ParseIn(s, loc, dateparse.PreferMonthFirst(false))
	if err != nil {
		return time.Time{}, "", false
	}
	t, ok = checkYear(t.UTC())
	return t, "lenient (dateparse)", ok
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
	dateLayoutsDigit = []string{time.RFC3339, "2006-01-02", "2 January 2006 15:04", "2 January 2006 15:04:05", "2 Jan 2006 15:04"}
	dateLayoutsAlpha = []string{"January 2, 2006 3:04 PM", "January 2, 2006 15:04", time.RFC1123Z}
	layoutRules      = map[string]string{time.RFC3339: "RFC 3339", "2006-01-02": "ISO date",
		"2 January 2006 15:04": "day and English month", "2 January 2006 15:04:05": "day and English month",
		"2 Jan 2006 15:04": "day and English month", "January 2, 2006 3:04 PM": "English month and day",
		"January 2, 2006 15:04": "English month and day", time.RFC1123Z: "RFC 1123"}
)
