package api

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/dynamo-rss/dynamo/schema"
	"github.com/dynamo-rss/dynamo/storage"
)

// fdStore is an in-memory Store with real history for the feed handlers'
// tests: it keeps every saved version and aggregates items the way the
// storage contract says (one per item id, latest content, newest first by
// first seen). Calls are counted so tests can see what a request read.
type fdStore struct {
	mu      sync.Mutex
	docs    map[string][]*schema.Document // oldest first
	err     error                         // returned by every call when set
	reads   int                           // Version, Versions and Items calls
	infoErr error                         // returned by Resource/Resources when set
}

func newFDStore() *fdStore { return &fdStore{docs: map[string][]*schema.Document{}} }

// save appends doc as the newest version of doc.RSSID.
func (f *fdStore) save(doc *schema.Document) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.docs[doc.RSSID] = append(f.docs[doc.RSSID], doc)
}

func (f *fdStore) info(id string) (storage.ResourceInfo, bool) {
	vs := f.docs[id]
	if len(vs) == 0 {
		return storage.ResourceInfo{}, false
	}
	last := vs[len(vs)-1]
	return storage.ResourceInfo{
		ID: id, URL: last.URL, Created: vs[0].Timestamp, Updated: last.Timestamp,
		Versions: len(vs), LatestSeq: uint64(len(vs)),
		Title: last.Channel.Title, Description: last.Channel.Description, Hash: schema.ContentHash(last),
	}, true
}

func (f *fdStore) Resources(ctx context.Context) ([]storage.ResourceInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil || f.infoErr != nil {
		return nil, errors.Join(f.err, f.infoErr)
	}
	var out []storage.ResourceInfo
	for id := range f.docs {
		in, _ := f.info(id)
		out = append(out, in)
	}
	slices.SortFunc(out, func(a, b storage.ResourceInfo) int { return cmpString(a.ID, b.ID) })
	return out, nil
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func (f *fdStore) Resource(ctx context.Context, id string) (storage.ResourceInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil || f.infoErr != nil {
		return storage.ResourceInfo{}, errors.Join(f.err, f.infoErr)
	}
	in, ok := f.info(id)
	if !ok {
		return storage.ResourceInfo{}, fmt.Errorf("resource %q: %w", id, storage.ErrNotFound)
	}
	return in, nil
}

func (f *fdStore) Version(ctx context.Context, id string, n int) (*schema.Document, storage.VersionInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads++
	if f.err != nil {
		return nil, storage.VersionInfo{}, f.err
	}
	vs := f.docs[id]
	if n < 1 || n > len(vs) {
		return nil, storage.VersionInfo{}, fmt.Errorf("version %d of %q: %w", n, id, storage.ErrNotFound)
	}
	i := len(vs) - n
	return vs[i], versionInfo(vs[i], uint64(i+1)), nil
}

func versionInfo(d *schema.Document, seq uint64) storage.VersionInfo {
	return storage.VersionInfo{Seq: seq, Timestamp: d.Timestamp, Title: d.Channel.Title, Description: d.Channel.Description, Items: len(d.Items)}
}

func (f *fdStore) Versions(ctx context.Context, id string, offset, limit int) ([]storage.VersionInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads++
	if f.err != nil {
		return nil, f.err
	}
	vs := f.docs[id]
	if len(vs) == 0 {
		return nil, fmt.Errorf("versions of %q: %w", id, storage.ErrNotFound)
	}
	var out []storage.VersionInfo
	for i := len(vs) - 1 - offset; i >= 0 && (limit <= 0 || len(out) < limit); i-- {
		out = append(out, versionInfo(vs[i], uint64(i+1)))
	}
	return out, nil
}

func (f *fdStore) Items(ctx context.Context, id string, q storage.ItemQuery) ([]storage.Item, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads++
	if f.err != nil {
		return nil, f.err
	}
	vs := f.docs[id]
	if len(vs) == 0 {
		return nil, fmt.Errorf("items of %q: %w", id, storage.ErrNotFound)
	}
	byID := map[string]*storage.Item{}
	var order []string
	for seq, d := range vs {
		for _, it := range d.Items {
			if x, ok := byID[it.ID]; ok {
				x.Item, x.LastSeen, x.Seq = it, d.Timestamp, uint64(seq+1)
				continue
			}
			byID[it.ID] = &storage.Item{Item: it, FirstSeen: d.Timestamp, LastSeen: d.Timestamp, Seq: uint64(seq + 1)}
			order = append(order, it.ID)
		}
	}
	var out []storage.Item
	for _, iid := range order {
		out = append(out, *byID[iid])
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].FirstSeen.After(out[j].FirstSeen) })
	var kept []storage.Item
	for _, it := range out {
		if q.Max > 0 && len(kept) == q.Max {
			break
		}
		if q.Terms.Match(it.Title, it.Link, it.Description) {
			kept = append(kept, it)
		}
	}
	return kept, nil
}

func (f *fdStore) readCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reads
}

var _ Store = (*fdStore)(nil)

// fdT0 is the time of the first stored version in the feed fixtures.
var fdT0 = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)

// fdItem builds an item; ext are prefix:local=value triples in the DC or content namespace.
func fdItem(index int, id, title, link, desc string, ext ...schema.Extension) schema.Item {
	return schema.Item{Index: index, ID: id, Title: title, Link: link, Description: desc, Extensions: ext}
}

// fdFixture stores the "news" resource with three versions and the "forum"
// resource with one:
//
//	news v1 @10:00: a
//	news v2 @11:00: b, a
//	news v3 @12:00: c, b (new title), a    c has a dc:date and content:encoded; b and c share a link
//	forum v1 @09:30: f
//
// Aggregated over history, newest first by first seen: c, b, a.
func fdFixture() *fdStore {
	f := newFDStore()
	a := fdItem(1, "a", "Budget vote tonight", "https://example.org/news/a.html", "The council votes the budget.")
	b := fdItem(1, "b", "Weather: rain", "https://example.org/news/", "Rain all week.")
	c := fdItem(1, "c", "Straße closed for works", "https://example.org/news/", "Main street closed; BUDGET overrun.",
		schema.Extension{URI: schema.DCNamespace, Prefix: "dc", LocalName: "date", Value: "2026-02-28T08:30:00Z"},
		schema.Extension{URI: schema.DCNamespace, Prefix: "dc", LocalName: "creator", Value: "Town Hall"},
		schema.Extension{URI: schema.ContentNamespace, Prefix: "content", LocalName: "encoded", Value: "<p>Main street <b>closed</b>.</p>"})
	c.Image = &schema.Image{URL: "https://example.org/img/works.jpg"}
	ch := schema.Channel{Title: "Town News", Link: "https://example.org/news/", Description: "News from the town hall",
		Image: &schema.Image{Title: "Town logo", Link: "https://example.org/", URL: "https://example.org/logo.png"}}
	doc := func(at time.Duration, items ...schema.Item) *schema.Document {
		for i := range items {
			items[i].Index = i + 1
		}
		return &schema.Document{URL: "https://example.org/news/index.html", RSSID: "news", Timestamp: fdT0.Add(at), Channel: ch, Items: items}
	}
	f.save(doc(0, a))
	f.save(doc(time.Hour, b, a))
	b2 := b
	b2.Title = "Weather: sun at last"
	f.save(doc(2*time.Hour, c, b2, a))
	f.save(&schema.Document{URL: "https://example.org/forum/", RSSID: "forum", Timestamp: fdT0.Add(-30 * time.Minute),
		Channel: schema.Channel{Title: "Forum", Link: "https://example.org/forum/", Description: "Latest threads"},
		Items:   []schema.Item{fdItem(1, "f", "Welcome", "https://example.org/forum/1", "First thread")}})
	return f
}
