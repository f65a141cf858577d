package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/goccy/go-yaml"
)

// ParseResource reads one resource definition sent to the admin API (JSON,
// or YAML: JSON is read by the same strict parser as the file, so unknown
// fields and bad values are refused with the same messages), sets its id
// when the body has none, and validates it under the poller settings p with
// [PollerConfig.ValidateResource]. Field paths in errors start at "$".
//
// Every problem is reported, as the file's are: the fields the decoder
// refuses (unknown, or of the wrong type) are taken out, the rest is
// validated, and the error joins one [*FieldError] per problem in body
// order, each with its line and column (errors.As finds the first). A
// field the decoder refused raises no second problem of its own (a url of
// the wrong type is not also missing). Only a body that cannot be read at
// all (malformed JSON, a YAML syntax error, too deep) has one problem.
func ParseResource(data []byte, id string, p PollerConfig) (ResourceEntry, error) {
	r, problems, meant, readable := decodeResource(data)
	if !readable {
		return ResourceEntry{}, joinProblems(tidy(problems, meant))
	}
	refused := make(map[string]bool, len(problems)+len(meant))
	for _, e := range problems {
		var fe *FieldError
		if errors.As(e, &fe) && fe.Path != "" {
			refused[fe.Path] = true
		}
	}
	for m := range meant {
		refused[m] = true
	}
	switch {
	case r.ID == "":
		r.ID = id
	case r.ID != id:
		problems = append(problems, &FieldError{Path: "$.id", Err: fmt.Errorf("%q differs from the id in the URL %q", r.ID, id)})
	}
	for _, e := range p.ValidateResource("$", r) {
		var fe *FieldError
		if errors.As(e, &fe) && knockOn(fe.Path, refused) {
			continue
		}
		problems = append(problems, e)
	}
	if len(problems) > 0 {
		return ResourceEntry{}, joinProblems(tidy(placed(data, problems), meant))
	}
	return r, nil
}

// DecodeResource reads a resource definition (JSON or YAML) strictly, as the
// file's resources are read, without validating it: a stored registration
// is decoded with it, then validated under the configuration in force. A
// body that starts as JSON must be JSON: a malformed one is reported in
// JSON's terms, with its line and column. Every problem is reported, in
// body order, an unknown field with the closest known one.
func DecodeResource(data []byte) (ResourceEntry, error) {
	r, problems, meant, _ := decodeResource(data)
	if len(problems) > 0 {
		return ResourceEntry{}, joinProblems(tidy(problems, meant))
	}
	return r, nil
}

// decodeResource decodes a definition, taking out the fields the decoder
// refuses: r is what the rest decoded to, problems are the refusals (their
// paths and places set), meant the fields an unknown key was meant to be.
// readable is false when the body could not be read at all, or its rest
// did not decode: then r is nothing to validate.
func decodeResource(data []byte) (r ResourceEntry, problems []error, meant map[string]bool, readable bool) {
	meant = map[string]bool{}
	if fe := nestingProblem(data); fe != nil {
		return r, []error{fe}, meant, false
	}
	if fe := jsonProblem(data); fe != nil {
		return r, []error{fe}, meant, false
	}
	f, err := parseYAML(data)
	if err != nil {
		return r, unjoin(err), meant, false
	}
	if len(f.Docs) == 0 || f.Docs[0].Body == nil {
		return r, nil, meant, true
	}
	body := f.Docs[0].Body
	decode := func() error {
		r = ResourceEntry{}
		return yaml.NodeToValue(body, &r, yaml.DisallowUnknownField())
	}
	if err := decode(); err != nil {
		problems, readable = decodeProblems(body, reflect.TypeFor[ResourceEntry](), decode, err, meant)
		return r, problems, meant, readable
	}
	return r, nil, meant, true
}

// joinProblems is one problem as it is, several joined.
func joinProblems(problems []error) error {
	if len(problems) == 1 {
		return problems[0]
	}
	return errors.Join(problems...)
}

// DecodeStoredResource reads a registration as the store keeps it (the
// JSON of a [ResourceEntry] that was validated when registered): with
// encoding/json, strictly, which at start-up is many times faster than the
// YAML parser for a million registrations; anything it cannot read goes
// through [DecodeResource].
func DecodeStoredResource(data []byte) (ResourceEntry, error) {
	var r ResourceEntry
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err == nil && !dec.More() {
		return r, nil
	}
	return DecodeResource(data)
}

// MarshalJSON writes the duration like "10m0s".
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// MarshalJSON writes the size as a byte count.
func (s Size) MarshalJSON() ([]byte, error) { return json.Marshal(int64(s)) }

// MarshalJSON writes the alpha as a number or "auto".
func (a Alpha) MarshalJSON() ([]byte, error) {
	if a.Auto {
		return json.Marshal("auto")
	}
	return json.Marshal(a.Value)
}

// IsZero reports an unset alpha (for omitzero).
func (a Alpha) IsZero() bool { return !a.Set }

// UnmarshalJSON reads a duration written as "10m" (or a number of seconds).
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		var secs float64
		if err := json.Unmarshal(b, &secs); err != nil {
			return fmt.Errorf("duration: want a string like \"10m\", got %s", b)
		}
		*d = Duration(secs * float64(time.Second))
		return nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("invalid duration %q (want e.g. 30s, 10m, 6h)", s)
	}
	*d = Duration(v)
	return nil
}

// UnmarshalJSON reads a size written as a byte count or like "5MiB".
func (s *Size) UnmarshalJSON(b []byte) error {
	var n int64
	if err := json.Unmarshal(b, &n); err == nil {
		*s = Size(n)
		return nil
	}
	var str string
	if err := json.Unmarshal(b, &str); err != nil {
		return fmt.Errorf("size: want a number or a string like \"5MiB\", got %s", b)
	}
	v, err := ParseSize(str)
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// UnmarshalJSON reads an alpha written as a number in [0,1] or "auto".
func (a *Alpha) UnmarshalJSON(b []byte) error {
	if string(b) == `"auto"` {
		*a = Alpha{Auto: true, Set: true}
		return nil
	}
	var v float64
	if err := json.Unmarshal(b, &v); err != nil || v < 0 || v > 1 {
		return fmt.Errorf("alpha must be a number in [0,1] or \"auto\", got %s", b)
	}
	*a = Alpha{Value: v, Set: true}
	return nil
}

// MarshalJSON writes the weight as a number.
func (w Weight) MarshalJSON() ([]byte, error) { return json.Marshal(w.Value) }

// IsZero reports an unset weight (for omitzero).
func (w Weight) IsZero() bool { return !w.Set }

// UnmarshalJSON reads a weight written as a number.
func (w *Weight) UnmarshalJSON(b []byte) error {
	var v float64
	if err := json.Unmarshal(b, &v); err != nil {
		return fmt.Errorf("weight must be a positive number, got %s", b)
	}
	*w = Weight{Value: v, Set: true}
	return nil
}
