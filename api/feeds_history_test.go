package api

import (
	"fmt"
	"github.com/dynamo-rss/dynamo/internal/versiondiff"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/dynamo-rss/dynamo/schema"
)

// TestVersionsFeedSaysWhatChanged checks the entries of the versions feed:
// titles naming the change, content listing the items added, changed and
// removed with their links, in every format.
func TestVersionsFeedSaysWhatChanged(t *testing.T) {
	store := newFDStore()
	ch := schema.Channel{Title: "Town Hall", Link: "https://example.org/"}
	item := func(id, title string) schema.Item {
		return fdItem(0, id, title, "https://example.org/"+id+".html", "About "+title)
	}
	doc := func(at time.Duration, ch schema.Channel, items ...schema.Item) *schema.Document {
		for i := range items {
			items[i].Index = i + 1
		}
		return &schema.Document{URL: "https://example.org/", RSSID: "town", Timestamp: fdT0.Add(at), Channel: ch, Items: items}
	}
	budget, tram, lib, pool := item("budget", "Budget approved"), item("tram", "Tram line 4"), item("lib", "Library hours"), item("pool", "Pool <closed>")
	store.Save(doc(0, ch, lib, pool))                       // v1: first
	store.Save(doc(time.Hour, ch, budget, tram, lib, pool)) // v2: 2 new
	lib2 := lib
	lib2.Description = "Open on Sundays"
	store.Save(doc(2*time.Hour, ch, budget, tram, lib2, pool))     // v3: 1 changed
	store.Save(doc(3*time.Hour, ch, budget, tram, lib2))           // v4: 1 removed
	store.Save(doc(4*time.Hour, ch, item("x", "X"), budget, tram)) // v5: 1 new, 1 removed
	ch2 := ch
	ch2.Title = "Town Hall News"
	store.Save(doc(5*time.Hour, ch2, item("x", "X"), budget, tram)) // v6: only the channel
	s := newFDServer(t, store)

	want := []string{
		"The page's title changed",
		"1 new: X · 1 removed",
		"1 removed",
		"1 changed: Library hours",
		"2 new: Budget approved; Tram line 4",
		"2 items: Library hours; Pool <closed>",
	}
	for _, f := range feedFormats {
		t.Run(f.name, func(t *testing.T) {
			rec := fdDo(s, http.MethodGet, "/resources/town?type="+f.name)
			feed := parseFeed(t, rec.Body.Bytes())
			if len(feed.Items) != len(want) {
				t.Fatalf("%d entries, want %d", len(feed.Items), len(want))
			}
			for i, w := range want {
				if got := feed.Items[i].Title; got != w {
					t.Errorf("entry %d title %q, want %q", i, got, w)
				}
				if link := fmt.Sprintf("%s/resources/town/versions/%d", fdBase, len(want)-i); feed.Items[i].Link != link {
					t.Errorf("entry %d link %q, want %q", i, feed.Items[i].Link, link)
				}
			}
			if f.name == "rss1" {
				return // RSS 1.0 carries the description only
			}
			content := feed.Items[1].Content
			for _, w := range []string{`New (1)`, `<a href="https://example.org/x.html">X</a>`, `Removed (1)`, `<a href="https://example.org/lib.html">Library hours</a>`} {
				if !strings.Contains(content, w) {
					t.Errorf("entry 1 content lacks %s:\n%s", w, content)
				}
			}
			if c := feed.Items[3].Content; !strings.Contains(c, "Changed (1)") || !strings.Contains(c, "(description)") {
				t.Errorf("entry 3 content does not say what changed:\n%s", c)
			}
			if c := feed.Items[5].Content; !strings.Contains(c, "Pool &lt;closed&gt;") {
				t.Errorf("a title is not escaped in the content:\n%s", c)
			}
		})
	}
}

// TestVersionsFeedBounds: an entry's title names three items and then
// "…", its content lists fifty and then says how many more, and the
// fifty newest versions are described, the older ones counted.
func TestVersionsFeedBounds(t *testing.T) {
	items := func(n int) []versiondiff.DiffItem {
		out := make([]versiondiff.DiffItem, n)
		for i := range out {
			out[i] = versiondiff.DiffItem{ID: fmt.Sprint(i), Title: fmt.Sprint("T", i), Link: fmt.Sprintf("https://example.org/%d", i)}
		}
		return out
	}
	if got := namesOf(items(3)); got != ": T0; T1; T2" {
		t.Errorf("three names: %q", got)
	}
	if got := namesOf(items(4)); got != ": T0; T1; T2; …" {
		t.Errorf("four names: %q", got)
	}
	for _, n := range []int{50, 51} {
		got := itemList("New", items(n), nil)
		listed := strings.Count(got, "<a href=")
		more := strings.Contains(got, " more</li>")
		if more && !strings.Contains(got, "… and 1 more") {
			t.Errorf("%d items: %s", n, got)
		}
		if listed != 50 || more != (n == 51) {
			t.Errorf("%d items: %d listed, 'and 1 more' %v:\n%s", n, listed, more, got)
		}
	}

	store := newFDStore()
	ch := schema.Channel{Title: "Town Hall", Link: "https://example.org/"}
	const versions = 52
	for v := 1; v <= versions; v++ {
		it := fdItem(1, fmt.Sprint("i", v), fmt.Sprint("Item ", v), fmt.Sprintf("https://example.org/%d.html", v), "")
		store.Save(&schema.Document{URL: "https://example.org/", RSSID: "town", Timestamp: fdT0.Add(time.Duration(v) * time.Hour), Channel: ch, Items: []schema.Item{it}})
	}
	s := newFDServer(t, store)
	feed := parseFeed(t, fdDo(s, http.MethodGet, "/resources/town?type=rss2").Body.Bytes())
	if len(feed.Items) != versions {
		t.Fatalf("%d entries, want %d", len(feed.Items), versions)
	}
	for i, it := range feed.Items {
		described := strings.HasPrefix(it.Title, "1 new: ")
		if want := i < maxDescribedVersions; described != want {
			t.Errorf("entry %d (version %d) %q: described %v, want %v", i, versions-i, it.Title, described, want)
		}
	}
}
