package poller

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dynamo-rss/dynamo/schema"
	"github.com/dynamo-rss/dynamo/storage/badger"
)

// TestRelativeDatesFixedAtFirstReading: a page whose items are dated "2
// hours ago" and, an hour later, "3 hours ago" (in six languages) keeps
// one version, whose dates are the first reading's, against the poll's
// time in the resource's zone; a new item gets its own date, and the
// version it makes keeps the old items' dates.
func TestRelativeDatesFixedAtFirstReading(t *testing.T) {
	langs := []struct {
		name                string
		first, later, fresh string
	}{
		{"en", "2 hours ago", "3 hours ago", "5 minutes ago"},
		{"de", "vor 2 Stunden", "vor 3 Stunden", "vor 5 Minuten"},
		{"fr", "il y a 2 heures", "il y a 3 heures", "il y a 5 minutes"},
		{"es", "hace 2 horas", "hace 3 horas", "hace 5 minutos"},
		{"it", "2 ore fa", "3 ore fa", "5 minuti fa"},
		{"pt", "há 2 horas", "há 3 horas", "há 5 minutos"},
		{"nl", "2 uur geleden", "3 uur geleden", "5 minuten geleden"},
	}
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Skipf("no zone data: %v", err)
	}
	for _, l := range langs {
		t.Run(l.name, func(t *testing.T) {
			o := newOrigin(t)
			clk := newFakeClock(t0)
			db, err := badger.Open(t.TempDir(), badger.Options{InMemory: true})
			if err != nil {
				t.Fatalf("badger.Open: %v", err)
			}
			t.Cleanup(func() { _ = db.Close() }) // a test store: nothing to keep
			cfg := testConfig(t, baseYAML(fmt.Sprintf("resources:\n  - {id: news, url: %q, timezone: Europe/Berlin, "+
				"select: {item: \"li\", title: \"a\", link: \"a @href\", date: \"span.when\"}}\n", o.url("/news.html"))))
			e := newTestEngine(t, cfg, db, clk)
			list := func(items ...[2]string) string {
				var b strings.Builder
				b.WriteString("<html><head><title>News</title></head><body><ul>")
				for _, it := range items {
					fmt.Fprintf(&b, `<li><a href="/%s">%s</a> <span class="when">%s</span></li>`, it[0], it[0], it[1])
				}
				return b.String() + "</ul></body></html>"
			}

			o.set(list([2]string{"budget", l.first}, [2]string{"roads", "gestern"}))
			st := pollAtNext(t, e, clk, "news")
			first := clk.Now().Truncate(time.Second) // dates are whole seconds
			if st.LastOutcome != OutcomeChanged {
				t.Fatalf("first poll: %q (%s)", st.LastOutcome, st.LastError)
			}
			want := first.Add(-2 * time.Hour)

			o.set(list([2]string{"budget", l.later}, [2]string{"roads", "gestern"}))
			clk.Set(first.Add(time.Hour))
			if _, err := e.PollNow(t.Context(), "news"); err != nil {
				t.Fatalf("PollNow: %v", err)
			}
			st, _ = e.Status("news")
			if st.LastOutcome != OutcomeUnchanged {
				t.Fatalf("the page aged by an hour: outcome %q (%s), want unchanged", st.LastOutcome, st.LastError)
			}
			if vs, err := db.Versions(t.Context(), "news", 0, 0); err != nil || len(vs) != 1 {
				t.Fatalf("versions %d (%v), want 1", len(vs), err)
			}
			doc, _, err := db.Version(t.Context(), "news", 1)
			if err != nil {
				t.Fatalf("Version: %v", err)
			}
			if got := published(t, doc.Items[0]); !got.Equal(want) {
				t.Errorf("date %v, want %v (the first poll's time less 2 hours)", got, want)
			}
			if got, wantDay := published(t, doc.Items[1]), time.Date(2026, 11, 20, 0, 0, 0, 0, berlin); !got.Equal(wantDay) {
				t.Errorf("gestern read as %v, want %v", got, wantDay)
			}

			// A new item: a new version, with its own date; the old item keeps its first one.
			o.set(list([2]string{"tram", l.fresh}, [2]string{"budget", l.later}, [2]string{"roads", "gestern"}))
			clk.Set(first.Add(90 * time.Minute))
			if _, err := e.PollNow(t.Context(), "news"); err != nil {
				t.Fatalf("PollNow: %v", err)
			}
			doc, _, err = db.Version(t.Context(), "news", 1)
			if err != nil || len(doc.Items) != 3 {
				t.Fatalf("Version: %v, %+v", err, doc)
			}
			if got, want := published(t, doc.Items[0]), clk.Now().Truncate(time.Second).Add(-5*time.Minute); !got.Equal(want) {
				t.Errorf("new item dated %v, want %v", got, want)
			}
			if got := published(t, doc.Items[1]); !got.Equal(want) {
				t.Errorf("old item dated %v in the new version, want %v", got, want)
			}
		})
	}
}

func published(t *testing.T, it schema.Item) time.Time {
	t.Helper()
	d, ok := it.Extensions.Published()
	if !ok {
		t.Fatalf("item %s has no readable date: %+v", it.ID, it.Extensions)
	}
	return d
}

// TestKeepDate checks which extensions keep their stored value: those
// named date or pubDate (in any namespace), each by its own namespace and
// name, and no other.
func TestKeepDate(t *testing.T) {
	const dc, ex = "http://purl.org/dc/elements/1.1/", "http://example.org/x"
	exts := schema.Extensions{
		{URI: dc, Prefix: "dc", LocalName: "date", Value: "3 hours ago, read now"},
		{URI: ex, Prefix: "x", LocalName: "pubDate", Value: "4 hours ago, read now"},
		{URI: ex, Prefix: "x", LocalName: "date", Value: "no stored value"},
		{URI: ex, Prefix: "x", LocalName: "place", Value: "town hall, read now"},
	}
	old := schema.Extensions{
		{URI: dc, Prefix: "dc", LocalName: "date", Value: "2026-11-20T10:00:00Z"},
		{URI: ex, Prefix: "x", LocalName: "pubDate", Value: "2026-11-20T09:00:00Z"},
		{URI: ex, Prefix: "x", LocalName: "place", Value: "town hall, stored"},
	}
	keepDate(exts, old)
	for i, want := range []string{"2026-11-20T10:00:00Z", "2026-11-20T09:00:00Z", "no stored value", "town hall, read now"} {
		if exts[i].Value != want {
			t.Errorf("%s:%s = %q, want %q", exts[i].Prefix, exts[i].LocalName, exts[i].Value, want)
		}
	}
}
