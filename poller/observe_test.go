package poller

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dynamo-rss/dynamo/schema"
)

// docOf builds a document whose items have the given ids and, where non-zero,
// publication dates.
func docOf(ids []string, dates []time.Time) *schema.Document {
	doc := &schema.Document{}
	for i, id := range ids {
		it := schema.Item{Index: i + 1, ID: id, Title: id}
		if i < len(dates) && !dates[i].IsZero() {
			it.Extensions = schema.Extensions{{URI: "http://purl.org/dc/elements/1.1/", Prefix: "dc", LocalName: "date", Value: dates[i].Format(time.RFC3339)}}
		}
		doc.Items = append(doc.Items, it)
	}
	return doc
}

func TestCompareItems(t *testing.T) {
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	_, v1 := compareItems(docOf([]string{"c", "b", "a"}, []time.Time{at(20), at(10), at(0)}), nil, schema.DateRules{})
	tests := []struct {
		name     string
		doc      *schema.Document
		last     *lastVersion
		newItems int
		dates    []time.Time
	}{
		{"no previous version: count unknown, every date", docOf([]string{"b", "a"}, []time.Time{at(10), at(0)}), nil, 0, []time.Time{at(0), at(10)}},
		{"same items", docOf([]string{"c", "b", "a"}, []time.Time{at(20), at(10), at(0)}), v1, 0, nil},
		{"two new, one pushed off", docOf([]string{"e", "d", "c", "b"}, []time.Time{at(35), at(30), at(20), at(10)}), v1, 2, []time.Time{at(30), at(35)}},
		{"no dates", docOf([]string{"x", "c"}, nil), v1, 1, nil},
		{"an old date on a new item is not newer", docOf([]string{"late", "c"}, []time.Time{at(5), at(20)}), v1, 1, nil},
		{"empty previous version: every item is new", docOf([]string{"a"}, nil), &lastVersion{}, 1, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ch, next := compareItems(tt.doc, tt.last, schema.DateRules{})
			if ch.newItems != tt.newItems || !slices.Equal(ch.dates, tt.dates) {
				t.Fatalf("new %d dates %v, want %d %v", ch.newItems, ch.dates, tt.newItems, tt.dates)
			}
			if len(next.Items) != len(tt.doc.Items) {
				t.Fatalf("recorded %d ids of %d", len(next.Items), len(tt.doc.Items))
			}
		})
	}
	if !v1.Newest.Equal(at(20)) {
		t.Errorf("newest %v", v1.Newest)
	}
	// The record is bounded.
	ids := make([]string, maxItemIDs+20)
	for i := range ids {
		ids[i] = fmt.Sprintf("id%d", i)
	}
	if _, v := compareItems(docOf(ids, nil), nil, schema.DateRules{}); len(v.Items) != maxItemIDs {
		t.Errorf("recorded %d ids, want at most %d", len(v.Items), maxItemIDs)
	}
}

// datedItems is a page whose items (newest first) carry dc:date.
func datedItems(dates ...time.Time) string {
	var b strings.Builder
	b.WriteString("<html><body><h1><!-- <channel:title> -->Site<!-- </channel:title> --></h1>\n")
	for i, d := range dates {
		fmt.Fprintf(&b, `<p><!-- <item:title index="%d"> -->story at %s<!-- </item:title> -->
<!-- <item:extension index="%d" uri="http://purl.org/dc/elements/1.1/" prefix="dc" localName="date"> -->%s<!-- </item:extension> --></p>
`, i+1, d.Format(time.RFC3339), i+1, d.Format(time.RFC3339))
	}
	b.WriteString("</body></html>\n")
	return b.String()
}

// TestEngineObservesEveryNewItem: the engine gives the policy all the new
// items of a poll, by date and by id.
func TestEngineObservesEveryNewItem(t *testing.T) {
	m := time.Minute
	for _, tt := range []struct {
		name   string
		first  string
		second func(polled time.Time) string
		tau    time.Duration // α = 0: τ is the poll's t_n
	}{
		{
			name:  "dates: 3 new items, 12 minutes after the previous newest",
			first: datedItems(t0.Add(-time.Hour)),
			second: func(time.Time) string {
				return datedItems(t0.Add(-48*m), t0.Add(-50*m), t0.Add(-56*m), t0.Add(-time.Hour))
			},
			tau: 4 * m,
		},
		{
			name:  "ids: 4 new items since the last change",
			first: page("Site", "a"),
			second: func(time.Time) string {
				return page("Site", "e", "d", "c", "b", "a")
			},
			tau: 0, // set below: the span between the two polls ÷ 4
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := newOrigin(t)
			clk := newFakeClock(t0)
			cfg := testConfig(t, baseYAML(fmt.Sprintf("resources:\n  - {id: r, url: %q, policy: {alpha: 0, max: 6h}}\n", o.url("/"))))
			e := newTestEngine(t, cfg, newMemStore(), clk)
			o.set(tt.first)
			st1 := pollAtNext(t, e, clk, "r")
			o.set(tt.second(st1.NextPoll))
			st2 := pollAtNext(t, e, clk, "r")
			if st2.LastOutcome != OutcomeChanged {
				t.Fatalf("%q %s", st2.LastOutcome, st2.LastError)
			}
			want := tt.tau
			if want == 0 {
				want = st2.LastPoll.Sub(st1.LastPoll) / 4
			}
			if st2.Tau != want {
				t.Fatalf("τ = %v, want %v", st2.Tau, want)
			}
		})
	}
}

// TestOldStateLoads: a poll state saved before the item record and with the
// retired last_change flag still loads, and the first poll after it falls
// back to the detection time.
func TestOldStateLoads(t *testing.T) {
	old := `{"v":1,"url":"https://example.org/","kind":"smart",
	"policy":{"tau":1200000000000,"alpha":0.5,"last_update":"2026-11-21T07:00:00Z","intervals":[1200000000000],"wait":1200000000000,"unchanged":2,"last_change":true,"kind":"smart"},
	"validators":{},"last_poll":"2026-11-21T07:40:00Z","next_poll":"2026-11-21T08:10:00Z","last_outcome":"unchanged","polls":7,"changes":3,"errors":0}`
	p, err := unmarshalState([]byte(old))
	if err != nil {
		t.Fatal(err)
	}
	if p.Policy.Tau != 20*time.Minute || p.Polls != 7 || p.Last != nil || len(p.Policy.Intervals) != 1 {
		t.Fatalf("decoded %+v", p)
	}
	_, last := compareItems(docOf([]string{"a", "b"}, nil), p.Last, schema.DateRules{})
	pol, _ := NewPolicy(PolicyConfig{Kind: KindSmart, Alpha: 0.5, Initial: 10 * time.Minute, Min: time.Minute, Max: time.Hour})
	pol.Start(&p.Policy)
	pol.Observe(&p.Policy, Observation{Time: t0, Changed: true}) // NewItems unknown: 0
	if p.Policy.Tau != 40*time.Minute {                          // 0.5·20m + 0.5·60m
		t.Fatalf("τ = %v, want 40m", p.Policy.Tau)
	}
	p.Last = last
	b, err := p.marshal()
	if err != nil {
		t.Fatal(err)
	}
	q, err := unmarshalState(b)
	if err != nil || q.Last == nil || len(q.Last.Items) != 2 {
		t.Fatalf("round trip: %v %+v", err, q.Last)
	}
}
