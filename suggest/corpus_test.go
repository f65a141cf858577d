package suggest_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dynamo-rss/dynamo/extractor"
	"github.com/dynamo-rss/dynamo/suggest"
)

// corpusFolders are the folders of the corpus, each with the fewest pages
// whose first proposal must be right and the fewest where some proposal
// must be: the figures reached (BENCHMARKS.md), so that a change that
// loses a page fails.
var corpusFolders = []struct {
	name     string
	top, any int
}{
	{"suggest", 25, 26},
	{"select-real", 12, 12},
	{"select-real2", 16, 16},
}

// corpusDir holds the recorded pages: suggest/NAME.html, whose
// expectations are testdata/corpus/NAME.expect.json, and
// select-real/ and select-real2/, each page's NAME.html beside its
// NAME.expect.json. The pages come from other projects' test fixtures
// (testdata/corpus/README.md) and are kept outside the repository, two
// levels above this package; DYNAMO_SUGGEST_CORPUS names another place.
func corpusDir() string {
	if d := os.Getenv("DYNAMO_SUGGEST_CORPUS"); d != "" {
		return d
	}
	return filepath.Join("..", "..", "shared", "corpus")
}

// corpusPage is a page with the list a person wants of it.
type corpusPage struct {
	name, html  string
	url, ctype  string
	titles      []string
	heldOut     bool
	expectation string
}

// expectation is a hand-written expectation: testdata/corpus's (titles)
// or the corpus folders' (items, and titles of every item when there are
// more than 20).
type expectation struct {
	URL         string   `json:"url"`
	ContentType string   `json:"content_type"`
	Titles      []string `json:"titles"`
	Items       []struct {
		Title string `json:"title"`
	} `json:"items"`
}

// corpusPages lists a folder's pages with their expectations.
func corpusPages(t *testing.T, dir, folder string, heldOut []string) []corpusPage {
	t.Helper()
	glob := filepath.Join(dir, folder, "*.expect.json")
	if folder == "suggest" {
		glob = filepath.Join("testdata", "corpus", "*.expect.json")
	}
	expects, err := filepath.Glob(glob)
	if err != nil || len(expects) == 0 {
		t.Fatalf("no expectations at %s: %v", glob, err)
	}
	var out []corpusPage
	for _, e := range expects {
		name := strings.TrimSuffix(filepath.Base(e), ".expect.json")
		data, err := os.ReadFile(e)
		if err != nil {
			t.Fatal(err)
		}
		var x expectation
		if err := json.Unmarshal(data, &x); err != nil {
			t.Fatalf("%s: %v", e, err)
		}
		titles := x.Titles
		if titles == nil {
			for _, it := range x.Items {
				titles = append(titles, it.Title)
			}
		}
		out = append(out, corpusPage{name: name, html: filepath.Join(dir, folder, name+".html"), url: x.URL, ctype: x.ContentType,
			titles: titles, heldOut: folder == "select-real2" && slices.Contains(heldOut, name), expectation: e})
	}
	return out
}

// heldOutPages are the pages of testdata/holdout.txt.
func heldOutPages(t *testing.T) []string {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "holdout.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestSuggestCorpus measures suggest on real list pages recorded by other
// projects, folder by folder: a proposal is right when the titles its
// block yields (extracted as the poller would) have recall and precision
// of at least 0.8 against the expected ones. It reports how many pages
// get a right first proposal (top-1) and a right proposal among all
// (any), and the held-out pages of select-real2 apart; every proposal's
// count must be the items its block yields.
func TestSuggestCorpus(t *testing.T) {
	dir := corpusDir()
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("the recorded pages are not here (%v): set DYNAMO_SUGGEST_CORPUS to their folder", err)
	}
	heldOut := heldOutPages(t)
	var slowest time.Duration
	slowName := ""
	for _, folder := range corpusFolders {
		if _, err := os.Stat(filepath.Join(dir, folder.name)); err != nil {
			t.Logf("%s: not here, skipped", folder.name)
			continue
		}
		pages := corpusPages(t, dir, folder.name, heldOut)
		top, any, ran, hoTop, hoAny, hoRan := 0, 0, 0, 0, 0, 0
		t.Run(folder.name, func(t *testing.T) {
			for _, c := range pages {
				t.Run(c.name, func(t *testing.T) {
					page, err := os.ReadFile(c.html)
					if err != nil {
						t.Fatalf("the page of %s: %v", c.expectation, err)
					}
					opts := extractor.Options{URL: c.url, ContentType: c.ctype, Timestamp: goldenTime}
					start := time.Now()
					sugs, err := suggest.Page(page, opts)
					if d := time.Since(start); d > slowest {
						slowest, slowName = d, folder.name+"/"+c.name
					}
					if err != nil {
						t.Fatal(err)
					}
					ran++
					if c.heldOut {
						hoRan++
					}
					first := -1
					for i, p := range sugs.Proposals {
						got := corpusTitles(t, page, opts, p)
						recall, precision := titleMatch(c.titles, got)
						if recall >= 0.8 && precision >= 0.8 && first < 0 {
							first = i
						}
						if i == 0 {
							t.Logf("%s first: %s %+v: %d items, recall %.2f, precision %.2f (%s)", c.name, p.Kind, p.Select, len(got), recall, precision, p.Reason)
						}
					}
					switch {
					case len(sugs.Proposals) == 0:
						t.Logf("%s: WRONG: no proposal", c.name)
					case first == 0:
						t.Logf("%s: right", c.name)
					case first > 0:
						t.Logf("%s: WRONG first; proposal %d is right", c.name, first+1)
					default:
						t.Logf("%s: WRONG: no proposal is right", c.name)
					}
					if first == 0 {
						top++
						if c.heldOut {
							hoTop++
						}
					}
					if first >= 0 {
						any++
						if c.heldOut {
							hoAny++
						}
					}
				})
			}
		})
		if ran < len(pages) {
			continue // a -run filter chose some pages only
		}
		t.Logf("%s: top-1 %d of %d pages, any %d", folder.name, top, len(pages), any)
		if hoRan > 0 {
			t.Logf("%s: held out: top-1 %d of %d pages, any %d", folder.name, hoTop, hoRan, hoAny)
		}
		if top < folder.top || any < folder.any {
			t.Errorf("%s: the first proposal is right on %d of %d pages (want %d), some proposal on %d (want %d)",
				folder.name, top, len(pages), folder.top, any, folder.any)
		}
	}
	t.Logf("slowest page: %s, %v", slowName, slowest)
}

// corpusTitles extracts the page with the proposal's block (none: its
// annotations) and returns the items' titles; the proposal's count must
// be their number, and its items the first of them.
func corpusTitles(t *testing.T, page []byte, opts extractor.Options, p suggest.Proposal) []string {
	t.Helper()
	if p.Select != nil {
		sel, err := extractor.CompileSelectors(*p.Select)
		if err != nil {
			t.Fatalf("the proposal does not compile: %v", err)
		}
		opts.Select = sel
	}
	res, err := extractor.Extract(bytes.NewReader(page), opts)
	if err != nil {
		t.Fatalf("the proposal does not extract: %v", err)
	}
	var got []string
	for i, it := range res.Document.Items {
		got = append(got, it.Title)
		if i < len(p.Items) && (p.Items[i].Title != it.Title || p.Items[i].Link != it.Link) {
			t.Errorf("proposal item %d is %q %s, its block yields %q %s", i, p.Items[i].Title, p.Items[i].Link, it.Title, it.Link)
		}
	}
	if p.Count != len(got) {
		t.Errorf("the proposal says %d items, its block yields %d", p.Count, len(got))
	}
	return got
}

// titleMatch is the recall and precision of got against want, titles
// compared with white space collapsed and case folded.
func titleMatch(want, got []string) (recall, precision float64) {
	norm := func(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }
	w := map[string]bool{}
	for _, s := range want {
		w[norm(s)] = true
	}
	g := map[string]bool{}
	for _, s := range got {
		g[norm(s)] = true
	}
	hit := 0
	for s := range w {
		if g[s] {
			hit++
		}
	}
	if len(w) > 0 {
		recall = float64(hit) / float64(len(w))
	}
	if len(g) > 0 {
		precision = float64(hit) / float64(len(g))
	}
	return recall, precision
}
