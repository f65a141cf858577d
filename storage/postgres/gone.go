package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/dynamo-rss/dynamo/storage"
)

// errGone marks an unregistered resource (a tombstone); it matches
// storage.ErrNotFound too.
var errGone = storage.ErrGone

func gone(id string) error { return fmt.Errorf("resource %q: %w", id, errGone) }

// diskFull is PostgreSQL's SQLSTATE for a full disk.
const diskFull = "53100"

// classify marks a database error that says the disk is full with
// storage.ErrDiskFull (the transaction was rolled back, nothing is
// written), and one that says the database cannot be reached (no
// connection, a connection lost, the server shutting down or starting, a
// deadline passed waiting for it) with storage.ErrUnavailable.
func classify(err error) error {
	if err == nil || errors.Is(err, storage.ErrUnavailable) || errors.Is(err, storage.ErrDiskFull) {
		return err
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case pe.Code == diskFull:
			return fmt.Errorf("%w: %w", storage.ErrDiskFull, err)
		case strings.HasPrefix(pe.Code, "08"), // connection exception
			pe.Code == "57P01", pe.Code == "57P02", pe.Code == "57P03", // shutting down, crashed, starting
			pe.Code == "53300": // too many connections
			return fmt.Errorf("%w: %w", storage.ErrUnavailable, err)
		}
		return err
	}
	var (
		ce *pgconn.ConnectError
		ne net.Error
	)
	if errors.As(err, &ce) || errors.As(err, &ne) || pgconn.Timeout(err) || pgconn.SafeToRetry(err) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w: %w", storage.ErrUnavailable, err)
	}
	return err
}

// classifyErr is classify for a method's named error result, deferred at
// the top of every exported method that reaches the database.
func classifyErr(err *error) { *err = classify(*err) }
