package badger_test

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/dynamo-rss/dynamo/storage"
)

// TestResourceInfoFresh: Resource (served from a cache) reflects every save
// and prune at once, also while readers keep filling the cache concurrently.
func TestResourceInfoFresh(t *testing.T) {
	db, _ := openTest(t)
	ctx := context.Background()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				_, _ = db.Resource(ctx, "news") // ErrNotFound before the first save: fine
			}
		}()
	}
	for i := 1; i <= 40; i++ {
		res := mustSave(t, db, doc("news", i, it("a"+strconv.Itoa(i), "Title "+strconv.Itoa(i))))
		info, err := db.Resource(ctx, "news")
		if err != nil {
			t.Fatalf("Resource after save %d: %v", i, err)
		}
		if info.LatestSeq != res.Seq || info.Versions != res.Versions {
			t.Fatalf("after save %d: Resource = seq %d versions %d, want seq %d versions %d", i, info.LatestSeq, info.Versions, res.Seq, res.Versions)
		}
	}
	if _, err := db.Prune(ctx, "news", storage.Retention{MaxVersions: 5}, time.Now()); err != nil {
		t.Fatalf("Prune: %v", err)
	}
	close(stop)
	wg.Wait()
	info, err := db.Resource(ctx, "news")
	if err != nil {
		t.Fatal(err)
	}
	if info.Versions != 5 || info.LatestSeq != 40 {
		t.Errorf("after prune: versions %d seq %d, want 5 and 40", info.Versions, info.LatestSeq)
	}
}
