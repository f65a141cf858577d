package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/goccy/go-yaml"
)

// ParseResource reads one resource definition sent to the admin API (JSON,
// or YAML: JSON is read by the same strict parser as the file, so unknown
// fields and bad values are refused with the same messages), sets its id
// when the body has none, and validates it under the poller settings p with
// [PollerConfig.ValidateResource]. Field paths in errors start at "$".
func ParseResource(data []byte, id string, p PollerConfig) (ResourceEntry, error) {
	r, err := DecodeResource(data)
	if err != nil {
		return ResourceEntry{}, err
	}
	switch {
	case r.ID == "":
		r.ID = id
	case r.ID != id:
		return ResourceEntry{}, &FieldError{Path: "$.id", Err: fmt.Errorf("%q differs from the id in the URL %q", r.ID, id)}
	}
	if errs := p.ValidateResource("$", r); len(errs) > 0 {
		return ResourceEntry{}, errors.Join(errs...)
	}
	return r, nil
}

// DecodeResource reads a resource definition (JSON or YAML) strictly, as the
// file's resources are read, without validating it: a stored registration
// is decoded with it, then validated under the configuration in force.
func DecodeResource(data []byte) (ResourceEntry, error) {
	var r ResourceEntry
	if err := yaml.UnmarshalWithOptions(data, &r, yaml.DisallowUnknownField()); err != nil {
		return ResourceEntry{}, yamlError(err)
	}
	return r, nil
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
