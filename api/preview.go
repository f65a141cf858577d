package api

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/dynamo-rss/dynamo/config"
	"github.com/dynamo-rss/dynamo/extractor"
	"github.com/dynamo-rss/dynamo/extractor/filter"
	"github.com/dynamo-rss/dynamo/schema"
)

// PreviewRSSID names the document of a preview (the page has no configured
// id), here and on /new.
const PreviewRSSID = "preview"

// Diagnostic is one extractor diagnostic, as POST /preview and POST
// /resources answer it (JSON) and the pages show it.
type Diagnostic struct {
	Line     int    `json:"line"`
	Col      int    `json:"col"`
	Severity string `json:"severity"`
	Message  string `json:"message"`
}

// previewResult is the JSON answer of POST /preview. A page that is not
// annotated gets the same members inside a problem+json 422 (RFC 9457
// extension members), so clients read one shape either way.
type previewResult struct {
	Type        string       `json:"type,omitempty"`
	Title       string       `json:"title,omitempty"`
	Status      int          `json:"status,omitempty"`
	Detail      string       `json:"detail,omitempty"`
	Document    string       `json:"document"`
	Diagnostics []Diagnostic `json:"diagnostics"`
	Error       *string      `json:"error"`
	// Counts are the document's items and those a filter took out, when
	// the preview yields a document; FilteredOut lists the latter, in page
	// order, when the preview had a filter ([] when it took none out).
	Counts      *previewCounts    `json:"counts,omitempty"`
	FilteredOut []previewFiltered `json:"filtered_out,omitzero"`
}

// previewCounts counts a preview's items: kept (in the document) and
// filtered out.
type previewCounts struct {
	Kept        int `json:"kept"`
	FilteredOut int `json:"filtered_out"`
}

// previewFiltered is an item a preview's filter took out: Rule is
// "include" (no include entry matched it) or "exclude", Entry the exclude
// entry that matched, Matched both in words ("exclude: Sponsored",
// "include: none matched").
type previewFiltered struct {
	Index   int    `json:"index"`
	ID      string `json:"id"`
	Title   string `json:"title"`
	Link    string `json:"link"`
	Rule    string `json:"rule"`
	Entry   string `json:"entry,omitempty"`
	Matched string `json:"matched"`
}

// previewInput is what POST /preview received.
type previewInput struct {
	page        []byte
	url         string
	contentType string // charset of the page, when the client said
	form        bool
	selectBlock []byte // a select block (YAML or JSON), when the client sent one
	filter      previewFilterInput
}

// previewFilterInput is the filter a preview was sent: a block (YAML or
// JSON, as config.ParseFilter reads it), or include and exclude fields of
// one entry a line (as the /new form sends them), not both.
type previewFilterInput struct {
	block            []byte
	include, exclude string
}

// filterFields reads a preview's filter from form fields or query
// parameters (a repeated include or exclude is one entry a value).
func filterFields(v url.Values) previewFilterInput {
	return previewFilterInput{block: []byte(v.Get("filter")),
		include: strings.Join(v["include"], "\n"), exclude: strings.Join(v["exclude"], "\n")}
}

// previewJSON is a JSON body of POST /preview: the page as text, its URL,
// and a select block as an object or as YAML/JSON text.
type previewJSON struct {
	Page   string          `json:"page"`
	URL    string          `json:"url"`
	Select json.RawMessage `json:"select"`
	Filter json.RawMessage `json:"filter"`
}

func severityName(s extractor.Severity) string {
	switch s {
	case extractor.Error:
		return "error"
	case extractor.Warning:
		return "warning"
	default:
		return fmt.Sprintf("severity(%d)", int(s))
	}
}

// readPreview reads the page from a form (fields page and url) or from the
// raw body (its URL in the url query parameter, its charset in Content-Type).
func (s *Server) readPreview(c echo.Context) (previewInput, error) {
	req := c.Request()
	mt, params, _ := mime.ParseMediaType(req.Header.Get(echo.HeaderContentType)) // unparsable: treat as raw HTML
	switch mt {
	case echo.MIMEApplicationForm, echo.MIMEMultipartForm:
		// ParseForm for a urlencoded body: ParseMultipartForm would swallow
		// its error (a body past the limit) behind http.ErrNotMultipart.
		parse := req.ParseForm
		if mt == echo.MIMEMultipartForm {
			parse = func() error { return req.ParseMultipartForm(s.opts.MaxPreviewBytes) }
		}
		if err := parse(); err != nil {
			return previewInput{}, s.previewReadError(err)
		}
		if req.MultipartForm != nil {
			defer func() { _ = req.MultipartForm.RemoveAll() }()                        // temporary files of large parts; nothing to do on failure
			if fhs := req.MultipartForm.File["page"]; len(fhs) > 0 && fhs[0].Size > 0 { // the page as an uploaded file: its bytes as they are
				in, err := s.readPreviewFile(fhs[0], req.PostFormValue("url"))
				in.selectBlock = []byte(req.PostFormValue("select"))
				in.filter = filterFields(req.PostForm)
				return in, err
			}
		}
		// Browsers send form fields as UTF-8 (the form says accept-charset).
		return previewInput{page: []byte(req.PostFormValue("page")), url: req.PostFormValue("url"), contentType: "text/html; charset=utf-8", form: true,
			selectBlock: []byte(req.PostFormValue("select")), filter: filterFields(req.PostForm)}, nil
	case echo.MIMEApplicationJSON:
		return s.readPreviewJSON(req.Body)
	}
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return previewInput{}, s.previewReadError(err)
	}
	in := previewInput{page: body, url: c.QueryParam("url"), selectBlock: []byte(c.QueryParam("select")), filter: filterFields(c.QueryParams())}
	if cs := params["charset"]; cs != "" {
		in.contentType = "text/html; charset=" + cs
	}
	return in, nil
}

// readPreviewJSON reads a JSON body: {"page": ..., "url": ..., "select": ...}.
func (s *Server) readPreviewJSON(r io.Reader) (previewInput, error) {
	body, err := io.ReadAll(r)
	if err != nil {
		return previewInput{}, s.previewReadError(err)
	}
	if err := config.CheckNesting(body); err != nil { // before any parser reads it
		return previewInput{}, fieldProblem("the JSON body is refused: ", err)
	}
	var in previewJSON
	if err := json.Unmarshal(body, &in); err != nil {
		return previewInput{}, problemf(http.StatusBadRequest, "the JSON body could not be read: %v", err)
	}
	out := previewInput{page: []byte(in.Page), url: in.URL, contentType: "text/html; charset=utf-8"}
	out.selectBlock, out.filter.block = blockOf(in.Select), blockOf(in.Filter)
	return out, nil
}

// blockOf is a block of a JSON body (select, filter): the text of a
// string (YAML or JSON), or an object as it is; nil when absent or null.
func blockOf(raw json.RawMessage) []byte {
	var text string
	switch {
	case len(raw) == 0 || string(raw) == "null":
		return nil
	case json.Unmarshal(raw, &text) == nil:
		return []byte(text)
	}
	return raw
}

// previewFilter compiles the filter a preview was sent, if any, as the
// configuration does; an invalid one is a 400 naming each bad entry.
func previewFilter(in previewFilterInput) (*filter.Filter, error) {
	block := len(bytes.TrimSpace(in.block)) > 0
	lines := strings.TrimSpace(in.include) != "" || strings.TrimSpace(in.exclude) != ""
	var spec filter.Spec
	var err error
	switch {
	case block && lines:
		return nil, &Problem{Status: http.StatusBadRequest, Param: "filter",
			Detail: "send the filter as a filter block or as include and exclude fields, not both"}
	case block:
		spec, err = config.ParseFilter(in.block)
	case lines:
		spec, err = config.FilterLines(in.include, in.exclude)
	default:
		return nil, nil
	}
	if err != nil {
		return nil, fieldProblem("invalid filter: ", err)
	}
	f, err := filter.Compile(spec)
	if err != nil { // config checked it: not expected
		return nil, fieldProblem("invalid filter: ", err)
	}
	return f, nil
}

// previewSelectors compiles the select block a preview was sent, if any,
// as the configuration does; an invalid one is a 400 naming the field.
func previewSelectors(block []byte) (*extractor.Selectors, error) {
	if len(bytes.TrimSpace(block)) == 0 {
		return nil, nil
	}
	sel, err := config.ParseSelect(block)
	if err != nil {
		return nil, fieldProblem("invalid select block: ", err)
	}
	return sel, nil
}

// filtered applies the preview's filter (nil: none) to doc and counts
// and lists what it took out, as the poller would store doc.
func (out *previewResult) filtered(f *filter.Filter, doc *schema.Document) {
	dropped := f.Apply(doc)
	out.Counts = &previewCounts{Kept: len(doc.Items), FilteredOut: len(dropped)}
	if f == nil {
		return
	}
	out.FilteredOut = make([]previewFiltered, 0, len(dropped))
	for _, d := range dropped {
		out.FilteredOut = append(out.FilteredOut, previewFiltered{Index: d.Item.Index, ID: d.Item.ID, Title: d.Item.Title,
			Link: d.Item.Link, Rule: d.Rule, Entry: d.Entry, Matched: d.Reason()})
	}
}

// fieldProblem is a 400 whose detail is prefix and err, and whose
// parameter is the field err names (select.item…), if it names one.
func fieldProblem(prefix string, err error) *Problem {
	p := &Problem{Status: http.StatusBadRequest, Detail: prefix + err.Error(), Errors: problemFields(err), Err: err}
	var fe *config.FieldError
	if errors.As(err, &fe) {
		p.Param = fe.Field()
	}
	return p
}

// readPreviewFile reads a page uploaded as a multipart file; its own
// Content-Type may name its charset.
func (s *Server) readPreviewFile(fh *multipart.FileHeader, pageURL string) (previewInput, error) {
	if fh.Size > s.opts.MaxPreviewBytes {
		return previewInput{}, errTooLarge(s.opts.MaxPreviewBytes)
	}
	f, err := fh.Open()
	if err != nil {
		return previewInput{}, s.previewReadError(err)
	}
	defer func() { _ = f.Close() }() // read-only: a close error loses nothing
	page, err := io.ReadAll(io.LimitReader(f, s.opts.MaxPreviewBytes+1))
	if err != nil {
		return previewInput{}, s.previewReadError(err)
	}
	in := previewInput{page: page, url: pageURL}
	if _, params, err := mime.ParseMediaType(fh.Header.Get(echo.HeaderContentType)); err == nil && params["charset"] != "" {
		in.contentType = "text/html; charset=" + params["charset"]
	}
	return in, nil
}

func (s *Server) previewReadError(err error) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) || errors.Is(err, multipart.ErrMessageTooLarge) || err.Error() == "http: POST too large" {
		return &Problem{Status: http.StatusRequestEntityTooLarge, Detail: fmt.Sprintf("the page is larger than the limit of %d bytes", s.opts.MaxPreviewBytes), Err: err}
	}
	return &Problem{Status: http.StatusBadRequest, Detail: "the page could not be read from the request: " + err.Error(), Err: err}
}

// WantsHTML reports whether the client is a browser asking for a page.
func WantsHTML(c echo.Context) bool {
	ranges := parseAccept(nil, c.Request().Header.Get(echo.HeaderAccept))
	html := max(quality(ranges, "text/html"), quality(ranges, "application/xhtml+xml"))
	return html > 0 && html > quality(ranges, "application/json")
}

// postPreview runs the extractor on a submitted page (it fetches nothing)
// and answers the XMLData document and the diagnostics: HTML for browsers,
// JSON otherwise. A page that is not annotated is a 422 with its diagnostics.
func (s *Server) postPreview(c echo.Context) error {
	in, err := s.readPreview(c)
	if err != nil {
		return err
	}
	if int64(len(in.page)) > s.opts.MaxPreviewBytes { // a form field may have escaped the raw bound
		return errTooLarge(s.opts.MaxPreviewBytes)
	}
	if in.url != "" {
		if u, err := url.Parse(in.url); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return problemf(http.StatusBadRequest, "url %q is not an absolute http or https URL", in.url)
		}
	}
	sel, err := previewSelectors(in.selectBlock)
	if err != nil {
		return err
	}
	filter, err := previewFilter(in.filter)
	if err != nil {
		return err
	}
	res, err := extractor.Extract(bytes.NewReader(in.page), extractor.Options{
		URL:         in.url,
		RSSID:       PreviewRSSID,
		ContentType: in.contentType,
		Timestamp:   s.now().UTC(),
		Select:      sel, // nil: the page's annotations
		// How each date reads, as info lines: relative and field-format
		// dates are stored as the time they mean, others as written.
		ExplainDates: true,
	})
	out := previewResult{Diagnostics: []Diagnostic{}}
	code := http.StatusOK
	noDoc := "the page is not annotated: it has no channel:title annotation, so it yields no document (see the diagnostics)"
	switch {
	case errors.Is(err, extractor.ErrNotAnnotated):
		code = http.StatusUnprocessableEntity
	case errors.Is(err, extractor.ErrNoItems):
		code = http.StatusUnprocessableEntity
		noDoc = "the select block yields no items, so the page yields no document (see the diagnostics)"
	case err != nil:
		return fmt.Errorf("extract preview: %w", err)
	}
	if res != nil {
		for _, d := range res.Diagnostics {
			out.Diagnostics = append(out.Diagnostics, Diagnostic{Line: d.Line, Col: d.Col, Severity: severityName(d.Severity), Message: d.Message})
		}
		for _, d := range res.Dates {
			out.Diagnostics = append(out.Diagnostics, Diagnostic{Line: d.Line, Col: d.Col, Severity: "info", Message: d.Message()})
		}
		slices.SortStableFunc(out.Diagnostics, func(a, b Diagnostic) int { return cmp.Or(a.Line-b.Line, a.Col-b.Col) })
		if res.Document != nil {
			out.filtered(filter, res.Document)
			xml, merr := schema.Marshal(res.Document)
			if merr != nil {
				return fmt.Errorf("marshal preview document: %w", merr)
			}
			out.Document = string(xml)
		}
	}
	if code == http.StatusUnprocessableEntity {
		msg := noDoc
		out.Error = &msg
		out.Type, out.Title, out.Status, out.Detail = "about:blank", http.StatusText(code), code, msg
	}
	if s.opts.Pages != nil && WantsHTML(c) {
		page := PreviewPage{Title: "Preview an annotated page", MaxBytes: s.opts.MaxPreviewBytes, Submitted: true,
			URL: in.url, Document: out.Document, Diagnostics: out.Diagnostics}
		if in.form || utf8.Valid(in.page) {
			page.Page = string(in.page)
		}
		if out.Error != nil {
			page.Error = *out.Error
		}
		return s.opts.Pages.PreviewPage(c, code, &page)
	}
	body, err := json.Marshal(out)
	if err != nil {
		return fmt.Errorf("encode preview: %w", err)
	}
	ct := echo.MIMEApplicationJSON
	if code != http.StatusOK {
		ct = "application/problem+json"
	}
	return c.Blob(code, ct, body)
}
