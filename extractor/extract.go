package extractor

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/url"
	"time"

	"golang.org/x/net/html"

	"github.com/dynamo-rss/dynamo/schema"
)

// ErrNotAnnotated is returned when a page has no channel:title annotation.
var ErrNotAnnotated = errors.New("extractor: page is not annotated (no channel:title)")

// ErrTooLarge is wrapped by the error Extract returns when the page exceeds a
// hard limit ([Limits.MaxTokenBytes]); the message says which.
var ErrTooLarge = errors.New("extractor: page exceeds a hard limit")

// DefaultURL is the page URL assumed when [Options.URL] is empty or not an
// absolute URL: relative links then resolve under it instead of being dropped.
const DefaultURL = "http://localhost/"

// DefaultRSSID is the document's rssId when [Options.RSSID] is empty.
const DefaultRSSID = "page"

// Options describe the page being extracted. The zero value is valid.
type Options struct {
	URL         string    // the page's URL: base for relative links, default channel/item link
	RSSID       string    // the resource's configured id
	ContentType string    // the HTTP Content-Type, whose charset wins over the page's own
	Timestamp   time.Time // retrieval time, written as the document's timestamp
	Limits      Limits    // caps on hostile input; zero fields take the defaults
	// Dates are the resource's date rules (date_format, timezone): a date
	// extension they cannot read is reported (its text is kept as written).
	Dates schema.DateRules
	// Select, when set, extracts the page with these selectors instead of
	// its annotations (SELECTORS.md; see select.go).
	Select *Selectors
	// Descriptions, when set, caches sanitized descriptions across
	// extractions (see [DescriptionCache]); nil sanitizes every time.
	Descriptions *DescriptionCache
	// ExplainDates fills Result.Dates with how each date reads (`dynamo
	// lint --dates`); it costs a second reading of every date.
	ExplainDates bool
}

// Limits cap what a hostile page can make the extractor do. A zero field takes
// its default. Exceeding MaxTokenBytes is a hard error (wrapping
// [ErrTooLarge]); exceeding any other limit is an error diagnostic and the
// extraction goes on without the excess.
type Limits struct {
	MaxDepth       int // regions open at once (default 32); deeper annotations are ignored
	MaxItems       int // distinct item indexes (default 10,000); further items are ignored
	MaxExtensions  int // extensions of the channel or of one item (default 100)
	MaxValueBytes  int // bytes of one value's text or HTML (default 1 MiB); the rest is cut
	MaxTokenBytes  int // bytes of one HTML token, the tokenizer's buffer (default 16 MiB)
	MaxDiagnostics int // diagnostics kept (default 1,000); one more says how many were left out
}

// Default limits.
const (
	DefaultMaxDepth       = 32
	DefaultMaxExtensions  = 100
	DefaultMaxItems       = 10_000
	DefaultMaxValueBytes  = 1 << 20
	DefaultMaxTokenBytes  = 16 << 20
	DefaultMaxDiagnostics = 1000
)

func (l Limits) withDefaults() Limits {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&l.MaxDepth, DefaultMaxDepth)
	def(&l.MaxItems, DefaultMaxItems)
	def(&l.MaxExtensions, DefaultMaxExtensions)
	def(&l.MaxValueBytes, DefaultMaxValueBytes)
	def(&l.MaxTokenBytes, DefaultMaxTokenBytes)
	def(&l.MaxDiagnostics, DefaultMaxDiagnostics)
	return l
}

// Severity of a diagnostic.
type Severity int

// Severities.
const (
	Warning Severity = iota
	Error
)

// String returns "warning" or "error".
func (s Severity) String() string {
	switch s {
	case Warning:
		return "warning"
	case Error:
		return "error"
	}
	return fmt.Sprintf("Severity(%d)", int(s))
}

// Diagnostic is one problem found in a page, at a 1-based line and column.
// Lines are those of the original page; columns count characters (runes) of
// the page decoded to UTF-8, which for single-byte charsets such as
// ISO-8859-1 and windows-1252 is also the byte column of the original.
type Diagnostic struct {
	Line, Col int
	Severity  Severity
	Message   string
}

// String formats the diagnostic as "LINE:COL: severity: message".
func (d Diagnostic) String() string {
	return fmt.Sprintf("%d:%d: %s: %s", d.Line, d.Col, d.Severity, d.Message)
}

// Result is what extraction produced: the document (nil when the page is not
// annotated) and the diagnostics, sorted by position.
type Result struct {
	Document    *schema.Document
	Diagnostics []Diagnostic
	Charset     string // the encoding the page was read in, e.g. "windows-1252"
	// RelativeDates say which dates were read relative to the poll's time
	// (Options.Timestamp): "2 hours ago", "gestern". Their text ages on
	// the page while the date does not, so a poller keeps the date stored
	// for the same item at its first reading (poller: keepDates).
	RelativeDates RelativeDates
	// Dates say how each date of the page read, in page order, with
	// Options.ExplainDates; nil otherwise.
	Dates []DateReading
}

// RelativeDates name the dates of a document that were read relative to
// the poll's time.
type RelativeDates struct {
	Channel bool     // the channel's date
	Items   []string // the ids of the items whose date was, in page order
}

// DateReading is how one date of a page reads: its text, at the line and
// column of its annotation (or selected element), the time it means in
// the resource's zone and the rule that read it (a zero Time: no rule did).
type DateReading struct {
	Line, Col int
	Text      string
	Time      time.Time
	Rule      string // "day-first dotted", "format \"02/01/06\"", "relative to the poll time …"
	Zone      string // the resource's zone, "UTC" without one
}

// Message says how the date reads: `date "TEXT" reads as TIME (RULE,
// ZONE)`, or that no rule reads it.
func (d DateReading) Message() string {
	if d.Time.IsZero() {
		return fmt.Sprintf("date %q reads as no date: kept as text", shorten(d.Text))
	}
	return fmt.Sprintf("date %q reads as %s (%s, %s)", shorten(d.Text), d.Time.Format(time.RFC3339), d.Rule, d.Zone)
}

// String formats the reading as "LINE:COL: info: MESSAGE", as lint
// prints it.
func (d DateReading) String() string {
	return fmt.Sprintf("%d:%d: info: %s", d.Line, d.Col, d.Message())
}

// HasErrors reports whether any diagnostic has severity [Error].
func (r *Result) HasErrors() bool {
	for _, d := range r.Diagnostics {
		if d.Severity == Error {
			return true
		}
	}
	return false
}

// Extract reads an annotated page and returns its XMLData document.
//
// It reads r once, as a stream: memory grows with the open regions and the
// extracted values, not with the page. Malformed HTML and malformed
// annotations never make it fail: they become diagnostics. It fails only when
// the page is not annotated ([ErrNotAnnotated], with a non-nil Result carrying
// the diagnostics), when reading r fails, or when a hard limit is exceeded
// ([ErrTooLarge]). Extract is safe for concurrent use.
func Extract(r io.Reader, opts Options) (*Result, error) {
	if opts.Select != nil {
		return extractSelect(r, opts)
	}
	b := newBuilder(opts)
	if err := b.read(r); err != nil {
		return b.result(nil), err
	}
	return b.finish()
}

// read streams the page through the builder.
func (b *builder) read(r io.Reader) error {
	in, err := b.decoder(bufio.NewReaderSize(r, peekSize))
	if err != nil {
		return fmt.Errorf("read page: %w", err)
	}
	z := html.NewTokenizer(in)
	z.SetMaxBuf(b.limits.MaxTokenBytes)
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			if b.rec.active {
				b.replay(false) // the page ends inside a recorded region
			}
			err := z.Err()
			switch {
			case errors.Is(err, io.EOF):
				return nil
			case errors.Is(err, html.ErrBufferExceeded):
				return fmt.Errorf("%w: an HTML token at %d:%d is larger than %d bytes",
					ErrTooLarge, b.at.line, b.at.col, b.limits.MaxTokenBytes)
			default:
				return fmt.Errorf("read page: %w", err)
			}
		}
		if b.rec.active {
			b.record(z, tt)
			continue
		}
		b.token(z, tt)
	}
}

// pageURL returns the URL the page is resolved against: opts.URL when it is
// absolute, else [DefaultURL].
func pageURL(s string) *url.URL {
	if u, err := url.Parse(s); err == nil && u.IsAbs() && schema.LegalXML(s) {
		asciiHost(u)
		return u
	}
	u, _ := url.Parse(DefaultURL) // a constant that parses
	return u
}
