package api

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dynamo-rss/dynamo/schema/schematest"
)

// feedparserPython returns a python3 that can import feedparser: the one on
// PATH, else the system one (pyenv shims often lack distribution packages).
func feedparserPython(t *testing.T) string {
	t.Helper()
	for _, py := range []string{schematest.Tool(t, "python3"), "/usr/bin/python3"} {
		if err := exec.Command(py, "-c", "import feedparser").Run(); err == nil {
			return py
		}
	}
	if os.Getenv(schematest.RequireValidatorsEnv) == "1" {
		t.Fatalf("python3 feedparser is required (%s=1) but not importable", schematest.RequireValidatorsEnv)
	}
	t.Skip("python3 feedparser not importable; skipping")
	return ""
}

// feedparserScript prints one line per file: the path, the version
// detected, the number of entries and OK or the problem. feedparser 6.0 has
// no JSON Feed support, so JSON files are checked against the JSON Feed 1.1
// requirements here instead (version, title, item ids and content).
const feedparserScript = `
import sys, json, feedparser
types = {"rss1": "application/rdf+xml", "rss2": "application/rss+xml", "atom": "application/atom+xml"}
def jsonfeed(path):
    with open(path, encoding="utf-8") as f:
        d = json.load(f)
    problems = []
    if d.get("version") != "https://jsonfeed.org/version/1.1": problems.append("version")
    if not isinstance(d.get("title"), str) or not d["title"]: problems.append("title")
    items = d.get("items", [])
    ids = [it.get("id") for it in items]
    if any(not isinstance(i, str) or not i for i in ids) or len(set(ids)) != len(ids): problems.append("item ids")
    if any(not (it.get("content_html") or it.get("content_text")) for it in items): problems.append("item content")
    return "json11", len(items), ("PROBLEM " + ",".join(problems)) if problems else "OK"
for path in sys.argv[1:]:
    ext = path.rsplit(".", 1)[1]
    if ext == "json":
        print(path, *jsonfeed(path))
        continue
    d = feedparser.parse(path, response_headers={"content-type": types[ext] + "; charset=utf-8"})
    status = "BOZO %r" % (d.get("bozo_exception"),) if d.bozo else "OK"
    print(path, d.version, len(d.entries), status)
`

// TestFeedValidators renders every request form in every format and has
// external validators check the results: feedparser (no bozo) for all,
// xmllint for well-formed XML, rapper for RSS 1.0 as RDF/XML.
func TestFeedValidators(t *testing.T) {
	py := feedparserPython(t)
	s := newFDServer(t, fdFixture())
	dir := t.TempDir()
	var all []string
	for i, form := range fdForms() {
		for _, format := range fdFormats {
			target := form.target + sep(form.target) + "type=" + format
			rec := fdDo(s, http.MethodGet, target)
			if rec.Code != http.StatusOK {
				t.Fatalf("GET %s = %d\n%s", target, rec.Code, rec.Body)
			}
			path := filepath.Join(dir, fmt.Sprintf("%02d-%s.%s", i, strings.ReplaceAll(form.name, " ", "_"), format))
			if err := os.WriteFile(path, rec.Body.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			all = append(all, path)
		}
	}
	validateFeedFiles(t, py, all)
}

// validateFeedFiles has the external validators check feed files named
// NAME.FORMAT (rss1, rss2, atom or json): feedparser (no bozo, the right
// version) for all, xmllint for well-formed XML, rapper for RSS 1.0 as
// RDF/XML with neither error nor warning. py is [feedparserPython]'s.
func validateFeedFiles(t *testing.T, py string, all []string) {
	t.Helper()
	xmllint := schematest.Tool(t, "xmllint")
	rapper := schematest.Tool(t, "rapper")
	var xmlFiles, rdfFiles []string
	for _, path := range all {
		switch filepath.Ext(path) {
		case ".json":
		case ".rss1":
			rdfFiles = append(rdfFiles, path)
			xmlFiles = append(xmlFiles, path)
		default:
			xmlFiles = append(xmlFiles, path)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	out, err := exec.CommandContext(ctx, py, append([]string{"-c", feedparserScript}, all...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("feedparser: %v\n%s", err, out)
	}
	wantVersion := map[string]string{"rss1": "rss10", "rss2": "rss20", "atom": "atom10", "json": "json11"}
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		if len(fields) < 4 {
			t.Errorf("feedparser: unexpected line %q", line)
			continue
		}
		ext := filepath.Ext(fields[0])[1:]
		if fields[3] != "OK" || fields[1] != wantVersion[ext] {
			t.Errorf("feedparser on %s: version %s, %s", filepath.Base(fields[0]), fields[1], strings.Join(fields[3:], " "))
		}
	}
	if n := strings.Count(string(out), "\n"); n != len(all) {
		t.Errorf("feedparser reported %d files, want %d:\n%s", n, len(all), out)
	}

	if len(xmlFiles) > 0 {
		if out, err := exec.CommandContext(ctx, xmllint, append([]string{"--noout"}, xmlFiles...)...).CombinedOutput(); err != nil || len(out) > 0 {
			t.Errorf("xmllint: %v\n%s", err, out)
		}
	}

	for _, path := range rdfFiles {
		cmd := exec.CommandContext(ctx, rapper, "-i", "rdfxml", "-c", path, "https://feeds.example.org/")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil || strings.Contains(stderr.String(), "Error") || strings.Contains(stderr.String(), "Warning") {
			t.Errorf("rapper on %s: %v\n%s", filepath.Base(path), err, stderr.String())
		}
	}
}
