package badger_test

import (
	"bytes"
	"cmp"
	"compress/flate"
	"context"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"

	"github.com/dynamo-rss/dynamo/schema"
	"github.com/dynamo-rss/dynamo/storage"
	"github.com/dynamo-rss/dynamo/storage/badger"
)

// Benchmarks of the targets (figures in BENCHMARKS.md, "## Storage").
// The full sizes take minutes, so they run only with DYNAMO_BENCH_FULL=1:
//
//	DYNAMO_BENCH_FULL=1 go test -run '^$' -bench 'Query' -benchtime 200x -timeout 60m ./storage
//	DYNAMO_BENCH_FULL=1 go test -run '^$' -bench 'Ingest/^sync$' -benchtime 1x -timeout 90m ./storage
//	DYNAMO_BENCH_FULL=1 DYNAMO_BENCH_VERSIONS=200 go test -run '^$' -bench 'Ingest/^nosync$' -benchtime 1x ./storage
//
// DYNAMO_BENCH_VERSIONS overrides the versions per resource of the ingest.
// Without DYNAMO_BENCH_FULL the same code runs on small sizes (a smoke test
// of the benchmarks). cpu-µs metrics are the process's CPU time per
// operation: on a shared machine they, unlike wall-clock rates, do not
// depend on the neighbours.

func fullSize() bool { return os.Getenv("DYNAMO_BENCH_FULL") == "1" }

var words = strings.Fields(`council budget road works concert jazz park school library election
	mayor river bridge festival market station museum theatre football hospital weather storm
	garden tram bicycle harbour airport cinema bakery university science history music art
	winter summer spring autumn morning evening village city county region national report`)

// feed simulates one resource: a page listing the 20 newest items, where each
// new version brings a few new items and now and then edits one.
type feed struct {
	id    string
	rng   *rand.Rand
	next  int           // next item number
	items []schema.Item // newest first
	ts    time.Time
}

func newFeed(id string, seed uint64, perPage int) *feed {
	f := &feed{id: id, rng: rand.New(rand.NewPCG(seed, 7)), ts: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	for range perPage {
		f.items = append(f.items, f.newItem())
	}
	return f
}

func (f *feed) sentence(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(words[f.rng.IntN(len(words))])
	}
	return b.String()
}

func (f *feed) newItem() schema.Item {
	f.next++
	id := f.id + "-" + strconv.Itoa(f.next)
	desc := f.sentence(30)
	return schema.Item{
		ID:          id,
		Title:       strings.ToUpper(f.sentence(1)[:1]) + f.sentence(7),
		Link:        "https://news.example.org/" + f.id + "/articles/" + strconv.Itoa(f.next) + ".html",
		Description: desc,
		Extensions: schema.Extensions{
			{URI: schema.ContentNamespace, Prefix: "content", LocalName: "encoded", Value: "<p>" + desc + "</p><p>" + f.sentence(20) + "</p>"},
			{URI: schema.DCNamespace, Prefix: "dc", LocalName: "date", Value: f.ts.Format(time.RFC3339)},
		},
	}
}

// version advances the page: newItems new items on top (the oldest fall off),
// sometimes an edited description; it returns the document.
func (f *feed) version(newItems int) *schema.Document {
	f.ts = f.ts.Add(time.Duration(5+f.rng.IntN(60)) * time.Minute)
	n := len(f.items)
	fresh := make([]schema.Item, 0, n)
	for range newItems {
		fresh = append(fresh, f.newItem())
	}
	f.items = append(fresh, f.items[:n-newItems]...)
	if f.rng.IntN(10) == 0 {
		k := f.rng.IntN(n)
		f.items[k].Description += " (updated)"
	}
	d := &schema.Document{
		URL: "https://news.example.org/" + f.id + "/", RSSID: f.id, Timestamp: f.ts,
		Channel: schema.Channel{Title: "News of " + f.id, Link: "https://news.example.org/" + f.id + "/", Description: "Local news"},
		Items:   make([]schema.Item, n),
	}
	copy(d.Items, f.items)
	for i := range d.Items {
		d.Items[i].Index = i + 1
	}
	return d
}

// cpuTime is the CPU time (user+system) this process used so far. On a shared
// machine wall-clock rates depend on the neighbours; CPU per operation does not.
func cpuTime(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// diskUsage is what du reports for dir: allocated blocks, not apparent sizes
// (Badger's files are sparse while open), without the journal.
func diskUsage(tb testing.TB, dir string) int64 {
	var total int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && d.Name() == "journal" {
			return fs.SkipDir // two segments of a fixed size, reused: not per version
		}
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if st, ok := info.Sys().(*syscall.Stat_t); ok {
			total += st.Blocks * 512
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return total
}

// ingest saves versions of resources feeds from workers goroutines and returns the versions stored.
func ingest(tb testing.TB, db *badger.DB, resources, versions, workers, perPage, newPerVersion int) int {
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		changed int
		errs    = make(chan error, workers)
	)
	for w := range workers {
		wg.Go(func() {
			var feeds []*feed
			for r := w; r < resources; r += workers {
				feeds = append(feeds, newFeed(fmt.Sprintf("res%03d", r), uint64(r), perPage))
			}
			n := 0
			for range versions {
				for _, f := range feeds {
					res, err := db.Save(context.Background(), f.version(newPerVersion))
					if err != nil {
						errs <- err
						return
					}
					if res.Changed {
						n++
					}
				}
			}
			mu.Lock()
			changed += n
			mu.Unlock()
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		tb.Fatal(err)
	}
	return changed
}

// BenchmarkIngest: 100 resources × 2,000 versions × 20 items, 3 new items per
// version (full size), with synced writes (the default) and without.
func BenchmarkIngest(b *testing.B) {
	resources, versions := 10, 50
	if fullSize() {
		resources, versions = 100, 2000
	}
	if v, err := strconv.Atoi(os.Getenv("DYNAMO_BENCH_VERSIONS")); err == nil {
		versions = v // e.g. a shorter full-width run
	}
	perPage := 20
	if v, err := strconv.Atoi(os.Getenv("DYNAMO_BENCH_ITEMS")); err == nil && v > 0 {
		perPage = v // items per page: metadata over 2 KiB from about 35
	}
	for _, mode := range []struct {
		name   string
		noSync bool
	}{{"sync", false}, {"nosync", true}} {
		b.Run(mode.name, func(b *testing.B) {
			for b.Loop() {
				dir := b.TempDir()
				db, err := badger.Open(dir, badger.Options{NoSyncWrites: mode.noSync})
				if err != nil {
					b.Fatal(err)
				}
				start, cpu0 := time.Now(), cpuTime(b)
				n := ingest(b, db, resources, versions, ingestWorkers(), perPage, 3)
				elapsed, cpu := time.Since(start), cpuTime(b)-cpu0
				commits, saves := db.CommitStats()
				if err := db.Close(); err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(n)/elapsed.Seconds(), "versions/s")
				b.ReportMetric(float64(cpu.Microseconds())/float64(n), "cpu-µs/version")
				b.ReportMetric(float64(diskUsage(b, dir))/float64(n), "disk-B/version")
				b.ReportMetric(float64(n), "versions")
				b.ReportMetric(float64(saves)/float64(max(commits, 1)), "saves/commit")
			}
		})
	}
}

// naiveItems answers an items query the way a store without an index would:
// parse every stored version and aggregate items by id.
func naiveItems(tb testing.TB, db *badger.DB, id string, q storage.ItemQuery) []storage.Item {
	ctx := context.Background()
	info, err := db.Resource(ctx, id)
	if err != nil {
		tb.Fatal(err)
	}
	type agg struct {
		storage.Item
		pos int
	}
	byID := map[string]*agg{}
	for n := info.Versions; n >= 1; n-- { // oldest first
		d, vi, err := db.Version(ctx, id, n)
		if err != nil {
			tb.Fatal(err)
		}
		for i, x := range d.Items {
			a := byID[x.ID]
			if a == nil {
				a = &agg{Item: storage.Item{FirstSeen: d.Timestamp}, pos: i}
				byID[x.ID] = a
			}
			a.Item.Item, a.LastSeen, a.Seq = x, d.Timestamp, vi.Seq
		}
	}
	all := make([]*agg, 0, len(byID))
	for _, a := range byID {
		if q.Terms.Match(a.Title, a.Link, a.Description) {
			all = append(all, a)
		}
	}
	slices.SortFunc(all, func(x, y *agg) int {
		if c := y.FirstSeen.Compare(x.FirstSeen); c != 0 {
			return c
		}
		return cmp.Compare(x.pos, y.pos)
	})
	out := make([]storage.Item, 0, len(all))
	for _, a := range all {
		if q.Max > 0 && len(out) == q.Max {
			break
		}
		out = append(out, a.Item)
	}
	return out
}

func percentile(d []time.Duration, p float64) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

// BenchmarkQuery: Items(Max=20) and a keyword query on one resource whose
// history holds 100,000 distinct items (full size), beside the naive scan.
func BenchmarkQuery(b *testing.B) {
	versions, naiveRuns := 250, 3
	if fullSize() {
		versions = 5000 // × 20 new items = 100,000 distinct items
	}
	db, err := badger.Open(b.TempDir(), badger.Options{NoSyncWrites: true})
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		if err := db.Close(); err != nil {
			b.Error(err)
		}
	}()
	f := newFeed("big", 1, 20)
	for range versions {
		if _, err := db.Save(context.Background(), f.version(20)); err != nil {
			b.Fatal(err)
		}
	}
	queries := []struct {
		name string
		q    storage.ItemQuery
	}{
		{"max20", storage.ItemQuery{Max: 20}},
		// Two rare words, combined left to right: matches a few hundred of 100,000.
		{"keyword", storage.ItemQuery{Terms: schema.Terms{
			schema.NewTerm(schema.And, schema.FieldTitle, "harbour bakery"),
			schema.NewTerm(schema.Or, schema.FieldDescription, "tram bicycle harbour"),
			schema.NewTerm(schema.And, schema.FieldLink, "/articles/"),
		}}},
	}
	for _, qq := range queries {
		b.Run(qq.name, func(b *testing.B) {
			ctx := context.Background()
			var lat []time.Duration
			var got []storage.Item
			cpu0 := cpuTime(b)
			for b.Loop() {
				start := time.Now()
				got, err = db.Items(ctx, "big", qq.q)
				lat = append(lat, time.Since(start))
				if err != nil {
					b.Fatal(err)
				}
			}
			cpu := cpuTime(b) - cpu0
			var naive []time.Duration
			var want []storage.Item
			for range naiveRuns {
				start := time.Now()
				want = naiveItems(b, db, "big", qq.q)
				naive = append(naive, time.Since(start))
			}
			if len(got) != len(want) {
				b.Fatalf("index answered %d items, naive scan %d", len(got), len(want))
			}
			for i := range got {
				if got[i].ID != want[i].ID || got[i].Seq != want[i].Seq || got[i].Description != want[i].Description {
					b.Fatalf("item %d: index %s/%d, naive %s/%d", i, got[i].ID, got[i].Seq, want[i].ID, want[i].Seq)
				}
			}
			p50, p99, n50 := percentile(lat, 0.5), percentile(lat, 0.99), percentile(naive, 0.5)
			b.ReportMetric(float64(p50.Microseconds()), "p50-µs")
			b.ReportMetric(float64(p99.Microseconds()), "p99-µs")
			b.ReportMetric(float64(n50.Microseconds()), "naive-p50-µs")
			b.ReportMetric(float64(n50)/float64(p99), "naive/p99")
			b.ReportMetric(float64(len(got)), "items")
			b.ReportMetric(float64(cpu.Microseconds())/float64(len(lat)), "cpu-µs/query")
		})
	}
}

// BenchmarkCompression compares codecs on a realistic version document.
func BenchmarkCompression(b *testing.B) {
	d := newFeed("c", 3, 20).version(3)
	raw, err := schema.Marshal(d)
	if err != nil {
		b.Fatal(err)
	}
	zFast, _ := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest))
	zDef, _ := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault))
	codecs := []struct {
		name string
		fn   func() []byte
	}{
		{"none", func() []byte { return raw }},
		{"zstd-fastest", func() []byte { return zFast.EncodeAll(raw, nil) }},
		{"zstd-default", func() []byte { return zDef.EncodeAll(raw, nil) }},
		{"s2", func() []byte { return s2.Encode(nil, raw) }},
		{"flate-1", func() []byte {
			var buf bytes.Buffer
			w, _ := flate.NewWriter(&buf, flate.BestSpeed)
			_, _ = w.Write(raw) // bytes.Buffer does not fail
			_ = w.Close()
			return buf.Bytes()
		}},
	}
	for _, c := range codecs {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			var out []byte
			for b.Loop() {
				out = c.fn()
			}
			b.ReportMetric(float64(len(raw))/float64(len(out)), "ratio")
			b.ReportMetric(float64(len(out)), "B/doc")
		})
	}
}

// ingestWorkers is how many goroutines save concurrently (DYNAMO_BENCH_WORKERS, default 100: one per resource).
func ingestWorkers() int {
	if n, err := strconv.Atoi(os.Getenv("DYNAMO_BENCH_WORKERS")); err == nil && n > 0 {
		return n
	}
	return 100
}

// BenchmarkSavePollState: one poll-state write, as the poller does after every poll.
func BenchmarkSavePollState(b *testing.B) {
	db, err := badger.Open(b.TempDir(), badger.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		if err := db.Close(); err != nil {
			b.Error(err)
		}
	}()
	state := bytes.Repeat([]byte("x"), 300)
	ctx := context.Background()
	cpu0, n := cpuTime(b), 0
	for b.Loop() {
		if err := db.SavePollState(ctx, "res"+strconv.Itoa(n%100), state); err != nil {
			b.Fatal(err)
		}
		n++
	}
	b.ReportMetric(float64((cpuTime(b)-cpu0).Microseconds())/float64(n), "cpu-µs/op")
}
