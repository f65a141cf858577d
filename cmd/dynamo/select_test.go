package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const selectTestdata = "../../testdata/select"

func TestExtractSelect(t *testing.T) {
	page := filepath.Join(selectTestdata, "table-cp1252.html")
	block := filepath.Join(selectTestdata, "table-cp1252.select.yaml")
	stdout, stderr, code := runExtractCmd(t, "", "extract", "--select", block, "--url", "https://example.org/table-cp1252/",
		"--rssid", "table-cp1252", "--timestamp", "2026-11-21T10:35:00Z", page)
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	want, err := os.ReadFile(filepath.Join(selectTestdata, "table-cp1252.xml"))
	if err != nil {
		t.Fatal(err)
	}
	if stdout != string(want) {
		t.Fatalf("extract --select prints\n%s\nwant (the golden document)\n%s", stdout, want)
	}

	// An item selector that matches nothing: exit 1, the reason on stderr.
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("item: \"div.nothing\"\ntitle: h3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code = runExtractCmd(t, "", "extract", "--select", bad, page)
	if code != 1 || stdout != "" || !strings.Contains(stderr, `select.item "div.nothing" matched nothing`) {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	// An invalid block: exit 2 naming the field.
	if err := os.WriteFile(bad, []byte("item: \"div\"\ntitle: \"h3 >\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code = runExtractCmd(t, "", "extract", "--select", bad, page)
	if code != 2 || !strings.Contains(stderr, "select.title") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	// lint takes --select too.
	_, _, code = runExtractCmd(t, "", "lint", "--select", block, page)
	if code != 0 {
		t.Fatalf("lint --select: exit %d", code)
	}
}
