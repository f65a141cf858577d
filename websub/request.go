package websub

import (
	"errors"
	"fmt"
	"math"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/publicsuffix"
)

// Errors of [Hub.Request]; the api maps them to HTTP status codes (§5.1.2:
// a hub may answer an invalid request synchronously with a 4xx).
var (
	// ErrInvalidRequest wraps every problem with the request's parameters.
	ErrInvalidRequest = errors.New("websub: invalid subscription request")
	// ErrUnknownTopic is wrapped by [Topics.TopicResource] when a topic URL
	// is not a feed of this service.
	ErrUnknownTopic = errors.New("websub: topic is not a feed of this hub")
	// ErrTopicDeleted is wrapped by [Topics.TopicResource] when topic's
	// resource was deleted (it wraps [ErrUnknownTopic] too): the hub then
	// denies and removes the subscriptions to it.
	ErrTopicDeleted = fmt.Errorf("%w: its resource was deleted", ErrUnknownTopic)
	// ErrBusy is returned when the verification queue is full: the request
	// was not accepted and may be retried later.
	ErrBusy = errors.New("websub: hub busy, try again later")
	// ErrRateLimited is wrapped by the [*LimitError] of a request whose
	// callback host has had its share of verification requests.
	ErrRateLimited = errors.New("websub: too many verification requests to this callback host")
)

// LimitError is the error of [Hub.Request] for a request refused because
// its callback host has had its share of verification requests
// ([Options.CallbackEvery]): it was not accepted, and may be made again
// after RetryAfter.
type LimitError struct {
	Host       string // whose budget is spent: see callbackHost
	RetryAfter time.Duration
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("%v (%s); try again in %v", ErrRateLimited, e.Host, e.RetryAfter.Round(time.Second))
}

func (e *LimitError) Unwrap() error { return ErrRateLimited }

// Modes of a subscription request (§5.1 hub.mode).
const (
	ModeSubscribe   = "subscribe"
	ModeUnsubscribe = "unsubscribe"
)

// maxSecret is the bound of §5.1: hub.secret "MUST be less than 200 bytes".
const maxSecret = 200

// maxURL bounds hub.topic and hub.callback, in bytes: a subscription is
// stored under its resource id (at most 256 bytes) and both URLs, and a
// store refuses keys over 2 KiB (storage.MaxRecordKeyLen), so a longer URL
// is refused here, as a bad request, rather than by the store.
const maxURL = 850

// request is a parsed and validated subscription request (§5.1).
type request struct {
	mode     string
	topic    string // normalized
	asGiven  string // hub.topic as the subscriber sent it, echoed in the verification (§5.3)
	callback string // normalized
	lease    time.Duration
	secret   string
}

// parseRequest reads the §5.1 parameters of a POST /websub form. Parameters
// it does not know are ignored (§5.1 "Hubs MUST ignore additional request
// parameters they do not understand"). lease is the granted lease: the
// requested one clamped to [min,max], or def when absent; for unsubscribe
// it is ignored (§5.1).
func parseRequest(form url.Values, def, minLease, maxLease time.Duration) (request, error) {
	var r request
	bad := func(format string, args ...any) (request, error) {
		return request{}, fmt.Errorf("%w: %s", ErrInvalidRequest, fmt.Sprintf(format, args...))
	}
	r.mode = form.Get("hub.mode")
	switch r.mode {
	case ModeSubscribe, ModeUnsubscribe:
	case "":
		return bad("hub.mode is required (subscribe or unsubscribe)")
	default:
		return bad("hub.mode %q is not subscribe or unsubscribe", r.mode)
	}
	var err error
	r.asGiven = form.Get("hub.topic")
	if r.topic, err = checkURL("hub.topic", r.asGiven); err != nil {
		return bad("%v", err)
	}
	if r.callback, err = checkURL("hub.callback", form.Get("hub.callback")); err != nil {
		return bad("%v", err)
	}
	r.lease = def
	if ls := form.Get("hub.lease_seconds"); ls != "" && r.mode == ModeSubscribe {
		n, err := strconv.ParseInt(ls, 10, 64)
		if errors.Is(err, strconv.ErrRange) && ls[0] >= '0' && ls[0] <= '9' {
			// A positive decimal integer too large for int64 is still a
			// valid request: it is granted the longest lease, as any other
			// value past LeaseMax.
			n, err = math.MaxInt64, nil
		}
		if err != nil || n <= 0 || strings.HasPrefix(ls, "+") {
			return bad("hub.lease_seconds %q is not a positive decimal integer", ls)
		}
		// §5.3.1: hubs may grant another lease than requested; ours stays
		// within the configured bounds (and never perpetual).
		r.lease = time.Duration(min(n, int64(maxLease/time.Second))) * time.Second
		r.lease = max(minLease, min(maxLease, r.lease))
	}
	if r.mode == ModeSubscribe {
		r.secret = form.Get("hub.secret")
		if len(r.secret) >= maxSecret {
			return bad("hub.secret must be less than %d bytes, got %d", maxSecret, len(r.secret))
		}
	}
	return r, nil
}

// callbackHost is the key of a callback's verification budget: the
// registrable domain of its host (public suffix plus one label, so that
// "a.example.org" and "b.example.org" share one: a subscriber cannot
// multiply its budget with names of its own domain), or the host itself
// for an IP address or a name without a public suffix. Ports do not count.
func callbackHost(callback string) string {
	u, err := url.Parse(callback)
	if err != nil { // checked by parseRequest already
		return callback
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if net.ParseIP(host) != nil {
		return host
	}
	if d, err := publicsuffix.EffectiveTLDPlusOne(host); err == nil {
		return d
	}
	return host
}

// checkURL requires an absolute http(s) URL with a host and no fragment,
// and returns it normalized.
func checkURL(name, raw string) (string, error) {
	if raw == "" {
		return "", fmt.Errorf("%s is required", name)
	}
	if len(raw) > maxURL {
		return "", fmt.Errorf("%s is longer than %d bytes", name, maxURL)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("%s %q is not a URL: %w", name, raw, err)
	}
	if s := strings.ToLower(u.Scheme); (s != "http" && s != "https") || u.Host == "" || u.Opaque != "" {
		return "", fmt.Errorf("%s %q is not an absolute http(s) URL", name, raw)
	}
	if u.Fragment != "" || strings.Contains(raw, "#") {
		return "", fmt.Errorf("%s %q has a fragment", name, raw)
	}
	if u.User != nil {
		return "", fmt.Errorf("%s %q carries credentials", name, raw)
	}
	return normalizeURL(raw), nil
}

// normalizeURL decodes the percent-encoded unreserved characters of a URL
// (§5.1.1 "Hubs MUST always decode non-reserved characters for these URL
// parameters", after URL §1.2), lower-cases the scheme and the host, and
// upper-cases the remaining percent-encodings, so that equivalent spellings
// of one URL name one subscription.
func normalizeURL(raw string) string {
	var b strings.Builder
	b.Grow(len(raw))
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c == '%' && i+2 < len(raw) && ishex(raw[i+1]) && ishex(raw[i+2]) {
			d := unhex(raw[i+1])<<4 | unhex(raw[i+2])
			if unreserved(d) {
				b.WriteByte(d)
			} else {
				b.WriteByte('%')
				b.WriteString(strings.ToUpper(raw[i+1 : i+3]))
			}
			i += 2
			continue
		}
		b.WriteByte(c)
	}
	s := b.String()
	// scheme://host is case-insensitive (RFC 3986 §6.2.2.1).
	if i := strings.Index(s, "://"); i > 0 {
		rest := s[i+3:]
		end := strings.IndexAny(rest, "/?")
		if end < 0 {
			end = len(rest)
		}
		s = strings.ToLower(s[:i+3]) + strings.ToLower(rest[:end]) + rest[end:]
	}
	return s
}

func ishex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

// unreserved reports RFC 3986 §2.3 unreserved characters.
func unreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}
