package storage

import (
	"fmt"
	"unicode"
	"unicode/utf8"
)

// MaxIDLen bounds a resource id, in bytes.
const MaxIDLen = 256

// ValidateID reports whether id can name a resource: 1 to [MaxIDLen] bytes of
// UTF-8 without 0x00 or other control characters. The error wraps [ErrInvalid].
func ValidateID(id string) error {
	switch {
	case id == "":
		return fmt.Errorf("%w: empty resource id", ErrInvalid)
	case len(id) > MaxIDLen:
		return fmt.Errorf("%w: resource id is %d bytes, more than %d", ErrInvalid, len(id), MaxIDLen)
	case !utf8.ValidString(id):
		return fmt.Errorf("%w: resource id %q is not UTF-8", ErrInvalid, id)
	}
	for i, r := range id {
		if unicode.IsControl(r) {
			return fmt.Errorf("%w: resource id %q has control character %U at byte %d", ErrInvalid, id, r, i)
		}
	}
	return nil
}
