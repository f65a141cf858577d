package sim

import (
	"time"

	"github.com/dynamo-rss/dynamo/poller"
)

// PageConfig describes the annotated page each feed is rendered as.
type PageConfig struct {
	// K is how many of the latest items the page shows; 0 means all of them.
	// A posting pushed off the page before any poll saw it is missed for good.
	K int
	// Dates: items carry their publication date, so the observation lists
	// the new items' dates (Observation.Dates) besides their count.
	Dates bool
	// NoConditional makes the origin answer 200 with the same page instead of
	// 304 Not Modified when nothing changed.
	NoConditional bool
}

// page is the origin's side of one feed during one simulation: which postings
// are on the page at a given instant, and which of them the aggregator has
// already been shown. It is owned by one simulation goroutine.
type page struct {
	cfg      PageConfig
	start    time.Time
	postings []time.Duration // sorted offsets from start
	shown    int             // postings[:shown] were published at or before the last poll
	fetched  bool            // a first version exists (so validators exist for a 304)
	dates    []time.Time     // scratch for Observation.Dates, reused by the next poll
}

// fetch is one poll at offset at (from the trace start, never before the
// previous poll). It returns the observation the engine would build, the
// index range [seenLo, seenHi) of postings this poll sees for the first time,
// and the range [missLo, seenLo) of new postings already pushed off the page.
// Like the engine's, the observation counts the items whose ids the previous
// version lacked (NewItems; 0 on the first fetch, when there is no previous
// version), and with dates lists the new items' dates (Dates, all of the
// page's on the first fetch) and the newest date (Published). Obs.Dates is
// reused by the next fetch.
func (p *page) fetch(at time.Duration) (obs poller.Observation, missLo, seenLo, seenHi int) {
	prev := p.shown
	cur := prev
	for cur < len(p.postings) && p.postings[cur] <= at {
		cur++
	}
	p.shown = cur
	lo, top := prev, 0 // top: the oldest posting on the page
	if p.cfg.K > 0 {
		top = max(cur-p.cfg.K, 0)
		lo = max(lo, top)
	}
	obs = poller.Observation{Time: p.start.Add(at)}
	first := !p.fetched
	p.fetched = true
	switch {
	case cur > prev || first: // the first fetch stores a first version
		obs.Changed = true
	case !p.cfg.NoConditional:
		obs.NotModified = true
		return obs, prev, lo, cur // a 304 has no body, hence no dates
	}
	if !first { // lo..cur: the page's items the previous version did not have
		obs.NewItems = cur - lo
	}
	if p.cfg.Dates && cur > 0 {
		obs.Published = p.start.Add(p.postings[cur-1])
		p.dates = p.dates[:0]
		for _, d := range p.postings[lo:cur] {
			p.dates = append(p.dates, p.start.Add(d))
		}
		obs.Dates = p.dates
	}
	return obs, prev, lo, cur
}
