package postgres_test

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/dynamo-rss/dynamo/storage/postgres"
)

// TestResourcesAfterAFailedList: a listing that fails (here its context
// ended) caches nothing: the next one lists what is stored.
func TestResourcesAfterAFailedList(t *testing.T) {
	s := openTest(t)
	mustSave(t, s, doc("r", 0, it("a", "A")))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Resources(ctx); err == nil {
		t.Fatal("Resources with an ended context: no error")
	}
	for range 2 { // the second from the cache
		rs, err := s.Resources(context.Background())
		if err != nil || len(rs) != 1 || rs[0].ID != "r" {
			t.Fatalf("Resources after a failed listing: %+v, %v; want r", rs, err)
		}
	}
}

// TestDefaultNodeID: a node is named by its host and process.
func TestDefaultNodeID(t *testing.T) {
	host, err := os.Hostname()
	if err != nil {
		t.Skipf("no hostname here: %v", err)
	}
	if got, want := postgres.DefaultNodeID(), host+":"+strconv.Itoa(os.Getpid()); got != want || strings.Contains(got, "unknown") && host != "unknown" {
		t.Errorf("DefaultNodeID() = %q, want %q", got, want)
	}
}
