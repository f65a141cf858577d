package suggest_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dynamo-rss/dynamo/extractor"
	"github.com/dynamo-rss/dynamo/schema"
	"github.com/dynamo-rss/dynamo/suggest"
)

// TestSuggestGolden: on every golden page, the best suggestion yields the
// items of the hand-written select block (same titles and links, in order).
func TestSuggestGolden(t *testing.T) {
	for _, c := range selectCases(t) {
		t.Run(c.name, func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join(selectDir, c.name+".xml"))
			if err != nil {
				t.Fatal(err)
			}
			wdoc, err := schema.Unmarshal(want)
			if err != nil {
				t.Fatal(err)
			}
			sugs, err := suggest.Page(c.page, c.opts)
			if err != nil {
				t.Fatal(err)
			}
			if len(sugs.Proposals) == 0 || sugs.Proposals[0].Select == nil {
				t.Fatalf("no select proposal: %+v", sugs)
			}
			for _, p := range sugs.Proposals {
				t.Logf("%.2f %d %+v (%s)", p.Score, p.Count, p.Select, p.Reason)
			}
			sel, err := extractor.CompileSelectors(*sugs.Proposals[0].Select)
			if err != nil {
				t.Fatalf("the suggestion does not compile: %v", err)
			}
			res, err := sel.Extract(bytes.NewReader(c.page), c.opts)
			if err != nil {
				t.Fatalf("the suggestion does not extract: %v", err)
			}
			if got, want := itemSummary(res.Document), itemSummary(wdoc); got != want {
				t.Fatalf("the suggestion yields\n%s\nwant\n%s", got, want)
			}
			if err := res.Document.Validate(); err != nil {
				t.Fatalf("the suggestion's document: %v", err)
			}
		})
	}
}

func itemSummary(d *schema.Document) string {
	var b strings.Builder
	for _, it := range d.Items {
		fmt.Fprintf(&b, "%s | %s\n", it.Title, it.Link)
	}
	return b.String()
}
