// Package versiondiff tells what changed from one stored version of a
// resource to the next: channel fields, and items added, removed and
// changed, matched by item id. The versions feed (package api) says it in
// its entries and /view (package ui) shows it; values are shown without
// the credentials of a URL.
package versiondiff

import (
	"cmp"
	"github.com/dynamo-rss/dynamo/internal/redact"
	"slices"

	"github.com/dynamo-rss/dynamo/schema"
)

// maxDiffValue bounds a field value shown in a diff (longer ones are cut,
// with an ellipsis: the permalink has the whole version).
const maxDiffValue = 400

// Diff is what changed from one version to the next.
type Diff struct {
	Channel []FieldChange
	Added   []DiffItem
	Removed []DiffItem
	Changed []ChangedItem
	Same    int // items present and equal in both
}

// DiffItem is an item named in a diff.
type DiffItem struct {
	ID, Title, Link string
}

// ChangedItem is an item present in both versions whose fields differ.
type ChangedItem struct {
	DiffItem
	Fields []FieldChange
}

// FieldChange is one field that differs: its value before and after.
type FieldChange struct {
	Name, Old, New string
}

// DiffVersions fills v with what changed from prev to cur: channel fields,
// and items added, removed and changed, matched by item id. The versions
// feed's entries and /view tell changes from it.
func DiffVersions(v *Diff, prev, cur *schema.Document) {
	v.Channel = changedFields(channelFields(prev), channelFields(cur))
	before := make(map[string]*schema.Item, len(prev.Items))
	for i := range prev.Items {
		before[prev.Items[i].ID] = &prev.Items[i]
	}
	seen := make(map[string]bool, len(cur.Items))
	for i := range cur.Items {
		it := &cur.Items[i]
		seen[it.ID] = true
		old, ok := before[it.ID]
		switch {
		case !ok:
			v.Added = append(v.Added, itemRef(it))
		default:
			if f := changedFields(itemFields(old), itemFields(it)); len(f) > 0 {
				v.Changed = append(v.Changed, ChangedItem{DiffItem: itemRef(it), Fields: f})
			} else {
				v.Same++
			}
		}
	}
	for i := range prev.Items {
		if it := &prev.Items[i]; !seen[it.ID] {
			v.Removed = append(v.Removed, itemRef(it))
		}
	}
}

func itemRef(it *schema.Item) DiffItem {
	return DiffItem{ID: redact.Text(it.ID), Title: cmp.Or(it.Title, redact.Text(it.ID)), Link: redact.URL(it.Link)}
}

// namedField is a field of a channel or item, in display order.
type namedField struct{ name, value string }

// channelFields and itemFields show what they hold without the
// credentials of a URL (redact.go).
func channelFields(d *schema.Document) []namedField {
	f := []namedField{{"title", d.Channel.Title}, {"link", redact.URL(d.Channel.Link)}, {"description", redact.Text(d.Channel.Description)}}
	if d.Channel.Image != nil {
		f = append(f, namedField{"image", redact.URL(d.Channel.Image.URL)})
	}
	return f
}

func itemFields(it *schema.Item) []namedField {
	f := []namedField{{"title", it.Title}, {"link", redact.URL(it.Link)}, {"description", redact.Text(it.Description)}}
	if it.Image != nil {
		f = append(f, namedField{"image", redact.URL(it.Image.URL)})
	}
	for _, x := range it.Extensions {
		f = append(f, namedField{x.Prefix + ":" + x.LocalName, redact.Text(x.Value)})
	}
	return f
}

// changedFields compares two field lists by name (a field missing on one
// side is empty there), in the order they first appear.
func changedFields(old, cur []namedField) []FieldChange {
	oldBy := map[string]string{}
	var names []string
	for _, f := range old {
		if _, dup := oldBy[f.name]; !dup {
			names = append(names, f.name)
		}
		oldBy[f.name] = f.value
	}
	curBy := map[string]string{}
	for _, f := range cur {
		if _, inOld := oldBy[f.name]; !inOld && !slices.Contains(names, f.name) {
			names = append(names, f.name)
		}
		curBy[f.name] = f.value
	}
	var out []FieldChange
	for _, n := range names {
		if o, c := oldBy[n], curBy[n]; o != c {
			out = append(out, FieldChange{Name: n, Old: clip(o), New: clip(c)})
		}
	}
	return out
}

// clip cuts a value for display at maxDiffValue runes.
func clip(s string) string {
	r := []rune(s)
	if len(r) <= maxDiffValue {
		return s
	}
	return string(r[:maxDiffValue]) + "…"
}
