package api

import (
	"testing"

	"github.com/dynamo-rss/dynamo/internal/versiondiff"
)

// TestChangeEntryWords checks the words of a version's item in the
// versions feed, for each kind of change alone and together.
func TestChangeEntryWords(t *testing.T) {
	a := versiondiff.DiffItem{ID: "a", Title: "Budget  approved", Link: "https://e.org/a"}
	b := versiondiff.DiffItem{ID: "b", Title: "Tram line 4", Link: "https://e.org/b"}
	for _, c := range []struct {
		name        string
		d           versiondiff.Diff
		items       int
		first       bool
		title, text string
	}{
		{"first", versiondiff.Diff{Added: []versiondiff.DiffItem{a, b}}, 2, true, "2 items: Budget approved; Tram line 4", "The first version: 2 items"},
		{"first of one", versiondiff.Diff{Added: []versiondiff.DiffItem{a}}, 1, true, "1 item: Budget approved", "The first version: 1 item"},
		{"added", versiondiff.Diff{Added: []versiondiff.DiffItem{a}}, 3, false, "1 new: Budget approved", "1 new; 3 items"},
		{"changed", versiondiff.Diff{Changed: []versiondiff.ChangedItem{{DiffItem: b}}}, 3, false, "1 changed: Tram line 4", "1 changed; 3 items"},
		{"removed", versiondiff.Diff{Removed: []versiondiff.DiffItem{a, b}}, 1, false, "2 removed", "2 removed; 1 item"},
		{"all three", versiondiff.Diff{Added: []versiondiff.DiffItem{a}, Changed: []versiondiff.ChangedItem{{DiffItem: b}}, Removed: []versiondiff.DiffItem{a}}, 3, false,
			"1 new: Budget approved · 1 changed: Tram line 4 · 1 removed", "1 new, 1 changed, 1 removed; 3 items"},
		{"channel only", versiondiff.Diff{Channel: []versiondiff.FieldChange{{Name: "title"}, {Name: "description"}}}, 3, false,
			"The page's title, description changed", "3 items; the page's title, description changed"},
		{"items and channel", versiondiff.Diff{Removed: []versiondiff.DiffItem{a}, Channel: []versiondiff.FieldChange{{Name: "title"}}}, 0, false,
			"1 removed", "1 removed; 0 items; the page's title changed"},
		{"nothing", versiondiff.Diff{}, 2, false, "No item changed", "2 items"},
	} {
		e := changeEntry(&c.d, c.items, c.first, "https://feeds.example.org/resources/x/versions/2")
		if e.title != c.title || e.text != c.text {
			t.Errorf("%s: title %q, text %q; want %q, %q", c.name, e.title, e.text, c.title, c.text)
		}
	}
}
