package ui

import (
	"github.com/dynamo-rss/dynamo/extractor"
	"slices"
	"sync"
	"time"

	"github.com/dynamo-rss/dynamo/api"
	"github.com/dynamo-rss/dynamo/internal/session"
)

// Bounds of the pages /new fetched and keeps for its previews: a few
// operators at a time, each looking at a page for some minutes. A page is
// at most poller.max_body; the whole is bounded by bytes and by count, the
// oldest going first.
const (
	fetchedTTL      = 10 * time.Minute
	fetchedMaxCount = 32
	fetchedMaxBytes = 64 << 20
)

// fetchedPage is a page /new fetched: the bytes every preview of it
// extracts from, so a preview never fetches again.
type fetchedPage struct {
	ID        string // random, unguessable: the hidden field of the forms
	SessionID string // the session that fetched it; no other may read it
	Requested string // the URL typed in
	api.Page         // body, content type, URL after redirects
	Render    bool   // rendered with JavaScript (fetch: browser)
	WaitFor   string // the render's wait_for
	Fetched   time.Time
	// Picture is the page as the browser drew it when fetched (point.go);
	// nil: no browser drew it.
	Picture *pagePicture

	once      sync.Once
	an        *pageAnalysis // what pointing reads of it, once (analysis)
	offerOnce sync.Once
	offer     pageOffer // suggest's offer for it, once (offered)
	offerErr  error

	partsMu sync.Mutex
	parts   map[string][]int // which item of a block each element is part of, by block (partsOf)
}

// offered is what the page offers (suggestOffer), read on first use: the
// same bytes always offer the same.
func (p *fetchedPage) offered() (pageOffer, error) {
	p.offerOnce.Do(func() { p.offer, p.offerErr = suggestOffer(p.Page) })
	return p.offer, p.offerErr
}

// maxPartsKept bounds the blocks whose items a page keeps.
const maxPartsKept = 16

// partsOf tells which item of block (spec, as YAML) each element of the
// page is part of (suggest.ItemParts), kept for the next time the same
// block is outlined.
func (p *fetchedPage) partsOf(block string, spec extractor.SelectSpec) []int {
	p.partsMu.Lock()
	got, ok := p.parts[block]
	p.partsMu.Unlock()
	if ok {
		return got
	}
	got = blockParts(p.Page, spec)
	p.partsMu.Lock()
	defer p.partsMu.Unlock()
	if p.parts == nil || len(p.parts) >= maxPartsKept {
		p.parts = map[string][]int{}
	}
	p.parts[block] = got
	return got
}

// size is what p weighs in the cache: its bytes and its picture.
func (p *fetchedPage) size() int { return len(p.Body) + p.Picture.size() }

// analysis is what pointing reads of the page, read on first use.
func (p *fetchedPage) analysis() *pageAnalysis {
	p.once.Do(func() { p.an = analyse(p.Page) })
	return p.an
}

// fetchedPages is a small cache of fetched pages, bounded in count and
// bytes, each kept fetchedTTL. Safe for concurrent use.
type fetchedPages struct {
	mu    sync.Mutex
	order []*fetchedPage // oldest first
	bytes int
}

// put keeps p under a fresh random id, dropping expired pages and then the
// oldest until it fits; it returns the id.
func (f *fetchedPages) put(p *fetchedPage, now time.Time) string {
	p.ID = session.RandomString(16)
	p.Fetched = now
	f.mu.Lock()
	defer f.mu.Unlock()
	f.expire(now)
	for len(f.order) > 0 && (len(f.order) >= fetchedMaxCount || f.bytes+p.size() > fetchedMaxBytes) {
		f.drop(0)
	}
	f.order = append(f.order, p)
	f.bytes += p.size()
	return p.ID
}

// get returns the page id fetched by session sid, unless it expired.
func (f *fetchedPages) get(id, sid string, now time.Time) (*fetchedPage, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.expire(now)
	for _, p := range f.order {
		if p.ID == id && p.SessionID == sid {
			return p, true
		}
	}
	return nil, false
}

// expire drops the pages older than fetchedTTL. f.mu is held.
func (f *fetchedPages) expire(now time.Time) {
	for len(f.order) > 0 && !now.Before(f.order[0].Fetched.Add(fetchedTTL)) {
		f.drop(0)
	}
}

// drop removes the i-th page. f.mu is held.
func (f *fetchedPages) drop(i int) {
	f.bytes -= f.order[i].size()
	f.order = slices.Delete(f.order, i, i+1) // zeroes the freed slot
}

// len is the number of pages kept (for tests).
func (f *fetchedPages) len() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.order)
}
