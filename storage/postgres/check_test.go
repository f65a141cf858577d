package postgres_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/dynamo-rss/dynamo/storage"
	"github.com/dynamo-rss/dynamo/storage/postgres/pgtest"
)

// TestCheckFindsInconsistencies damages a consistent store one way at a
// time with plain SQL (as a bad restore or a hand edit would) and expects
// Check to name each damage, wrapping storage.ErrInconsistent, and to pass
// again once it is undone.
func TestCheckFindsInconsistencies(t *testing.T) {
	dsn := pgtest.DSN(t)
	s := openAt(t, dsn, "node")
	mustSave(t, s, doc("r", 1, it("x", "one"), it("y", "two")))
	mustSave(t, s, doc("r", 2, it("x", "one"), it("z", "three")))
	mustCheck(t, s)

	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close(ctx) }()
	for _, tc := range []struct {
		damage, undo, want string
	}{
		{`update dynamo_resources set versions = versions + 1 where id = 'r'`, `update dynamo_resources set versions = versions - 1 where id = 'r'`,
			`resource "r": 3 versions do not match seq range 1..2`},
		{`update dynamo_items set last_seq = 1 where resource_id = 'r' and item_id = 'x'`, `update dynamo_items set last_seq = 2 where resource_id = 'r' and item_id = 'x'`,
			`resource "r": item "x": last seen in 1`},
		{`update dynamo_items set title_f = 'nothing' where resource_id = 'r' and item_id = 'x'`, ``,
			`resource "r": item "x": folded fields do not match its content`},
	} {
		if _, err := conn.Exec(ctx, tc.damage); err != nil {
			t.Fatalf("%s: %v", tc.damage, err)
		}
		err := s.Check(ctx)
		if !errors.Is(err, storage.ErrInconsistent) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("after %q: Check = %v, want ErrInconsistent naming %q", tc.damage, err, tc.want)
		}
		if tc.undo == "" {
			break
		}
		if _, err := conn.Exec(ctx, tc.undo); err != nil {
			t.Fatalf("%s: %v", tc.undo, err)
		}
		if err := s.Check(ctx); err != nil {
			t.Errorf("after undoing %q: %v", tc.damage, err)
		}
	}
}
