package config

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"golang.org/x/net/http/httpguts"

	"github.com/dynamo-rss/dynamo/schema"
)

var idRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// Validate checks what spans fields: unique ids that storage and URLs accept,
// absolute http(s) URLs, sane poller settings and every resolved policy. It
// reports every problem, not only the first: the result joins one
// [*FieldError] per problem (errors.As finds the first).
func (c *Config) Validate() error {
	var errs []error
	bad := func(path string, format string, args ...any) {
		errs = append(errs, &FieldError{Path: path, Err: fmt.Errorf(format, args...)})
	}
	if c.PublicURL != "" && !isHTTPURL(c.PublicURL) {
		bad("$.public_url", "%q is not an absolute http(s) URL", c.PublicURL)
	}
	if c.Listen == "" {
		bad("$.listen", "must not be empty")
	}
	switch c.Storage.Driver {
	case DriverBadger:
		if c.Storage.Path == "" {
			bad("$.storage.path", "must not be empty with driver badger")
		}
	case DriverPostgres:
		if c.Storage.DSN == "" && c.Storage.DSNFile == "" {
			bad("$.storage.dsn", "driver postgres needs dsn or dsn_file")
		}
	default:
		bad("$.storage.driver", "unknown driver %q (want badger or postgres)", c.Storage.Driver)
	}
	if c.MemoryLimit != 0 && c.MemoryLimit < 64<<20 {
		bad("$.memory_limit", "%d bytes is too little to run dynamo; give at least 64MiB, or 0 to choose automatically", int64(c.MemoryLimit))
	}
	if c.Storage.MinFree < 0 {
		bad("$.storage.min_free", "must not be negative")
	}
	switch c.Log.Level {
	case "debug", "info", "warn", "error":
	default:
		bad("$.log.level", "unknown level %q (want debug, info, warn or error)", c.Log.Level)
	}
	switch c.Log.Format {
	case "text", "json":
	default:
		bad("$.log.format", "unknown format %q (want text or json)", c.Log.Format)
	}
	if n := c.Feeds.SubscribeMax; n < 1 || n > 10000 {
		bad("$.feeds.subscribe_max", "must be between 1 and 10000, got %d", n)
	}
	switch c.Registration {
	case RegistrationClosed, RegistrationOpen:
	default:
		bad("$.registration", "unknown mode %q (want closed or open)", c.Registration)
	}
	for i, s := range c.TrustedProxies {
		if _, err := parseProxy(s); err != nil {
			bad(fmt.Sprintf("$.trusted_proxies[%d]", i), "%q is neither an IP address nor a CIDR prefix (10.0.0.0/8)", s)
		}
	}
	c.validateWebSub(bad)
	p := c.Poller
	if p.Workers < 1 || p.Workers > 1024 {
		bad("$.poller.workers", "must be between 1 and 1024, got %d", p.Workers)
	}
	for _, d := range []struct {
		path string
		v    Duration
	}{{"$.poller.timeout", p.Timeout}, {"$.poller.connect_timeout", p.ConnectTimeout}, {"$.poller.header_timeout", p.HeaderTimeout}} {
		if d.v <= 0 {
			bad(d.path, "must be positive")
		}
	}
	if p.MaxBody <= 0 {
		bad("$.poller.max_body", "must be positive")
	}
	if p.MaxRedirects < 0 || p.MaxRedirects > 20 {
		bad("$.poller.max_redirects", "must be between 0 and 20, got %d", p.MaxRedirects)
	}
	if p.UserAgent == "" {
		bad("$.poller.user_agent", "must not be empty")
	}
	if p.Retention.MaxVersions < 0 {
		bad("$.poller.retention.max_versions", "must not be negative")
	}
	if b := p.Budget; b.PollsPerDay < 0 || math.IsInf(b.PollsPerDay, 0) || math.IsNaN(b.PollsPerDay) {
		bad("$.poller.budget.polls_per_day", "must be a non-negative number (0: %d per budget resource), got %v", DefaultPollsPerResource, b.PollsPerDay)
	}
	if d := p.Budget.MaxInterval.D(); d < BudgetFloor {
		bad("$.poller.budget.max_interval", "must be at least %v (the shortest time between two polls), got %v", BudgetFloor, d)
	}
	if !ValidKind(p.Policy.Kind) {
		bad("$.poller.policy.kind", "unknown policy kind %q (want flat, smart or budget)", p.Policy.Kind)
	} else if err := p.ResolvePolicy(PolicySpec{}).Validate(); err != nil {
		bad("$.poller.policy", "%w", err)
	}
	p.validateFetch(bad)
	seen := make(map[string]int, len(c.Resources))
	for i, r := range c.Resources {
		at := fmt.Sprintf("$.resources[%d]", i)
		errs = append(errs, p.ValidateResource(at, r)...)
		if j, dup := seen[r.ID]; dup {
			bad(at+".id", "duplicate id %q (also resources[%d])", r.ID, j)
		} else {
			seen[r.ID] = i
		}
	}
	return errors.Join(errs...)
}

// ValidateResource checks one resource as it would be applied under these
// poller settings; at is its YAML path ("$.resources[2]", or "$" for a
// resource sent alone to the admin API). The file and the admin API both
// validate through it, so a resource means the same from either source.
func (p PollerConfig) ValidateResource(at string, r ResourceEntry) []error {
	var errs []error
	bad := func(path string, format string, args ...any) {
		errs = append(errs, &FieldError{Path: at + path, Err: fmt.Errorf(format, args...)})
	}
	if !ValidID(r.ID) {
		bad(".id", "%q is not a valid id (letters, digits, '.', '_', '-'; at most 128; starts with a letter or digit)", r.ID)
	}
	if !isHTTPURL(r.URL) {
		bad(".url", "%q is not an absolute http(s) URL", r.URL)
	}
	switch {
	case r.Policy.Kind != "" && !ValidKind(r.Policy.Kind):
		bad(".policy.kind", "unknown policy kind %q (want flat, smart or budget)", r.Policy.Kind)
	case r.Weight.Set && (!(r.Weight.Value > 0) || math.IsInf(r.Weight.Value, 1)):
		bad(".weight", "must be a positive number, got %v", r.Weight.Value)
	case r.Policy.Kind == "" && !ValidKind(p.Policy.Kind):
		// It inherits the default's kind, which is reported once, at
		// poller.policy.kind, not again for every resource.
	default:
		if err := p.ResolveResource(r).Validate(); err != nil {
			bad(".policy", "%w", err)
		}
	}
	if r.Retention.MaxVersions < 0 {
		bad(".retention.max_versions", "must not be negative")
	}
	if err := CheckTimezone(r.Timezone); err != nil {
		bad(".timezone", "%v", err)
	}
	if err := CheckDateFormat(r.DateFormat); err != nil {
		bad(".date_format", "%v", err)
	}
	errs = append(errs, selectErrors(at+".select", r.Select)...)
	errs = append(errs, filterErrors(at+".filter", r.Filter)...)
	for _, name := range slices.Sorted(maps.Keys(r.Headers)) {
		if err := checkHeader(name, r.Headers[name]); err != nil {
			bad(".headers."+name, "%v", err)
		}
	}
	if strings.ContainsAny(r.Title, "\r\n") {
		bad(".title", "must be one line")
	}
	errs = append(errs, fetchErrors(at, r)...)
	return errs
}

// reservedHeaders are the headers a resource may not set: the host, the
// hop-by-hop headers (RFC 9110 §7.6.1) and those dynamo sets itself.
var reservedHeaders = map[string]bool{
	"Host": true, "Connection": true, "Keep-Alive": true, "Proxy-Connection": true, "Proxy-Authenticate": true,
	"Proxy-Authorization": true, "Te": true, "Trailer": true, "Transfer-Encoding": true, "Upgrade": true,
	"Content-Length": true, "If-None-Match": true, "If-Modified-Since": true,
}

// checkHeader checks one of a resource's headers. Its error never quotes
// the value, which may be a secret.
func checkHeader(name, value string) error {
	switch {
	case !httpguts.ValidHeaderFieldName(name):
		return fmt.Errorf("%q is not a valid header name", name)
	case reservedHeaders[http.CanonicalHeaderKey(name)]:
		return fmt.Errorf("%s cannot be set per resource (the host and hop-by-hop headers are the connection's; dynamo sets the conditional ones)", http.CanonicalHeaderKey(name))
	case strings.ContainsAny(value, "\r\n"):
		return errors.New("the value contains a line break (CR or LF), which would start another header")
	case !httpguts.ValidHeaderFieldValue(value):
		return errors.New("the value contains a control character")
	}
	return nil
}

// ValidID reports whether id is a valid resource id: what storage keys and
// URL paths accept unescaped.
func ValidID(id string) bool { return idRE.MatchString(id) }

// Location returns the resource's time zone for dates without one (UTC when
// unset). The entry must have been validated.
func (r ResourceEntry) Location() *time.Location {
	if r.Timezone == "" {
		return time.UTC
	}
	loc, err := time.LoadLocation(r.Timezone)
	if err != nil {
		return time.UTC // validated before; unreachable unless the zone database changed under us
	}
	return loc
}

// CheckTimezone checks a timezone setting: "" or an IANA zone name.
func CheckTimezone(tz string) error {
	if tz == "" {
		return nil
	}
	if _, err := time.LoadLocation(tz); err != nil {
		return fmt.Errorf("unknown time zone %q (want an IANA name such as Europe/Rome)", tz)
	}
	return nil
}

// CheckDateFormat checks a date_format setting: "" or a Go time layout.
func CheckDateFormat(layout string) error {
	if layout != "" && !validLayout(layout) {
		return fmt.Errorf("%q is not a Go time layout (write the reference time Mon Jan 2 15:04:05 MST 2006 the way the page writes dates, e.g. 02.01.2006 15:04)", layout)
	}
	return nil
}

// DateRules are the rules for reading this resource's dates: its
// date_format first, its timezone for dates without a zone.
func (r ResourceEntry) DateRules() schema.DateRules {
	return schema.DateRules{Layout: r.DateFormat, Location: r.Location()}
}

// validLayout reports whether s is a Go layout that names at least a day, a
// month or a year, and reads back what it writes.
func validLayout(s string) bool {
	ref := time.Date(2026, time.November, 21, 14, 30, 5, 0, time.UTC)
	out := ref.Format(s)
	if out == s {
		return false // no layout element at all
	}
	_, err := time.Parse(s, out)
	return err == nil
}

func isHTTPURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && u.IsAbs() && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// validateWebSub checks the websub section.
func (c *Config) validateWebSub(bad func(path string, format string, args ...any)) {
	w := c.WebSub
	if c.WebSubEnabled() && c.PublicURL == "" {
		bad("$.websub.enabled", "the WebSub hub needs public_url (hub and topic URLs are absolute)")
	}
	for _, d := range []struct {
		path string
		v    Duration
	}{{"$.websub.lease_default", w.LeaseDefault}, {"$.websub.lease_min", w.LeaseMin}, {"$.websub.lease_max", w.LeaseMax}, {"$.websub.retry_for", w.RetryFor}} {
		if d.v <= 0 {
			bad(d.path, "must be positive")
		}
	}
	if w.LeaseMin > w.LeaseMax {
		bad("$.websub.lease_min", "%v exceeds lease_max %v", w.LeaseMin.D(), w.LeaseMax.D())
	}
	if w.LeaseDefault < w.LeaseMin || w.LeaseDefault > w.LeaseMax {
		bad("$.websub.lease_default", "%v is outside [lease_min, lease_max] = [%v, %v]", w.LeaseDefault.D(), w.LeaseMin.D(), w.LeaseMax.D())
	}
	if w.Workers < 1 || w.Workers > 1024 {
		bad("$.websub.workers", "must be between 1 and 1024, got %d", w.Workers)
	}
	if w.Queue < 1 || w.Queue > 1<<20 {
		bad("$.websub.queue", "must be between 1 and 1048576, got %d", w.Queue)
	}
}
