package poller

import (
	"encoding/binary"
	"encoding/json"
	"maps"
	"math"
	"net/url"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/dynamo-rss/dynamo/config"
	"github.com/dynamo-rss/dynamo/extractor"
	"github.com/dynamo-rss/dynamo/extractor/filter"
	"github.com/dynamo-rss/dynamo/schema"
	"github.com/dynamo-rss/dynamo/storage"
)

// resource is one configured page. Fields other than busy are guarded by Engine.mu.
type resource struct {
	id        string
	host      string // its page's host, lower-cased (the page's URL is parsed at each poll: see poll)
	policy    Policy
	retention storage.Retention
	dates     schema.DateRules      // how its page's dates are read (date_format, timezone)
	sel       *extractor.Selectors  // its select block, compiled; nil: annotations
	filter    *filter.Filter        // its filter block, compiled; nil: every item kept
	entry     *config.ResourceEntry // its definition, as the file or the admin API gave it (shared, never modified)
	source    string                // SourceFile or SourceAPI
	st        persisted
	busy      chan struct{} // cap 1: held while polling, so no two polls of one resource overlap
	// articlesDone: with content: full, no item of the stored version is
	// known to wait for its article. Until then (after a start, or a poll
	// that left items over full_per_poll) a poll fetches and extracts the
	// page whatever its validators say, so that those articles are
	// fetched at the next poll rather than when the page next changes.
	articlesDone bool
}

// compareWith returns what r's next poll compares the page with: the
// validators of its conditional request, the last version and the hash of
// the last body extracted. With articles left to fetch, the page is read
// whatever it says: no validators, no hash. The caller holds e.mu.
func (r *resource) compareWith() (validators, *lastVersion, uint64) {
	if r.entry.Content == config.ContentFull && !r.articlesDone {
		return validators{}, r.st.Last, 0
	}
	return r.st.Validators, r.st.Last, r.st.BodyHash
}

// built is a resource ready to apply.
type built struct {
	since  time.Time // a registered resource: when it was registered (the same on every node)
	dates  schema.DateRules
	sel    *extractor.Selectors
	filter *filter.Filter
	entry  *config.ResourceEntry
	source string
	u      *url.URL
	policy Policy
	ret    storage.Retention
}

// build checks and prepares one resource under the poller settings p; at
// names it in errors.
func build(p config.PollerConfig, bud *Budget, r *config.ResourceEntry, source, at string) (built, error) {
	u, err := url.Parse(r.URL)
	if err != nil {
		return built{}, &config.FieldError{Path: at + ".url", Err: redacted(err, r.URL)}
	}
	var pol Policy
	if c := p.ResolveResource(*r); c.Kind == KindBudget {
		pol, err = bud.Policy(r.ID, c)
	} else {
		pol, err = NewPolicy(c)
	}
	if err != nil {
		return built{}, &config.FieldError{Path: at + ".policy", Err: err}
	}
	rc := p.ResolveRetention(r.Retention)
	var sel *extractor.Selectors
	if !r.Select.IsZero() {
		if sel, err = extractor.CompileSelectors(r.Select); err != nil {
			return built{}, &config.FieldError{Path: at + ".select", Err: err}
		}
	}
	filter, err := filter.Compile(r.Filter)
	if err != nil {
		return built{}, &config.FieldError{Path: at + ".filter", Err: err}
	}
	return built{entry: r, source: source, u: u, policy: pol, ret: storage.Retention{MaxVersions: rc.MaxVersions, MaxAge: rc.MaxAge.D()}, dates: r.DateRules(), sel: sel, filter: filter}, nil
}

// sameExtraction reports whether two definitions of a resource fetch and
// extract its page alike: same URL, selectors, filter, date layout, time
// zone and fetch, wait_for and content.
// A change of policy, retention or weight keeps what a poll learned of the
// page (its validators, its body's hash).
func sameExtraction(a, b *config.ResourceEntry) bool {
	return a.URL == b.URL && a.Select.Equal(b.Select) && a.Filter.Equal(b.Filter) && a.DateFormat == b.DateFormat && a.Timezone == b.Timezone &&
		a.Title == b.Title && maps.Equal(a.Headers, b.Headers) && a.Fetch == b.Fetch && a.WaitFor == b.WaitFor && a.Content == b.Content
}

// policyKey identifies a resolved policy as a reload compares it (every
// field of [PolicyConfig]), and for the budget kind the budget's settings
// too (a new budget re-places every budget resource): the state records the
// key of the policy its next poll was placed under. Never 0, which a state
// saved before the key was recorded has. Encoded by hand rather than by
// encoding/json: every resource's key is taken at every start and reload.
func policyKey(c PolicyConfig, bs BudgetSettings) uint64 {
	var buf [96]byte
	b := binary.AppendUvarint(buf[:0], uint64(len(c.Kind)))
	b = append(b, c.Kind...)
	for _, d := range [...]time.Duration{c.Interval, c.Initial, c.Min, c.Max} {
		b = binary.AppendVarint(b, int64(d))
	}
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(c.Alpha))
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(c.Weight))
	b = append(b, boolByte(c.AlphaAuto), boolByte(c.WeightReaders))
	if c.Kind == KindBudget {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(bs.Total))
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(bs.PerResource))
		b = binary.AppendVarint(b, int64(bs.MaxInterval))
	}
	return xxhash.Sum64(b) | 1
}

func boolByte(v bool) byte {
	if v {
		return 1
	}
	return 0
}

// extractionKey identifies how a definition reads its page besides its URL
// (which the state keeps apart): its selectors, filter and date rules, the rest of
// [sameExtraction]. It is 0 for annotations read as they come, so states
// saved before the key was recorded match such definitions.
func extractionKey(r *config.ResourceEntry) uint64 {
	if r.Select.IsZero() && r.Filter.IsZero() && r.DateFormat == "" && r.Timezone == "" && r.Title == "" && len(r.Headers) == 0 &&
		r.Fetch == "" && r.WaitFor == "" && r.Content == "" {
		return 0
	}
	// Keys of the headers only are not enough (a new cookie gives another
	// page), but their values are hashed, never kept.
	b, _ := json.Marshal(struct { // plain strings: never fails
		Select     extractor.SelectSpec
		DateFormat string
		Timezone   string
		Title      string            `json:",omitempty"` // omitted when empty: keys recorded before these fields stay valid
		Headers    map[string]string `json:",omitempty"`
		Fetch      string            `json:",omitempty"`
		WaitFor    string            `json:",omitempty"`
		Content    string            `json:",omitempty"`
		Filter     filter.Spec       `json:",omitzero"`
	}{r.Select, r.DateFormat, r.Timezone, r.Title, r.Headers, r.Fetch, r.WaitFor, r.Content, r.Filter})
	return xxhash.Sum64(b) | 1
}
