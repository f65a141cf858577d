package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDocsExamplePage checks that the complete page of the annotation guide
// lints without an error and extracts its two items.
func TestDocsExamplePage(t *testing.T) {
	page := filepath.Join("..", "..", "testdata", "docs", "example.html")
	stdout, stderr, code := runExtractCmd(t, "", "lint", "--url", "https://greenfield.example.org/news/", page)
	if code != 0 || stdout != "" {
		t.Errorf("lint: exit %d\n%s%s", code, stdout, stderr)
	}
	stdout, stderr, code = runExtractCmd(t, "", "extract", "--url", "https://greenfield.example.org/news/", "--rssid", "greenfield", page)
	if code != 0 || strings.Count(stdout, "<item ") != 2 || !strings.Contains(stdout, `id="budget-2027"`) {
		t.Errorf("extract: exit %d\n%s%s", code, stdout, stderr)
	}
	guide, err := os.ReadFile(filepath.Join("..", "..", "docs", "annotations.md"))
	if err != nil {
		t.Fatal(err)
	}
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(guide), strings.TrimSpace(string(html))) {
		t.Error("docs/annotations.md does not show testdata/docs/example.html as it is")
	}
}

// TestDocsStayInTheRepository checks that no document or source file
// points at files outside the repository (a person who clones it has only
// the repository).
func TestDocsStayInTheRepository(t *testing.T) {
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || !(strings.HasSuffix(path, ".md") || strings.HasSuffix(path, ".go") || strings.HasSuffix(path, ".yaml")) {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, bad := range []string{"../shared", "shared/spec"} {
			if strings.Contains(string(b), bad) && !strings.HasSuffix(path, "docs_test.go") {
				t.Errorf("%s refers to %s, outside the repository", path, bad)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestDocsLintExample checks that the annotation guide's page with typical
// mistakes makes `dynamo lint` print exactly what the guide shows.
func TestDocsLintExample(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "annotations.md"))
	if err != nil {
		t.Fatal(err)
	}
	guide := string(b)
	const want = "```text\nbroken.html:"
	at := strings.Index(guide, want)
	if at < 0 {
		t.Fatal("docs/annotations.md: no lint output of broken.html")
	}
	output := guide[at+len("```text\n"):]
	output = output[:strings.Index(output, "```")]
	page := guide[:at]
	page = page[strings.LastIndex(page, "```html\n")+len("```html\n"):]
	page = page[:strings.Index(page, "```")]
	stdout, stderr, code := runExtractCmd(t, page, "lint", "-")
	if code != 1 {
		t.Errorf("lint: exit %d, want 1 (the page has errors)\n%s", code, stderr)
	}
	if got := strings.ReplaceAll(stdout, "<stdin>", "broken.html"); got != output {
		t.Errorf("lint prints\n%s\nthe guide shows\n%s", got, output)
	}
}
