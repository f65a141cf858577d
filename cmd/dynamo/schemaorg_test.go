package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dynamo-rss/dynamo/schema"
)

// TestExtractSchemaOrg: an unannotated page that publishes its items as
// JSON-LD becomes a document with extract --select {from: schema.org},
// as the poller would extract it.
func TestExtractSchemaOrg(t *testing.T) {
	block := filepath.Join(t.TempDir(), "schema.yaml")
	if err := os.WriteFile(block, []byte("select:\n  from: schema.org\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	page := filepath.Join("..", "..", "extractor", "testdata", "schemaorg", "itemlist-jsonld.html")
	stdout, stderr, code := runExtractCmd(t, "", "extract", "--select", block, "--url", "https://library.example/events/", page)
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	doc, err := schema.Unmarshal([]byte(stdout))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, it := range doc.Items {
		got = append(got, it.Title+" "+it.Link)
	}
	want := `Reading club: "The Sea" https://library.example/events/reading-club|Repair café https://library.example/events/repair-cafe|Film night https://library.example/events/film-night`
	if strings.Join(got, "|") != want {
		t.Fatalf("items %q, want %q", strings.Join(got, "|"), want)
	}
	// An unknown source is a configuration error naming the field.
	if err := os.WriteFile(block, []byte("select:\n  from: rdfa\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code = runExtractCmd(t, "", "extract", "--select", block, page)
	if code != 2 || !strings.Contains(stderr, "select.from") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
}
