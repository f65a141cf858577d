package storagetest

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
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

// testRecordKeys: what names a record, the same for every driver: a kind and
// a key of valid UTF-8 without NUL, together at most
// storage.MaxRecordKeyLen bytes. UpdateRecord refuses others with
// ErrInvalid; Record says they name nothing (ErrNotFound, and ErrInvalid);
// a bad kind is ErrInvalid everywhere. A listing prefix is bytes: one that
// ends inside a UTF-8 sequence lists the keys it is a byte prefix of. An
// empty value is a record like any other.
func testRecordKeys(t *testing.T, open Opener) {
	s := open(t)
	ctx := context.Background()
	put := func(kind, key string, v []byte) error {
		return s.UpdateRecord(ctx, kind, key, func([]byte) ([]byte, error) { return v, nil })
	}
	long := strings.Repeat("k", storage.MaxRecordKeyLen-len("kind"))
	for _, key := range []string{"a\x00b", "a\xffb", long + "k"} {
		if err := put("kind", key, []byte("v")); !errors.Is(err, storage.ErrInvalid) {
			t.Errorf("UpdateRecord(key %.20q…) = %v, want ErrInvalid", key, err)
		}
		if _, err := s.Record(ctx, "kind", key); !errors.Is(err, storage.ErrNotFound) || !errors.Is(err, storage.ErrInvalid) {
			t.Errorf("Record(key %.20q…) = %v, want ErrNotFound and ErrInvalid", key, err)
		}
	}
	for _, kind := range []string{"", "k\x00", "k\xff"} {
		if err := put(kind, "key", []byte("v")); !errors.Is(err, storage.ErrInvalid) {
			t.Errorf("UpdateRecord(kind %q) = %v, want ErrInvalid", kind, err)
		}
		if _, err := s.Record(ctx, kind, "key"); !errors.Is(err, storage.ErrInvalid) {
			t.Errorf("Record(kind %q) = %v, want ErrInvalid", kind, err)
		}
		if _, err := s.Records(ctx, kind, ""); !errors.Is(err, storage.ErrInvalid) {
			t.Errorf("Records(kind %q) = %v, want ErrInvalid", kind, err)
		}
	}
	keys := []string{long, "é1", "éa", "ê", "\u00e9\u0301", "e"}
	for _, k := range keys {
		if err := put("kind", k, []byte(k[:1])); err != nil {
			t.Fatalf("UpdateRecord(%.20q): %v", k, err)
		}
	}
	if err := put("kind", "empty", []byte{}); err != nil {
		t.Fatal(err)
	}
	listed := func(prefix string) string {
		t.Helper()
		rs, err := s.Records(ctx, "kind", prefix)
		if err != nil {
			t.Fatalf("Records(%q): %v", prefix, err)
		}
		var out []string
		for _, r := range rs {
			if r.Value == nil {
				t.Errorf("Records(%q): %.20q has a nil value", prefix, r.Key)
			}
			out = append(out, fmt.Sprintf("%.3q", r.Key))
		}
		return strings.Join(out, ",")
	}
	for _, tc := range []struct{ prefix, want string }{
		{"", `"e","emp","kkk","é1","éa","é́","ê"`},
		{"\xc3", `"é1","éa","é́","ê"`}, // "é" and "ê" start with 0xc3
		{"\xc3\xa9", `"é1","éa","é́"`},
		{"\xff", ""},
		{"e\x00", ""},
	} {
		if got := listed(tc.prefix); got != tc.want {
			t.Errorf("Records(%q) = %s, want %s", tc.prefix, got, tc.want)
		}
	}
	if v, err := s.Record(ctx, "kind", "empty"); err != nil || v == nil || len(v) != 0 {
		t.Errorf("Record(empty) = %#v, %v; want an empty, non-nil value", v, err)
	}
	err := s.UpdateRecord(ctx, "kind", "empty", func(cur []byte) ([]byte, error) {
		if cur == nil {
			t.Error("UpdateRecord of an empty record: fn got nil (none), want an empty value")
		}
		return nil, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Record(ctx, "kind", "empty"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("Record after delete = %v, want ErrNotFound", err)
	}
}
