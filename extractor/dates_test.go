package extractor_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dynamo-rss/dynamo/extractor"
	"github.com/dynamo-rss/dynamo/schema"
)

// TestRelativeDatesAnnotated: dates an annotated page writes relative to
// now are read against Options.Timestamp in the resource's zone and
// stored as RFC 3339; Result.RelativeDates names them (channel and items)
// for the poller; without a timestamp they stay unreadable text.
func TestRelativeDatesAnnotated(t *testing.T) {
	page := `<html><body>
<h1><!-- <channel:title> -->Nachrichten<!-- </channel:title> --></h1>
<p>Stand: <!-- <channel:extension uri="http://purl.org/dc/elements/1.1/" prefix="dc" localName="date"> -->heute, 18:00 Uhr<!-- </channel:extension> --></p>
<!-- <item:title index="1" id="a"> -->Haushalt<!-- </item:title> -->
<!-- <item:extension index="1" uri="http://purl.org/dc/elements/1.1/" prefix="dc" localName="date"> -->vor 3 Stunden<!-- </item:extension> -->
<!-- <item:title index="2" id="b"> -->Tram<!-- </item:title> -->
<!-- <item:extension index="2" uri="http://purl.org/dc/elements/1.1/" prefix="dc" localName="date"> -->21.11.2026<!-- </item:extension> -->
</body></html>`
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Skipf("no zone data: %v", err)
	}
	now := time.Date(2026, 11, 27, 19, 30, 0, 0, time.UTC) // 20:30 in Berlin
	res, err := extractor.Extract(strings.NewReader(page), extractor.Options{Timestamp: now, Dates: schema.DateRules{Location: berlin}, ExplainDates: true})
	if err != nil {
		t.Fatalf("Extract: %v", err)
	}
	doc := res.Document
	if got, _ := doc.Channel.Extensions.Lookup(schema.DCNamespace, "date"); got != "2026-11-27T18:00:00+01:00" {
		t.Errorf("channel date %q", got)
	}
	if got := dateOf(doc.Items[0]); got != "2026-11-27T17:30:00+01:00" {
		t.Errorf("item date %q, want 3 hours before 20:30 in Berlin", got)
	}
	if got := dateOf(doc.Items[1]); got != "21.11.2026" {
		t.Errorf("absolute date %q, want it as written", got)
	}
	if !res.RelativeDates.Channel || !slices.Equal(res.RelativeDates.Items, []string{"a"}) {
		t.Errorf("RelativeDates %+v, want the channel and item a", res.RelativeDates)
	}
	var lines []string
	for _, d := range res.Dates {
		lines = append(lines, d.String())
	}
	want := []string{
		`3:11: info: date "heute, 18:00 Uhr" reads as 2026-11-27T18:00:00+01:00 (relative to the poll time 2026-11-27T20:30:00+01:00, Europe/Berlin)`,
		`5:1: info: date "vor 3 Stunden" reads as 2026-11-27T17:30:00+01:00 (relative to the poll time 2026-11-27T20:30:00+01:00, Europe/Berlin)`,
		`7:1: info: date "21.11.2026" reads as 2026-11-21T00:00:00+01:00 (day-first dotted, Europe/Berlin)`,
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("date readings:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}

	res, err = extractor.Extract(strings.NewReader(page), extractor.Options{Dates: schema.DateRules{Location: berlin}})
	if err != nil {
		t.Fatalf("Extract: %v", err)
	}
	if got := dateOf(res.Document.Items[0]); got != "vor 3 Stunden" || len(res.RelativeDates.Items) != 0 || len(res.Dates) != 0 {
		t.Errorf("without a timestamp: date %q, %+v, %d readings", got, res.RelativeDates, len(res.Dates))
	}
}
