package storage

import (
	"context"
	"fmt"
	"time"
	"unicode/utf8"
)

// Sessions keeps the browser sessions that were ended before their time
// (a logout), so that every node sharing the store refuses a copy of the
// session's cookie. Both drivers implement it beside [Store], which stays
// as it is: a consumer that needs revocations asks for this interface.
type Sessions interface {
	// RevokeSession records that session id is ended until until (when its
	// cookie would have expired anyway; revoking it again keeps the later
	// of the two), and, in the same write, forgets every revocation whose
	// until is not after now, so revocations never outnumber the logouts
	// of one session lifetime. An id [ValidateSessionID] refuses fails
	// with its error.
	RevokeSession(ctx context.Context, id string, until, now time.Time) error
	// SessionRevoked reports whether session id was revoked (and not yet
	// forgotten). An id no session can have is not revoked.
	SessionRevoked(ctx context.Context, id string) (bool, error)
}

// MaxSessionIDLen bounds a session id, in bytes.
const MaxSessionIDLen = 128

// ValidateSessionID reports whether id can name a session: 1 to
// [MaxSessionIDLen] bytes of UTF-8 without NUL. The error wraps [ErrInvalid].
func ValidateSessionID(id string) error {
	if id == "" || len(id) > MaxSessionIDLen || !utf8.ValidString(id) {
		return fmt.Errorf("%w: session id of %d bytes (1 to %d bytes of UTF-8)", ErrInvalid, len(id), MaxSessionIDLen)
	}
	for i := range len(id) {
		if id[i] == 0 {
			return fmt.Errorf("%w: session id holds NUL", ErrInvalid)
		}
	}
	return nil
}
