package poller

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/dynamo-rss/dynamo/schema"
	"github.com/dynamo-rss/dynamo/storage"
)

// readFailingStore is a memStore whose reads of stored versions and whose
// prunes fail (or, healthy, find no version and prune nothing).
type readFailingStore struct {
	*memStore
	fail bool
}

func (s *readFailingStore) Version(context.Context, string, int) (*schema.Document, storage.VersionInfo, error) {
	if s.fail {
		return nil, storage.VersionInfo{}, errors.New("read error on the versions' disk")
	}
	return nil, storage.VersionInfo{}, storage.ErrNotFound
}

func (s *readFailingStore) Prune(ctx context.Context, id string, r storage.Retention, now time.Time) (int, error) {
	if s.fail {
		return 0, errors.New("prune interrupted")
	}
	return s.memStore.Prune(ctx, id, r, now)
}

// TestStoreFailuresLogged: a version stored whose pruning fails, and
// relative dates that cannot be compared with the stored version, are each
// told to the operator once, with the resource and the error; the poll
// still stores its version. A healthy store logs neither.
func TestStoreFailuresLogged(t *testing.T) {
	for _, fail := range []bool{true, false} {
		t.Run(fmt.Sprint("fail=", fail), func(t *testing.T) {
			o := newOrigin(t)
			o.set(`<html><head><title>News</title></head><body><ul><li><a href="/a">a</a> <span class="when">2 hours ago</span></li></ul></body></html>`)
			var logs bytes.Buffer
			clk := newFakeClock(t0)
			cfg := testConfig(t, baseYAML(fmt.Sprintf("resources:\n  - {id: news, url: %q, retention: {max_versions: 2}, "+
				"select: {item: \"li\", title: \"a\", link: \"a @href\", date: \"span.when\"}}\n", o.url("/news.html"))))
			store := &readFailingStore{memStore: newMemStore(), fail: fail}
			e := newTestEngineOpts(t, cfg, store, Options{Clock: clk, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			if st := pollAtNext(t, e, clk, "news"); st.LastOutcome != OutcomeChanged {
				t.Fatalf("outcome %q (%s), want the version stored", st.LastOutcome, st.LastError)
			}
			for _, msg := range []string{`msg="prune failed" resource=news error="prune interrupted"`, `msg="relative dates read again" resource=news error="read the latest version for its dates: read error on the versions' disk"`} {
				n := strings.Count(logs.String(), msg)
				if fail && n != 1 || !fail && n != 0 {
					t.Errorf("%q logged %d times, want %d; logs:\n%s", msg, n, map[bool]int{true: 1}[fail], logs.String())
				}
			}
			if !fail && strings.Contains(logs.String(), "level=WARN") {
				t.Errorf("warnings from a healthy store:\n%s", logs.String())
			}
		})
	}
}
