package storagetest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dynamo-rss/dynamo/schema"
	"github.com/dynamo-rss/dynamo/storage"
)

func testVersionsAndBounds(t *testing.T, open Opener) {
	db := open(t)
	ctx := context.Background()
	var saved []*schema.Document
	for i := range 5 {
		d := Doc("news", i, Item("a", "A"), Item("v", "version "+string(rune('1'+i))))
		d.Items[0].Extensions = schema.Extensions{
			{URI: schema.ContentNamespace, Prefix: "content", LocalName: "encoded", Value: "<p>A</p>"},
		}
		d.Items[1].Image = &schema.Image{Title: "pic", URL: "https://example.org/p.png", Link: "https://example.org/"}
		MustSave(t, db, d)
		saved = append(saved, d)
	}
	for n := 1; n <= 5; n++ {
		got, vi, err := db.Version(ctx, "news", n)
		if err != nil {
			t.Fatalf("Version(%d): %v", n, err)
		}
		want := saved[5-n]
		if !sameDoc(got, want) {
			t.Errorf("Version(%d) = %+v\nwant %+v", n, got, want)
		}
		if vi.Seq != uint64(6-n) || !vi.Timestamp.Equal(want.Timestamp) || vi.Items != 2 || vi.Title != want.Channel.Title {
			t.Errorf("Version(%d) info = %+v", n, vi)
		}
	}
	for _, n := range []int{0, -1, 6, 1 << 40} {
		if _, _, err := db.Version(ctx, "news", n); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("Version(%d) = %v, want ErrNotFound", n, err)
		}
	}
	if _, _, err := db.Version(ctx, "nope", 1); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("Version of unknown = %v", err)
	}

	pages := []struct {
		offset, limit int
		want          string
	}{
		{0, 2, "5,4"},
		{2, 2, "3,2"},
		{4, 10, "1"},
		{5, 1, ""},
		{9, 1, ""},
		{0, 0, "5,4,3,2,1"},
		{1, -1, "4,3,2,1"},
	}
	for _, p := range pages {
		vs, err := db.Versions(ctx, "news", p.offset, p.limit)
		if err != nil {
			t.Fatalf("Versions(%d,%d): %v", p.offset, p.limit, err)
		}
		if got := Seqs(vs); got != p.want {
			t.Errorf("Versions(%d,%d) = %s, want %s", p.offset, p.limit, got, p.want)
		}
	}
	if _, err := db.Versions(ctx, "news", -1, 1); !errors.Is(err, storage.ErrInvalid) {
		t.Errorf("negative offset: %v", err)
	}
	if _, err := db.Versions(ctx, "nope", 0, 1); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("Versions of unknown = %v", err)
	}
	if _, err := db.Items(ctx, "nope", storage.ItemQuery{}); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("Items of unknown = %v", err)
	}
}

func testResources(t *testing.T, open Opener) {
	db := open(t)
	ctx := context.Background()
	MustSave(t, db, Doc("zeta", 0, Item("a", "A")))
	MustSave(t, db, Doc("alpha", 1, Item("a", "A")))
	d := Doc("alpha", 5, Item("a", "A"), Item("b", "B"))
	d.Channel.Title, d.Channel.Description = "Latest title", "Latest description"
	MustSave(t, db, d)
	rs, err := db.Resources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 2 || rs[0].ID != "alpha" || rs[1].ID != "zeta" {
		t.Fatalf("Resources = %+v", rs)
	}
	a := rs[0]
	want := storage.ResourceInfo{
		ID: "alpha", URL: d.URL, Created: T0.Add(time.Minute), Updated: T0.Add(5 * time.Minute),
		Versions: 2, LatestSeq: 2, Title: "Latest title", Description: "Latest description", Hash: schema.ContentHash(d),
	}
	if !a.Created.Equal(want.Created) || !a.Updated.Equal(want.Updated) {
		t.Errorf("alpha created %v updated %v, want %v and %v", a.Created, a.Updated, want.Created, want.Updated)
	}
	a.Created, a.Updated = want.Created, want.Updated // compared above
	if a != want {
		t.Errorf("alpha = %+v\nwant %+v", a, want)
	}
	// Ids sort byte-wise: upper case before lower, ASCII before the rest.
	for _, id := range []string{"é", "B", "a b", "a\u00a0"} {
		MustSave(t, db, Doc(id, 0, Item("a", "A")))
		mustRegister(t, db, reg(id, "https://example.org/", T0))
	}
	mustRegister(t, db, reg("zeta", "https://example.org/", T0))
	rs, err = db.Resources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range rs {
		ids = append(ids, r.ID)
	}
	want2 := []string{"B", "a b", "alpha", "a\u00a0", "zeta", "é"}
	if !reflect.DeepEqual(ids, want2) {
		t.Errorf("Resources = %q, want %q", ids, want2)
	}
	regs, err := registrations(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	want2 = slices.DeleteFunc(want2, func(id string) bool { return id == "alpha" })
	if got := regIDs(regs); !reflect.DeepEqual(got, want2) {
		t.Errorf("Registrations = %q, want %q", got, want2)
	}
}

// TestItemAggregation follows items through edits, disappearance, return and reordering.
func testItemAggregation(t *testing.T, open Opener) {
	db := open(t)
	ctx := context.Background()
	rich := Item("a", "Alpha")
	rich.Extensions = schema.Extensions{
		{URI: schema.ContentNamespace, Prefix: "content", LocalName: "encoded", Value: "<p>Alpha <b>body</b></p>"},
		{URI: schema.DCNamespace, Prefix: "dc", LocalName: "date", Value: "2026-02-28T09:00:00Z"},
	}
	MustSave(t, db, Doc("news", 0, rich, Item("b", "Beta"), Item("c", "Gamma")))                   // seq 1
	MustSave(t, db, Doc("news", 10, Item("c", "Gamma"), Item("b", "Beta v2"), Item("d", "Delta"))) // seq 2: a gone, b edited, reordered
	MustSave(t, db, Doc("news", 20, Item("d", "Delta"), rich))                                     // seq 3: a back, b and c gone

	items, err := db.Items(ctx, "news", storage.ItemQuery{})
	if err != nil {
		t.Fatal(err)
	}
	// d first seen at +10; a, b, c at +0 in page order.
	if got := IDs(items); got != "d,a,b,c" {
		t.Fatalf("Items = %s, want d,a,b,c", got)
	}
	at := func(m int) time.Time { return T0.Add(time.Duration(m) * time.Minute) }
	want := []struct {
		title       string
		index       int
		first, last time.Time
		seq         uint64
	}{
		{"Delta", 1, at(10), at(20), 3},
		{"Alpha", 2, at(0), at(20), 3},
		{"Beta v2", 2, at(0), at(10), 2},
		{"Gamma", 1, at(0), at(10), 2},
	}
	for i, w := range want {
		g := items[i]
		if g.Title != w.title || g.Index != w.index || !g.FirstSeen.Equal(w.first) || !g.LastSeen.Equal(w.last) || g.Seq != w.seq {
			t.Errorf("item %s = {%q index %d first %v last %v seq %d}, want %+v", g.ID, g.Title, g.Index, g.FirstSeen, g.LastSeen, g.Seq, w)
		}
	}
	if enc, ok := items[1].Extensions.ContentEncoded(); !ok || enc != "<p>Alpha <b>body</b></p>" {
		t.Errorf("content:encoded = %q, %v", enc, ok)
	}
	if pub, ok := items[1].Extensions.Published(); !ok || !pub.Equal(time.Date(2026, 2, 28, 9, 0, 0, 0, time.UTC)) {
		t.Errorf("dc:date = %v, %v", pub, ok)
	}
	// Keyword queries see the latest content only.
	for _, tc := range []struct {
		title, want string
	}{{"beta v2", "b"}, {"beta", "b"}, {"alpha", "a"}, {"a", "d,a,b,c"}, {"v2", "b"}, {"zeta", ""}} {
		got, err := db.Items(ctx, "news", storage.ItemQuery{Terms: schema.Terms{schema.NewTerm(schema.And, schema.FieldTitle, tc.title)}})
		if err != nil || IDs(got) != tc.want {
			t.Errorf("Items(title=%q) = %s, %v; want %s", tc.title, IDs(got), err, tc.want)
		}
	}
	for _, tc := range []struct {
		max  int
		want string
	}{{1, "d"}, {2, "d,a"}, {4, "d,a,b,c"}, {9, "d,a,b,c"}} {
		got, err := db.Items(ctx, "news", storage.ItemQuery{Max: tc.max})
		if err != nil || IDs(got) != tc.want {
			t.Errorf("Items(Max=%d) = %s, %v; want %s", tc.max, IDs(got), err, tc.want)
		}
	}
	MustCheck(t, db)
}

// TestItemsTieBreak: items first seen at the same instant list later versions
// first, then page order; an out-of-order timestamp sorts by time.
func testItemsTieBreak(t *testing.T, open Opener) {
	db := open(t)
	MustSave(t, db, Doc("news", 5, Item("a", "A"), Item("b", "B")))
	MustSave(t, db, Doc("news", 5, Item("c", "C"), Item("a", "A"), Item("b", "B")))
	MustSave(t, db, Doc("news", 1, Item("old", "Old"), Item("c", "C"), Item("a", "A"), Item("b", "B")))
	items, err := db.Items(context.Background(), "news", storage.ItemQuery{})
	if err != nil || IDs(items) != "c,a,b,old" {
		t.Fatalf("Items = %s, %v; want c,a,b,old", IDs(items), err)
	}
}

func testItemsKeywords(t *testing.T, open Opener) {
	db := open(t)
	ctx := context.Background()
	items := []schema.Item{
		{ID: "1", Title: "Budget approved", Link: "https://example.org/budget", Description: "The council voted"},
		{ID: "2", Title: "Road works", Link: "https://example.org/roads", Description: "Budget overrun on roads"},
		{ID: "3", Title: "Concert tonight", Link: "https://example.org/music", Description: "Jazz in the park"},
		{ID: "4", Title: "STRASSE gesperrt", Link: "https://example.org/strasse", Description: "Umleitung"},
		{ID: "5", Title: "ΣΊΣΥΦΟΣ returns", Link: "https://example.org/greek", Description: "Mythology"},
		{ID: "6", Title: "Budget concert", Link: "https://example.org/fund", Description: "Jazz fundraiser"},
		{ID: "7", Title: "50% off_sale", Link: "https://example.org/a_b%41", Description: `C++ isn't a.b \ "q"`},
	}
	MustSave(t, db, Doc("news", 0, items...))
	T := schema.NewTerm
	tests := []struct {
		name  string
		terms schema.Terms
		want  string // ids, newest first = page order here
	}{
		{"one title term", schema.Terms{T(schema.And, schema.FieldTitle, "budget")}, "1,6"},
		{"case-insensitive", schema.Terms{T(schema.And, schema.FieldTitle, "BUDGET")}, "1,6"},
		{"description", schema.Terms{T(schema.And, schema.FieldDescription, "jazz")}, "3,6"},
		{"link", schema.Terms{T(schema.And, schema.FieldLink, "/roads")}, "2"},
		{"a and b", schema.Terms{T(schema.And, schema.FieldTitle, "budget"), T(schema.And, schema.FieldDescription, "jazz")}, "6"},
		{"a or b", schema.Terms{T(schema.And, schema.FieldTitle, "road"), T(schema.Or, schema.FieldTitle, "concert")}, "2,3,6"},
		// left to right: (budget-title or roads-link) and jazz-desc = only 6, not "budget or (roads and jazz)" = 1,6
		{"a or b and c", schema.Terms{T(schema.And, schema.FieldTitle, "budget"), T(schema.Or, schema.FieldLink, "roads"), T(schema.And, schema.FieldDescription, "jazz")}, "6"},
		// (jazz and concert) or road = 3,6 then or 2
		{"a and b or c", schema.Terms{T(schema.And, schema.FieldDescription, "jazz"), T(schema.And, schema.FieldTitle, "concert"), T(schema.Or, schema.FieldTitle, "road")}, "2,3,6"},
		{"no match", schema.Terms{T(schema.And, schema.FieldTitle, "nothing")}, ""},
		{"ß matches SS", schema.Terms{T(schema.And, schema.FieldTitle, "straße")}, "4"},
		{"ss matches SS", schema.Terms{T(schema.And, schema.FieldTitle, "strasse")}, "4"},
		{"σ matches Σ", schema.Terms{T(schema.And, schema.FieldTitle, "σίσυφοσ")}, "5"},
		{"final ς matches Σ", schema.Terms{T(schema.And, schema.FieldTitle, "σίσυφος")}, "5"},
		{"lower-case body", schema.Terms{T(schema.And, schema.FieldDescription, "MYTHOLOGY")}, "5"},
		// Punctuation is literal (no LIKE wildcards, no regexp, no quoting).
		{"percent", schema.Terms{T(schema.And, schema.FieldTitle, "50%")}, "7"},
		{"lone percent", schema.Terms{T(schema.And, schema.FieldTitle, "%")}, "7"},
		{"underscore", schema.Terms{T(schema.And, schema.FieldLink, "a_b")}, "7"},
		{"escaped byte stays text", schema.Terms{T(schema.And, schema.FieldLink, "%41")}, "7"},
		{"plus and apostrophe", schema.Terms{T(schema.And, schema.FieldDescription, "c++ isn't")}, "7"},
		{"dot", schema.Terms{T(schema.And, schema.FieldDescription, "a.b")}, "7"},
		{"backslash and quote", schema.Terms{T(schema.And, schema.FieldDescription, `\ "q"`)}, "7"},
		// A term that ends inside a UTF-8 sequence matches the bytes it has.
		{"split UTF-8 sequence", schema.Terms{T(schema.And, schema.FieldTitle, "\xcf")}, "5"},
		{"NUL", schema.Terms{T(schema.And, schema.FieldTitle, "a\x00")}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := db.Items(ctx, "news", storage.ItemQuery{Terms: tt.terms})
			if err != nil {
				t.Fatal(err)
			}
			if IDs(got) != tt.want {
				t.Errorf("Items = %q, want %q", IDs(got), tt.want)
			}
			// Oracle: the unfolded matcher over the same items.
			var oracle []string
			for _, x := range items {
				if tt.terms.Match(x.Title, x.Link, x.Description) {
					oracle = append(oracle, x.ID)
				}
			}
			if IDs(got) != strings.Join(oracle, ",") {
				t.Errorf("Items = %q, Terms.Match says %q", IDs(got), strings.Join(oracle, ","))
			}
		})
	}
	for _, tc := range []struct {
		name  string
		terms schema.Terms
		want  string
	}{
		{"Max=1", schema.Terms{T(schema.And, schema.FieldTitle, "budget")}, "1"},
		// The newest items do not match: the limit counts matches only.
		{"Max=1, the newest not matching", schema.Terms{T(schema.And, schema.FieldDescription, "jazz")}, "3"},
		{"Max=1, a term text cannot hold, the newest not matching", schema.Terms{T(schema.And, schema.FieldTitle, "\xcf")}, "5"},
		{"Max=1, a term text cannot hold", schema.Terms{T(schema.And, schema.FieldTitle, "\xcf"), T(schema.Or, schema.FieldTitle, "budget")}, "1"},
	} {
		got, err := db.Items(ctx, "news", storage.ItemQuery{Max: 1, Terms: tc.terms})
		if err != nil || IDs(got) != tc.want {
			t.Errorf("%s: Items = %s, %v; want %s", tc.name, IDs(got), err, tc.want)
		}
	}
}

// TestItemsKeywordsRandom compares keyword queries with Terms.Match over the
// same items, for random items and random left-to-right term chains.
func testItemsKeywordsRandom(t *testing.T, open Opener) {
	db := open(t)
	ctx := context.Background()
	vocab := []string{"Budget", "budget", "STRASSE", "straße", "ΣΊΣΥΦΟΣ", "σίσυφος", "jazz", "Jazz park", "road", "roads", "a", "ß", "Ǆ", "k", "K"}
	rng := rand.New(rand.NewPCG(1, 2))
	text := func(n int) string {
		var parts []string
		for range n {
			parts = append(parts, vocab[rng.IntN(len(vocab))])
		}
		return strings.Join(parts, " ")
	}
	var all []schema.Item // newest first
	for v := range 8 {
		var items []schema.Item
		for i := range 12 {
			items = append(items, schema.Item{
				ID: fmt.Sprintf("%d-%d", v, i), Title: text(1 + rng.IntN(3)),
				Link: "https://example.org/" + strings.ReplaceAll(text(1), " ", "-"), Description: text(rng.IntN(6)),
			})
		}
		MustSave(t, db, Doc("r", v, items...))
		all = append(items, all...)
	}
	fields := []schema.Field{schema.FieldTitle, schema.FieldLink, schema.FieldDescription}
	for range 300 {
		var terms schema.Terms
		for range 1 + rng.IntN(3) {
			op := schema.And
			if rng.IntN(2) == 0 {
				op = schema.Or
			}
			v := vocab[rng.IntN(len(vocab))]
			if rng.IntN(3) == 0 && len(v) > 2 {
				v = v[1:3] // a fragment (may split a UTF-8 sequence: then nothing matches)
			}
			terms = append(terms, schema.NewTerm(op, fields[rng.IntN(3)], v))
		}
		var want []string
		for _, x := range all {
			if terms.Match(x.Title, x.Link, x.Description) {
				want = append(want, x.ID)
			}
		}
		got, err := db.Items(ctx, "r", storage.ItemQuery{Terms: terms})
		if err != nil {
			t.Fatal(err)
		}
		if IDs(got) != strings.Join(want, ",") {
			t.Fatalf("terms %+v: Items = %s, Terms.Match = %s", terms, IDs(got), strings.Join(want, ","))
		}
	}
}

// sameDoc compares documents, their timestamps by instant (a driver may
// return another time.Location).
func sameDoc(a, b *schema.Document) bool {
	if a == nil || b == nil {
		return a == b
	}
	if !a.Timestamp.Equal(b.Timestamp) {
		return false
	}
	x, y := *a, *b
	x.Timestamp, y.Timestamp = time.Time{}, time.Time{}
	return reflect.DeepEqual(&x, &y)
}
