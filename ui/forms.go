package ui

// Parsing and validation of the forms of the pages that add feeds: what a
// form sent becomes a value here, its mistakes messages next to its fields.

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/labstack/echo/v4"

	"github.com/dynamo-rss/dynamo/api"
	"github.com/dynamo-rss/dynamo/config"
	"github.com/dynamo-rss/dynamo/extractor/filter"
	"github.com/dynamo-rss/dynamo/schema"
)

// Field names of the forms (the templates use the same).
const (
	fieldURL      = "url"
	fieldFetch    = "fetch"
	fieldSelect   = "select"
	fieldID       = "id"
	fieldPolicy   = "policy"
	fieldInterval = "interval"
	fieldWeight   = "weight"
	fieldInclude  = "include" // filter: one word or re: expression a line
	fieldExclude  = "exclude"
	// The resource's dates: its zone (IANA) and its Go date layout.
	fieldTimezone   = "timezone"
	fieldDateFormat = "date_format"
	// Render with JavaScript (fetch: browser), and the selector to wait for.
	fieldRender  = "render"
	fieldWaitFor = "wait_for"
)

// policyChoice is a choice of the policy field, in words for people.
type policyChoice struct {
	Value string // the policy kind the field sends
	Label string
}

// policyKinds are the choices of the policy field ("" = the server's
// default), said as how often to check rather than by the kinds' names.
var policyKinds = []policyChoice{
	{"smart", "automatically (learns how often the page changes)"},
	{"flat", "every N minutes (say how often below)"},
	{"budget", "from a shared daily budget"},
}

// fieldErrors are the messages shown next to a form's fields, by field name;
// "" is the form's own (not one field's).
type fieldErrors map[string]string

func (fe fieldErrors) add(field, msg string) {
	if prev, ok := fe[field]; ok {
		fe[field] = prev + "; " + msg
		return
	}
	fe[field] = msg
}

// merge adds other's messages, each once.
func (fe fieldErrors) merge(other fieldErrors) {
	for field, msg := range other {
		if prev, ok := fe[field]; !ok || !strings.Contains(prev, msg) {
			fe.add(field, msg)
		}
	}
}

// pageURL reads and checks the url field: an absolute http(s) URL.
func pageURL(raw string) (string, error) {
	raw = strings.TrimSpace(raw)
	u, err := url.Parse(raw)
	if raw == "" || err != nil || !u.IsAbs() || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return raw, fmt.Errorf("enter the page's full address, starting with http:// or https:// (got %q)", raw)
	}
	return raw, nil
}

// addForm is the form that registers a resource from /new: the page, the
// select block shown ("" = the page's annotations), the id, the policy and
// the weight.
type addForm struct {
	Fetch      string
	URL        string
	Select     string
	ID         string
	Policy     string // "", smart, flat, budget
	Interval   string // flat's interval, e.g. 15m
	Weight     string // budget's weight; "" = 1
	Include    string // the filter's include entries, one a line
	Exclude    string // the filter's exclude entries, one a line
	Timezone   string // IANA zone of dates without one; "" = UTC
	DateFormat string // Go layout tried first for dates; "" = none
	Render     bool   // fetch: browser
	WaitFor    string // wait_for, with Render
	Errors     fieldErrors
}

// readAddForm reads an add (or preview) form.
func readAddForm(c echo.Context) addForm {
	return addForm{
		Fetch:      c.FormValue(fieldFetch),
		URL:        strings.TrimSpace(c.FormValue(fieldURL)),
		Select:     c.FormValue(fieldSelect),
		ID:         strings.TrimSpace(c.FormValue(fieldID)),
		Policy:     strings.TrimSpace(c.FormValue(fieldPolicy)),
		Interval:   strings.TrimSpace(c.FormValue(fieldInterval)),
		Weight:     strings.TrimSpace(c.FormValue(fieldWeight)),
		Include:    c.FormValue(fieldInclude),
		Exclude:    c.FormValue(fieldExclude),
		Timezone:   strings.TrimSpace(c.FormValue(fieldTimezone)),
		DateFormat: strings.TrimSpace(c.FormValue(fieldDateFormat)),
		Render:     c.FormValue(fieldRender) != "",
		WaitFor:    strings.TrimSpace(c.FormValue(fieldWaitFor)),
		Errors:     fieldErrors{},
	}
}

// definition is the resource the form describes, as the body of PUT
// /admin/resources/{id} would be (JSON), for api.RegisterDefinition to validate
// exactly as that route does. Mistakes the form alone shows (a weight that
// is no number, a select block that is not YAML) are in f.Errors, and then
// the body is nil.
func (f *addForm) definition() []byte {
	def := map[string]any{"url": f.URL}
	if f.ID == "" {
		f.Errors.add(fieldID, "choose an id: letters, digits, '.', '_', '-'")
	}
	if f.Policy != "" || f.Interval != "" {
		p := map[string]any{}
		if f.Policy != "" {
			p["kind"] = f.Policy
		}
		if f.Interval != "" {
			p["interval"] = f.Interval
		}
		def["policy"] = p
	}
	if f.Weight != "" {
		w, err := strconv.ParseFloat(f.Weight, 64)
		if err != nil {
			f.Errors.add(fieldWeight, fmt.Sprintf("%q is not a number (e.g. 1 or 2.5)", f.Weight))
		} else {
			def["weight"] = w
		}
	}
	if _, ok := f.dateRules(); ok {
		if f.Timezone != "" {
			def["timezone"] = f.Timezone
		}
		if f.DateFormat != "" {
			def["date_format"] = f.DateFormat
		}
	}
	if f.Render {
		def["fetch"] = config.FetchBrowser
		if f.WaitFor != "" {
			def["wait_for"] = f.WaitFor
		}
	}
	if spec, ok := f.filterSpec(); ok && !spec.IsZero() {
		def["filter"] = spec
	}
	if strings.TrimSpace(f.Select) != "" {
		block, err := selectBlock(f.Select)
		if err != nil {
			f.Errors.add(fieldSelect, err.Error())
		} else {
			def["select"] = block
		}
	}
	if len(f.Errors) > 0 {
		return nil
	}
	body, err := json.Marshal(def)
	if err != nil { // strings, numbers and a YAML block's maps: cannot happen
		f.Errors.add("", "the form could not be read: "+err.Error())
		return nil
	}
	return body
}

// dateRules reads the timezone and date_format fields as the
// configuration checks them (config.CheckTimezone, CheckDateFormat); a bad
// one is an error beside its field, and then ok is false.
func (f *addForm) dateRules() (rules schema.DateRules, ok bool) {
	ok = true
	if err := config.CheckTimezone(f.Timezone); err != nil {
		f.Errors.add(fieldTimezone, err.Error())
		ok = false
	}
	if err := config.CheckDateFormat(f.DateFormat); err != nil {
		f.Errors.add(fieldDateFormat, err.Error())
		ok = false
	}
	if !ok {
		return schema.DateRules{}, false
	}
	e := config.ResourceEntry{Timezone: f.Timezone, DateFormat: f.DateFormat}
	return e.DateRules(), true
}

// filterSpec reads the include and exclude fields as the filter block
// they write (config.FilterLines); a bad entry is an error beside its
// field that names its line, and then ok is false.
func (f *addForm) filterSpec() (spec filter.Spec, ok bool) {
	spec, err := config.FilterLines(f.Include, f.Exclude)
	if err == nil {
		return spec, true
	}
	var fields []*config.FieldError
	collectFieldErrors(err, &fields)
	for _, fe := range fields {
		field := fieldInclude
		if strings.HasSuffix(fe.Path, ".exclude") {
			field = fieldExclude
		}
		msg := fe.Err.Error()
		if fe.Line > 0 {
			msg = fmt.Sprintf("line %d: %s", fe.Line, msg)
		}
		f.Errors.add(field, msg)
	}
	if len(fields) == 0 {
		f.Errors.add(fieldInclude, err.Error())
	}
	return filter.Spec{}, false
}

// selectBlock reads the select field: the mapping of a select block, or a
// document whose only key is select (as `dynamo suggest` prints it).
func selectBlock(text string) (any, error) {
	if _, err := config.ParseSelect([]byte(text)); err != nil {
		return nil, err // positioned and worded as the configuration's errors
	}
	var block map[string]any
	if err := yaml.Unmarshal([]byte(text), &block); err != nil {
		return nil, fmt.Errorf("the select block is not YAML: %w", err)
	}
	if inner, ok := block["select"]; ok && len(block) == 1 {
		return inner, nil
	}
	return block, nil
}

// definitionErrors places a registration's error next to the form's fields:
// config.FieldErrors by their path ($.policy.interval → interval), the
// others on the form itself.
func definitionErrors(err error, fe fieldErrors) {
	var fields []*config.FieldError
	collectFieldErrors(err, &fields)
	if len(fields) == 0 {
		p := api.ProblemOf(err)
		msg := p.Detail
		if msg == "" {
			msg = "the resource could not be registered; try again"
		}
		fe.add("", msg)
		return
	}
	for _, f := range fields {
		path := strings.TrimPrefix(strings.TrimPrefix(f.Path, "$"), ".")
		field := ""
		switch {
		case path == "url":
			field = fieldURL
		case path == "id":
			field = fieldID
		case path == "weight":
			field = fieldWeight
		case path == "timezone":
			field = fieldTimezone
		case path == "date_format":
			field = fieldDateFormat
		case strings.HasPrefix(path, "filter.exclude"):
			field = fieldExclude
		case strings.HasPrefix(path, "filter"):
			field = fieldInclude
		case path == "policy.interval":
			field = fieldInterval
		case strings.HasPrefix(path, "policy"):
			field = fieldPolicy
		case strings.HasPrefix(path, "select"):
			field = fieldSelect
		}
		msg := f.Err.Error()
		if field == "" || field == fieldSelect {
			msg = f.Error() // names the field (select.title: …)
		}
		fe.add(field, msg)
	}
}

// collectFieldErrors gathers the config.FieldErrors of err, through
// wrapping and joins.
func collectFieldErrors(err error, out *[]*config.FieldError) {
	switch e := err.(type) { //nolint:errorlint // walking the tree of errors, not matching one
	case nil:
	case *config.FieldError:
		*out = append(*out, e)
	case interface{ Unwrap() []error }:
		for _, inner := range e.Unwrap() {
			collectFieldErrors(inner, out)
		}
	default:
		collectFieldErrors(errors.Unwrap(err), out)
	}
}
