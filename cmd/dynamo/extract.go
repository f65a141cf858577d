package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dynamo-rss/dynamo/config"
	"github.com/dynamo-rss/dynamo/extractor"
	"github.com/dynamo-rss/dynamo/schema"
)

// pageFlags are the flags extract and lint share.
type pageFlags struct {
	url, rssID, contentType, timestamp string
	dateFormat, timezone               string
	selectFile                         string
}

const pageHelp = `
Without --url, the page is taken to be at http://localhost/ followed by the
file's base name (http://localhost/ for standard input), so relative links
resolve to http URLs; pass the page's real URL to get real links.`

func (p *pageFlags) parse(name, synopsis string, args []string, stdout io.Writer, withDoc bool) (string, error) {
	fs := newFlagSet(name, synopsis+"\n"+strings.TrimSpace(pageHelp), stdout)
	fs.StringVar(&p.url, "url", "", "the page's URL: base of relative links, default channel and item link (default http://localhost/FILE)")
	fs.StringVar(&p.contentType, "content-type", "", "the HTTP Content-Type of the page, whose charset wins over the page's own (e.g. 'text/html; charset=ISO-8859-1')")
	fs.StringVar(&p.dateFormat, "date-format", "", "the page's date layout, as the resource's date_format: a Go layout tried first (e.g. '02.01.2006 15:04')")
	fs.StringVar(&p.timezone, "timezone", "", "the zone of dates without one, as the resource's timezone (e.g. Europe/Rome; default UTC)")
	fs.StringVar(&p.selectFile, "select", "", "a YAML or JSON file holding a select block (docs/selectors.md; what 'dynamo suggest' prints): extract with these selectors, as the poller does, instead of the page's annotations")
	if withDoc {
		fs.StringVar(&p.rssID, "rssid", "", "the resource id written as rssId (default: the file name without extension, 'page' for standard input)")
		fs.StringVar(&p.timestamp, "timestamp", "", "the retrieval time written in the document, RFC 3339 (default: now, UTC)")
	}
	if err := parseFlags(fs, args); err != nil {
		return "", err
	}
	if fs.NArg() != 1 {
		return "", &exitError{code: 2, err: fmt.Errorf("%s: want exactly one FILE or -, got %d arguments", name, fs.NArg())}
	}
	return fs.Arg(0), nil
}

// options builds extractor options for the page at path ("-" is standard input).
func (p *pageFlags) options(path string) (extractor.Options, error) {
	opts := extractor.Options{URL: p.url, RSSID: p.rssID, ContentType: p.contentType, Timestamp: time.Now().UTC()}
	stdin := path == "-"
	base := filepath.Base(path)
	if opts.URL == "" {
		opts.URL = extractor.DefaultURL
		if !stdin {
			opts.URL += url.PathEscape(base)
		}
	}
	if opts.RSSID == "" && !stdin {
		opts.RSSID = strings.TrimSuffix(base, filepath.Ext(base))
	}
	if err := config.CheckDateFormat(p.dateFormat); err != nil {
		return opts, &exitError{code: 2, err: fmt.Errorf("--date-format: %w", err)}
	}
	if err := config.CheckTimezone(p.timezone); err != nil {
		return opts, &exitError{code: 2, err: fmt.Errorf("--timezone: %w", err)}
	}
	opts.Dates = config.ResourceEntry{DateFormat: p.dateFormat, Timezone: p.timezone}.DateRules()
	if p.selectFile != "" {
		data, err := os.ReadFile(p.selectFile)
		if err != nil {
			return opts, &exitError{code: 2, err: fmt.Errorf("--select: %w", err)}
		}
		if opts.Select, err = config.ParseSelect(data); err != nil {
			return opts, &exitError{code: 2, err: fmt.Errorf("--select %s: %w", p.selectFile, err)}
		}
	}
	if p.timestamp != "" {
		t, err := time.Parse(time.RFC3339, p.timestamp)
		if err != nil {
			return opts, &exitError{code: 2, err: fmt.Errorf("--timestamp: %w", err)}
		}
		opts.Timestamp = t.UTC()
	}
	return opts, nil
}

// openPage returns the page's reader and the name diagnostics use:
// the path as given, or "<stdin>" for "-".
func openPage(path string, stdin io.Reader) (io.ReadCloser, string, error) {
	if path == "-" {
		return io.NopCloser(stdin), "<stdin>", nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, "", fmt.Errorf("open page: %w", err)
	}
	return f, path, nil
}

func extractPage(path string, stdin io.Reader, opts extractor.Options) (*extractor.Result, string, error) {
	r, name, err := openPage(path, stdin)
	if err != nil {
		return nil, "", err
	}
	defer r.Close()
	res, err := extractor.Extract(r, opts)
	return res, name, err
}

func printDiagnostics(w io.Writer, name string, diags []extractor.Diagnostic) {
	for _, d := range diags {
		fmt.Fprintf(w, "%s:%s\n", name, d)
	}
}

// runPage parses the page flags of command name, extracts the page and
// prints its diagnostics on diags. It returns a nil Result only when nothing
// could be extracted (bad flags, unreadable file).
func runPage(name, synopsis string, args []string, stdin io.Reader, stdout, diags io.Writer, withDoc bool) (*extractor.Result, string, error) {
	var p pageFlags
	path, err := p.parse(name, synopsis, args, stdout, withDoc)
	if err != nil {
		return nil, "", err
	}
	opts, err := p.options(path)
	if err != nil {
		return nil, "", err
	}
	res, file, err := extractPage(path, stdin, opts)
	if res != nil {
		printDiagnostics(diags, file, res.Diagnostics)
	}
	return res, file, err
}

// cmdExtract prints the XMLData document of a page on stdout and its
// diagnostics on stderr; exit 1 when the page is not annotated.
func cmdExtract(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	res, name, err := runPage("extract", "[--url URL] [--rssid ID] [--content-type CT] [--timestamp T] [--select FILE.yaml] FILE|-\n"+
		"Prints the XMLData document on stdout and the diagnostics on stderr (as lint does);\n"+
		"exits 1 when the page is not annotated (no channel:title), or, with --select,\n"+
		"when the item selector matches nothing.",
		args, stdin, stdout, stderr, true)
	if res == nil && err != nil {
		return err
	}
	if errors.Is(err, extractor.ErrNotAnnotated) || errors.Is(err, extractor.ErrNoItems) {
		return &exitError{code: 1, err: fmt.Errorf("%s: %w", name, err)}
	}
	if err != nil {
		return err
	}
	out, err := schema.Marshal(res.Document)
	if err != nil {
		return err
	}
	_, err = stdout.Write(out)
	return err
}

// cmdLint prints a page's diagnostics as FILE:LINE:COL: severity: message;
// exit 1 when any is an error (a page that is not annotated is one).
func cmdLint(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	res, _, err := runPage("lint", "[--url URL] [--content-type CT] [--select FILE.yaml] FILE|-\n"+
		"Prints FILE:LINE:COL: severity: message, one per line by position (FILE as given,\n"+
		"<stdin> for -); exits 1 when any is an error, a page without channel:title included.",
		args, stdin, stdout, stdout, false)
	if err != nil && !errors.Is(err, extractor.ErrNotAnnotated) && !errors.Is(err, extractor.ErrNoItems) {
		return err
	}
	if res.HasErrors() {
		return &exitError{code: 1}
	}
	return nil
}
