package extractor_test

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/dynamo-rss/dynamo/extractor"
	"github.com/dynamo-rss/dynamo/schema"
	"github.com/dynamo-rss/dynamo/schema/schematest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/extractor")

const goldenDir = "../testdata/extractor"

// goldenTime is the retrieval time of every golden document.
var goldenTime = time.Date(2026, 11, 21, 10, 35, 0, 0, time.UTC)

// goldenOptions are the options a golden page is extracted with: its URL is
// https://example.org/news/NAME.html unless listed here, and a few pages come
// with an HTTP Content-Type.
func goldenOptions(name string) extractor.Options {
	opts := extractor.Options{
		URL:       "https://example.org/news/" + name + ".html",
		RSSID:     name,
		Timestamp: goldenTime,
	}
	switch name {
	case "theserverside":
		opts.URL = "http://www.theserverside.com/news/index.tss"
	case "latin1-header":
		opts.ContentType = "text/html; charset=ISO-8859-1"
	case "utf8-bom":
		opts.ContentType = "text/html" // no charset: the BOM decides
	}
	return opts
}

// lintText formats diagnostics as `dynamo lint` does.
func lintText(file string, diags []extractor.Diagnostic) []byte {
	var b bytes.Buffer
	for _, d := range diags {
		fmt.Fprintf(&b, "%s:%s\n", file, d)
	}
	return append([]byte{}, b.Bytes()...) // an empty file, not a missing one
}

// checkDocument asserts what every produced document must satisfy:
// Validate, the XSD, and an equal round trip through Marshal/Unmarshal.
func checkDocument(t testing.TB, doc *schema.Document, xsd bool) []byte {
	t.Helper()
	if err := doc.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	out, err := schema.Marshal(doc)
	if err != nil {
		t.Fatalf("Marshal: %v", err)
	}
	back, err := schema.Unmarshal(out)
	if err != nil {
		t.Fatalf("Unmarshal: %v\n%s", err, out)
	}
	if !reflect.DeepEqual(back, doc) {
		t.Fatalf("round trip differs:\nwant %#v\ngot  %#v", doc, back)
	}
	if xsd {
		schematest.ValidateXSD(t, out)
	}
	return out
}

func TestGolden(t *testing.T) {
	pages, err := filepath.Glob(filepath.Join(goldenDir, "*.html"))
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) < 16 {
		t.Fatalf("found %d golden pages, want at least 16", len(pages))
	}
	for _, page := range pages {
		name := strings.TrimSuffix(filepath.Base(page), ".html")
		t.Run(name, func(t *testing.T) {
			f, err := os.Open(page)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			res, err := extractor.Extract(f, goldenOptions(name))
			if res == nil {
				t.Fatalf("Extract returned a nil Result (err %v)", err)
			}
			xmlPath := filepath.Join(goldenDir, name+".xml")
			var gotXML []byte
			switch {
			case errors.Is(err, extractor.ErrNotAnnotated):
				if res.Document != nil {
					t.Errorf("not annotated, yet a document")
				}
			case err != nil:
				t.Fatalf("Extract: %v", err)
			default:
				if res.Document == nil {
					t.Fatalf("no document and no error")
				}
				gotXML = checkDocument(t, res.Document, true)
			}
			gotLint := lintText(name+".html", res.Diagnostics)
			compareGolden(t, xmlPath, gotXML)
			compareGolden(t, filepath.Join(goldenDir, name+".lint"), gotLint)
		})
	}
}

// compareGolden compares got with a golden file; an empty got means the file
// must not exist (the page yields no document). With -update it rewrites.
func compareGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if got == nil {
			if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
				t.Fatal(err)
			}
			return
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if got == nil {
		if err == nil {
			t.Errorf("%s exists, but the page yields nothing for it", path)
		}
		return
	}
	if err != nil {
		t.Fatalf("%v (run go test ./extractor -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (run go test ./extractor -update and review the diff)\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}
