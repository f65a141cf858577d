package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/dynamo-rss/dynamo/config"
	"github.com/dynamo-rss/dynamo/extractor"
	"github.com/dynamo-rss/dynamo/extractor/filter"
	"github.com/dynamo-rss/dynamo/fetch"
	"github.com/dynamo-rss/dynamo/schema"
)

// pageFlags are the flags extract and lint share.
type pageFlags struct {
	url, rssID, contentType, timestamp string
	dateFormat, timezone               string
	selectFile                         string
	filterFile                         string   // extract --filter
	include, exclude                   []string // extract --include, --exclude
	filter                             *filter.Filter
	configFile                         string // the poller settings of a page given as a URL
	allowPrivate                       bool
	dates                              bool // lint --dates: how each date reads
	withDates                          bool // the command has --dates
}

const pageHelp = `
The page is a file, - for standard input, or an http(s) URL, fetched once
through the guarded fetcher polls use (robots.txt, timeouts, max_body;
private, loopback and link-local addresses refused unless --allow-private),
with the poller settings of --config or the defaults.
Without --url, a file is taken to be at http://localhost/ followed by its
base name (http://localhost/ for standard input), so relative links
resolve to http URLs; pass the page's real URL to get real links. A page
fetched from a URL is at that URL (after redirects).`

func (p *pageFlags) parse(name, synopsis string, args []string, stdout io.Writer, withDoc bool) (string, error) {
	fs := newFlagSet(name, synopsis+"\n"+strings.TrimSpace(pageHelp), stdout)
	fs.StringVar(&p.url, "url", "", "the page's URL: base of relative links, default channel and item link (default http://localhost/FILE)")
	fs.StringVar(&p.contentType, "content-type", "", "the HTTP Content-Type of the page, whose charset wins over the page's own (e.g. 'text/html; charset=ISO-8859-1')")
	fs.StringVar(&p.dateFormat, "date-format", "", "the page's date layout, as the resource's date_format: a Go layout tried first (e.g. '02.01.2006 15:04')")
	fs.StringVar(&p.timezone, "timezone", "", "the zone of dates without one, as the resource's timezone (e.g. Europe/Rome; default UTC)")
	fs.StringVar(&p.selectFile, "select", "", "a YAML or JSON file holding a select block (docs/selectors.md; what 'dynamo suggest' prints): extract with these selectors, as the poller does, instead of the page's annotations")
	fs.StringVar(&p.configFile, "config", "", "a configuration `file` whose poller settings (timeout, max_body, user_agent, robots, allow_private…) fetch a page given as a URL (default: the built-in ones)")
	fs.BoolVar(&p.allowPrivate, "allow-private", false, "fetch a page given as a URL even at a private, loopback or link-local address (as poller.allow_private)")
	if p.withDates {
		fs.BoolVar(&p.dates, "dates", false, "add one info line per date saying how it reads: RFC 3339, with the rule and the zone used")
	}
	if withDoc {
		fs.StringVar(&p.rssID, "rssid", "", "the resource id written as rssId (default: the file name without extension, 'page' for standard input)")
		fs.StringVar(&p.timestamp, "timestamp", "", "the retrieval time written in the document, RFC 3339 (default: now, UTC)")
		fs.StringVar(&p.filterFile, "filter", "", "a YAML or JSON `file` holding a filter block ({include: [...], exclude: [...]}) or a resource definition with one (docs/selectors.md, Filters): the document keeps the items the poller would store, stderr lists the others")
		fs.Func("include", "keep only items matching this `word` (or re:EXPRESSION); repeat for more, added after --filter's include list", func(v string) error {
			p.include = append(p.include, v)
			return nil
		})
		fs.Func("exclude", "drop items matching this `word` (or re:EXPRESSION); repeat for more, added after --filter's exclude list", func(v string) error {
			p.exclude = append(p.exclude, v)
			return nil
		})
	}
	if err := parseFlags(fs, args); err != nil {
		return "", err
	}
	if fs.NArg() != 1 {
		return "", &exitError{code: 2, err: fmt.Errorf("%s: want exactly one FILE, - or URL, got %d arguments", name, fs.NArg())}
	}
	return fs.Arg(0), nil
}

// options builds extractor options for the page at path ("-" is standard input).
func (p *pageFlags) options(path string) (extractor.Options, error) {
	opts := extractor.Options{URL: p.url, RSSID: p.rssID, ContentType: p.contentType, Timestamp: time.Now().UTC(), ExplainDates: p.dates}
	stdin := path == "-"
	base := filepath.Base(path)
	switch {
	case isPageURL(path):
		if opts.URL == "" {
			opts.URL = path // open sets it to where the page was, after redirects
		}
	case opts.URL == "":
		opts.URL = extractor.DefaultURL
		if !stdin {
			opts.URL += url.PathEscape(base)
		}
	}
	if opts.RSSID == "" && !stdin && !isPageURL(path) {
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
	if err := p.compileFilter(); err != nil {
		return opts, err
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

// compileFilter reads --filter and adds --include and --exclude to its
// lists; p.filter stays nil without any.
func (p *pageFlags) compileFilter() error {
	var spec filter.Spec
	if p.filterFile != "" {
		data, err := os.ReadFile(p.filterFile)
		if err != nil {
			return &exitError{code: 2, err: fmt.Errorf("--filter: %w", err)}
		}
		if spec, err = config.ParseFilter(data); err != nil {
			return &exitError{code: 2, err: fmt.Errorf("--filter %s: %w", p.filterFile, err)}
		}
	}
	spec.Include = append(spec.Include, p.include...)
	spec.Exclude = append(spec.Exclude, p.exclude...)
	f, err := filter.Compile(spec)
	if err != nil { // the file's lists are valid: the problem is a flag's
		return &exitError{code: 2, err: fmt.Errorf("--include/--exclude: filter.%w", err)}
	}
	p.filter = f
	return nil
}

// printFiltered says on w which items the filter took out of the
// document and why, then how many it kept and took out.
func printFiltered(w io.Writer, name string, kept int, out []filter.Item) {
	for _, o := range out {
		fmt.Fprintf(w, "%s: filtered out: item %d %q %s (%s)\n", name, o.Item.Index, o.Item.Title, o.Item.Link, o.Reason())
	}
	items := "items"
	if kept == 1 {
		items = "item"
	}
	fmt.Fprintf(w, "%s: filter: %d %s kept, %d filtered out\n", name, kept, items, len(out))
}

// isPageURL reports whether a command's page argument is a URL to fetch.
func isPageURL(path string) bool {
	return strings.HasPrefix(path, "http://") || strings.HasPrefix(path, "https://")
}

// open returns the page's reader and the name diagnostics use, as
// openPage does; a URL is fetched once with fetch.Once, as polls fetch
// (see pageHelp), and opts takes the page's final URL and
// Content-Type unless --url and --content-type gave them.
func (p *pageFlags) open(ctx context.Context, path string, stdin io.Reader, opts *extractor.Options) (io.ReadCloser, string, error) {
	if !isPageURL(path) {
		return openPage(path, stdin)
	}
	set := config.Default().Poller
	if p.configFile != "" {
		cfg, err := config.Load(p.configFile)
		if err != nil {
			return nil, "", &exitError{code: 2, err: fmt.Errorf("--config: %w", err)}
		}
		set = cfg.Poller
	}
	if p.allowPrivate {
		set.AllowPrivate = true
	}
	page, err := fetch.Once(ctx, set, path, fetch.Options{})
	if errors.Is(err, fetch.ErrForbiddenAddress) {
		return nil, "", fmt.Errorf("fetch %s: its address is private, loopback or link-local, which polls refuse; pass --allow-private to fetch it (or allow_private in the --config file's poller)", path)
	}
	if err != nil {
		return nil, "", fmt.Errorf("fetch %s: %w", path, err)
	}
	if p.url == "" {
		opts.URL = page.URL
	}
	if p.contentType == "" {
		opts.ContentType = page.ContentType
	}
	return io.NopCloser(bytes.NewReader(page.Body)), path, nil
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

func (p *pageFlags) extractPage(ctx context.Context, path string, stdin io.Reader, opts extractor.Options) (*extractor.Result, string, error) {
	r, name, err := p.open(ctx, path, stdin, &opts)
	if err != nil {
		return nil, "", err
	}
	defer r.Close()
	res, err := extractor.Extract(r, opts)
	return res, name, err
}

// printDiagnostics prints the diagnostics and the date readings (lint
// --dates) by position, each as NAME:LINE:COL: severity: message.
func printDiagnostics(w io.Writer, name string, diags []extractor.Diagnostic, dates []extractor.DateReading) {
	type line struct {
		l, c int
		s    string
	}
	out := make([]line, 0, len(diags)+len(dates))
	for _, d := range diags {
		out = append(out, line{d.Line, d.Col, d.String()})
	}
	for _, d := range dates {
		out = append(out, line{d.Line, d.Col, d.String()})
	}
	slices.SortStableFunc(out, func(a, b line) int { return cmp.Or(a.l-b.l, a.c-b.c) })
	for _, d := range out {
		fmt.Fprintf(w, "%s:%s\n", name, d.s)
	}
}

// runPage parses the page flags of command name, extracts the page and
// prints its diagnostics on diags. It returns a nil Result only when nothing
// could be extracted (bad flags, unreadable file).
func runPage(ctx context.Context, name, synopsis string, args []string, stdin io.Reader, stdout, diags io.Writer, withDoc bool) (*extractor.Result, string, error) {
	p := pageFlags{withDates: !withDoc}
	path, err := p.parse(name, synopsis, args, stdout, withDoc)
	if err != nil {
		return nil, "", err
	}
	opts, err := p.options(path)
	if err != nil {
		return nil, "", err
	}
	res, file, err := p.extractPage(ctx, path, stdin, opts)
	if res != nil {
		printDiagnostics(diags, file, res.Diagnostics, res.Dates)
	}
	if res != nil && res.Document != nil && p.filter != nil {
		out := p.filter.Apply(res.Document)
		printFiltered(diags, file, len(res.Document.Items), out)
	}
	return res, file, err
}

// cmdExtract prints the XMLData document of a page on stdout and its
// diagnostics on stderr; exit 1 when the page is not annotated.
func cmdExtract(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	res, name, err := runPage(ctx, "extract", "[--url URL] [--rssid ID] [--content-type CT] [--timestamp T] [--select FILE.yaml] [--filter FILE.yaml] [--include WORD]... [--exclude WORD]... [--config FILE] [--allow-private] FILE|-|URL\n"+
		"Prints the XMLData document on stdout and the diagnostics on stderr (as lint does);\n"+
		"with a filter, the document holds the items kept and stderr lists those filtered out;\n"+
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
	res, _, err := runPage(ctx, "lint", "[--url URL] [--content-type CT] [--select FILE.yaml] [--dates] [--config FILE] [--allow-private] FILE|-|URL\n"+
		"Prints FILE:LINE:COL: severity: message, one per line by position (FILE as given,\n"+
		"<stdin> for -); exits 1 when any is an error, a page without channel:title included.\n"+
		"--dates adds an info line per date: how it reads, in RFC 3339, by which rule, in which zone.",
		args, stdin, stdout, stdout, false)
	if err != nil && !errors.Is(err, extractor.ErrNotAnnotated) && !errors.Is(err, extractor.ErrNoItems) {
		return err
	}
	if res.HasErrors() {
		return &exitError{code: 1}
	}
	return nil
}
