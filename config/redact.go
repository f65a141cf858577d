package config

import (
	"net/url"
	"strings"
)

// RedactURL is raw as it may be shown to people and written to logs: any
// credentials in it (`https://user:pass@host/`) become `***@host`, user
// name and password alike. Everything else is kept as written. A string
// that does not parse as a URL is returned with anything before an @ in
// its authority replaced the same way, so nothing that looks like
// credentials slips through.
func RedactURL(raw string) string {
	if !strings.Contains(raw, "@") {
		return raw // the common case: nothing to hide, nothing allocated
	}
	if u, err := url.Parse(raw); err == nil {
		if u.User == nil {
			return raw
		}
		u.User = nil
		s := u.String()
		if i := strings.Index(s, "//"); i >= 0 {
			return s[:i+2] + "***@" + s[i+2:]
		}
		return s
	}
	// Unparsable: hide whatever stands between "//" and the last "@"
	// before the path.
	start := strings.Index(raw, "//")
	if start < 0 {
		return raw
	}
	start += 2
	end := len(raw)
	if j := strings.IndexAny(raw[start:], "/?#"); j >= 0 {
		end = start + j
	}
	at := strings.LastIndex(raw[start:end], "@")
	if at < 0 {
		return raw
	}
	return raw[:start] + "***" + raw[start+at:]
}

// HasCredentials reports whether raw carries a user name or password in
// its authority (`https://user:pass@host/`).
func HasCredentials(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return RedactURL(raw) != raw
	}
	return u.User != nil
}
