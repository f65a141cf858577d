package api

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dynamo-rss/dynamo/schema"
	"github.com/dynamo-rss/dynamo/storage"
	"github.com/dynamo-rss/dynamo/storage/badger"
)

// racingDB is a real Badger store that runs hook once, just before the first
// history read (Version, Versions or Items) after arm: a version stored
// between the catalog read that decides the ETag and the reads that build
// the feed.
type racingDB struct {
	*badger.DB
	mu   sync.Mutex
	hook func()
}

func (r *racingDB) arm(hook func()) { r.mu.Lock(); r.hook = hook; r.mu.Unlock() }

func (r *racingDB) fire() {
	r.mu.Lock()
	h := r.hook
	r.hook = nil
	r.mu.Unlock()
	if h != nil {
		h()
	}
}

func (r *racingDB) Version(ctx context.Context, id string, n int) (*schema.Document, storage.VersionInfo, error) {
	r.fire()
	return r.DB.Version(ctx, id, n)
}

func (r *racingDB) Versions(ctx context.Context, id string, offset, limit int) ([]storage.VersionInfo, error) {
	r.fire()
	return r.DB.Versions(ctx, id, offset, limit)
}

func (r *racingDB) Items(ctx context.Context, id string, q storage.ItemQuery) ([]storage.Item, error) {
	r.fire()
	return r.DB.Items(ctx, id, q)
}

// newsVersion is a new version of the fixture's "news", at fdT0+at, with
// one item of its own on top of the fixture's.
func newsVersion(t testing.TB, db *badger.DB, at time.Duration) {
	t.Helper()
	doc, _, err := db.Version(context.Background(), "news", 1)
	if err != nil {
		t.Fatalf("read news: %v", err)
	}
	doc.Timestamp = fdT0.Add(at)
	id := "n" + at.String()
	doc.Items = append([]schema.Item{fdItem(1, id, "New item "+id, "https://example.org/news/"+id, "Fresh.")}, doc.Items...)
	for i := range doc.Items {
		doc.Items[i].Index = i + 1
	}
	if _, err := db.Save(context.Background(), doc); err != nil {
		t.Fatalf("save news @%v: %v", at, err)
	}
}

// TestFeedETagMatchesBodyWhenAVersionArrives stores a version between the
// catalog read that decides a feed's ETag and the history reads that build
// it. The answer must be consistent: the ETag of the bytes it carries (the
// same tag and bytes as a quiet request), and a version's permalink must not
// answer 404 because the history moved under it.
func TestFeedETagMatchesBodyWhenAVersionArrives(t *testing.T) {
	for _, tc := range []struct{ target, accept string }{
		{"/resources/news", ""},
		{"/resources/news?index=1", ""},
		{"/resources/news?index=2", ""},
		{"/resources/news?max=2", ""},
		{"/resources/news?title=budget", ""},
		{"/resources/news/versions/2", ""},
		{"/resources/news?type=atom", ""},
		{"/resources/news", acceptFirefox}, // pages: the same ETag rules
		{"/resources/news?max=2", acceptFirefox},
		{"/resources/news/versions/2", acceptFirefox},
	} {
		target := tc.target
		for _, cache := range []int64{0, -1} {
			t.Run(target+" "+tc.accept, func(t *testing.T) {
				db := openFixtureDB(t)
				rdb := &racingDB{DB: db}
				s := newFDServer(t, rdb, func(o *Options) { o.CacheBytes = cache })
				rdb.arm(func() { newsVersion(t, db, 150*time.Minute) })
				var header []string
				if tc.accept != "" {
					header = []string{"Accept", tc.accept}
				}
				raced := fdDo(s, http.MethodGet, target, header...)
				quiet := fdDo(s, http.MethodGet, target, header...)
				if raced.Code != http.StatusOK || quiet.Code != http.StatusOK {
					t.Fatalf("GET %s = %d, then %d\n%s", target, raced.Code, quiet.Code, raced.Body)
				}
				re, qe := raced.Header().Get("ETag"), quiet.Header().Get("ETag")
				if re != qe || raced.Body.String() != quiet.Body.String() {
					t.Errorf("GET %s while a version was stored: ETag %s, quietly after: %s; same bytes: %v",
						target, re, qe, raced.Body.String() == quiet.Body.String())
				}
				lm := raced.Header().Get("Last-Modified")
				if want := fdT0.Add(150 * time.Minute).Format(http.TimeFormat); lm != want {
					t.Errorf("Last-Modified = %s, want %s (the version the body carries)", lm, want)
				}
			})
		}
	}
}

// TestFeedETagsUnderConcurrentSaves stores versions while readers poll
// several feeds, and browsers their pages: one ETag never names two bodies
// (the clock stands still, so a page's bytes do not move either), with the
// render cache and without, no request fails, and a request after the last
// save sees it.
func TestFeedETagsUnderConcurrentSaves(t *testing.T) {
	targets := []string{"/resources/news?index=2", "/resources/news/versions/3", "/resources/news", "/resources?type=json", "/resources/news?max=2 page", "/resources page"}
	for _, cache := range []int64{0, -1} {
		db := openFixtureDB(t)
		s := newFDServer(t, db, func(o *Options) { o.CacheBytes = cache })
		const saves = 30
		var (
			mu     sync.Mutex
			bodies = map[string]string{} // target + ETag -> body
			wg     sync.WaitGroup
			done   = make(chan struct{})
			served = make(chan int) // a reader's number, once per answered request
		)
		const readers = 3
		for r := range readers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; ; i++ {
					select {
					case <-done:
						return
					default:
					}
					target := targets[(i+r)%len(targets)]
					var header []string
					if path, ok := strings.CutSuffix(target, " page"); ok {
						header = []string{"Accept", acceptFirefox, "Accept-Encoding", "gzip"}
						target = path
					}
					rec := fdDo(s, http.MethodGet, target, header...)
					key := target + " " + rec.Header().Get("ETag")
					mu.Lock()
					prev, seen := bodies[key]
					switch {
					case rec.Code == http.StatusServiceUnavailable:
						// Every attempt raced a save: allowed, never a wrong
						// ETag. Badger's catalog (its info cache) may answer
						// the previous info until the save returns, while the
						// history reads already see the new version.
					case rec.Code != http.StatusOK:
						t.Errorf("GET %s = %d\n%s", target, rec.Code, rec.Body)
					case seen && prev != rec.Body.String():
						t.Errorf("GET %s: ETag %s names two different bodies", target, rec.Header().Get("ETag"))
					default:
						bodies[key] = rec.Body.String()
					}
					mu.Unlock()
					select {
					case served <- r:
					case <-done:
						return
					}
				}
			}()
		}
		for i := range saves {
			newsVersion(t, db, 150*time.Minute+time.Duration(i)*time.Minute)
			// Like polls, not a burst: every reader finishes a request
			// before the next save, so a request races one save at most.
			for seen := map[int]bool{}; len(seen) < readers; {
				seen[<-served] = true
			}
		}
		close(done)
		wg.Wait()
		rec := fdDo(s, http.MethodGet, "/resources/news")
		if lm, want := rec.Header().Get("Last-Modified"), fdT0.Add(150*time.Minute+(saves-1)*time.Minute).Format(http.TimeFormat); lm != want {
			t.Errorf("cache %d: after the saves, Last-Modified = %s, want %s", cache, lm, want)
		}
	}
}

// TestFeedHistoryKeepsMoving: when a version arrives during every attempt,
// the answer is a 503 that says when to come back, never a body under
// another version's ETag.
func TestFeedHistoryKeepsMoving(t *testing.T) {
	db := openFixtureDB(t)
	rdb := &racingDB{DB: db}
	s := newFDServer(t, rdb, func(o *Options) { o.CacheBytes = -1 })
	var at time.Duration
	var again func()
	again = func() {
		at += time.Minute
		newsVersion(t, db, 150*time.Minute+at)
		rdb.arm(again) // the next attempt meets another version
	}
	rdb.arm(again)
	rec := fdDo(s, http.MethodGet, "/resources/news")
	rdb.arm(nil)
	if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") == "" || rec.Header().Get("ETag") != "" {
		t.Fatalf("GET while the history keeps moving = %d, Retry-After %q, ETag %q; want 503 with Retry-After, no ETag",
			rec.Code, rec.Header().Get("Retry-After"), rec.Header().Get("ETag"))
	}
	if rec := fdDo(s, http.MethodGet, "/resources/news"); rec.Code != http.StatusOK {
		t.Errorf("GET once quiet = %d", rec.Code)
	}
}
