package postgres

import (
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/dynamo-rss/dynamo/storage"
)

// errGone marks an unregistered resource (a tombstone); like the store
// interface's sentinel, it also matches storage.ErrNotFound.
var errGone error = goneError{}

type goneError struct{}

func (goneError) Error() string        { return "storage: resource gone" }
func (goneError) Is(target error) bool { return target == storage.ErrNotFound } //nolint:errorlint // sentinel identity

func gone(id string) error { return fmt.Errorf("resource %q: %w", id, errGone) }

// diskFull is PostgreSQL's SQLSTATE for a full disk.
const diskFull = "53100"

// classify marks a database error that says the disk is full with
// storage.ErrDiskFull: the transaction was rolled back, nothing is written.
func classify(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == diskFull {
		return fmt.Errorf("%w: %w", storage.ErrDiskFull, err)
	}
	return err
}
