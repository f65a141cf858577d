package poller

import (
	"fmt"
	"hash/fnv"
	"slices"
	"time"

	"github.com/dynamo-rss/dynamo/extractor"
	"github.com/dynamo-rss/dynamo/schema"
)

// newestPublished is the latest publication date the page carries, on its
// channel or on any item (the newest item's); zero when none.
func newestPublished(doc *schema.Document, rules schema.DateRules) time.Time {
	t, _ := rules.Published(doc.Channel.Extensions)
	for i := range doc.Items {
		if it, ok := rules.Published(doc.Items[i].Extensions); ok && it.After(t) {
			t = it
		}
	}
	return t
}

// itemChanges is what a version's items tell the policy against the previous
// version's (see [Observation]).
type itemChanges struct {
	dates    []time.Time // dates of the items newer than the previous newest, oldest first
	newItems int         // items whose ids the previous version lacked; 0 when it is unknown
}

// compareItems compares doc's items with last (nil: unknown) and returns the
// changes and the record of doc for the next comparison. Only the first
// maxItemIDs items (in document order) are compared by id.
func compareItems(doc *schema.Document, last *lastVersion, rules schema.DateRules) (itemChanges, *lastVersion) {
	var ch itemChanges
	next := &lastVersion{Items: make([]uint64, 0, min(len(doc.Items), maxItemIDs))}
	var prev map[uint64]bool
	if last != nil {
		prev = make(map[uint64]bool, len(last.Items))
		for _, h := range last.Items {
			prev[h] = true
		}
	}
	for i := range doc.Items {
		it := &doc.Items[i]
		if d, ok := rules.Published(it.Extensions); ok {
			if last == nil || d.After(last.Newest) {
				ch.dates = append(ch.dates, d)
			}
			if d.After(next.Newest) {
				next.Newest = d
			}
		}
		if i >= maxItemIDs {
			continue
		}
		h := fnv.New64a()
		_, _ = h.Write([]byte(it.ID)) // hash writes never fail
		id := h.Sum64()
		next.Items = append(next.Items, id)
		if last != nil && !prev[id] {
			ch.newItems++
		}
	}
	slices.SortFunc(ch.dates, time.Time.Compare)
	return ch, next
}

// maxStatusDiagnostics bounds the diagnostics a status keeps.
const maxStatusDiagnostics = 5

// diagnosticStrings renders the first diagnostics of an extraction.
func diagnosticStrings(ds []extractor.Diagnostic) []string {
	var out []string
	for _, d := range ds[:min(len(ds), maxStatusDiagnostics)] {
		out = append(out, d.String())
	}
	if n := len(ds) - maxStatusDiagnostics; n > 0 {
		out = append(out, fmt.Sprintf("… and %d more (dynamo lint shows them all)", n))
	}
	return out
}
