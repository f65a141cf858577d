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
	// Dates: items carry their publication date, so the engine can give the
	// policy the newest item's date instead of only the detection time.
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
}

// fetch is one poll at offset at (from the trace start, never before the
// previous poll). It returns the observation the engine would build, the
// index range [seenLo, seenHi) of postings this poll sees for the first time,
// and the range [missLo, seenLo) of new postings already pushed off the page.
func (p *page) fetch(at time.Duration) (obs poller.Observation, missLo, seenLo, seenHi int) {
	prev := p.shown
	cur := prev
	for cur < len(p.postings) && p.postings[cur] <= at {
		cur++
	}
	p.shown = cur
	lo := prev
	if p.cfg.K > 0 && cur-p.cfg.K > lo {
		lo = cur - p.cfg.K
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
	if p.cfg.Dates && cur > 0 {
		obs.Published = p.start.Add(p.postings[cur-1])
	}
	return obs, prev, lo, cur
}
