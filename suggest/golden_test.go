package suggest_test

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dynamo-rss/dynamo/extractor"
	"github.com/dynamo-rss/dynamo/suggest"
)

// suggestGoldenDir holds what Page says of each page below, whole: every
// proposal, its select block, reason, score, count and first items.
const suggestGoldenDir = "testdata/golden"

// TestSuggestWhole: what Page proposes for the pattern pages, the
// project's own recorded select pages, its annotated pages, its schema.org
// pages and the synthetic pages of testdata/pages (real shapes:
// a table with a date column, a definition list, <relative-time>, a blog
// beside a sidebar, an aggregator, cards wrapped in links, two competing
// lists; and pages at the heuristics' thresholds) is what the golden files
// say, proposal by proposal, scores included (to six significant digits). The other suggest tests
// check the first proposal's items; this one also sees a change of rank,
// score or reason among the alternatives, which a person choosing between
// them reads. A deliberate change of the heuristics is reviewed by running
// go test ./suggest -run TestSuggestWhole -update and reading the diff.
func TestSuggestWhole(t *testing.T) {
	type page struct {
		name string
		opts extractor.Options
		body []byte
	}
	var pages []page
	for _, p := range suggestPatterns() {
		pages = append(pages, page{"pattern-" + p.name, extractor.Options{URL: "https://town.example/list/", Timestamp: goldenTime}, []byte(p.page)})
	}
	for _, c := range selectCases(t) {
		pages = append(pages, page{"select-" + c.name, c.opts, c.page})
	}
	for _, dir := range []struct{ prefix, glob string }{
		{"annotated-", filepath.Join(goldenDir, "*.html")},
		{"schemaorg-", filepath.Join("..", "extractor", "testdata", "schemaorg", "*.html")},
		{"synthetic-", filepath.Join("testdata", "pages", "*.html")},
	} {
		files, err := filepath.Glob(dir.glob)
		if err != nil || len(files) == 0 {
			t.Fatalf("no pages at %s: %v", dir.glob, err)
		}
		for _, f := range files {
			body, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			opts := extractor.Options{URL: "https://site.example/list/", Timestamp: goldenTime}
			pages = append(pages, page{dir.prefix + strings.TrimSuffix(filepath.Base(f), ".html"), opts, body})
		}
	}
	if *update {
		if err := os.MkdirAll(suggestGoldenDir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range pages {
		t.Run(p.name, func(t *testing.T) {
			sugs, err := suggest.Page(p.body, p.opts)
			if err != nil {
				t.Fatal(err)
			}
			for i := range sugs.Proposals {
				sugs.Proposals[i].Score = sixDigits(sugs.Proposals[i].Score)
			}
			got, err := json.MarshalIndent(sugs, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			compareGolden(t, filepath.Join(suggestGoldenDir, p.name+".json"), append(got, '\n'))
		})
	}
}

// sixDigits rounds x to six significant digits: the scores are sums and
// products of floats, which another platform's fused multiply-adds may
// change in their last bits.
func sixDigits(x float64) float64 {
	if x == 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	v, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'g', 6, 64), 64)
	return v
}
