package session

import (
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Errors of [Codec.Decode]. ErrExpired is also returned for a session
// issued in the future (beyond a minute of clock skew between nodes).
var (
	ErrInvalid = errors.New("session: invalid or tampered session cookie")
	ErrExpired = errors.New("session: session expired")
)

// idLen is the length of a session id in bytes (128 bits).
const idLen = 16

// skew is how far in the future a session's issue time may be: nodes'
// clocks differ a little.
const skew = time.Minute

// Session is one login.
type Session struct {
	ID     string // random, base64url: the CSRF tokens of its forms are bound to it
	Issued time.Time
}

// Expires is when s stops being valid under a lifetime of ttl.
func (s Session) Expires(ttl time.Duration) time.Time { return s.Issued.Add(ttl) }

// New starts a session issued at now with a fresh random id.
func New(now time.Time) Session {
	return Session{ID: RandomString(idLen), Issued: now.Truncate(time.Second)}
}

// RandomString is n random bytes, base64url without padding.
func RandomString(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (it panics in the impossible case)
	return base64.RawURLEncoding.EncodeToString(b)
}

// Codec signs and checks the sessions of one cookie name. Safe for
// concurrent use; immutable.
type Codec struct {
	name string
	key  []byte
	ttl  time.Duration
}

// NewCodec returns the codec of cookie name, whose key is derived from
// secret, for sessions that last ttl. An empty secret is refused: a key
// everyone knows signs nothing.
func NewCodec(name, secret string, ttl time.Duration) (*Codec, error) {
	if secret == "" {
		return nil, errors.New("session: empty secret")
	}
	key, err := hkdf.Key(sha256.New, []byte(secret), nil, "dynamo session cookie v1", sha256.Size)
	if err != nil {
		return nil, fmt.Errorf("derive session key: %w", err)
	}
	return &Codec{name: name, key: key, ttl: ttl}, nil
}

// TTL is how long a session lasts.
func (c *Codec) TTL() time.Duration { return c.ttl }

// Encode returns the cookie value of s.
func (c *Codec) Encode(s Session) (string, error) {
	id, err := base64.RawURLEncoding.DecodeString(s.ID)
	if err != nil || len(id) != idLen {
		return "", fmt.Errorf("session: id %q is not %d base64url bytes", s.ID, idLen)
	}
	payload := binary.BigEndian.AppendUint64(id, uint64(s.Issued.Unix())) //nolint:gosec // times after 1970
	return base64.RawURLEncoding.EncodeToString(payload) + "." + base64.RawURLEncoding.EncodeToString(c.mac(payload)), nil
}

// Decode checks a cookie value at now: its signature, then its age. It
// returns ErrInvalid for anything not signed by this codec and ErrExpired
// for a session older than the codec's lifetime.
func (c *Codec) Decode(value string, now time.Time) (Session, error) {
	p64, m64, ok := strings.Cut(value, ".")
	if !ok {
		return Session{}, ErrInvalid
	}
	payload, err1 := base64.RawURLEncoding.DecodeString(p64)
	mac, err2 := base64.RawURLEncoding.DecodeString(m64)
	if err1 != nil || err2 != nil || len(payload) != idLen+8 || !hmac.Equal(mac, c.mac(payload)) {
		return Session{}, ErrInvalid
	}
	s := Session{
		ID:     base64.RawURLEncoding.EncodeToString(payload[:idLen]),
		Issued: time.Unix(int64(binary.BigEndian.Uint64(payload[idLen:])), 0).UTC(), //nolint:gosec // signed by us: a time we wrote
	}
	if !now.Before(s.Expires(c.ttl)) || s.Issued.After(now.Add(skew)) {
		return s, ErrExpired
	}
	return s, nil
}

func (c *Codec) mac(payload []byte) []byte {
	h := hmac.New(sha256.New, c.key)
	h.Write([]byte(c.name))
	h.Write([]byte{0})
	h.Write(payload)
	return h.Sum(nil)
}

// NewSeed returns a fresh CSRF seed for a browser's seed cookie.
func NewSeed() string { return RandomString(32) }

// ValidSeed reports whether a seed cookie's value looks like one NewSeed
// made (anything else is replaced).
func ValidSeed(seed string) bool {
	b, err := base64.RawURLEncoding.DecodeString(seed)
	return err == nil && len(b) == 32
}

// Token is the CSRF token of the forms shown to the browser with seed, in
// session sessionID ("" before login).
func Token(seed, sessionID string) string {
	h := hmac.New(sha256.New, []byte(seed))
	h.Write([]byte("dynamo csrf"))
	h.Write([]byte{0})
	h.Write([]byte(sessionID))
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil))
}

// CheckToken reports, in constant time, whether token is the CSRF token
// of seed and sessionID. An empty or malformed seed matches nothing.
func CheckToken(seed, sessionID, token string) bool {
	if !ValidSeed(seed) {
		return false
	}
	want := Token(seed, sessionID)
	return subtle.ConstantTimeCompare([]byte(token), []byte(want)) == 1
}
