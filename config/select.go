package config

import (
	"errors"
	"fmt"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/parser"

	"github.com/dynamo-rss/dynamo/extractor"
)

// selectErrors compiles a resource's select block (when set) and returns
// one [*FieldError] per invalid selector, its path at+".title",
// at+".channel.description"... (at is the block's own path).
func selectErrors(at string, spec extractor.SelectSpec) []error {
	if spec.IsZero() {
		return nil
	}
	_, err := extractor.CompileSelectors(spec)
	return selectorFieldErrors(at, err)
}

// selectorFieldErrors turns what [extractor.CompileSelectors] returned
// into field errors under the path at.
func selectorFieldErrors(at string, err error) []error {
	if err == nil {
		return nil
	}
	var list []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		list = j.Unwrap()
	} else {
		list = []error{err}
	}
	out := make([]error, 0, len(list))
	for _, e := range list {
		var se *extractor.SelectorError
		if errors.As(e, &se) {
			msg := se.Err
			if se.Selector != "" {
				msg = fmt.Errorf("%q: %w", se.Selector, se.Err)
			}
			out = append(out, &FieldError{Path: at + "." + se.Field, Err: msg})
			continue
		}
		out = append(out, &FieldError{Path: at, Err: e})
	}
	return out
}

// ParseSelect reads a select block on its own, as `dynamo extract --select`
// and POST /preview take it: YAML or JSON, either the block itself
// ({item: ..., title: ...}) or a document with a select key (what
// `dynamo suggest` prints, or a whole resource definition), read strictly
// as the configuration file is (unknown keys are refused), then compiled.
// Field paths in errors start at "$.select" (or at "$" for the bare block).
//
// A block nested deeper than [MaxDepth], or whose aliases expand it past
// a few times its size, is refused before it is decoded.
func ParseSelect(data []byte) (*extractor.Selectors, error) {
	if fe := nestingProblem(data); fe != nil {
		return nil, underSelect(fe)
	}
	if f, err := parser.ParseBytes(data, 0); err == nil { // a syntax error is reported below, as ever
		for _, d := range f.Docs {
			if fe := aliasProblem(d, len(data)); fe != nil {
				return nil, underSelect(fe)
			}
		}
	}
	var spec extractor.SelectSpec
	var probe map[string]any
	if yaml.Unmarshal(data, &probe) == nil && probe["select"] != nil {
		r, err := DecodeResource(data)
		if err != nil {
			return nil, err
		}
		spec = r.Select
	} else if err := yaml.UnmarshalWithOptions(data, &spec, yaml.DisallowUnknownField()); err != nil {
		return nil, yamlError(err)
	}
	if spec.IsZero() {
		return nil, &FieldError{Path: "$.select", Err: errors.New(`empty: want at least item (e.g. item: "div.news")`)}
	}
	sel, err := extractor.CompileSelectors(spec)
	if err != nil {
		return nil, errors.Join(selectorFieldErrors("$.select", err)...)
	}
	return sel, nil
}

// underSelect names a problem of a bare select block (whose paths start at
// "$", at one of the block's fields) as the block's field, "$.select...",
// as the block's other errors are named.
func underSelect(fe *FieldError) *FieldError {
	first := strings.TrimPrefix(fe.Path, "$.")
	if i := strings.IndexAny(first, ".["); i >= 0 {
		first = first[:i]
	}
	switch first {
	case "from", "item", "title", "link", "description", "date", "image", "id", "channel":
		fe.Path = "$.select" + strings.TrimPrefix(fe.Path, "$")
	}
	return fe
}
