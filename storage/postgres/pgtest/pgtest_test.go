package pgtest_test

import (
	"context"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/dynamo-rss/dynamo/storage/postgres/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// Each test gets its own empty database on the binary's server.
func TestDSNGivesAFreshDatabase(t *testing.T) {
	ctx := context.Background()
	var names [2]string
	for i := range names {
		t.Run("db", func(t *testing.T) {
			conn, err := pgx.Connect(ctx, pgtest.DSN(t))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(ctx)
			if err := conn.QueryRow(ctx, "select current_database()").Scan(&names[i]); err != nil {
				t.Fatal(err)
			}
			var n int
			if err := conn.QueryRow(ctx, "select count(*) from pg_tables where schemaname = 'public'").Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n != 0 {
				t.Fatalf("%d tables in a fresh database", n)
			}
			if _, err := conn.Exec(ctx, "create table t (x int)"); err != nil {
				t.Fatal(err)
			}
		})
	}
	if names[0] == names[1] || names[0] == "" {
		t.Fatalf("databases %q and %q: want two distinct ones", names[0], names[1])
	}
}
