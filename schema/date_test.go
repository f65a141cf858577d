package schema_test

import (
	"strings"
	"testing"
	"time"

	"github.com/dynamo-rss/dynamo/schema"
	"github.com/dynamo-rss/dynamo/schema/schematest"
)

func TestParseDate(t *testing.T) {
	for in, want := range map[string]string{
		"December 08, 2005 @ 08:25 AM":       "2005-12-08T08:25:00Z",
		"December 8, 2005 at 8:25 PM.":       "2005-12-08T20:25:00Z",
		"Thu, 08 Dec 2005 08:25:00 GMT":      "2005-12-08T08:25:00Z",
		"Thu, 08 Dec 2005 08:25:00 PDT":      "2005-12-08T15:25:00Z",
		"2005-12-08T08:25:00Z":               "2005-12-08T08:25:00Z",
		"2005-12-08 08:25":                   "2005-12-08T08:25:00Z",
		"12/08/2005":                         "2005-08-12T00:00:00Z", // numeric dates are day first when they can be
		"11/21/2026":                         "2026-11-21T00:00:00Z", // … and month first when they cannot
		"05/12/2026":                         "2026-12-05T00:00:00Z", // month 12 is a month: day first
		"12/13/2026":                         "2026-12-13T00:00:00Z", // day 12 with 13 second: month first
		"12/12/2026":                         "2026-12-12T00:00:00Z",
		"13/13/2026":                         "", // neither reads as a month
		"12.13.2026":                         "2026-12-13T00:00:00Z",
		"31.12.2026 23:59:59":                "2026-12-31T23:59:59Z", // every field at its largest
		"01.01.2026 00:00:00":                "2026-01-01T00:00:00Z", // … and at its smallest
		"01.12.2026 23:59:59":                "2026-12-01T23:59:59Z", // day first, where month first would read too
		"(21.11.2026)":                       "2026-11-21T00:00:00Z", // as pages print dates beside titles
		"[21.11.2026]":                       "2026-11-21T00:00:00Z",
		"( 21.11.2026 ),":                    "2026-11-21T00:00:00Z",
		"([21.11.2026])":                     "2026-11-21T00:00:00Z",
		"(21.11.2026]":                       "",
		"21.11.2026@":                        "2026-11-21T00:00:00Z", // an @ left at an end becomes a space there
		"@21.11.2026":                        "2026-11-21T00:00:00Z",
		"[21.11.2026)":                       "",
		"()":                                 "",
		"(":                                  "",
		"12.01.2026 00:00:00":                "2026-01-12T00:00:00Z",
		"12.01.2026":                         "2026-01-12T00:00:00Z",
		"01.12.2026":                         "2026-12-01T00:00:00Z",
		"02/12/2026 23:59":                   "2026-12-02T23:59:00Z",
		"01.01.2026 24:00":                   "",
		"21.11.2026 14:60":                   "",
		"21.11.2026 14:30:60":                "",
		"00.11.2026":                         "",
		"21.00.2026":                         "",
		"31.02.2026":                         "",
		"11.21.2026 14:30":                   "2026-11-21T14:30:00Z",
		"12-13-2026 14:30:05":                "2026-12-13T14:30:05Z",
		"21.11.2026":                         "2026-11-21T00:00:00Z",
		"21/11/2026 14:30":                   "2026-11-21T14:30:00Z",
		"21-11-2026 14:30:05":                "2026-11-21T14:30:05Z",
		"3.4.2026":                           "2026-04-03T00:00:00Z",
		"21.13.2026":                         "",
		"21.11.2026 25:00":                   "",
		"21 novembre 2026":                   "2026-11-21T00:00:00Z",
		"sabato 21 novembre 2026, ore 14:30": "2026-11-21T14:30:00Z",
		"1er décembre 2026":                  "2026-12-01T00:00:00Z",
		"21. November 2026 um 14:30 Uhr":     "2026-11-21T14:30:00Z",
		"21 de noviembre de 2026":            "2026-11-21T00:00:00Z",
		"3 maart 2026":                       "2026-03-03T00:00:00Z",
		"yesterday":                          "",
		"":                                   "",
		"@@@":                                "",
		"Thu,  08 Dec 2005\t08:25:00 EST":    "2005-12-08T13:25:00Z",
		"Thu, 08 Dec 2005 08:25:00 EST":      "2005-12-08T13:25:00Z",
		"EST":                                "",
	} {
		tm, ok := schema.ParseDate(in)
		got := ""
		if ok {
			got = tm.Format("2006-01-02T15:04:05Z07:00")
		}
		if got != want {
			t.Errorf("ParseDate(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestParseDateWords: dates written with words, in any of the supported
// languages, with the times, zones and little words pages put around them.
func TestParseDateWords(t *testing.T) {
	rome := schematest.Location(t, "Europe/Rome")
	for _, tc := range []struct{ in, want string }{
		{"21 November 2026 14:30", "2026-11-21T14:30:00Z"},
		{"21.11.2026, 14:30", "2026-11-21T14:30:00Z"},
		{"21/11/2026 - 14:30", "2026-11-21T14:30:00Z"},
		{"21/11/2026 2:30 PM", "2026-11-21T14:30:00Z"},
		{"21/11/2026 14:30 +0200", "2026-11-21T12:30:00Z"},
		{"21/11/2026 14:30 CEST", "2026-11-21T12:30:00Z"},
		{"21 nov 2026 alle 9:05", "2026-11-21T09:05:00Z"},
		{"1 gen 2026", "2026-01-01T00:00:00Z"},
		{"le 1er mars 2026 à 14h30", "2026-03-01T14:30:00Z"},
		{"21 févr. 2026", "2026-02-21T00:00:00Z"},
		{"14 août 2026 14h", "2026-08-14T14:00:00Z"},
		{"Samstag, 21. November 2026 um 14:30 Uhr", "2026-11-21T14:30:00Z"},
		{"am 3. März 2026", "2026-03-03T00:00:00Z"},
		{"21. Dez. 2026", "2026-12-21T00:00:00Z"},
		{"sábado, 21 de noviembre de 2026, 14:30", "2026-11-21T14:30:00Z"},
		{"mar, 3 ene 2026", "2026-01-03T00:00:00Z"}, // mar is Tuesday when another word is the month
		{"3 mar 2026", "2026-03-03T00:00:00Z"},      // … and March when none is
		{"21 de novembro de 2026 às 14:30", "2026-11-21T14:30:00Z"},
		{"terça-feira, 3 de março de 2026", "2026-03-03T00:00:00Z"},
		{"zondag 3 mrt 2026", "2026-03-03T00:00:00Z"},
		{"21 novembre 2026 14:30 CET", "2026-11-21T13:30:00Z"},
		{"21 novembre 2026 14:30 +01:00", "2026-11-21T13:30:00Z"},
		{"the budget of 2026", ""},
		{"21 novembre", ""},
		{"novembre 2026", ""},
		{"21 novembre dicembre 2026", ""},
		{"21 novembre 2026 14:30 15:00", ""},
		{"14:30 CET, 21 novembre 2026", "2026-11-21T13:30:00Z"}, // the zone before the date
		{"14:30 +01:00, 21 novembre 2026", "2026-11-21T13:30:00Z"},
		{"21 novembre 2026 14:30 +0545", "2026-11-21T08:45:00Z"},
		{"21 novembre 2026 14:30 +14", "2026-11-21T00:30:00Z"}, // the largest offset, two digits
		{"21 novembre 2026 14:30 +1400", "2026-11-21T00:30:00Z"},
		{"21 novembre 2026 14:30 +15", ""},
		{"21 novembre 2026 14:30 +1500", ""},
		{"21 novembre 2026 14:30 +0160", ""}, // minutes of an offset below 60
		{"31 dicembre 2026", "2026-12-31T00:00:00Z"},
		{"32 dicembre 2026", ""},
		{"0 dicembre 2026", ""},
	} {
		t.Run(tc.in, func(t *testing.T) {
			tm, ok := schema.ParseDate(tc.in)
			got := ""
			if ok {
				got = tm.Format(time.RFC3339)
			}
			if got != tc.want {
				t.Errorf("ParseDate(%q) = %q, want %q", tc.in, got, tc.want)
			}
			if tc.want == "" || strings.ContainsAny(tc.in, "+") || strings.Contains(tc.in, "CE") {
				return
			}
			// Without a zone, the date is in the rules' location.
			tm, ok = schema.DateRules{Location: rome}.Parse(tc.in)
			w, _ := time.Parse(time.RFC3339, tc.want)
			want := time.Date(w.Year(), w.Month(), w.Day(), w.Hour(), w.Minute(), w.Second(), 0, rome)
			if !ok || !tm.Equal(want) {
				t.Errorf("in Europe/Rome: %v, %v; want %v", tm, ok, want.UTC())
			}
		})
	}
}

func TestDateRules(t *testing.T) {
	rome := schematest.Location(t, "Europe/Rome")
	for _, tc := range []struct {
		rules schema.DateRules
		in    string
		want  string
	}{
		{schema.DateRules{Layout: "02.01.2006 15:04"}, "21.11.2026 14:30", "2026-11-21T14:30:00Z"},
		{schema.DateRules{Layout: "02.01.2006 15:04", Location: rome}, "21.11.2026 14:30", "2026-11-21T13:30:00Z"},
		{schema.DateRules{Location: rome}, "21/11/2026 14:30", "2026-11-21T13:30:00Z"},     // no layout: lenient, in the zone
		{schema.DateRules{Location: rome}, "2026-11-21T14:30:00Z", "2026-11-21T14:30:00Z"}, // a zone in the date wins
		{schema.DateRules{Layout: "Jan 2 '06", Location: rome}, "Nov 21 '26", "2026-11-20T23:00:00Z"},
		{schema.DateRules{Layout: "02.01.2006"}, "2026-11-21", "2026-11-21T00:00:00Z"}, // the layout fails: lenient
		{schema.DateRules{Layout: "02.01.2006"}, "the day after the fair", ""},
	} {
		tm, ok := tc.rules.Parse(tc.in)
		got := ""
		if ok {
			got = tm.Format(time.RFC3339)
		}
		if got != tc.want {
			t.Errorf("%+v.Parse(%q) = %q, want %q", tc.rules, tc.in, got, tc.want)
		}
	}
	ext := schema.Extensions{{URI: schema.DCNamespace, Prefix: "dc", LocalName: "date", Value: "21.11.2026 14:30"}}
	if tm, ok := (schema.DateRules{Location: rome}).Published(ext); !ok || !tm.Equal(time.Date(2026, 11, 21, 13, 30, 0, 0, time.UTC)) {
		t.Errorf("Published = %v, %v", tm, ok)
	}
}

func FuzzParseDate(f *testing.F) {
	for _, s := range []string{"21.11.2026", "21/11/2026 14:30", "2026-11-21T14:30:00Z", "December 08, 2005 @ 08:25 AM", "Thu, 08 Dec 2005 08:25:00 GMT", "", "99/99/9999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tm, ok := schema.ParseDate(s)
		if !ok {
			return
		}
		if tm.Location() != time.UTC || tm.Year() < 1 || tm.Year() > 9999 {
			t.Fatalf("ParseDate(%q) = %v: not a UTC time RFC 3339 can write", s, tm)
		}
		back, ok := schema.ParseDate(tm.Format(time.RFC3339Nano))
		if !ok || !back.Equal(tm) {
			t.Fatalf("ParseDate(%q) = %v does not round-trip through RFC 3339: %v %v", s, tm, back, ok)
		}
	})
}
