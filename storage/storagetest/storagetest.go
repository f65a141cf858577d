package storagetest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dynamo-rss/dynamo/schema"
	"github.com/dynamo-rss/dynamo/storage"
)

// Opener returns a new, empty store for one test. It fails t itself when the
// store cannot be opened, and closes the store in a t.Cleanup; the suite may
// close it first (Close must then return the same result again).
type Opener func(t *testing.T) storage.Store

// Run runs the contract suite against the driver open returns, one subtest
// per behaviour. Call it from the driver's own tests:
//
//	func TestContract(t *testing.T) { storagetest.Run(t, openTestStore) }
func Run(t *testing.T, open Opener) {
	tests := []struct {
		name string
		fn   func(*testing.T, Opener)
	}{
		{"SaveDedup", testSaveDedup},
		{"SaveRejectsBadInput", testSaveRejectsBadInput},
		{"ReadsRejectBadInput", testReadsRejectBadInput},
		{"SeqNeverReused", testSeqNeverReused},
		{"ConcurrentSaves", testConcurrentSaves},
		{"TimesExact", testTimesExact},
		{"TimeRange", testTimeRange},
		{"ItemIDLimit", testItemIDLimit},
		{"ResourceIDBounds", testResourceIDBounds},
		{"PollState", testPollState},
		{"CanceledContext", testCanceledContext},
		{"ResourceInfoFresh", testResourceInfoFresh},
		{"VersionsAndBounds", testVersionsAndBounds},
		{"Resources", testResources},
		{"ItemAggregation", testItemAggregation},
		{"ItemsTieBreak", testItemsTieBreak},
		{"ItemsKeywords", testItemsKeywords},
		{"ItemsKeywordsRandom", testItemsKeywordsRandom},
		{"Prune", testPrune},
		{"PruneErrors", testPruneErrors},
		{"PruneAgeBoundary", testPruneAgeBoundary},
		{"PruneKeepsLatest", testPruneKeepsLatest},
		{"PruneMany", testPruneMany},
		{"CheckHealthy", testCheckHealthy},
		{"Registry", testRegistry},
		{"RegistryErrors", testRegistryErrors},
		{"ConcurrentRegister", testConcurrentRegister},
		{"RegistryRevisions", testRegistryRevisions},
		{"RegistrySnapshots", testRegistrySnapshots},
		{"Tombstone", testTombstone},
		{"ReRegister", testReRegister},
		{"UnregisterRacesSaves", testUnregisterRacesSaves},
		{"Records", testRecords},
		{"RecordsConcurrent", testRecordsConcurrent},
		{"RecordKeys", testRecordKeys},
		{"Sessions", testSessions},
		{"SessionsConcurrent", testSessionsConcurrent},
		{"Close", testClose},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.fn(t, open) })
	}
}

// T0 is the base of the suite's timestamps.
var T0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// Item makes an item whose fields derive from id and title.
func Item(id, title string) schema.Item {
	return schema.Item{ID: id, Title: title, Link: "https://example.org/a/" + id, Description: "about " + title}
}

// Doc makes a valid document of resource id at T0+minutes with the items, indexed in order.
func Doc(id string, minutes int, items ...schema.Item) *schema.Document {
	d := &schema.Document{
		URL:       "https://example.org/" + id + ".html",
		RSSID:     id,
		Timestamp: T0.Add(time.Duration(minutes) * time.Minute),
		Channel:   schema.Channel{Title: "Channel " + id, Link: "https://example.org/", Description: "News of " + id},
	}
	for i, x := range items {
		x.Index = i + 1
		d.Items = append(d.Items, x)
	}
	return d
}

// MustSave saves d and fails t on an error.
func MustSave(t testing.TB, db storage.Store, d *schema.Document) storage.SaveResult {
	t.Helper()
	res, err := db.Save(context.Background(), d)
	if err != nil {
		t.Fatalf("Save(%s @%v): %v", d.RSSID, d.Timestamp, err)
	}
	return res
}

// MustCheck fails t when db.Check reports anything.
func MustCheck(t testing.TB, db storage.Store) {
	t.Helper()
	if err := db.Check(context.Background()); err != nil {
		t.Fatalf("Check: %v", err)
	}
}

// IDs joins the items' ids with commas.
func IDs(items []storage.Item) string {
	s := make([]string, len(items))
	for i, x := range items {
		s[i] = x.ID
	}
	return strings.Join(s, ",")
}

// Seqs joins the versions' seqs with commas.
func Seqs(vs []storage.VersionInfo) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = fmt.Sprint(v.Seq)
	}
	return strings.Join(s, ",")
}

// titleTerm is the keyword query "title contains s".
func titleTerm(s string) schema.Terms {
	return schema.Terms{schema.NewTerm(schema.And, schema.FieldTitle, s)}
}
