package poller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/dynamo-rss/dynamo/config"
	"github.com/dynamo-rss/dynamo/schema"
	"github.com/dynamo-rss/dynamo/storage"
)

// Version makes memStore a versionReader, as every storage.Store is.
func (m *memStore) Version(_ context.Context, id string, n int) (*schema.Document, storage.VersionInfo, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	vs := m.versions[id]
	if n < 1 || n > len(vs) {
		return nil, storage.VersionInfo{}, storage.ErrNotFound
	}
	return vs[len(vs)-n], storage.VersionInfo{}, nil
}

// articleOrigin serves /list.html (items linking to /a/<name>, set by
// setList) and an article page with nav, sidebar and footer at each /a/…
// (a 500 for /a/broken), counting each path's requests.
type articleOrigin struct {
	srv  *httptest.Server
	mu   sync.Mutex
	list []string
	hits map[string]int
}

func newArticleOrigin(t *testing.T) *articleOrigin {
	t.Helper()
	o := &articleOrigin{hits: map[string]int{}}
	o.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o.mu.Lock()
		o.hits[r.URL.Path]++
		list := append([]string(nil), o.list...)
		o.mu.Unlock()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		switch name, isArticle := strings.CutPrefix(r.URL.Path, "/a/"); {
		case r.URL.Path == "/list.html":
			etag := fmt.Sprintf("%q", strings.Join(list, ","))
			w.Header().Set("ETag", etag)
			if r.Header.Get("If-None-Match") == etag {
				o.mu.Lock()
				o.hits["304"]++
				o.mu.Unlock()
				w.WriteHeader(http.StatusNotModified)
				return
			}
			var b strings.Builder
			b.WriteString("<html><head><title>Teasers</title></head><body>")
			for _, s := range list {
				fmt.Fprintf(&b, `<div class="teaser"><h3><a href="/a/%s">Story %s</a></h3><p>Teaser of %s.</p></div>`, s, s, s)
			}
			fmt.Fprint(w, b.String()+"</body></html>")
		case isArticle && name == "broken":
			http.Error(w, "down", http.StatusInternalServerError)
		case isArticle:
			fmt.Fprintf(w, `<html><head><title>Story %[1]s</title></head><body>
<nav><a href="/">NAVBAR home</a> <a href="/x">NAVBAR sport</a> <a href="/y">NAVBAR weather</a></nav>
<aside><h3>SIDEBAR most read</h3><ul><li><a href="/1">SIDEBAR one</a></li><li><a href="/2">SIDEBAR two</a></li></ul></aside>
<article><h1>Story %[1]s</h1>
<p>The full text of story %[1]s begins here, with enough words in its first paragraph for readability to take it for the article's main text rather than for boilerplate around it.</p>
<p>A second paragraph of story %[1]s goes on with more of the article, the kind of detail a teaser leaves out, and a few more sentences so that the text is long enough.</p>
<p>And a third paragraph closes story %[1]s, with the last of its details, thanks to the people who helped, and a line on what happens next week in town.</p>
</article>
<footer>FOOTER all rights reserved · <a href="/privacy">FOOTER privacy</a></footer></body></html>`, name)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(o.srv.Close)
	return o
}

func (o *articleOrigin) setList(names ...string) {
	o.mu.Lock()
	o.list = names
	o.mu.Unlock()
}

// teasersConfig is a configuration with one resource, "teasers": o's list
// page read by selectors, content: full, two articles a poll.
func (o *articleOrigin) teasersConfig(t *testing.T) *config.Config {
	t.Helper()
	return testConfig(t, baseYAML(fmt.Sprintf(`  full_per_poll: 2
resources:
  - {id: teasers, url: %q, content: full, select: {item: "div.teaser", title: "h3", link: "h3 a @href", description: "p"}}
`, o.srv.URL+"/list.html")))
}

func (o *articleOrigin) hitsOf(path string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.hits[path]
}

// TestContentFull: each new item's article is fetched once, across polls
// and a restart, at most full_per_poll a poll (the rest at the next polls
// that store a version); the article, without its page's boilerplate, is
// the item's content:encoded; a failing article leaves its summary and the
// poll succeeds.
func TestContentFull(t *testing.T) {
	o := newArticleOrigin(t)
	clk := newFakeClock(t0)
	ms := newMemStore()
	cfg := o.teasersConfig(t)
	e := newTestEngine(t, cfg, ms, clk)
	latest := func() *schema.Document {
		ms.mu.Lock()
		defer ms.mu.Unlock()
		vs := ms.versions["teasers"]
		return vs[len(vs)-1]
	}
	type itemWant struct {
		mark    string // "": none
		article bool   // content:encoded is the article
	}
	check := func(step string, want map[string]itemWant) {
		t.Helper()
		doc := latest()
		for _, it := range doc.Items {
			name := strings.TrimPrefix(it.Title, "Story ")
			w, ok := want[name]
			if !ok {
				continue
			}
			mark, _ := it.Extensions.ArticleMark()
			content, _ := it.Extensions.ContentEncoded()
			isArticle := strings.Contains(content, "full text of story "+name)
			if mark != w.mark || isArticle != w.article {
				t.Errorf("%s: item %s: mark %q, article %v; want %q, %v (content %q)", step, name, mark, isArticle, w.mark, w.article, content)
			}
			if isArticle {
				for _, junk := range []string{"NAVBAR", "SIDEBAR", "FOOTER"} {
					if strings.Contains(content, junk) {
						t.Errorf("%s: item %s's article keeps %s: %s", step, name, junk, content)
					}
				}
			}
			if !strings.Contains(it.Description, "Teaser of "+name) {
				t.Errorf("%s: item %s lost its summary: %q", step, name, it.Description)
			}
		}
	}
	poll := func(step string, e *Engine) {
		t.Helper()
		st, err := e.PollNow(t.Context(), "teasers")
		if err != nil {
			t.Fatal(err)
		}
		if st.LastOutcome != OutcomeChanged {
			t.Fatalf("%s: %s (%s), want changed", step, st.LastOutcome, st.LastError)
		}
	}
	full, failed, none := itemWant{schema.ArticleFull, true}, itemWant{schema.ArticleFailed, false}, itemWant{}

	o.setList("c", "b", "a")
	poll("first poll", e)
	check("first poll", map[string]itemWant{"c": full, "b": full, "a": none}) // full_per_poll: 2

	o.setList("d", "c", "b", "a")
	poll("second poll", e)
	check("second poll", map[string]itemWant{"d": full, "c": full, "b": full, "a": full})

	// A restart: what items had is read from the stored version.
	e2 := newTestEngine(t, cfg, ms, clk)
	o.setList("broken", "e", "d", "c", "b", "a")
	poll("after a restart", e2)
	check("after a restart", map[string]itemWant{"broken": failed, "e": full, "d": full, "a": full})

	o.setList("f", "broken", "e", "d", "c", "b", "a")
	poll("last poll", e2)
	check("last poll", map[string]itemWant{"f": full, "broken": failed})

	for _, name := range []string{"a", "b", "c", "d", "e", "f", "broken"} {
		if n := o.hitsOf("/a/" + name); n != 1 {
			t.Errorf("/a/%s fetched %d times, want once", name, n)
		}
	}
}

// TestContentFullLeftoversAtNextPoll: the items over full_per_poll get
// their articles at the next polls although the page has not changed (its
// validators are set aside meanwhile, and the articles make a new
// version); once none is left, the page is asked for conditionally again
// and an unchanged page stores nothing.
func TestContentFullLeftoversAtNextPoll(t *testing.T) {
	// Two articles a poll: five items take three polls, the last with one
	// left; six take three too, the last with exactly two left (nothing is
	// left over after it). Then the page is asked for conditionally.
	for _, list := range [][]string{{"e", "d", "c", "b", "a"}, {"f", "e", "d", "c", "b", "a"}} {
		o := newArticleOrigin(t)
		clk := newFakeClock(t0)
		ms := newMemStore()
		cfg := o.teasersConfig(t)
		e := newTestEngine(t, cfg, ms, clk)
		marked := func() int {
			ms.mu.Lock()
			defer ms.mu.Unlock()
			vs := ms.versions["teasers"]
			n := 0
			for _, it := range vs[len(vs)-1].Items {
				if _, ok := it.Extensions.ArticleMark(); ok {
					n++
				}
			}
			return n
		}
		o.setList(list...)
		n := len(list)
		for i, want := range []struct {
			outcome string
			marked  int
		}{{OutcomeChanged, 2}, {OutcomeChanged, 4}, {OutcomeChanged, n}, {OutcomeNotModified, n}} {
			st, err := e.PollNow(t.Context(), "teasers")
			if err != nil {
				t.Fatal(err)
			}
			if st.LastOutcome != want.outcome || marked() != want.marked {
				t.Fatalf("%d items, poll %d: %s (%s), %d items with their article; want %s, %d", n, i+1, st.LastOutcome, st.LastError, marked(), want.outcome, want.marked)
			}
		}
		if n := o.hitsOf("304"); n != 1 {
			t.Errorf("%d conditional answers, want 1 (the last poll's)", n)
		}
		for _, name := range list {
			if n := o.hitsOf("/a/" + name); n != 1 {
				t.Errorf("/a/%s fetched %d times, want once", name, n)
			}
		}
	}
}

// TestSameHostHeaders checks which article requests carry the page's
// headers: those on the page's own host and scheme (the host in any case),
// not another host, port or scheme, and none when the page has none.
func TestSameHostHeaders(t *testing.T) {
	h := map[string]string{"Cookie": "consent=1"}
	entry := &config.ResourceEntry{URL: "https://news.example/list", Headers: h}
	for _, c := range []struct {
		entry *config.ResourceEntry
		link  string
		want  bool
	}{
		{entry, "https://news.example/a/1", true},
		{entry, "https://NEWS.example/a/1", true},
		{entry, "http://news.example/a/1", false},
		{entry, "https://news.example:8443/a/1", false},
		{entry, "https://other.example/a/1", false},
		{entry, "https://news.example/%zz", false},
		{&config.ResourceEntry{URL: "https://news.example/list"}, "https://news.example/a/1", false},
		{nil, "https://news.example/a/1", false},
	} {
		got := sameHostHeaders(c.entry, c.link)
		if (got != nil) != c.want || (got != nil && got["Cookie"] != "consent=1") {
			t.Errorf("%s: headers %v, want them: %v", c.link, got, c.want)
		}
	}
}

// TestContentFullAfterRestart: after a restart the engine does not know
// whether the stored version still waits for articles, so its first poll
// reads the page whole; finding none waiting, it asks conditionally again
// from the next poll on.
func TestContentFullAfterRestart(t *testing.T) {
	o := newArticleOrigin(t)
	clk := newFakeClock(t0)
	ms := newMemStore()
	cfg := o.teasersConfig(t)
	o.setList("b", "a")
	e := newTestEngine(t, cfg, ms, clk)
	for i, want := range []string{OutcomeChanged, OutcomeNotModified} {
		if st, err := e.PollNow(t.Context(), "teasers"); err != nil || st.LastOutcome != want {
			t.Fatalf("poll %d: %s (%v), want %s", i+1, st.LastOutcome, err, want)
		}
	}
	_ = e.Close()
	e2 := newTestEngine(t, cfg, ms, clk)
	for i, want := range []string{OutcomeUnchanged, OutcomeNotModified, OutcomeNotModified} {
		if st, err := e2.PollNow(t.Context(), "teasers"); err != nil || st.LastOutcome != want {
			t.Fatalf("after the restart, poll %d: %s (%v), want %s", i+1, st.LastOutcome, err, want)
		}
	}
	for _, name := range []string{"a", "b"} {
		if n := o.hitsOf("/a/" + name); n != 1 {
			t.Errorf("/a/%s fetched %d times, want once", name, n)
		}
	}
}

// TestMarkArticle: marking an item's article replaces its content:encoded
// and its earlier mark, and keeps every other extension, another
// namespace's "encoded" included; without an article's HTML, the item's
// own content:encoded stays.
func TestMarkArticle(t *testing.T) {
	other := schema.Extension{URI: "http://example.org/ns", Prefix: "ex", LocalName: "encoded", Value: "theirs"}
	creator := schema.Extension{URI: "http://purl.org/dc/elements/1.1/", Prefix: "dc", LocalName: "creator", Value: "Ann"}
	encoded := schema.Extension{URI: schema.ContentNamespace, Prefix: "content", LocalName: "encoded", Value: "<p>old</p>"}
	oldMark := schema.Extension{URI: schema.ArticleNamespace, Prefix: "dynamo", LocalName: "article", Value: "error"}
	describe := func(ext schema.Extensions) string {
		var parts []string
		for _, x := range ext {
			parts = append(parts, x.Prefix+":"+x.LocalName+"="+x.Value)
		}
		return strings.Join(parts, " ")
	}
	for _, tc := range []struct {
		name, html string
		want       string
	}{
		{"with the article", "<p>new</p>", "ex:encoded=theirs dc:creator=Ann content:encoded=<p>new</p> dynamo:article=full"},
		{"without it", "", "ex:encoded=theirs content:encoded=<p>old</p> dc:creator=Ann dynamo:article=full"},
	} {
		it := schema.Item{Extensions: schema.Extensions{other, encoded, creator, oldMark}}
		markArticle(&it, "full", tc.html)
		if got := describe(it.Extensions); got != tc.want {
			t.Errorf("%s: %s\nwant %s", tc.name, got, tc.want)
		}
	}
}

// TestNewestPublished: the newest publication date of a page is the latest
// of its channel's and its items', whatever order the items come in and
// whichever of them have no date.
func TestNewestPublished(t *testing.T) {
	date := func(s string) schema.Extensions {
		return schema.Extensions{{URI: "http://purl.org/dc/elements/1.1/", Prefix: "dc", LocalName: "date", Value: s}}
	}
	doc := &schema.Document{
		Channel: schema.Channel{Extensions: date("2026-11-20T08:00:00Z")},
		Items: []schema.Item{
			{ID: "a", Extensions: date("2026-11-21T08:00:00Z")},
			{ID: "b", Extensions: date("2026-11-23T08:00:00Z")},
			{ID: "c"}, // no date
			{ID: "d", Extensions: date("2026-11-22T08:00:00Z")},
		},
	}
	want := time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)
	if got := newestPublished(doc, schema.DateRules{}); !got.Equal(want) {
		t.Errorf("newestPublished = %v, want %v", got, want)
	}
	doc.Items = doc.Items[2:3]
	if got := newestPublished(doc, schema.DateRules{}); !got.Equal(time.Date(2026, 11, 20, 8, 0, 0, 0, time.UTC)) {
		t.Errorf("newestPublished with one undated item = %v, want the channel's date", got)
	}
}

// fakeArticles answers article fetches from a map (a link it lacks fails)
// and records the links asked for.
type fakeArticles struct {
	pages map[string]string
	asked []string
}

func (f *fakeArticles) Article(_ context.Context, link string, _ map[string]string) (string, error) {
	f.asked = append(f.asked, link)
	if html, ok := f.pages[link]; ok {
		return html, nil
	}
	return "", errors.New("no such article")
}

// The article step alone: marked items carry their articles over, the
// others are fetched up to the bound per poll, a failure marks its item,
// and without the stored version nothing is fetched.
func TestArticlesFill(t *testing.T) {
	ctx := t.Context()
	fetched, failed := prometheus.NewCounter(prometheus.CounterOpts{Name: "fetched"}), prometheus.NewCounter(prometheus.CounterOpts{Name: "failed"})
	f := &fakeArticles{pages: map[string]string{"https://a.example/1": "<p>one</p>", "https://a.example/3": "<p>three</p>"}}
	a := newArticles(f, slog.New(slog.DiscardHandler), fetched, failed)
	prev := &schema.Document{Items: []schema.Item{{ID: "0", Link: "https://a.example/0"}}}
	markArticle(&prev.Items[0], schema.ArticleFull, "<p>zero</p>")
	doc := func() *schema.Document {
		d := &schema.Document{}
		for _, id := range []string{"0", "1", "2", "3", "4"} {
			d.Items = append(d.Items, schema.Item{ID: id, Link: "https://a.example/" + id})
		}
		d.Items = append(d.Items, schema.Item{ID: "no link"})
		return d
	}
	newest := func() (*schema.Document, error) { return prev, nil }

	d := doc()
	if left := a.fill(ctx, "r", d, 3, newest, nil); !left {
		t.Error("four articles to fetch, three a poll: none left")
	}
	if want := []string{"https://a.example/1", "https://a.example/2", "https://a.example/3"}; !slices.Equal(f.asked, want) {
		t.Errorf("fetched %v, want %v", f.asked, want)
	}
	marks := make([]string, 0, len(d.Items))
	for _, it := range d.Items {
		m, _ := it.Extensions.ArticleMark()
		marks = append(marks, m)
	}
	if want := []string{"full", "full", "failed", "full", "", ""}; !slices.Equal(marks, want) {
		t.Errorf("marks %q, want %q", marks, want)
	}
	if html, _ := d.Items[0].Extensions.ContentEncoded(); html != "<p>zero</p>" {
		t.Errorf("carried article %q", html)
	}
	if got, _ := d.Items[1].Extensions.ContentEncoded(); got != "<p>one</p>" {
		t.Errorf("fetched article %q", got)
	}
	if testutil.ToFloat64(fetched) != 2 || testutil.ToFloat64(failed) != 1 {
		t.Errorf("counted %v fetched, %v failed; want 2, 1", testutil.ToFloat64(fetched), testutil.ToFloat64(failed))
	}

	f.asked = nil
	if left := a.fill(ctx, "r", doc(), 3, func() (*schema.Document, error) { return nil, errNoVersions }, nil); left || f.asked != nil {
		t.Errorf("a store without versions: left %v, fetched %v; want nothing", left, f.asked)
	}
	if left := a.fill(ctx, "r", doc(), 3, func() (*schema.Document, error) { return nil, errors.New("read failed") }, nil); !left || f.asked != nil {
		t.Errorf("the stored version unreadable: left %v, fetched %v; want everything left", left, f.asked)
	}
}
