package poller

import (
	"errors"
	"fmt"

	"github.com/dynamo-rss/dynamo/extractor"
	"github.com/dynamo-rss/dynamo/schema"
)

// keepDates fixes the dates read relative to the poll's time at their first
// reading (SELECTORS.md): a page's "2 hours ago" reads an hour later as
// "3 hours ago", the same instant give or take the poll's rounding, and
// must neither move the item's date nor make a new version. So each such
// date of doc (rel, from the extractor) takes the value the newest stored
// version has for the same item (by id) or channel, when it has one; an
// item seen for the first time keeps this reading. It returns an error
// only when the stored version could not be read (then doc is as
// extracted: storing it is right, if not ideal).
// newest reads the newest stored version (newestStored); the engine asks
// for it only when a page has dates written relative to the poll's time.
func keepDates(newest func() (*schema.Document, error), doc *schema.Document, rel extractor.RelativeDates) error {
	if !rel.Channel && len(rel.Items) == 0 {
		return nil
	}
	prev, err := newest()
	switch {
	case errors.Is(err, errNoVersions):
		return nil
	case err != nil:
		return fmt.Errorf("read the latest version for its dates: %w", err)
	case prev == nil:
		return nil // the first version: every date is at its first reading
	}
	if rel.Channel {
		keepDate(doc.Channel.Extensions, prev.Channel.Extensions)
	}
	if len(rel.Items) == 0 {
		return nil
	}
	stored := make(map[string]schema.Extensions, len(prev.Items))
	for i := range prev.Items {
		stored[prev.Items[i].ID] = prev.Items[i].Extensions
	}
	relative := make(map[string]bool, len(rel.Items))
	for _, id := range rel.Items {
		relative[id] = true
	}
	for i := range doc.Items {
		it := &doc.Items[i]
		if old, ok := stored[it.ID]; ok && relative[it.ID] {
			keepDate(it.Extensions, old)
		}
	}
	return nil
}

// keepDate gives the date extensions of exts the values the same
// extensions (namespace and name) have in old, when old has them.
func keepDate(exts, old schema.Extensions) {
	for j := range exts {
		x := &exts[j]
		if x.LocalName != "date" && x.LocalName != "pubDate" {
			continue
		}
		if v, ok := old.Lookup(x.URI, x.LocalName); ok {
			x.Value = v
		}
	}
}
