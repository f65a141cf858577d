package schema

import (
	"strconv"
	"strings"
	"time"
)

// parseWords reads a date made of separate words in any order: a day-first
// numeric date or a day, a month name and a four-digit year; then an
// optional time ("14:30", "14:30:05", "14h30", "2:30 pm") and zone. Weekday
// names and the little words of the supported languages are skipped; any
// other word makes it fail, so that prose is never taken for a date.
func parseWords(s string, loc *time.Location) (time.Time, bool) {
	var (
		day, month, year   int
		hour, minute, sec  int
		hasTime, afterTime bool
		ambiguous          int // "mar": March, or Tuesday in it/fr/es
		zone               string
	)
	for _, tok := range strings.Fields(s) {
		tok = strings.TrimRight(tok, ",;|")
		if tok == "" || tok == "-" {
			continue
		}
		lower := strings.ToLower(tok)
		word := strings.TrimSuffix(strings.TrimSuffix(lower, "."), "-feira")
		switch {
		case afterTime && isMeridiem(word):
			var ok bool
			if hour, ok = meridiem(hour, word); !ok {
				return time.Time{}, false
			}
			afterTime = false
			continue
		case fillerWords[word]:
			continue
		}
		afterTime = false
		if w, ok := dateWords[word]; ok {
			switch {
			case w.month > 0 && w.weekday:
				ambiguous = w.month
			case w.month > 0:
				if month > 0 && month != w.month {
					return time.Time{}, false
				}
				month = w.month
			}
			continue
		}
		if off, ok := rfc822Zones[tok]; ok && zone == "" {
			zone = off
			continue
		}
		if (tok[0] == '+' || tok[0] == '-') && zone == "" && validOffset(tok[1:]) {
			zone = tok
			continue
		}
		if d, m, y, ok := numericDate(tok); ok {
			if year > 0 {
				return time.Time{}, false
			}
			day, month, year = d, m, y
			continue
		}
		if h, mi, se, ok := clock(lower); ok {
			if hasTime {
				return time.Time{}, false
			}
			hour, minute, sec, hasTime, afterTime = h, mi, se, true, true
			continue
		}
		n, digits, ok := number(lower)
		switch {
		case !ok:
			return time.Time{}, false
		case digits == 4 && year == 0:
			year = n
		case digits <= 2 && day == 0 && n >= 1 && n <= 31:
			day = n
		default:
			return time.Time{}, false
		}
	}
	if month == 0 && ambiguous > 0 {
		month = ambiguous
	}
	if day == 0 || month == 0 || year == 0 {
		return time.Time{}, false
	}
	b := make([]byte, 0, 32)
	b = appendPadded(b, year, 4)
	b = append(b, '-')
	b = appendPadded(b, month, 2)
	b = append(b, '-')
	b = appendPadded(b, day, 2)
	b = append(b, ' ')
	b = appendPadded(b, hour, 2)
	b = append(b, ':')
	b = appendPadded(b, minute, 2)
	b = append(b, ':')
	b = appendPadded(b, sec, 2)
	layout := "2006-01-02 15:04:05"
	if zone != "" {
		b = append(b, ' ')
		b = append(b, strings.ReplaceAll(zone, ":", "")...)
		layout += " -0700"
		if len(zone) == 3 { // "+02"
			layout = "2006-01-02 15:04:05 -07"
		}
	}
	t, err := time.ParseInLocation(layout, string(b), loc) // checks the day of the month
	return t, err == nil
}

// isMeridiem reports "am", "pm", "a.m", "p.m" (a final dot trimmed).
func isMeridiem(w string) bool { return w == "am" || w == "pm" || w == "a.m" || w == "p.m" }

// meridiem is the hour of a 12-hour clock's hour followed by w.
func meridiem(hour int, w string) (int, bool) {
	if hour < 1 || hour > 12 {
		return 0, false
	}
	hour %= 12
	if w[0] == 'p' {
		hour += 12
	}
	return hour, true
}

func appendPadded(b []byte, n, width int) []byte {
	s := strconv.Itoa(n)
	for i := len(s); i < width; i++ {
		b = append(b, '0')
	}
	return append(b, s...)
}

// validOffset reports whether s is the digits of a zone offset: "02", "0200"
// or "02:00".
func validOffset(s string) bool {
	s = strings.Replace(s, ":", "", 1)
	if len(s) != 2 && len(s) != 4 {
		return false
	}
	n, digits, ok := number(s)
	return ok && digits == len(s) && (len(s) == 2 && n <= 14 || len(s) == 4 && n/100 <= 14 && n%100 < 60)
}

// number reads an unsigned decimal of at most 4 digits, allowing the marks
// of ordinals and of German days: "21", "21.", "1er", "1º", "1°", "21st".
func number(s string) (n, digits int, ok bool) {
	for digits < len(s) && s[digits] >= '0' && s[digits] <= '9' {
		n = n*10 + int(s[digits]-'0')
		digits++
		if digits > 4 {
			return 0, 0, false
		}
	}
	if digits == 0 {
		return 0, 0, false
	}
	switch s[digits:] {
	case "", ".", "er", "º", "°", "st", "nd", "rd", "th", "o":
		return n, digits, true
	}
	return 0, 0, false
}

// numericDate reads a day-first date "D.M.YYYY", "D/M/YYYY", "D-M-YYYY" or
// "D.M.YY" (one or two digits for day and month). Month-first is taken only when the
// date cannot be day-first ("11/21/2026").
func numericDate(s string) (day, month, year int, ok bool) {
	var parts [3]int
	var digits [3]int
	var sep byte
	p := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			parts[p] = parts[p]*10 + int(c-'0')
			digits[p]++
			if digits[p] > 4 {
				return 0, 0, 0, false
			}
		case (c == '.' || c == '/' || c == '-') && p < 2 && digits[p] > 0 && (sep == 0 || c == sep):
			sep = c
			p++
		default:
			return 0, 0, 0, false
		}
	}
	if p != 2 || digits[0] > 2 || digits[1] > 2 || digits[2] != 4 && (digits[2] != 2 || sep != '.') {
		return 0, 0, 0, false
	}
	if digits[2] == 2 { // 03.11.26: dotted dates may have two-digit years
		parts[2] = twoDigitYear(parts[2])
	}
	a, b := parts[0], parts[1]
	switch {
	case a >= 1 && a <= 31 && b >= 1 && b <= 12:
		return a, b, parts[2], true // day-first, also when ambiguous
	case b >= 13 && b <= 31 && a >= 1 && a <= 12:
		return b, a, parts[2], true // month-first: the only reading
	}
	return 0, 0, 0, false
}

// clock reads a time of day: "14:30", "14:30:05", "14:30:05.123" (the
// fraction is dropped), "14h30", "14h".
func clock(s string) (h, m, sec int, ok bool) {
	if i := strings.IndexByte(s, 'h'); i > 0 && !strings.Contains(s, ":") {
		s = s[:i] + ":" + s[i+1:]
		if strings.HasSuffix(s, ":") {
			s += "00"
		}
	}
	if i := strings.IndexByte(s, '.'); i > 0 {
		if _, d, ok := number(s[i+1:]); !ok || d != len(s)-i-1 {
			return 0, 0, 0, false
		}
		s = s[:i]
	}
	parts := strings.Split(s, ":")
	if len(parts) != 2 && len(parts) != 3 {
		return 0, 0, 0, false
	}
	var v [3]int
	for i, p := range parts {
		n, d, ok := number(p)
		if !ok || d != len(p) || d > 2 || i > 0 && d != 2 {
			return 0, 0, 0, false
		}
		v[i] = n
	}
	if v[0] > 23 || v[1] > 59 || v[2] > 59 {
		return 0, 0, 0, false
	}
	return v[0], v[1], v[2], true
}

// dateWord is what a lower-case word of a date means: a month (1-12), a
// weekday, or both ("mar" is March, and Tuesday in Italian, French and
// Spanish: it is a month only when no other word is).
type dateWord struct {
	month   int
	weekday bool
}

// fillerWords are the little words of dates in the supported languages
// ("21 de noviembre de 2026", "le 1er mars à 14h30", "um 14:30 Uhr"), skipped.
// "am" is German ("am 21. November") unless it follows a time.
var fillerWords = map[string]bool{
	"de": true, "del": true, "di": true, "du": true, "le": true, "la": true, "el": true, "il": true,
	"à": true, "a": true, "às": true, "as": true, "las": true, "alle": true, "ore": true, "h": true,
	"um": true, "uhr": true, "den": true, "am": true, "the": true, "of": true, "on": true,
}

// dateWords maps the month and weekday names of English, Italian, French,
// German, Spanish, Portuguese and Dutch, full and abbreviated, with and
// without accents, to their meaning. No word is a different month in two
// languages.
var dateWords = func() map[string]dateWord {
	months := [12]string{
		"january jan gennaio genn gen janvier janv januar jänner jän enero ene janeiro januari",
		"february feb febbraio febb février fevrier févr fevr fév fev februar febr febrero fevereiro februari",
		"march mar marzo mars märz maerz marz mär mrz mrt março marco maart",
		"april apr aprile avril avr abril abr",
		"may maggio mag mai mayo maio mei",
		"june jun giugno giu juin juni junio junho",
		"july jul luglio lug juillet juil juli julio julho",
		"august aug agosto ago août aout augustus",
		"september sep sept settembre set sett septembre septiembre setiembre setembro",
		"october oct ottobre ott octobre oktober okt octubre outubro out",
		"november nov novembre noviembre novembro",
		"december dec dicembre dic décembre decembre déc dezember dez diciembre dezembro",
	}
	weekdays := "monday mon tuesday tue tues wednesday wed thursday thu thur thurs friday fri saturday sat sunday sun " +
		"lunedì lunedi lun martedì martedi mercoledì mercoledi mer giovedì giovedi gio venerdì venerdi ven sabato sab domenica dom " +
		"lundi mardi mercredi jeudi jeu vendredi samedi sam dimanche dim " +
		"montag mo dienstag mittwoch mi donnerstag do freitag fr samstag sonnabend sa sonntag so " +
		"lunes martes miércoles miercoles mié mie jueves jue viernes vie sábado sáb domingo " +
		"segunda seg terça terca ter quarta qua quinta qui sexta sex " +
		"maandag dinsdag woensdag donderdag vrijdag zaterdag zondag ma wo vr za zo"
	out := make(map[string]dateWord)
	for i, names := range months {
		for _, n := range strings.Fields(names) {
			out[n] = dateWord{month: i + 1}
		}
	}
	for _, n := range strings.Fields(weekdays) {
		w := out[n]
		w.weekday = true
		out[n] = w
	}
	out["mar"] = dateWord{month: 3, weekday: true}
	return out
}()
