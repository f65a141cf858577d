package poller

import (
	"net/url"
	"strings"

	"github.com/dynamo-rss/dynamo/config"
)

// redacted returns err with the credentials of rawURL (a resource's page,
// `https://user:pass@host/`) hidden in its text as [config.RedactURL] hides
// them, so that they reach neither the log nor Status.LastError; err itself
// when rawURL carries none or its text does not show them. errors.Is and
// errors.As see through it.
func redacted(err error, rawURL string) error {
	if err == nil || !strings.Contains(rawURL, "@") {
		return err
	}
	safe := config.RedactURL(rawURL)
	if safe == rawURL {
		return err
	}
	msg := err.Error()
	out := strings.ReplaceAll(msg, rawURL, safe)
	if u, perr := url.Parse(rawURL); perr == nil && u.User != nil {
		out = strings.ReplaceAll(out, u.User.String()+"@", "***@") // the URL as another part wrote it again
		if p, ok := u.User.Password(); ok && p != "" {
			out = strings.ReplaceAll(out, p, "***") // and anywhere else, decoded
		}
	}
	if out == msg {
		return err
	}
	return &redactedError{err: err, msg: out}
}

// redactedError is an error whose text hides credentials (see redacted).
type redactedError struct {
	err error
	msg string
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }
