package schema

import (
	"strings"
	"unicode"
)

// foreignWords maps month and weekday names of the languages legacy pages
// are most often written in (Italian, French, German, Spanish, Portuguese,
// Dutch) to English, so the lenient parser reads "21 novembre 2026" or
// "sabato 21 novembre 2026, ore 14:30". Weekdays map to "" (they add
// nothing to a date), as do the small words between the parts ("de", "ore",
// "um", "le", "à").
var foreignWords = func() map[string]string {
	m := map[string]string{}
	months := []struct {
		en    string
		names string
	}{
		{"January", "gennaio genn gen janvier janv januar jän jänner enero ene janeiro jan januari"},
		{"February", "febbraio febb feb février févr fevrier fevr februar febrero febr fevereiro fev februari"},
		{"March", "marzo mar mars märz maerz marz março marco maart mrt"},
		{"April", "aprile apr avril avr abril abr"},
		{"May", "maggio mag mai mayo maio mei"},
		{"June", "giugno giu juin juni junio jun junho"},
		{"July", "luglio lug juillet juil juli julio julho"},
		{"August", "agosto ago août aout augustus"},
		{"September", "settembre sett set septembre sept septiembre setiembre setembro"},
		{"October", "ottobre ott octobre oktober octubre oct outubro out okt"},
		{"November", "novembre nov noviembre novembro november"},
		{"December", "dicembre dic décembre déc decembre dezember dez diciembre dezembro december"},
	}
	for _, mo := range months {
		for _, n := range strings.Fields(mo.names) {
			m[n] = mo.en
		}
	}
	for _, w := range strings.Fields(`lunedì lunedi martedì martedi mercoledì mercoledi giovedì giovedi venerdì venerdi sabato domenica
		lundi mardi mercredi jeudi vendredi samedi dimanche
		montag dienstag mittwoch donnerstag freitag samstag sonnabend sonntag
		lunes martes miércoles miercoles jueves viernes sábado domingo
		segunda-feira terça-feira quarta-feira quinta-feira sexta-feira
		maandag dinsdag woensdag donderdag vrijdag zaterdag zondag
		de del ore alle um uhr le à a las h`) {
		m[w] = ""
	}
	return m
}()

// translateDate rewrites foreign month and weekday names in s to English
// (or drops them); ok is false when there was nothing to translate.
func translateDate(s string) (string, bool) {
	words := strings.FieldsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || r == ',' })
	changed := false
	out := make([]string, 0, len(words))
	for _, w := range words {
		lw := strings.ToLower(strings.TrimRight(w, "."))
		if en, ok := foreignWords[lw]; ok {
			changed = true
			if en != "" {
				out = append(out, en)
			}
			continue
		}
		if d, ok := strings.CutSuffix(lw, "er"); ok && d != "" && len(d) <= 2 && d[0] >= '0' && d[0] <= '9' { // 1er
			lw, changed = d, true
		}
		if lw != "" && lw[0] >= '0' && lw[0] <= '9' && lw != w { // 21. (German): the day without its dot
			out = append(out, lw)
			changed = true
			continue
		}
		out = append(out, w)
	}
	if !changed {
		return s, false
	}
	return strings.Join(out, " "), true
}
