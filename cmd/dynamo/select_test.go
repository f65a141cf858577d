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

// TestSuggestCommand: suggest's output is YAML that extract --select takes
// as it is, and on every golden page it yields the golden items.
func TestSuggestCommand(t *testing.T) {
	pages, err := filepath.Glob(filepath.Join(selectTestdata, "*.html"))
	if err != nil || len(pages) == 0 {
		t.Fatal("no golden pages", err)
	}
	for _, page := range pages {
		name := strings.TrimSuffix(filepath.Base(page), ".html")
		t.Run(name, func(t *testing.T) {
			args := []string{"--url", "https://example.org/" + name + "/"}
			if ct, err := os.ReadFile(filepath.Join(selectTestdata, name+".content-type")); err == nil {
				args = append(args, "--content-type", strings.TrimSpace(string(ct)))
			}
			out, stderr, code := runExtractCmd(t, "", append(append([]string{"suggest"}, args...), page)...)
			if code != 0 {
				t.Fatalf("suggest: exit %d, stderr %q", code, stderr)
			}
			if !strings.Contains(out, "\nselect:\n  item: ") || !strings.Contains(out, "# It yields") {
				t.Fatalf("suggest prints\n%s", out)
			}
			block := filepath.Join(t.TempDir(), "suggested.yaml")
			if err := os.WriteFile(block, []byte(out), 0o644); err != nil {
				t.Fatal(err)
			}
			got, stderr, code := runExtractCmd(t, "", append(append([]string{"extract", "--select", block, "--rssid", name, "--timestamp", "2026-11-21T10:35:00Z"}, args...), page)...)
			if code != 0 {
				t.Fatalf("extract --select with the suggestion: exit %d, stderr %q\n%s", code, stderr, out)
			}
			want, err := os.ReadFile(filepath.Join(selectTestdata, name+".xml"))
			if err != nil {
				t.Fatal(err)
			}
			if g, w := links(got), links(string(want)); g != w {
				t.Fatalf("the suggestion yields links\n%s\nwant\n%s\nsuggestion:\n%s", g, w, out)
			}
		})
	}
	_, stderr, code := runExtractCmd(t, "<html><body><p>Nothing repeated here.</p></body></html>", "suggest", "-")
	if code != 1 || !strings.Contains(stderr, "no repeated structure") {
		t.Fatalf("a page without structure: exit %d, stderr %q", code, stderr)
	}
}

// links are the item titles and links of an XMLData document, one a line.
func links(doc string) string {
	var b strings.Builder
	for _, part := range strings.Split(doc, "<item ")[1:] {
		title, _, _ := strings.Cut(strings.SplitN(part, "<title>", 2)[1], "</title>")
		link, _, _ := strings.Cut(strings.SplitN(part, "<link>", 2)[1], "</link>")
		b.WriteString(title + " | " + link + "\n")
	}
	return b.String()
}
