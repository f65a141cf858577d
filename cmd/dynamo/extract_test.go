package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dynamo-rss/dynamo/schema"
	"github.com/dynamo-rss/dynamo/schema/schematest"
)

const extractTestdata = "../../testdata/extractor"

// runExtractCmd runs the program with args and stdin; it returns stdout,
// stderr and the exit code main would use.
func runExtractCmd(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	err := run(context.Background(), args, strings.NewReader(stdin), &out, &errb)
	code := exitCode(err, &errb)
	return out.String(), errb.String(), code
}

func TestExtractCommand(t *testing.T) {
	page := filepath.Join(extractTestdata, "theserverside.html")
	stdout, stderr, code := runExtractCmd(t, "", "extract",
		"--url", "http://www.theserverside.com/news/index.tss", "--rssid", "tss",
		"--timestamp", "2026-11-21T10:35:00+01:00", page)
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	if stderr != "" {
		t.Errorf("stderr %q, want nothing for a clean page", stderr)
	}
	schematest.ValidateXSD(t, []byte(stdout))
	doc, err := schema.Unmarshal([]byte(stdout))
	if err != nil {
		t.Fatal(err)
	}
	if doc.RSSID != "tss" || doc.Timestamp.Format("15:04") != "09:35" || doc.Channel.Link != "http://www.theserverside.com" ||
		len(doc.Items) != 1 || doc.Items[0].Link != "http://www.theserverside.com/user/userthreads.tss?user_id=194346" {
		t.Errorf("unexpected document:\n%s", stdout)
	}
}

func TestExtractDefaults(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "my news.htm")
	src := `<!-- <channel:title> -->T<!-- </channel:title> --><!-- <item:title index="1"> -->a<!-- </item:title> --><!-- <item:link index="1"> -->x.html<!-- </item:link> -->`
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, arg, stdin, url, rssID, link string
	}{
		{"file", path, "", "http://localhost/my%20news.htm", "my news", "http://localhost/x.html"},
		{"stdin", "-", src, "http://localhost/", "page", "http://localhost/x.html"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := runExtractCmd(t, tc.stdin, "extract", tc.arg)
			if code != 0 {
				t.Fatalf("exit %d, stderr %q", code, stderr)
			}
			doc, err := schema.Unmarshal([]byte(stdout))
			if err != nil {
				t.Fatal(err)
			}
			if doc.URL != tc.url || doc.RSSID != tc.rssID || doc.Items[0].Link != tc.link || doc.Timestamp.IsZero() {
				t.Errorf("url %q rssId %q link %q timestamp %v", doc.URL, doc.RSSID, doc.Items[0].Link, doc.Timestamp)
			}
		})
	}
}

func TestExtractDiagnosticsOnStderr(t *testing.T) {
	stdout, stderr, code := runExtractCmd(t, "", "extract", "--timestamp", "2026-11-21T10:35:00Z", filepath.Join(extractTestdata, "unclosed.html"))
	if code != 0 || !strings.HasPrefix(stdout, "<?xml") {
		t.Fatalf("exit %d, stdout %q", code, stdout)
	}
	want := "../../testdata/extractor/unclosed.html:5:5: error: unclosed <item:title index=\"2\"> opened at 5:5: expected </item:title>; it is closed at the end of the page\n"
	if !strings.HasPrefix(stderr, want) {
		t.Errorf("stderr %q, want it to start with %q", stderr, want)
	}
}

func TestExtractNotAnnotated(t *testing.T) {
	stdout, stderr, code := runExtractCmd(t, "<html><body>plain</body></html>", "extract", "-")
	if code != 1 || stdout != "" {
		t.Fatalf("exit %d, stdout %q; want 1 and nothing", code, stdout)
	}
	for _, want := range []string{"<stdin>:1:1: error: page is not annotated", "dynamo: <stdin>: extractor: page is not annotated"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr %q lacks %q", stderr, want)
		}
	}
}

func TestLintCommand(t *testing.T) {
	for _, tc := range []struct {
		name   string
		args   []string
		stdin  string
		code   int
		stdout string
	}{
		{"clean page", []string{"lint", filepath.Join(extractTestdata, "theserverside.html")}, "", 0, ""},
		{"warnings only", []string{"lint", "-"}, "<!-- <channel:title> -->T<!-- </channel:title> -->\n<!-- <channel:title> -->U<!-- </channel:title> -->", 0,
			"<stdin>:2:1: warning: channel:title given twice (first at 1:1): the first wins\n"},
		{"unclosed regions are errors", []string{"lint", filepath.Join(extractTestdata, "unclosed.html")}, "", 1,
			"../../testdata/extractor/unclosed.html:5:5: error: unclosed <item:title index=\"2\"> opened at 5:5: expected </item:title>; it is closed at the end of the page\n" +
				"../../testdata/extractor/unclosed.html:7:18: error: unclosed <item:description index=\"2\"> opened at 7:18: expected </item:description>; it is closed at the end of the page\n"},
		{"a typo'd tag is an error", []string{"lint", "-"}, "<!-- <channel:title> -->T<!-- </channel:title> -->\n<!-- <item:titel index=\"1\"> -->x<!-- </item:titel> -->", 1,
			"<stdin>:2:1: error: unknown annotation <item:titel> ignored with its region; did you mean <item:title>?\n"},
		{"a missing > is an error", []string{"lint", "-"}, "<!-- <channel:title> -->T<!-- </channel:title> -->\n<!-- <item:title index=\"1\" -->x", 1,
			"<stdin>:2:1: error: annotation \"<item:title index=\\\"1\\\"\" does not parse: annotation does not end with '>'; expected a tag such as <!-- <item:title index=\"1\"> -->; it is ignored\n"},
		{"a mismatched close names both tags and positions", []string{"lint", "-"},
			"<!-- <channel:title> -->T<!-- </channel:title> -->\n<!-- <item:link index=\"1\"> -->https://example.org/1\n<!-- <item:title index=\"2\"> -->x<!-- </item:link index=\"1\"> --><!-- <item:title index=\"1\"> -->y<!-- </item:title> -->", 1,
			"<stdin>:3:33: error: closing </item:link index=\"1\"> at 3:33 does not match <item:title index=\"2\"> opened at 3:1; both are closed here\n"},
		{"errors", []string{"lint", "-"}, "<!-- <channel:title> -->T<!-- </channel:title> -->\n<!-- <item:title> -->x<!-- </item:title> -->", 1,
			"<stdin>:2:1: error: <item:title> ignored: missing required attribute index\n"},
		{"not annotated", []string{"lint", "-"}, "<p>no annotations</p>", 1, "<stdin>:1:1: error: page is not annotated: no channel:title\n"},
		{"relative links dropped with a non-http url", []string{"lint", "--url", "file:///srv/page.html", "-"},
			"<!-- <channel:title> -->T<!-- </channel:title> --><!-- <channel:link> -->/x<!-- </channel:link> -->", 0,
			"<stdin>:1:51: warning: channel:link \"/x\" is a file: URL, only http and https are kept: dropped\n"},
		{"an unreadable date is a warning", []string{"lint", "-"},
			"<!-- <channel:title> -->T<!-- </channel:title> --><!-- <item:title index=\"1\"> -->x<!-- </item:title> --><!-- <item:extension index=\"1\" uri=\"http://purl.org/dc/elements/1.1/\" prefix=\"dc\" localname=\"date\"> -->21 brumaire an 235<!-- </item:extension> -->", 0,
			"<stdin>:1:105: warning: unreadable date \"21 brumaire an 235\" in dc:date: kept as text, not a publication time\n"},
		{"date_format given: a date it reads is no warning", []string{"lint", "--date-format", "2.1.06", "--timezone", "Europe/Rome", "-"},
			"<!-- <channel:title> -->T<!-- </channel:title> --><!-- <item:title index=\"1\"> -->x<!-- </item:title> --><!-- <item:extension index=\"1\" uri=\"http://purl.org/dc/elements/1.1/\" prefix=\"dc\" localname=\"date\"> -->21.11.26<!-- </item:extension> -->", 0, ""},
		{"content type", []string{"lint", "--content-type", "text/html; charset=nonesuch", "-"},
			"<!-- <channel:title> -->T<!-- </channel:title> -->", 0,
			"<stdin>:1:1: warning: unknown charset \"nonesuch\" in content type; detecting the page's encoding\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := runExtractCmd(t, tc.stdin, tc.args...)
			if code != tc.code || stdout != tc.stdout {
				t.Errorf("exit %d, stdout:\n%s\nwant exit %d, stdout:\n%s\nstderr: %s", code, stdout, tc.code, tc.stdout, stderr)
			}
		})
	}
}

func TestExtractUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		out  string // in stdout
		err  string // in stderr
	}{
		{[]string{"extract", "--help"}, 0, "usage: dynamo extract", ""},
		{[]string{"lint", "-h"}, 0, "usage: dynamo lint", ""},
		{[]string{"extract"}, 2, "", "want exactly one FILE, - or URL"},
		{[]string{"lint", "a", "b"}, 2, "", "want exactly one FILE, - or URL"},
		{[]string{"extract", "--bogus", "x"}, 2, "", "flag provided but not defined"},
		{[]string{"extract", "--timestamp", "yesterday", "x"}, 2, "", "--timestamp"},
		{[]string{"extract", "/nonexistent/page.html"}, 2, "", "open page"},
		{[]string{"lint", "--rssid", "x", "-"}, 2, "", "flag provided but not defined: -rssid"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			stdout, stderr, code := runExtractCmd(t, "", tc.args...)
			if code != tc.code || !strings.Contains(stdout, tc.out) || !strings.Contains(stderr, tc.err) {
				t.Errorf("exit %d, stdout %q, stderr %q; want %d, %q, %q", code, stdout, stderr, tc.code, tc.out, tc.err)
			}
			if tc.out != "" && strings.Count(stdout, tc.out) != 1 {
				t.Errorf("usage printed %d times", strings.Count(stdout, tc.out))
			}
			if tc.code != 0 && stdout != "" {
				t.Errorf("an error printed on stdout: %q (errors go to stderr)", stdout)
			}
		})
	}
}
