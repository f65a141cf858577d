package storagetest

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"

	"github.com/dynamo-rss/dynamo/storage"
)

// testRecords: create, read, list by prefix, replace, delete, an error from
// the update function changes nothing, kinds are separate, bad kinds refused.
func testRecords(t *testing.T, open Opener) {
	s := open(t)
	ctx := context.Background()
	set := func(kind, key, v string) {
		t.Helper()
		if err := s.UpdateRecord(ctx, kind, key, func([]byte) ([]byte, error) { return []byte(v), nil }); err != nil {
			t.Fatalf("UpdateRecord %s/%s: %v", kind, key, err)
		}
	}
	if _, err := s.Record(ctx, "websub", "a"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("Record of nothing: %v, want ErrNotFound", err)
	}
	set("websub", "news\x1fhttps://t/1\x1fhttps://cb/1", "one")
	set("websub", "news\x1fhttps://t/1\x1fhttps://cb/2", "two")
	set("websub", "newsroom\x1fhttps://t/2\x1fhttps://cb/1", "three")
	set("other", "news\x1fx", "elsewhere")
	if v, err := s.Record(ctx, "websub", "news\x1fhttps://t/1\x1fhttps://cb/2"); err != nil || string(v) != "two" {
		t.Fatalf("Record = %q, %v", v, err)
	}
	list := func(prefix string) []string {
		t.Helper()
		rs, err := s.Records(ctx, "websub", prefix)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range rs {
			out = append(out, string(r.Value))
		}
		return out
	}
	if got := fmt.Sprint(list("news\x1f")); got != "[one two]" {
		t.Errorf("Records(news\\x1f) = %s, want [one two]", got)
	}
	if got := fmt.Sprint(list("")); got != "[one two three]" {
		t.Errorf("Records(all) = %s, want [one two three] in key order", got)
	}
	// Enough records that a store reusing its read buffers would show it:
	// each listed record keeps its own value.
	const many = 300
	bulkValue := func(i int) string { return fmt.Sprintf("value of record %04d, long enough to matter: %0*d", i, 40, i) }
	for i := range many {
		set("bulk", fmt.Sprintf("k%04d", i), bulkValue(i))
	}
	rs, err := s.Records(ctx, "bulk", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != many {
		t.Fatalf("Records(bulk) = %d records, want %d", len(rs), many)
	}
	for i, r := range rs {
		if want := bulkValue(i); r.Key != fmt.Sprintf("k%04d", i) || string(r.Value) != want {
			t.Fatalf("Records(bulk)[%d] = %s = %q, want k%04d = %q", i, r.Key, r.Value, i, want)
		}
	}
	// The update function sees the current value and may replace it.
	if err := s.UpdateRecord(ctx, "websub", "news\x1fhttps://t/1\x1fhttps://cb/1", func(cur []byte) ([]byte, error) {
		if string(cur) != "one" {
			t.Errorf("update saw %q, want one", cur)
		}
		return []byte("one+"), nil
	}); err != nil {
		t.Fatal(err)
	}
	// An error aborts: nothing changes.
	boom := errors.New("boom")
	if err := s.UpdateRecord(ctx, "websub", "news\x1fhttps://t/1\x1fhttps://cb/1", func([]byte) ([]byte, error) { return []byte("lost"), boom }); !errors.Is(err, boom) {
		t.Errorf("UpdateRecord with a failing fn: %v, want its error", err)
	}
	if err := s.UpdateRecord(ctx, "websub", "new-key", func([]byte) ([]byte, error) { return []byte("x"), boom }); !errors.Is(err, boom) {
		t.Errorf("UpdateRecord creating with a failing fn: %v", err)
	}
	if _, err := s.Record(ctx, "websub", "new-key"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("a failed creation left a record: %v", err)
	}
	// nil deletes.
	if err := s.UpdateRecord(ctx, "websub", "news\x1fhttps://t/1\x1fhttps://cb/2", func([]byte) ([]byte, error) { return nil, nil }); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(list("news\x1f")); got != "[one+]" {
		t.Errorf("after delete: %s", got)
	}
	if _, err := s.Records(ctx, "", ""); !errors.Is(err, storage.ErrInvalid) {
		t.Errorf("empty kind: %v, want ErrInvalid", err)
	}
}

// testRecordsConcurrent: concurrent read-modify-write updates of one record
// are not lost.
func testRecordsConcurrent(t *testing.T, open Opener) {
	s := open(t)
	ctx := context.Background()
	const n = 40
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			err := s.UpdateRecord(ctx, "counter", "c", func(cur []byte) ([]byte, error) {
				v, _ := strconv.Atoi(string(cur))
				return []byte(strconv.Itoa(v + 1)), nil
			})
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if v, err := s.Record(ctx, "counter", "c"); err != nil || string(v) != strconv.Itoa(n) {
		t.Errorf("after %d increments: %q, %v", n, v, err)
	}
}
