package extractor

import (
	"errors"
	"io"
	"time"

	"github.com/dynamo-rss/dynamo/schema"
)

// ErrNotAnnotated is returned when a page has no channel:title annotation.
var ErrNotAnnotated = errors.New("extractor: page is not annotated (no channel:title)")

// Options describe the page being extracted.
type Options struct {
	URL         string    // the page's URL: base for relative links, default channel/item link
	RSSID       string    // the resource's configured id
	ContentType string    // the HTTP Content-Type, whose charset wins over the page's own
	Timestamp   time.Time // retrieval time, written as the document's timestamp
}

// Severity of a diagnostic.
type Severity int

// Severities.
const (
	Warning Severity = iota
	Error
)

// Diagnostic is one problem found in a page, at a 1-based line and column.
type Diagnostic struct {
	Line, Col int
	Severity  Severity
	Message   string
}

// Result is what extraction produced: the document (nil when the page is not
// annotated) and the diagnostics, sorted by position.
type Result struct {
	Document    *schema.Document
	Diagnostics []Diagnostic
}

// Extract reads an annotated page and returns its XMLData document.
func Extract(r io.Reader, opts Options) (*Result, error) {
	return nil, errors.New("extractor: not implemented yet")
}
