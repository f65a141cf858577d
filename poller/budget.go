package poller

import (
	"cmp"
	"errors"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/dynamo-rss/dynamo/config"
)

// KindBudget is the budget policy's kind, as written in the configuration.
const KindBudget = config.KindBudget

// BudgetFloor is the shortest time between two polls of a budget resource.
const BudgetFloor = config.BudgetFloor

// Readers counts a resource's readers: the distinct clients that fetched its
// feeds in the last week (advaRSS weighs feeds by subscribers). The api
// implements it; a budget resource with weight_readers multiplies its weight
// by max(1, Readers(id)). It is called while the engine holds its lock, so
// it must be cheap, safe for concurrent use, and must not call the Engine.
type Readers interface {
	Readers(id string) int
}

// BudgetSettings are what the budget resources share.
type BudgetSettings struct {
	// Total is the whole budget in polls per day; 0: PerResource per member.
	Total float64
	// PerResource is the budget per member and day when Total is 0.
	PerResource float64
	// MaxInterval is the longest a member goes unpolled (default
	// [config.DefaultMaxInterval]).
	MaxInterval time.Duration
}

// BudgetSettingsOf returns the settings of a configuration's poller.budget.
func BudgetSettingsOf(c config.BudgetConfig) BudgetSettings {
	return BudgetSettings{Total: c.PollsPerDay, PerResource: config.DefaultPollsPerResource, MaxInterval: c.MaxInterval.D()}
}

// Budget is the allocator the resources with policy kind budget share (Sia &
// Cho 2007, Theorem 1): member i polls m_i = c·√(w_i·λ_i) times a day, with
// one normaliser c for all, chosen so that Σ m_i is the budget. Members that
// would poll less than once per max_interval are raised to that rate (and
// counted at it: the rest share what is left, water-filling); members
// without a day of evidence yet get the mean share √(w·λ) of the others.
//
// Nothing is recomputed over all members per poll: the sums behind c are
// kept incrementally, each member's term replaced when its estimate moves
// (at its own poll, so within max_interval), which is O(1); the sums are
// rebuilt exactly once per as many updates as there are members, against
// rounding drift (amortised O(1)). A Budget is safe for concurrent use.
type Budget struct {
	readers Readers

	mu      sync.Mutex
	set     BudgetSettings
	members map[string]*budgetMember
	// Sums over members: sumFree is Σ s over evidenced members above the
	// max_interval rate, nLow counts those at it, sumEvid and nEvid are
	// over all evidenced members (for the mean share), nNew counts the
	// members without evidence.
	sumFree, sumEvid float64
	nLow, nEvid      int
	nNew             int
	updates          int
}

type budgetMember struct {
	s        float64 // √(w·λ), λ per day
	evidence bool
	low      bool // held at the max_interval rate
}

// NewBudget returns an empty allocator; readers may be nil (weight_readers
// then counts one reader).
func NewBudget(set BudgetSettings, readers Readers) *Budget {
	b := &Budget{readers: readers, members: make(map[string]*budgetMember)}
	b.Configure(set)
	return b
}

// Configure changes the settings; members' next waits follow them.
func (b *Budget) Configure(set BudgetSettings) {
	if set.MaxInterval <= 0 {
		set.MaxInterval = config.DefaultMaxInterval
	}
	set.MaxInterval = max(set.MaxInterval, BudgetFloor)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.set = set
	b.rebuild() // the max_interval rate may have moved: reclassify
}

// Settings returns the settings in force.
func (b *Budget) Settings() BudgetSettings {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.set
}

// Len returns the number of members.
func (b *Budget) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.members)
}

// total is the budget in polls per day; the caller holds b.mu.
func (b *Budget) total() float64 {
	if b.set.Total > 0 {
		return b.set.Total
	}
	return b.set.PerResource * float64(len(b.members))
}

// minRate is the max_interval rate in polls per day.
func (b *Budget) minRate() float64 { return 24 / b.set.MaxInterval.Hours() }

// meanShare is the share of a member without evidence; the caller holds b.mu.
func (b *Budget) meanShare() float64 {
	if b.nEvid == 0 {
		return 1
	}
	return b.sumEvid / float64(b.nEvid)
}

// norm is the normaliser c; the caller holds b.mu.
func (b *Budget) norm() float64 {
	return b.normWith(0)
}

// normWith is c with one more free member of share s.
func (b *Budget) normWith(s float64) float64 {
	den := b.sumFree + float64(b.nNew)*b.meanShare() + s
	left := b.total() - float64(b.nLow)*b.minRate()
	if left <= 0 || den <= 0 {
		// Nothing left above the held members, or nobody free to share
		// it (every member held, which a rebuild undoes when budget is
		// left): each polls at the max_interval rate.
		return 0
	}
	return left / den
}

// add counts member m in the sums. An evidenced member is held at the
// max_interval rate when, counted as free, c·s would fall below it.
func (b *Budget) add(m *budgetMember) {
	if !m.evidence {
		b.nNew++
		return
	}
	m.low = b.normWith(m.s)*m.s < b.minRate()
	b.nEvid++
	b.sumEvid += m.s
	if m.low {
		b.nLow++
	} else {
		b.sumFree += m.s
	}
}

func (b *Budget) sub(m *budgetMember) {
	if !m.evidence {
		b.nNew--
		return
	}
	b.nEvid--
	b.sumEvid -= m.s
	if m.low {
		b.nLow--
	} else {
		b.sumFree -= m.s
	}
}

// rebuild recomputes the sums exactly and water-fills: members in
// increasing share are held at the max_interval rate while c·s falls below
// it. O(n log n), once per n updates. The caller holds b.mu.
func (b *Budget) rebuild() {
	b.sumFree, b.sumEvid, b.nLow, b.nEvid, b.nNew = 0, 0, 0, 0, 0
	ev := make([]*budgetMember, 0, len(b.members))
	for _, m := range b.members {
		if !m.evidence {
			b.nNew++
			continue
		}
		m.low = false
		b.nEvid++
		b.sumEvid += m.s
		b.sumFree += m.s
		ev = append(ev, m)
	}
	slices.SortFunc(ev, func(x, y *budgetMember) int { return cmp.Compare(x.s, y.s) })
	for _, m := range ev {
		if b.norm()*m.s >= b.minRate() {
			break
		}
		m.low = true
		b.nLow++
		b.sumFree -= m.s
	}
	b.updates = 0
}

// update sets member id's share and returns its rate in polls per day.
func (b *Budget) update(id string, s float64, evidence bool) float64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	m := b.members[id]
	if m == nil {
		m = &budgetMember{}
		b.members[id] = m
	} else {
		b.sub(m)
	}
	m.s, m.evidence = s, evidence
	b.add(m)
	if b.updates++; b.updates >= max(len(b.members), 64) {
		b.rebuild()
	}
	return b.rateLocked(m)
}

func (b *Budget) rateLocked(m *budgetMember) float64 {
	s := m.s
	if !m.evidence {
		s = b.meanShare()
	}
	return max(b.norm()*s, b.minRate())
}

// Leave removes member id (its resource is gone or left the budget).
func (b *Budget) Leave(id string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if m := b.members[id]; m != nil {
		b.sub(m)
		delete(b.members, id)
		// The held members' classes are kept between rebuilds; when the
		// last free one leaves, every evidenced member is held while budget
		// is left, and each would take all of it (the lone member's rule):
		// classify them again (and, when the last member leaves, start the
		// sums from an exact zero).
		if b.nNew == 0 && b.nLow == b.nEvid {
			b.rebuild()
		}
	}
}

// Share returns member id's current rate in polls per day.
func (b *Budget) Share(id string) (perDay float64, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	m := b.members[id]
	if m == nil {
		return 0, false
	}
	return b.rateLocked(m), true
}

// Policy returns the budget policy of member id under resolved config c
// (kind budget). The member joins the allocator at [Policy.Start].
func (b *Budget) Policy(id string, c PolicyConfig) (Policy, error) {
	if c.Kind != KindBudget {
		return nil, errors.New("budget: not a budget policy")
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return budgetPolicy{c: c, b: b, id: id}, nil
}

// budgetPolicy is one member's policy: it learns the page's rate and weekly
// profile ([RateState]), asks the allocator for its polls per day and
// places them in the week by the profile.
type budgetPolicy struct {
	c  PolicyConfig
	b  *Budget
	id string
}

func (p budgetPolicy) Config() PolicyConfig { return p.c }

func (p budgetPolicy) weight() float64 {
	w := p.c.Weight
	if p.c.WeightReaders && p.b.readers != nil {
		w *= float64(max(p.b.readers.Readers(p.id), 1))
	}
	return w
}

// share updates the member's term in the allocator from st's rate and
// returns its rate in polls per day.
func (p budgetPolicy) share(st *PolicyState) float64 {
	lambda, evidence := st.Rate.Lambda()
	return p.b.update(p.id, math.Sqrt(p.weight()*lambda), evidence)
}

func meanOf(g *[WeekHours]float64) float64 {
	t := 0.0
	for _, v := range g {
		t += v
	}
	return t / WeekHours
}

// sqrtProfile writes √(profile) into g.
func sqrtProfile(r *RateState, g *[WeekHours]float64) {
	if r == nil {
		for i := range g {
			g[i] = 1
		}
		return
	}
	r.Profile(g)
	for i, v := range g {
		g[i] = math.Sqrt(v)
	}
}

func (p budgetPolicy) Start(st *PolicyState) time.Duration {
	st.Kind = KindBudget
	var g [WeekHours]float64
	sqrtProfile(st.Rate, &g)
	rate := p.share(st)
	if st.Rate == nil || st.Rate.At.IsZero() {
		st.Wait = p.clamp(time.Duration(float64(24*time.Hour) / rate))
	} else {
		st.Wait = p.place(&g, st.Rate.At, rate)
	}
	return st.Wait
}

func (p budgetPolicy) Observe(st *PolicyState, obs Observation) time.Duration {
	if obs.Changed {
		recordUpdates(st, obs) // kept for a later switch to smart
		st.Unchanged = 0
	} else {
		st.Unchanged++
	}
	if st.Rate == nil {
		st.Rate = &RateState{}
	}
	first := st.Rate.At.IsZero()
	var dates []time.Time
	if first || obs.Changed {
		dates = obs.Dates
	}
	extra := 0
	if obs.Changed && !first {
		// New items the page does not date; a change without any known new
		// item is at least one update.
		extra = max(obs.NewItems-len(dates), 0)
		if len(dates) == 0 && extra == 0 {
			extra = 1
		}
	}
	st.Rate.Observe(obs.Time, dates, extra)
	var g [WeekHours]float64
	sqrtProfile(st.Rate, &g)
	st.Wait = p.place(&g, obs.Time, p.share(st))
	return floor(st.Wait, obs)
}

// place returns the wait after a poll at t for a member polled rate times a
// day, given its √-profile g: polls are spread over the week with density
// ∝ √(profile), the continuous form of Sia & Cho's equal-area rule
// (Theorem 3), so each wait covers the same share 1/(7·rate) of the week's
// area under g.
//
// A member held at the max_interval rate polls every max_interval exactly:
// placing its few polls by the profile would make some gaps shorter while
// none may grow longer, spending more than the allocator counts it for.
func (p budgetPolicy) place(g *[WeekHours]float64, t time.Time, rate float64) time.Duration {
	maxIv := p.b.Settings().MaxInterval
	if rate*maxIv.Hours() <= 24*(1+1e-9) {
		return maxIv
	}
	return p.clamp(walk(t, g, meanOf(g)*WeekHours/(7*rate), maxIv))
}

func (p budgetPolicy) clamp(d time.Duration) time.Duration {
	return min(max(d, BudgetFloor), p.b.Settings().MaxInterval)
}
