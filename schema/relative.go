package schema

import (
	"strconv"
	"strings"
	"time"
	"unicode"
)

// ParseRelative reads a date written relative to now, in English, Italian,
// French, German, Spanish, Portuguese or Dutch: a day word and an optional
// time ("today 18:00", "heute, 18:00 Uhr", "hier à 18h30", "ieri", "ayer a
// las 9:15", "ontem", "gisteren om 18:00"), an age ("5 minutes ago", "an
// hour ago", "vor 3 Stunden", "il y a 2 heures", "hace 2 horas", "2 ore fa",
// "há 2 horas", "2 uur geleden", several units included: "1 hour 20
// minutes ago"), or "just now" and its translations. A day word without a
// time reads as that day's midnight in loc (nil: UTC); an age is
// subtracted from now, days and longer on loc's calendar. The result is in
// loc, to the second. In a longer text ("Posted 2 hours ago by the desk",
// "Stand: heute, 18:00 Uhr") it finds an age with its marker of the past,
// or a day word with a time; a day word alone is read only as the whole
// text, so that prose is not taken for a date.
func ParseRelative(s string, now time.Time, loc *time.Location) (time.Time, bool) {
	if loc == nil {
		loc = time.UTC
	}
	if now.IsZero() || len(s) > 128 {
		return time.Time{}, false
	}
	now = now.In(loc).Truncate(time.Second)
	toks := relativeTokens(s)
	if len(toks) == 0 {
		return time.Time{}, false
	}
	if t, ok := relativeDay(toks, now); ok {
		return t, true
	}
	if t, ok := relativeAge(toks, now); ok {
		return t, true
	}
	return relativeWithin(toks, now)
}

// maxRelativeWords bounds the phrase relativeWithin looks for.
const maxRelativeWords = 8

// relativeWithin finds a relative date inside a longer text ("Posted 2
// hours ago by the desk", "Stand: heute, 18:00 Uhr"): the first, longest
// run of words that reads as an age with its marker of the past ("ago",
// "vor", "il y a"…) or as a day word with a time of day. A day word alone
// is not taken from prose ("yesterday's news").
func relativeWithin(toks []string, now time.Time) (time.Time, bool) {
	for i := range toks {
		for j := min(len(toks), i+maxRelativeWords); j > i+1; j-- {
			w := toks[i:j]
			if t, ok := relativeAge(w, now); ok {
				return t, true
			}
			if hasClock(w) {
				if t, ok := relativeDay(w, now); ok {
					return t, true
				}
			}
		}
	}
	return time.Time{}, false
}

// hasClock reports whether one of the words is a time of day.
func hasClock(toks []string) bool {
	for _, w := range toks {
		if _, _, _, ok := clock(w); ok {
			return true
		}
	}
	return false
}

// relativeTokens lower-cases s and splits it into words: white space,
// commas and apostrophes separate; a trailing full stop is dropped.
func relativeTokens(s string) []string {
	s = strings.ToLower(strings.TrimSpace(s))
	s = strings.ReplaceAll(s, "’", "'")
	s = strings.NewReplacer("aujourd'hui", "aujourdhui", "l'altro", "laltro").Replace(s)
	f := strings.FieldsFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || r == ',' || r == '\'' || r == '(' || r == ')' || r == '|'
	})
	out := make([]string, 0, len(f)+2)
	for _, w := range f {
		if strings.Count(w, ".") == 1 && isClockDot(w) {
			out = append(out, strings.Replace(w, ".", ":", 1)) // "18.00", as Italian pages write the time
			continue
		}
		if w = strings.TrimRight(w, "."); w != "" {
			out = append(out, w)
		}
	}
	return out
}

// splitAmounts splits the words that glue an amount to its unit ("2h",
// "5min") in two.
func splitAmounts(toks []string) []string {
	out := make([]string, 0, len(toks)+2)
	for _, w := range toks {
		i := 0
		for i < len(w) && w[i] >= '0' && w[i] <= '9' {
			i++
		}
		if i > 0 && i < len(w) && relativeUnits[w[i:]] != 0 {
			out = append(out, w[:i], w[i:])
			continue
		}
		out = append(out, w)
	}
	return out
}

// isClockDot reports whether w is "H.MM" or "HH.MM".
func isClockDot(w string) bool {
	i := strings.IndexByte(w, '.')
	if i < 1 || i > 2 || len(w)-i-1 != 2 {
		return false
	}
	for j := 0; j < len(w); j++ {
		if j != i && (w[j] < '0' || w[j] > '9') {
			return false
		}
	}
	return true
}

// relativeDays maps the day words to how many days before today they are.
var relativeDays = map[string]int{
	"today": 0, "heute": 0, "aujourdhui": 0, "oggi": 0, "hoy": 0, "hoje": 0, "vandaag": 0,
	"yesterday": 1, "gestern": 1, "hier": 1, "ieri": 1, "ayer": 1, "ontem": 1, "gisteren": 1,
	"vorgestern": 2, "avant-hier": 2, "altroieri": 2, "anteayer": 2, "anteontem": 2, "eergisteren": 2,
}

// relativeFillers are the little words around a day word and its time.
var relativeFillers = map[string]bool{
	"at": true, "um": true, "uhr": true, "à": true, "a": true, "alle": true, "ore": true, "h": true,
	"las": true, "la": true, "às": true, "as": true, "om": true, "-": true, "–": true, "de": true,
}

// relativeDay reads a day word with an optional time of day.
func relativeDay(toks []string, now time.Time) (time.Time, bool) {
	days := -1
	var hour, minute, sec int
	hasTime, afterTime := false, false
	for i := 0; i < len(toks); i++ {
		w := toks[i]
		if w == "l" && i+1 < len(toks) && toks[i+1] == "altro" && i+2 < len(toks) && toks[i+2] == "ieri" {
			w, i = "altroieri", i+2
		}
		if w == "laltro" && i+1 < len(toks) && toks[i+1] == "ieri" {
			w, i = "altroieri", i+1
		}
		if d, ok := relativeDays[w]; ok && days < 0 {
			days = d
			afterTime = false
			continue
		}
		if afterTime && isMeridiem(w) {
			var ok bool
			if hour, ok = meridiem(hour, w); !ok {
				return time.Time{}, false
			}
			afterTime = false
			continue
		}
		if relativeFillers[w] {
			continue
		}
		if h, m, s, ok := clock(w); ok && !hasTime {
			hour, minute, sec, hasTime, afterTime = h, m, s, true, true
			continue
		}
		if n, d, ok := number(w); ok && d == len(w) && !hasTime && n <= 12 && i+1 < len(toks) &&
			(toks[i+1] == "am" || toks[i+1] == "pm") {
			hour, hasTime, afterTime = n, true, true // "6 pm"
			continue
		}
		return time.Time{}, false
	}
	if days < 0 {
		return time.Time{}, false
	}
	y, mo, d := now.AddDate(0, 0, -days).Date()
	return time.Date(y, mo, d, hour, minute, sec, 0, now.Location()), true
}

// relativeUnit is a unit of an age.
type relativeUnit int

const (
	unitSecond relativeUnit = iota + 1
	unitMinute
	unitHour
	unitDay
	unitWeek
	unitMonth
	unitYear
)

// relativeUnits maps the unit words (singular, plural, abbreviated) of the
// supported languages to their unit.
var relativeUnits = func() map[string]relativeUnit {
	words := map[relativeUnit]string{
		unitSecond: "s sec secs second seconds sek sekunde sekunden seconde secondes secondo secondi segundo segundos seconden",
		unitMinute: "m min mins minute minutes minuten minuto minuti minutos minuut",
		unitHour:   "h hr hrs hour hours std stunde stunden heure heures ora ore hora horas uur",
		unitDay:    "d day days tag tage tagen jour jours giorno giorni día días dia dias dag dagen",
		unitWeek:   "w wk wks week weeks woche wochen semaine semaines settimana settimane semana semanas weken",
		unitMonth:  "month months monat monate monaten mois mese mesi mes meses mês maand maanden",
		unitYear:   "y yr yrs year years jahr jahre jahren an ans année années anno anni año años ano anos jaar jaren",
	}
	out := make(map[string]relativeUnit)
	for u, list := range words {
		for _, w := range strings.Fields(list) {
			out[w] = u
		}
	}
	return out
}()

// relativeOne are the words for "one" before a unit ("an hour ago", "vor
// einer Stunde", "il y a une heure").
var relativeOne = map[string]bool{
	"a": true, "an": true, "one": true, "ein": true, "eine": true, "einer": true, "einem": true, "einen": true,
	"un": true, "une": true, "uno": true, "una": true, "um": true, "uma": true, "een": true, "één": true,
}

// relativeNow are the words for "just now".
var relativeNow = map[string]bool{
	"now": true, "just now": true, "right now": true, "gerade eben": true, "soeben": true, "jetzt": true,
	"à l instant": true, "à linstant": true, "maintenant": true, "adesso": true, "ora": true, "proprio ora": true,
	"ahora": true, "ahora mismo": true, "agora": true, "agora mesmo": true, "zojuist": true, "net": true, "nu": true,
}

// relativeAge reads an age: amounts with units between the markers of
// the past of one language ("… ago", "vor …", "il y a …", "hace …", "… fa",
// "há … (atrás)", "… geleden"), or "just now".
func relativeAge(toks []string, now time.Time) (time.Time, bool) {
	if relativeNow[strings.Join(toks, " ")] {
		return now, true
	}
	marked := false
	switch {
	case len(toks) > 3 && toks[0] == "il" && toks[1] == "y" && toks[2] == "a":
		toks, marked = toks[3:], true
	case toks[0] == "vor" || toks[0] == "hace" || toks[0] == "há" || toks[0] == "ha":
		toks, marked = toks[1:], true
	}
	if n := len(toks); n > 0 {
		switch toks[n-1] {
		case "ago", "fa", "geleden", "atrás", "atras":
			toks, marked = toks[:n-1], true
		}
	}
	if !marked || len(toks) == 0 {
		return time.Time{}, false
	}
	toks = splitAmounts(toks)
	t := now
	amounts := 0
	for i := 0; i < len(toks); i++ {
		switch toks[i] {
		case "and", "und", "et", "e", "y", "en":
			if amounts > 0 {
				continue
			}
		}
		if i+1 >= len(toks) {
			return time.Time{}, false
		}
		var n int
		if relativeOne[toks[i]] {
			n = 1
		} else {
			v, err := strconv.Atoi(toks[i])
			if err != nil || v < 0 || v > 100_000 {
				return time.Time{}, false
			}
			n = v
		}
		u := relativeUnits[toks[i+1]]
		if u == 0 {
			return time.Time{}, false
		}
		i++
		amounts++
		switch u {
		case unitSecond:
			t = t.Add(-time.Duration(n) * time.Second)
		case unitMinute:
			t = t.Add(-time.Duration(n) * time.Minute)
		case unitHour:
			t = t.Add(-time.Duration(n) * time.Hour)
		case unitDay:
			t = t.AddDate(0, 0, -n)
		case unitWeek:
			t = t.AddDate(0, 0, -7*n)
		case unitMonth:
			t = t.AddDate(0, -n, 0)
		case unitYear:
			t = t.AddDate(-n, 0, 0)
		}
	}
	if amounts == 0 {
		return time.Time{}, false
	}
	return checkYear(t)
}
