package api

import (
	"context"
	"errors"
	"fmt"
	"github.com/dynamo-rss/dynamo/internal/versiondiff"
	"html"
	"strconv"
	"strings"

	"github.com/dynamo-rss/dynamo/schema"
	"github.com/dynamo-rss/dynamo/storage"
)

// The versions feed /resources/{rssId} is the history of a resource: each
// entry says what its version changed against the one before, from the
// same item diff /view shows (internal/versiondiff), so that a reader shows "2 new:
// Budget approved; Tram line 4" rather than a snapshot of the page.

// Bounds of the versions feed's descriptions.
const (
	// maxDescribedVersions is how many of the newest versions have their
	// changes described (each costs reading its document); older entries
	// say only how many items they had.
	maxDescribedVersions = 50
	// maxTitleNames is how many item titles an entry's title names per kind.
	maxTitleNames = 3
	// maxListedItems is how many items an entry's content lists per kind.
	maxListedItems = 50
)

// versionEntry is what a versions feed entry says of its version.
type versionEntry struct {
	title, text, html string
}

// describeVersions describes the newest of vs (newest first, vs[i] being
// index i+1 of info's history) against the versions before them: one entry
// per version, the first maxDescribedVersions with their changes.
func (b *builder) describeVersions(ctx context.Context, info storage.ResourceInfo, vs []storage.VersionInfo) ([]versionEntry, error) {
	out := make([]versionEntry, len(vs))
	var cur *schema.Document
	for i, v := range vs {
		if i >= maxDescribedVersions {
			out[i] = countEntry(v)
			continue
		}
		if cur == nil {
			doc, err := b.versionDoc(ctx, info, i+1, v.Seq)
			if err != nil {
				return nil, err
			}
			cur = doc
		}
		var prev *schema.Document
		switch {
		case v.Seq == 1:
			prev = &schema.Document{}
		case i+2 <= info.Versions:
			doc, err := b.versionDoc(ctx, info, i+2, 0)
			if err != nil && !errors.Is(err, storage.ErrNotFound) {
				return nil, err
			}
			prev = doc // nil: retention removed it meanwhile
		}
		permalink := b.base + versionPath(info.ID, v.Seq)
		if prev == nil {
			e := countEntry(v)
			e.text += "; the versions before it were removed by the retention policy: nothing to compare with"
			e.html = "<p>" + html.EscapeString(e.text) + ".</p>" + wholeVersion(permalink)
			out[i] = e
		} else {
			var d versiondiff.Diff
			versiondiff.DiffVersions(&d, prev, cur)
			out[i] = changeEntry(&d, len(cur.Items), v.Seq == 1, permalink)
		}
		cur = prev
	}
	return out, nil
}

// versionDoc reads the document of the version at index idx; with seq > 0,
// it must be that version, else the history moved.
func (b *builder) versionDoc(ctx context.Context, info storage.ResourceInfo, idx int, seq uint64) (*schema.Document, error) {
	doc, vi, err := b.s.opts.Store.Version(ctx, info.ID, idx)
	if err != nil {
		if errors.Is(err, storage.ErrNotFound) && seq == 0 {
			return nil, err
		}
		return nil, b.notFound(err, info)
	}
	if seq > 0 && vi.Seq != seq {
		return nil, errHistoryMoved
	}
	return doc, nil
}

// countEntry is the entry of a version whose changes are not described.
func countEntry(v storage.VersionInfo) versionEntry {
	t := itemCount(v.Items)
	return versionEntry{title: t, text: t, html: "<p>" + html.EscapeString(t) + ".</p>"}
}

// itemCount is "1 item", "12 items".
func itemCount(n int) string {
	if n == 1 {
		return "1 item"
	}
	return strconv.Itoa(n) + " items"
}

// changeEntry says what d changed: its title names the change ("2 new:
// Budget approved; Tram line 4 · 1 removed"), its text counts, its HTML
// lists the items, each linking to its page. The first version (first)
// lists its items as "N items: …".
func changeEntry(d *versiondiff.Diff, items int, first bool, permalink string) versionEntry {
	var titles, counts []string
	if first {
		t := itemCount(items) + namesOf(d.Added)
		return versionEntry{
			title: t,
			text:  "The first version: " + itemCount(items),
			html:  "<p>The first version: " + html.EscapeString(itemCount(items)) + ".</p>" + itemList("Items", d.Added, nil) + wholeVersion(permalink),
		}
	}
	if n := len(d.Added); n > 0 {
		titles = append(titles, strconv.Itoa(n)+" new"+namesOf(d.Added))
		counts = append(counts, strconv.Itoa(n)+" new")
	}
	if n := len(d.Changed); n > 0 {
		refs := make([]versiondiff.DiffItem, n)
		for i := range d.Changed {
			refs[i] = d.Changed[i].DiffItem
		}
		titles = append(titles, strconv.Itoa(n)+" changed"+namesOf(refs))
		counts = append(counts, strconv.Itoa(n)+" changed")
	}
	if n := len(d.Removed); n > 0 {
		titles = append(titles, strconv.Itoa(n)+" removed")
		counts = append(counts, strconv.Itoa(n)+" removed")
	}
	var channel []string
	for _, f := range d.Channel {
		channel = append(channel, f.Name)
	}
	switch {
	case len(titles) == 0 && len(channel) > 0:
		titles = append(titles, "The page's "+strings.Join(channel, ", ")+" changed")
	case len(titles) == 0:
		titles = append(titles, "No item changed")
	}
	text := itemCount(items)
	if len(counts) > 0 {
		text = strings.Join(counts, ", ") + "; " + text
	}
	if len(channel) > 0 {
		text += "; the page's " + strings.Join(channel, ", ") + " changed"
	}
	var sb strings.Builder
	sb.WriteString("<p>" + html.EscapeString(text) + ".</p>")
	sb.WriteString(itemList("New", d.Added, nil))
	sb.WriteString(itemList("Changed", nil, d.Changed))
	sb.WriteString(itemList("Removed", d.Removed, nil))
	sb.WriteString(wholeVersion(permalink))
	return versionEntry{title: strings.Join(titles, " · "), text: text, html: sb.String()}
}

// namesOf is ": A; B; C" naming the first maxTitleNames items, "…" after.
func namesOf(items []versiondiff.DiffItem) string {
	if len(items) == 0 {
		return ""
	}
	names := make([]string, 0, maxTitleNames+1)
	for i, it := range items {
		if i == maxTitleNames {
			names = append(names, "…")
			break
		}
		names = append(names, oneLine(it.Title))
	}
	return ": " + strings.Join(names, "; ")
}

// oneLine folds white space, so that a title reads on one line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// itemList is an HTML heading and list of items (or of changed items, with
// the fields that changed), each linking to its page, at most
// maxListedItems of them.
func itemList(heading string, items []versiondiff.DiffItem, changed []versiondiff.ChangedItem) string {
	n := len(items) + len(changed)
	if n == 0 {
		return ""
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "<h3>%s (%d)</h3><ul>", heading, n)
	for i := range min(n, maxListedItems) {
		var it versiondiff.DiffItem
		var fields []string
		if changed != nil {
			it = changed[i].DiffItem
			for _, f := range changed[i].Fields {
				fields = append(fields, f.Name)
			}
		} else {
			it = items[i]
		}
		sb.WriteString("<li>")
		if link := absoluteURL(it.Link); link != "" {
			sb.WriteString(`<a href="` + html.EscapeString(link) + `">` + html.EscapeString(oneLine(it.Title)) + "</a>")
		} else {
			sb.WriteString(html.EscapeString(oneLine(it.Title)))
		}
		if len(fields) > 0 {
			sb.WriteString(" (" + html.EscapeString(strings.Join(fields, ", ")) + ")")
		}
		sb.WriteString("</li>")
	}
	if n > maxListedItems {
		fmt.Fprintf(&sb, "<li>… and %d more</li>", n-maxListedItems)
	}
	sb.WriteString("</ul>")
	return sb.String()
}

// wholeVersion links an entry's content to its version's permalink.
func wholeVersion(permalink string) string {
	return `<p><a href="` + html.EscapeString(permalink) + `">This version, all its items</a></p>`
}
