package config

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/dynamo-rss/dynamo/extractor/filter"
)

// filterErrors compiles a resource's filter block (when set) and returns
// one [*FieldError] per bad entry or list, its path at+".exclude[1]" (at
// is the block's own path).
func filterErrors(at string, spec filter.Spec) []error {
	_, err := filter.Compile(spec)
	if err == nil {
		return nil
	}
	var out []error
	for _, e := range unjoin(err) {
		var fe *filter.Error
		if !errors.As(e, &fe) {
			out = append(out, &FieldError{Path: at, Err: e})
			continue
		}
		msg := fe.Err
		if fe.Entry != "" {
			msg = fmt.Errorf("%q: %w", fe.Entry, fe.Err)
		}
		out = append(out, &FieldError{Path: at + "." + fe.Field, Err: msg})
	}
	return out
}

// ParseFilter reads a filter block on its own, as `dynamo extract
// --filter` and POST /preview take it: YAML or JSON, either the block
// itself ({include: [...], exclude: [...]}) or a document with a filter
// key (a whole resource definition), read strictly as the configuration
// file is, then compiled. Every problem is reported, in document order,
// with its line and column; field paths start at "$.filter". An empty
// document is an empty block: every item is kept.
func ParseFilter(data []byte) (filter.Spec, error) {
	var spec filter.Spec
	if fe := nestingProblem(data); fe != nil {
		return spec, fe
	}
	f, err := parseYAML(data) // a flow mapping ({include: [...]}) is YAML, as a select block may be
	if err != nil {
		return spec, err
	}
	if len(f.Docs) == 0 || f.Docs[0].Body == nil {
		return spec, nil
	}
	body := f.Docs[0].Body
	if hasPath(body, "$.filter") {
		r, problems, meant, readable := decodeResource(data)
		if readable {
			problems = append(problems, placed(data, filterErrors("$.filter", r.Filter))...)
		}
		if len(problems) > 0 {
			return spec, joinProblems(tidy(problems, meant))
		}
		return r.Filter, nil
	}
	decode := func() error {
		spec = filter.Spec{}
		return yaml.NodeToValue(body, &spec, yaml.DisallowUnknownField())
	}
	meant := map[string]bool{}
	var problems []error
	if err := decode(); err != nil {
		var rest bool
		if problems, rest = decodeProblems(body, reflect.TypeFor[filter.Spec](), decode, err, meant); !rest {
			return filter.Spec{}, underFilter(tidy(problems, meant))
		}
	}
	problems = append(problems, placed(data, filterErrors("$", spec))...)
	if len(problems) > 0 {
		return filter.Spec{}, underFilter(tidy(problems, meant))
	}
	return spec, nil
}

// underFilter names the problems of a bare filter block (paths at "$")
// as the block's fields, "$.filter.exclude[1]", and joins them.
func underFilter(problems []error) error {
	for _, p := range problems {
		var fe *FieldError
		if errors.As(p, &fe) && fe.Path != "" {
			fe.Path = "$.filter" + strings.TrimPrefix(fe.Path, "$")
		}
	}
	return joinProblems(problems)
}

// FilterLines reads a filter written as two text fields of a form (the
// /new form's, POST /preview's include and exclude): one entry a line,
// blank lines skipped, white space around an entry trimmed. A bad entry is
// a problem at the field ("$.filter.include") and its line in the field.
func FilterLines(include, exclude string) (filter.Spec, error) {
	var spec filter.Spec
	var problems []error
	for _, list := range []struct {
		name    string
		text    string
		entries *[]string
	}{{"include", include, &spec.Include}, {"exclude", exclude, &spec.Exclude}} {
		var lines []int // the line of each entry in the field
		for i, l := range strings.Split(list.text, "\n") {
			if l = strings.TrimSpace(l); l != "" {
				*list.entries = append(*list.entries, l)
				lines = append(lines, i+1)
			}
		}
		for _, e := range filterErrors("$.filter", lineSpec(list.name, *list.entries)) {
			var fe *FieldError
			if errors.As(e, &fe) {
				field := strings.TrimPrefix(fe.Path, "$.filter.")
				if i := strings.IndexByte(field, '['); i >= 0 {
					var n int
					if _, err := fmt.Sscanf(field[i:], "[%d]", &n); err == nil && n < len(lines) {
						fe.Line, fe.Col = lines[n], 1
					}
				}
				fe.Path = "$.filter." + list.name
			}
			problems = append(problems, e)
		}
	}
	if len(problems) > 0 {
		return filter.Spec{}, joinProblems(problems)
	}
	return spec, nil
}

// lineSpec is a block of the one list name.
func lineSpec(name string, entries []string) filter.Spec {
	if name == "include" {
		return filter.Spec{Include: entries}
	}
	return filter.Spec{Exclude: entries}
}
