package suggest_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dynamo-rss/dynamo/extractor"
	"github.com/dynamo-rss/dynamo/suggest"
)

// suggestCorpusMin is how many pages of the corpus must get a right first
// proposal (title recall and precision both at least 0.8): the figure
// reached, recorded in BENCHMARKS.md, so that a change that loses a page
// fails.
const suggestCorpusMin = 25

// suggestCorpusDir holds the recorded pages, NAME.html, whose
// expectations are testdata/corpus/NAME.expect.json. The pages come from
// other projects' test fixtures (testdata/corpus/README.md) and are kept
// outside the repository; DYNAMO_SUGGEST_CORPUS names another place.
func suggestCorpusDir() string {
	if d := os.Getenv("DYNAMO_SUGGEST_CORPUS"); d != "" {
		return d
	}
	return filepath.Join("..", "..", "shared", "corpus", "suggest")
}

// suggestExpectation is a page's hand-written expectation.
type suggestExpectation struct {
	URL         string   `json:"url"`
	ContentType string   `json:"content_type"`
	Kind        string   `json:"kind"`
	Titles      []string `json:"titles"`
	Links       []string `json:"links"`
}

// TestSuggestCorpus measures suggest's first proposal on real list pages
// recorded by other projects: right when the titles it yields have recall
// and precision of at least 0.8 against the expected ones.
func TestSuggestCorpus(t *testing.T) {
	expects, err := filepath.Glob(filepath.Join("testdata", "corpus", "*.expect.json"))
	if err != nil || len(expects) == 0 {
		t.Fatalf("no expectations in testdata/corpus: %v", err)
	}
	dir := suggestCorpusDir()
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("the recorded pages are not here (%v): set DYNAMO_SUGGEST_CORPUS to their folder", err)
	}
	right := 0
	for _, e := range expects {
		name := strings.TrimSuffix(filepath.Base(e), ".expect.json")
		t.Run(name, func(t *testing.T) {
			var want suggestExpectation
			data, err := os.ReadFile(e)
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(data, &want); err != nil {
				t.Fatalf("%s: %v", e, err)
			}
			page, err := os.ReadFile(filepath.Join(dir, name+".html"))
			if err != nil {
				t.Fatalf("the page of %s: %v", e, err)
			}
			opts := extractor.Options{URL: want.URL, ContentType: want.ContentType, Timestamp: goldenTime}
			sugs, err := suggest.Page(page, opts)
			if err != nil {
				t.Fatal(err)
			}
			if len(sugs.Proposals) == 0 {
				t.Logf("WRONG: no proposal")
				return
			}
			p := sugs.Proposals[0]
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
			for _, it := range res.Document.Items {
				got = append(got, it.Title)
			}
			recall, precision := titleMatch(want.Titles, got)
			verdict := "WRONG"
			if recall >= 0.8 && precision >= 0.8 {
				verdict = "right"
				right++
			}
			t.Logf("%s: %s %+v: %d items, recall %.2f, precision %.2f (%s)", verdict, p.Kind, p.Select, len(got), recall, precision, p.Reason)
		})
	}
	t.Logf("top-1: %d of %d pages", right, len(expects))
	if right < suggestCorpusMin {
		t.Fatalf("the first proposal is right on %d of %d pages, fewer than %d", right, len(expects), suggestCorpusMin)
	}
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
