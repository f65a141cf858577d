package api

import (
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/dynamo-rss/dynamo/schema"
)

// TestTimesAreWholeSeconds checks every format and selection: times stored
// with nanoseconds are written in whole seconds.
func TestTimesAreWholeSeconds(t *testing.T) {
	store := newFDStore()
	store.Save(&schema.Document{URL: "https://example.org/", RSSID: "n", Timestamp: fdT0.Add(123456789 * time.Nanosecond),
		Channel: schema.Channel{Title: "N", Link: "https://example.org/"},
		Items:   []schema.Item{fdItem(1, "a", "A", "https://example.org/a", "a")}})
	s := newFDServer(t, store)
	fraction := regexp.MustCompile(`\d\d:\d\d:\d\d[.,]\d`)
	for _, target := range []string{"/resources", "/resources/n", "/resources/n?max=5", "/resources/n?index=1"} {
		for _, f := range feedFormats {
			rec := fdDo(s, http.MethodGet, target+sep(target)+"type="+f.name)
			if rec.Code != http.StatusOK {
				t.Fatalf("%s %s: %d", target, f.name, rec.Code)
			}
			if m := fraction.FindString(rec.Body.String()); m != "" {
				t.Errorf("%s as %s: a time with a fraction of a second (%s):\n%s", target, f.name, m, rec.Body)
			}
		}
	}
}
