package extractor

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"
)

// FieldSpec is a field of a select block written as a mapping, for the
// values a page does not give cleanly (SELECTORS.md):
//
//	date: {select: "span.meta", pattern: 'Posted (\d{4}-\d{2}-\d{2})'}
//	title: {select: ["h2", "a.headline"]}                   # the first that yields text
//	description: {select: ["p.lead", "p.more"], join: " "}  # all, joined
//	date: {select: "td:nth-child(3)", format: "02/01/06"}   # this field's date layout
type FieldSpec struct {
	// Select is one selector or several: the first that yields a value
	// wins, or, with Join set, every value is kept, joined by it.
	Select []string
	Join   *string
	// Pattern is a Go regular expression (RE2) applied to the value: its
	// first group, else its whole match; no match leaves the field empty,
	// with a diagnostic.
	Pattern string
	// Format is a Go time layout tried first for a date (before the
	// resource's date_format and the usual forms).
	Format string
}

// fieldWire is a field as written: a selector, or a mapping.
type fieldWire struct {
	sel  string
	spec *FieldSpec
}

// fieldSpecWire is a FieldSpec as written; select is a string or a list.
type fieldSpecWire struct {
	Select  selectList `yaml:"select" json:"select"`
	Join    *string    `yaml:"join,omitempty" json:"join,omitempty"`
	Pattern string     `yaml:"pattern,omitempty" json:"pattern,omitempty"`
	Format  string     `yaml:"format,omitempty" json:"format,omitempty"`
}

// selectList is one selector or a list of them.
type selectList []string

// UnmarshalYAML reads a string or a list of strings.
func (l *selectList) UnmarshalYAML(unmarshal func(any) error) error {
	var s string
	if err := unmarshal(&s); err == nil {
		*l = selectList{s}
		return nil
	}
	var list []string
	if err := unmarshal(&list); err != nil {
		return errors.New("select: want a selector or a list of selectors")
	}
	*l = list
	return nil
}

// UnmarshalJSON reads a string or an array of strings.
func (l *selectList) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*l = selectList{s}
		return nil
	}
	var list []string
	if err := json.Unmarshal(b, &list); err != nil {
		return errors.New("select: want a selector or a list of selectors")
	}
	*l = list
	return nil
}

func (l selectList) value() any {
	if len(l) == 1 {
		return l[0]
	}
	return []string(l)
}

// MarshalYAML writes one selector as a string.
func (l selectList) MarshalYAML() (any, error) { return l.value(), nil }

// MarshalJSON writes one selector as a string.
func (l selectList) MarshalJSON() ([]byte, error) { return json.Marshal(l.value()) }

func (f *fieldWire) set(spec fieldSpecWire) {
	f.spec = &FieldSpec{Select: []string(spec.Select), Join: spec.Join, Pattern: spec.Pattern, Format: spec.Format}
}

// UnmarshalYAML reads a selector or a mapping.
func (f *fieldWire) UnmarshalYAML(unmarshal func(any) error) error {
	if err := unmarshal(&f.sel); err == nil {
		return nil
	}
	var spec fieldSpecWire
	if err := unmarshal(&spec); err != nil {
		return err
	}
	f.set(spec)
	return nil
}

// UnmarshalJSON reads a selector or an object.
func (f *fieldWire) UnmarshalJSON(b []byte) error {
	if err := json.Unmarshal(b, &f.sel); err == nil {
		return nil
	}
	var spec fieldSpecWire
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&spec); err != nil {
		return err
	}
	f.set(spec)
	return nil
}

func (f fieldWire) value() any {
	if f.spec == nil {
		return f.sel
	}
	return fieldSpecWire{Select: f.spec.Select, Join: f.spec.Join, Pattern: f.spec.Pattern, Format: f.spec.Format}
}

// MarshalYAML writes a selector or a mapping.
func (f fieldWire) MarshalYAML() (any, error) { return f.value(), nil }

// MarshalJSON writes a selector or an object.
func (f fieldWire) MarshalJSON() ([]byte, error) { return json.Marshal(f.value()) }

// IsZero reports an absent field (omitempty, omitzero).
func (f fieldWire) IsZero() bool { return f.sel == "" && f.spec == nil }

// selectWire is a SelectSpec as written.
type selectWire struct {
	From        string      `yaml:"from,omitempty" json:"from,omitempty"`
	Item        string      `yaml:"item,omitempty" json:"item,omitempty"`
	Title       fieldWire   `yaml:"title,omitempty" json:"title,omitzero"`
	Link        fieldWire   `yaml:"link,omitempty" json:"link,omitzero"`
	Description fieldWire   `yaml:"description,omitempty" json:"description,omitzero"`
	Date        fieldWire   `yaml:"date,omitempty" json:"date,omitzero"`
	Image       fieldWire   `yaml:"image,omitempty" json:"image,omitzero"`
	ID          fieldWire   `yaml:"id,omitempty" json:"id,omitzero"`
	Channel     channelWire `yaml:"channel,omitempty" json:"channel,omitzero"`
}

type channelWire struct {
	Title       fieldWire `yaml:"title,omitempty" json:"title,omitzero"`
	Link        fieldWire `yaml:"link,omitempty" json:"link,omitzero"`
	Description fieldWire `yaml:"description,omitempty" json:"description,omitzero"`
	Image       fieldWire `yaml:"image,omitempty" json:"image,omitzero"`
}

func (c channelWire) IsZero() bool { return c == channelWire{} }

// wireFields lists the fields of w with their names, in the block's order.
func (w *selectWire) fields() []struct {
	name string
	f    *fieldWire
} {
	return []struct {
		name string
		f    *fieldWire
	}{{"title", &w.Title}, {"link", &w.Link}, {"description", &w.Description}, {"date", &w.Date},
		{"image", &w.Image}, {"id", &w.ID}, {"channel.title", &w.Channel.Title}, {"channel.link", &w.Channel.Link},
		{"channel.description", &w.Channel.Description}, {"channel.image", &w.Channel.Image}}
}

// strings returns the string fields of s, by the names of fields().
func (s *SelectSpec) stringFields() []*string {
	return []*string{&s.Title, &s.Link, &s.Description, &s.Date, &s.Image, &s.ID,
		&s.Channel.Title, &s.Channel.Link, &s.Channel.Description, &s.Channel.Image}
}

func (s *SelectSpec) fromWire(w selectWire) {
	*s = SelectSpec{From: w.From, Item: w.Item}
	strs := s.stringFields()
	for i, f := range w.fields() {
		if f.f.spec != nil {
			if s.Mapped == nil {
				s.Mapped = make(map[string]FieldSpec)
			}
			s.Mapped[f.name] = *f.f.spec
			continue
		}
		*strs[i] = f.f.sel
	}
}

func (s SelectSpec) toWire() selectWire {
	w := selectWire{From: s.From, Item: s.Item}
	strs := s.stringFields()
	for i, f := range w.fields() {
		if m, ok := s.Mapped[f.name]; ok {
			f.f.spec = &m
			continue
		}
		f.f.sel = *strs[i]
	}
	return w
}

// UnmarshalYAML reads a select block whose fields are selectors or
// mappings (github.com/goccy/go-yaml calls it with the decoder's options,
// so unknown keys are refused where the configuration refuses them).
func (s *SelectSpec) UnmarshalYAML(unmarshal func(any) error) error {
	var w selectWire
	if err := unmarshal(&w); err != nil {
		return err
	}
	s.fromWire(w)
	return nil
}

// UnmarshalJSON reads a select block whose fields are selectors or
// objects; unknown keys are refused.
func (s *SelectSpec) UnmarshalJSON(b []byte) error {
	var w selectWire
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&w); err != nil {
		return err
	}
	s.fromWire(w)
	return nil
}

// MarshalYAML writes the block as it is read.
func (s SelectSpec) MarshalYAML() (any, error) { return s.toWire(), nil }

// MarshalJSON writes the block as it is read.
func (s SelectSpec) MarshalJSON() ([]byte, error) { return json.Marshal(s.toWire()) }

// Equal reports whether two blocks select alike.
func (s SelectSpec) Equal(o SelectSpec) bool {
	if s.From != o.From || s.Item != o.Item || s.Channel != o.Channel {
		return false
	}
	a, b := s.stringFields(), o.stringFields()
	for i := range a {
		if *a[i] != *b[i] {
			return false
		}
	}
	return maps.EqualFunc(s.Mapped, o.Mapped, func(x, y FieldSpec) bool {
		return slices.Equal(x.Select, y.Select) && (x.Join == nil) == (y.Join == nil) &&
			(x.Join == nil || *x.Join == *y.Join) && x.Pattern == y.Pattern && x.Format == y.Format
	})
}

// maxFieldSelectors bounds the selectors of one field.
const maxFieldSelectors = 16

// fieldSel is a compiled field: its selectors, the pattern and the date
// layout.
type fieldSel struct {
	sels    []*selector
	join    *string
	pattern *regexp.Regexp
	layout  string
}

// src is the field's source, for diagnostics.
func (f *fieldSel) src() string {
	if len(f.sels) == 1 {
		return f.sels[0].src
	}
	srcs := make([]string, len(f.sels))
	for i, s := range f.sels {
		srcs[i] = s.src
	}
	return "[" + strings.Join(srcs, ", ") + "]"
}

// compileField compiles a field written as a mapping; each error is a
// [*SelectorError] naming the field and its key ("date.pattern").
func compileField(name string, spec FieldSpec) (*fieldSel, []error) {
	var errs []error
	fail := func(key, src string, err error) {
		f := name
		if key != "" {
			f += "." + key
		}
		errs = append(errs, &SelectorError{Field: f, Selector: src, Err: err})
	}
	f := &fieldSel{join: spec.Join}
	switch {
	case len(spec.Select) == 0:
		fail("select", "", errors.New("required: one selector or a list of them"))
	case len(spec.Select) > maxFieldSelectors:
		fail("select", "", fmt.Errorf("%d selectors, at most %d", len(spec.Select), maxFieldSelectors))
	}
	for i, src := range spec.Select {
		sel, err := compileSelector(src)
		if err != nil {
			key := "select"
			if len(spec.Select) > 1 {
				key = fmt.Sprintf("select[%d]", i)
			}
			fail(key, src, err)
			continue
		}
		f.sels = append(f.sels, sel)
	}
	if spec.Pattern != "" {
		re, err := regexp.Compile(spec.Pattern)
		if err != nil {
			fail("pattern", spec.Pattern, fmt.Errorf("not a Go regular expression (RE2): %w", err))
		}
		f.pattern = re
	}
	if spec.Format != "" {
		if name != "date" {
			fail("format", spec.Format, errors.New("only a date has a format"))
		} else if err := checkLayout(spec.Format); err != nil {
			fail("format", spec.Format, err)
		}
		f.layout = spec.Format
	}
	return f, errs
}

// checkLayout reports a string that is not a Go time layout of a date: it
// must write the day, month or year of a time (two dates differing in
// all three must read differently) and read back what it writes.
func checkLayout(layout string) error {
	ref := time.Date(2006, time.January, 2, 15, 4, 5, 0, time.UTC)
	other := time.Date(2011, time.November, 23, 15, 4, 5, 0, time.UTC)
	out := ref.Format(layout)
	if out == other.Format(layout) {
		return errors.New(`not a Go time layout of a date: write the reference time Mon Jan 2 15:04:05 MST 2006 as the page writes its dates, e.g. "02/01/06 15:04" for 03/11/26 18:00`)
	}
	if _, err := time.Parse(layout, out); err != nil {
		return fmt.Errorf("not a Go time layout that reads back what it writes: %w", err)
	}
	return nil
}
