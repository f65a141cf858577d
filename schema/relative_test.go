package schema_test

import (
	"strings"
	"testing"
	"time"

	"github.com/dynamo-rss/dynamo/schema"
)

func TestParseRelative(t *testing.T) {
	rome, err := time.LoadLocation("Europe/Rome")
	if err != nil {
		t.Skipf("no zone data: %v", err)
	}
	// 2026-11-27 19:30:40 in Rome (+01:00).
	now := time.Date(2026, 11, 27, 18, 30, 40, 0, time.UTC)
	at := func(d, h, m, s int) time.Time { return time.Date(2026, 11, d, h, m, s, 0, rome) }
	ago := func(d time.Duration) time.Time { return now.Add(-d).In(rome) }
	tests := []struct {
		in   string
		want time.Time
	}{
		{"today 18:00", at(27, 18, 0, 0)},
		{"Today at 6:15 pm", at(27, 18, 15, 0)},
		{"yesterday", at(26, 0, 0, 0)},
		{"Yesterday, 09:05", at(26, 9, 5, 0)},
		{"5 minutes ago", ago(5 * time.Minute)},
		{"1 minute ago", ago(time.Minute)},
		{"an hour ago", ago(time.Hour)},
		{"2 hours ago", ago(2 * time.Hour)},
		{"2h ago", ago(2 * time.Hour)},
		{"30 seconds ago", ago(30 * time.Second)},
		{"1 hour 20 minutes ago", ago(80 * time.Minute)},
		{"3 days ago", at(24, 19, 30, 40)},
		{"2 weeks ago", at(13, 19, 30, 40)},
		{"just now", ago(0)},
		// de
		{"heute, 18:00 Uhr", at(27, 18, 0, 0)},
		{"Heute um 18:00", at(27, 18, 0, 0)},
		{"gestern", at(26, 0, 0, 0)},
		{"gestern, 7:45 Uhr", at(26, 7, 45, 0)},
		{"vor 3 Stunden", ago(3 * time.Hour)},
		{"vor einer Stunde", ago(time.Hour)},
		{"vor 10 Minuten", ago(10 * time.Minute)},
		{"vor 2 Tagen", at(25, 19, 30, 40)},
		{"Vor 1 Woche", at(20, 19, 30, 40)},
		// fr
		{"il y a 2 heures", ago(2 * time.Hour)},
		{"Il y a une heure", ago(time.Hour)},
		{"il y a 5 minutes", ago(5 * time.Minute)},
		{"hier", at(26, 0, 0, 0)},
		{"hier à 18h30", at(26, 18, 30, 0)},
		{"aujourd'hui", at(27, 0, 0, 0)},
		{"Aujourd’hui à 14h", at(27, 14, 0, 0)},
		{"il y a 3 jours", at(24, 19, 30, 40)},
		// es
		{"hace 2 horas", ago(2 * time.Hour)},
		{"Hace una hora", ago(time.Hour)},
		{"hace 3 días", at(24, 19, 30, 40)},
		{"ayer", at(26, 0, 0, 0)},
		{"ayer a las 18:00", at(26, 18, 0, 0)},
		{"hoy", at(27, 0, 0, 0)},
		// it
		{"ieri", at(26, 0, 0, 0)},
		{"ieri alle 18:00", at(26, 18, 0, 0)},
		{"oggi, ore 18.30", at(27, 18, 30, 0)},
		{"oggi, ore 9.05", at(27, 9, 5, 0)},
		{"l'altro ieri", at(25, 0, 0, 0)},
		{"L’altro ieri alle 18:00", at(25, 18, 0, 0)},
		{"l altro ieri", at(25, 0, 0, 0)},
		{"ieri.", at(26, 0, 0, 0)},           // a sentence's full stop is no clock
		{"oggi alle 7.30", at(27, 7, 30, 0)}, // one digit before the dot
		{"today 6 pm", at(27, 18, 0, 0)},
		{"today 12 am", at(27, 0, 0, 0)},
		{"yesterday 12 pm", at(26, 12, 0, 0)},
		{"9h ago", ago(9 * time.Hour)},
		{"19min ago", ago(19 * time.Minute)},
		{"0 minutes ago", ago(0)},
		{"0h ago", ago(0)},
		{"100000 seconds ago", ago(100000 * time.Second)},
		{"2 ore fa", ago(2 * time.Hour)},
		{"un'ora fa", ago(time.Hour)},
		{"5 minuti fa", ago(5 * time.Minute)},
		{"3 giorni fa", at(24, 19, 30, 40)},
		// pt
		{"há 2 horas", ago(2 * time.Hour)},
		{"Há 2 horas atrás", ago(2 * time.Hour)},
		{"há uma hora", ago(time.Hour)},
		{"ontem", at(26, 0, 0, 0)},
		{"ontem às 18:00", at(26, 18, 0, 0)},
		{"hoje", at(27, 0, 0, 0)},
		// nl
		{"2 uur geleden", ago(2 * time.Hour)},
		{"5 minuten geleden", ago(5 * time.Minute)},
		{"1 minuut geleden", ago(time.Minute)},
		{"3 dagen geleden", at(24, 19, 30, 40)},
		{"gisteren", at(26, 0, 0, 0)},
		{"gisteren om 18:00", at(26, 18, 0, 0)},
		{"vandaag 09:00", at(27, 9, 0, 0)},
		// inside a longer text
		{"Posted 2 hours ago by the press office", ago(2 * time.Hour)},
		{"Stand: heute, 18:00 Uhr", at(27, 18, 0, 0)},
		{"Aktualisiert vor 10 Minuten", ago(10 * time.Minute)},
		{"publié il y a 2 heures par la rédaction", ago(2 * time.Hour)},
		// The longest phrase found in a text: eight words, all of them.
		{"publié il y a 2 heures et 5 minutes par la rédaction", ago(2*time.Hour + 5*time.Minute)},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, ok := schema.ParseRelative(tt.in, now, rome)
			if !ok {
				t.Fatalf("ParseRelative(%q) did not read it", tt.in)
			}
			if !got.Equal(tt.want) {
				t.Errorf("ParseRelative(%q) = %v, want %v", tt.in, got, tt.want)
			}
			if got.Location() != rome {
				t.Errorf("ParseRelative(%q) is in %v, want Europe/Rome", tt.in, got.Location())
			}
		})
	}
	for _, in := range []string{"", "ago", "2 hours", "hours ago", "two hours ago", "yesterday's news", "what happened yesterday",
		"vor dem Haus", "il y a", "today 25:00", "in 2 hours", "2 ore", "the meeting of today",
		// A word for "now" is read only as the whole text, not in prose.
		"tickets on sale now for the concert", "jetzt neu im Programm",
		// Two day words, an hour past 12 before pm, an hour with a unit.
		"oggi ieri", "today 13 pm", "today 6", "altro ieri", "oggi laltro", "oggi l", "oggi l altro",
		// "un altro ieri" is another yesterday, not the day before it.
		"un altro ieri",
		// Dotted numbers that are no clock: three digits before the dot, none, one after it.
		"oggi 123.45", "oggi .30", "oggi 18.3",
		// An amount without its unit; past the largest amount.
		"5 ago", "vor 5", "100001 seconds ago"} {
		if got, ok := schema.ParseRelative(in, now, rome); ok {
			t.Errorf("ParseRelative(%q) = %v, want no date", in, got)
		}
	}
	// A text of 128 bytes is read; one longer is not looked at.
	pad := strings.Repeat("x", 128-len(" 2 hours ago"))
	if _, ok := schema.ParseRelative(pad+" 2 hours ago", now, rome); !ok {
		t.Error("a 128-byte text not read")
	}
	if _, ok := schema.ParseRelative("x"+pad+" 2 hours ago", now, rome); ok {
		t.Error("a 129-byte text read")
	}
	if _, ok := schema.ParseRelative("2 hours ago", time.Time{}, rome); ok {
		t.Error("ParseRelative with a zero now read a date")
	}
}

func TestReadRule(t *testing.T) {
	rome, err := time.LoadLocation("Europe/Rome")
	if err != nil {
		t.Skipf("no zone data: %v", err)
	}
	now := time.Date(2026, 11, 27, 18, 30, 0, 0, time.UTC)
	rules := schema.DateRules{Location: rome}
	tests := []struct {
		in, want, rule string
	}{
		{"03.11.26 18:00", "2026-11-03T17:00:00Z", "day-first dotted"},
		{"03.11.26", "2026-11-02T23:00:00Z", "day-first dotted"},
		{"3.11.99", "1999-11-02T23:00:00Z", "day-first dotted"},
		{"03.11.2026, 18:00 Uhr", "2026-11-03T17:00:00Z", "day, month and year in words"},
		{"Mo, 03.11.26 18:00", "2026-11-03T17:00:00Z", "day, month and year in words"},
		{"21/11/2026", "2026-11-20T23:00:00Z", "day-first numeric"},
		{"2026-11-03T18:00:00+01:00", "2026-11-03T17:00:00Z", "RFC 3339"},
		{"2 hours ago", "2026-11-27T16:30:00Z", schema.RuleRelative},
	}
	for _, tt := range tests {
		got, rule, ok := rules.Read(tt.in, now)
		if !ok || got.Format(time.RFC3339) != tt.want || rule != tt.rule {
			t.Errorf("Read(%q) = %v, %q, %v; want %s, %q", tt.in, got.Format(time.RFC3339), rule, ok, tt.want, tt.rule)
		}
	}
	// Without a poll time, a relative date is not a date (feeds read stored text so).
	if got, ok := rules.Parse("2 hours ago"); ok {
		t.Errorf("Parse(2 hours ago) = %v, want no date", got)
	}
	// Two-digit years are taken with dots only; 03/11/26 is left to the lenient parser.
	if got, ok := schema.ParseDate("03.11.26"); !ok || got.Format("2006-01-02") != "2026-11-03" {
		t.Errorf("ParseDate(03.11.26) = %v, %v; want 2026-11-03", got, ok)
	}
}

// FuzzParseRelative: whatever the text, reading it relative to a time
// does not panic, and a date it reads is never after that time by more
// than a day (today's later hours) and always in the given zone.
func FuzzParseRelative(f *testing.F) {
	for _, s := range []string{"2 hours ago", "vor 3 Stunden", "il y a une heure", "heute, 18:00 Uhr", "hier à 18h30",
		"1 hour 20 minutes ago", "99999999 years ago", "ayer a las 6 pm", "há 2 horas atrás", "oggi, ore 18.30", "2h ago", "l'altro ieri"} {
		f.Add(s)
	}
	now := time.Date(2026, 11, 27, 18, 30, 0, 0, time.UTC)
	loc := time.FixedZone("X", 3600)
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := schema.ParseRelative(s, now, loc)
		if !ok {
			return
		}
		if got.After(now.Add(24*time.Hour)) || got.Location() != loc {
			t.Fatalf("ParseRelative(%q) = %v", s, got)
		}
	})
}

// TestDayFirstDottedBounds: dotted dates with two-digit years (which the
// lenient parser would read month first) at each end of every field: the
// first and last month, day, hour, minute and second, and the century
// turn of the two-digit year (69 is 1969, 68 is 2068), each read by the
// day-first rule; slashed ones likewise.
func TestDayFirstDottedBounds(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"05.01.26", "2026-01-05T00:00:00Z"},
		{"05.12.26", "2026-12-05T00:00:00Z"},
		{"01.11.26", "2026-11-01T00:00:00Z"},
		{"31.12.26", "2026-12-31T00:00:00Z"},
		{"12.11.26", "2026-11-12T00:00:00Z"},
		{"05.11.26 00:00", "2026-11-05T00:00:00Z"},
		{"05.11.26 23:59:59", "2026-11-05T23:59:59Z"},
		{"05.11.26 18:59", "2026-11-05T18:59:00Z"},
		{"05.11.69", "1969-11-05T00:00:00Z"},
		{"05.11.68", "2068-11-05T00:00:00Z"},
		{"05.11.00", "2000-11-05T00:00:00Z"},
	} {
		// Read by the day-first rule itself (dynamo lint --dates names
		// it), not by a reader of dates in words that happens to agree.
		got, rule, ok := schema.DateRules{}.Read(tc.in, time.Time{})
		if !ok || got.Format(time.RFC3339) != tc.want || rule != "day-first dotted" {
			t.Errorf("Read(%q) = %v, %q, %v; want %s by the day-first dotted rule", tc.in, got.Format(time.RFC3339), rule, ok, tc.want)
		}
	}
	for _, in := range []string{"05/01/2026", "05/12/2026", "01/11/2026", "31/12/2026 23:59:59", "12/13/2026"} {
		if _, rule, ok := (schema.DateRules{}).Read(in, time.Time{}); !ok || rule != "day-first numeric" {
			t.Errorf("Read(%q): %q, %v; want the day-first numeric rule", in, rule, ok)
		}
	}
	for _, in := range []string{"00.11.26", "05.00.26", "32.11.26", "05.11.26 24:00", "05.11.26 18:60", "05.11.26 18:00:60", "31.11.26"} {
		if got, ok := schema.ParseDate(in); ok {
			t.Errorf("ParseDate(%q) = %v, want no date", in, got)
		}
	}
}

// TestDateZonesAndEdges: zone abbreviations after the time, single- and
// multi-spaced and in words; an ambiguous month word; dates starting with
// 9 read by the numeric rules; the first and last years RFC 3339 writes.
func TestDateZonesAndEdges(t *testing.T) {
	for _, tc := range []struct{ in, want, rule string }{
		{"Tue, 10 Jun 2003 04:00:00 EST", "2003-06-10T09:00:00Z", "RFC 1123"},
		{"Tue,  10 Jun 2003 04:00:00  PDT", "2003-06-10T11:00:00Z", "RFC 1123"},
		{"Tue, 10 Jun 2003\t04:00:00 EST", "2003-06-10T09:00:00Z", "RFC 1123"},
		{"21 novembre 2026 12:30 pm", "2026-11-21T12:30:00Z", "day, month and year in words"},
		{"21 novembre 2026 12:05 am", "2026-11-21T00:05:00Z", "day, month and year in words"},
		{"21 novembre 2026 1:05 pm", "2026-11-21T13:05:00Z", "day, month and year in words"},
		{"21 novembre 2026 14:30 +14", "2026-11-21T00:30:00Z", "day, month and year in words"},
		{"21 novembre 2026 14:30 +1400", "2026-11-21T00:30:00Z", "day, month and year in words"},
		{"21 novembre 2026 14:30 -05:59", "2026-11-21T20:29:00Z", "day, month and year in words"},
		{"21 novembre 2026 14:30 +0", "", ""}, // not an offset: no date in words
		{"21 novembre 2026 23:59:59", "2026-11-21T23:59:59Z", "day, month and year in words"},
		{"21 novembre 2026 00:00:00", "2026-11-21T00:00:00Z", "day, month and year in words"},
		{"21 novembre 2026 14:30:05.123", "2026-11-21T14:30:05Z", "day, month and year in words"},
		{"21 novembre 2026 14h05", "2026-11-21T14:05:00Z", "day, month and year in words"},
		{"21 novembre 2026 24:00", "", ""},
		{"21 novembre 2026 23:60", "", ""},
		{"21 novembre 2026 23:59:60", "", ""},
		{"21 novembre 2026 14:30:05.12x", "", ""},
		{"14:30 CET, 21 novembre 2026", "2026-11-21T13:30:00Z", "day, month and year in words"},
		{"21 novembre 2026 14:30 CET", "2026-11-21T13:30:00Z", "day, month and year in words"},
		{"21 mar 2026", "2026-03-21T00:00:00Z", "day, month and year in words"},
		{"9 January 2026 15:04", "2026-01-09T15:04:00Z", "day and English month"},
		{"9.11.2026", "2026-11-09T00:00:00Z", "day-first dotted"},
		{"0001-01-01T00:00:00Z", "0001-01-01T00:00:00Z", "RFC 3339"},
		{"9999-12-31T23:59:59Z", "9999-12-31T23:59:59Z", "RFC 3339"},
	} {
		got, rule, ok := schema.DateRules{}.Read(tc.in, time.Time{})
		if tc.want == "" {
			if ok && rule == "day, month and year in words" {
				t.Errorf("Read(%q) = %s by %q, want no date in words", tc.in, got, rule)
			}
			continue
		}
		if !ok || got.Format(time.RFC3339) != tc.want || (tc.rule != "" && rule != tc.rule) {
			t.Errorf("Read(%q) = %s, %q, %v; want %s, %q", tc.in, got.Format(time.RFC3339), rule, ok, tc.want, tc.rule)
		}
	}
}
