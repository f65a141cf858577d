package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dynamo-rss/dynamo/schema"
)

// filterPage is an annotated page with an advertisement among its items.
const filterPage = `<!-- <channel:title> -->Town hall<!-- </channel:title> -->
<!-- <item:title index="1"> -->Gemeinderat tagt<!-- </item:title> --><!-- <item:link index="1"> -->n/1<!-- </item:link> -->
<!-- <item:title index="2"> -->ANZEIGE: Sofa<!-- </item:title> --><!-- <item:link index="2"> -->n/2<!-- </item:link> -->
<!-- <item:title index="3"> -->Budget 2027<!-- </item:title> --><!-- <item:link index="3"> -->n/3<!-- </item:link> -->
`

// TestExtractFilter: dynamo extract takes a filter as a file (--filter,
// a filter block or a resource definition) or as --include and --exclude
// flags (repeated, added to the file's lists); the document holds the
// items kept, and stderr says which were filtered out and why, counted.
func TestExtractFilter(t *testing.T) {
	dir := t.TempDir()
	block := filepath.Join(dir, "filter.yaml")
	if err := os.WriteFile(block, []byte("exclude: [Anzeige]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	def := filepath.Join(dir, "town.yaml")
	if err := os.WriteFile(def, []byte("url: https://example.org/\nfilter:\n  include: [\"re:(?i)budget\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		args    []string
		want    []string
		stderrs []string
	}{
		{"file", []string{"--filter", block}, []string{"Gemeinderat tagt", "Budget 2027"}, []string{
			`<stdin>: filtered out: item 2 "ANZEIGE: Sofa" http://localhost/n/2 (exclude: Anzeige)`,
			"<stdin>: filter: 2 items kept, 1 filtered out",
		}},
		{"flags", []string{"--exclude", "anzeige", "--include", "Gemeinderat", "--include", "re:Sofa"}, []string{"Gemeinderat tagt"}, []string{
			`<stdin>: filtered out: item 2 "ANZEIGE: Sofa" http://localhost/n/2 (exclude: anzeige)`,
			`<stdin>: filtered out: item 3 "Budget 2027" http://localhost/n/3 (include: none matched)`,
			"<stdin>: filter: 1 item kept, 2 filtered out",
		}},
		{"definition and flags", []string{"--filter", def, "--include", "Gemeinderat"}, []string{"Gemeinderat tagt", "Budget 2027"}, []string{
			"<stdin>: filter: 2 items kept, 1 filtered out",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := runExtractCmd(t, filterPage, append(append([]string{"extract"}, tc.args...), "-")...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			doc, err := schema.Unmarshal([]byte(stdout))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, it := range doc.Items {
				got = append(got, it.Title)
			}
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("items %q, want %q", got, tc.want)
			}
			for _, w := range tc.stderrs {
				if !strings.Contains(stderr, w+"\n") {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
		})
	}
	// A bad filter is a usage error naming the flag, the field and its place.
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("exclude:\n  - \"re:(x\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--filter", bad}, `--filter ` + bad + `: line 2, column 5: filter.exclude[0]: "re:(x": not an RE2 expression`},
		{[]string{"--exclude", "ok", "--exclude", " "}, "--include/--exclude: filter.exclude[1]: an empty word"},
	} {
		_, stderr, code := runExtractCmd(t, filterPage, append(append([]string{"extract"}, tc.args...), "-")...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}
