package postgres

import (
	"errors"
	"fmt"
)

// errGone marks an unregistered resource (a tombstone).
var errGone = errors.New("storage: resource gone")

func gone(id string) error { return fmt.Errorf("resource %q: %w", id, errGone) }
