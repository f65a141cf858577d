package suggest_test

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dynamo-rss/dynamo/extractor"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// goldenDir holds the project's annotated golden pages.
const goldenDir = "../testdata/extractor"

// selectDir holds the golden pages nobody annotated: NAME.html, its select
// block NAME.select.yaml and the document it yields NAME.xml;
// NAME.content-type, when present, is the HTTP Content-Type the page is
// served with.
const selectDir = "../testdata/select"

// goldenTime is the retrieval time of every page.
var goldenTime = time.Date(2026, 11, 21, 10, 35, 0, 0, time.UTC)

type selectCase struct {
	name string
	page []byte
	opts extractor.Options
}

// selectCases are the select golden pages, with the options extractor's
// tests extract them with.
func selectCases(t testing.TB) []selectCase {
	t.Helper()
	pages, err := filepath.Glob(filepath.Join(selectDir, "*.html"))
	if err != nil || len(pages) == 0 {
		t.Fatalf("no golden pages in %s: %v", selectDir, err)
	}
	var out []selectCase
	for _, p := range pages {
		name := strings.TrimSuffix(filepath.Base(p), ".html")
		page, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		opts := extractor.Options{URL: "https://example.org/" + name + "/", RSSID: name, Timestamp: goldenTime}
		if ct, err := os.ReadFile(filepath.Join(selectDir, name+".content-type")); err == nil {
			opts.ContentType = strings.TrimSpace(string(ct))
		}
		out = append(out, selectCase{name, page, opts})
	}
	return out
}

// compareGolden compares got with a golden file. With -update it
// rewrites the file.
func compareGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		t.Fatalf("%s is missing: run go test -run %s -update", path, t.Name())
	}
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs:\n got %s\nwant %s", path, got, want)
	}
}
