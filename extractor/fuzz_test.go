package extractor_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dynamo-rss/dynamo/extractor"
)

// FuzzExtract: whatever the page, Extract does not panic, reports sorted
// diagnostics with real positions, and any document it produces passes
// Validate, marshals to well-formed XML and round-trips equal.
func FuzzExtract(f *testing.F) {
	pages, err := filepath.Glob(filepath.Join(goldenDir, "*.html"))
	if err != nil {
		f.Fatal(err)
	}
	for _, p := range pages {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, "")
	}
	f.Add([]byte(chanTitle+`<!-- <item:title index="1"> -->x<!-- </item:link> -->`), "text/html; charset=iso-8859-1")
	f.Add([]byte("<!-- <channel:title> -->\x00\xff<!-- <item:description index='9'> --><a href=x>&#0;<!--"), "text/html; charset=utf-16")
	f.Fuzz(func(t *testing.T, data []byte, contentType string) {
		res, err := extractor.Extract(strings.NewReader(string(data)), extractor.Options{
			URL: page, RSSID: "fuzz", ContentType: contentType, Timestamp: goldenTime,
			Limits: extractor.Limits{MaxTokenBytes: 1 << 20},
		})
		if res == nil {
			t.Fatalf("nil result (err %v)", err)
		}
		prev := extractor.Diagnostic{Line: 1, Col: 1}
		for _, d := range res.Diagnostics {
			if d.Line < 1 || d.Col < 1 || d.Line < prev.Line || d.Line == prev.Line && d.Col < prev.Col {
				t.Fatalf("diagnostics out of order or bad position: %q", diagStrings(res.Diagnostics))
			}
			prev = d
		}
		switch {
		case err == nil:
			if res.Document == nil {
				t.Fatal("no error and no document")
			}
			checkDocument(t, res.Document, false)
		case errors.Is(err, extractor.ErrNotAnnotated), errors.Is(err, extractor.ErrTooLarge):
			if res.Document != nil {
				t.Fatal("a document with an error")
			}
		default:
			t.Fatalf("unexpected error: %v", err)
		}
	})
}
