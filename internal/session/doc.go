// Package session signs the admin's browser session into a cookie value and
// derives the CSRF tokens of the forms that change something. It is pure:
// no I/O, no clock of its own (every check takes now), no state.
//
// # Session
//
// A [Session] is a random 128-bit id and the time it was issued. [Codec]
// writes it as base64url(id | issued, seconds since 1970 as 8 big-endian
// bytes) "." base64url(HMAC-SHA256(key, name | 0 | payload)), the cookie's
// name inside the MAC so a value signed for one cookie is worth nothing in
// another. The key is derived with HKDF-SHA256 from a secret the caller
// gives (the api passes the admin token): every node that shares the
// secret accepts the session, and rotating the secret ends every session at
// once. Nothing in the value is secret (no encryption is needed), and
// this package keeps nothing: a session is valid while its signature
// verifies and its age is below the codec's lifetime ([Codec.Decode] checks
// it against the caller's now, so tests move time instead of sleeping).
// The id is what a logout revokes: the api keeps the ids of ended sessions
// in the store (storage.Sessions) until they would have expired anyway.
//
// # CSRF
//
// Forms carry a token bound to a per-browser random seed, kept in its own
// cookie, and to the session id ("" before login): [Token] is
// base64url(HMAC-SHA256(seed, "dynamo csrf" | 0 | session id)), and
// [CheckToken] compares in constant time. A page of another site cannot
// read the seed (HttpOnly, SameSite=Strict) and so cannot forge a token;
// one that could plant a seed cookie (a sibling subdomain) still cannot
// forge the token of a logged-in form, which needs the session id from the
// signed session cookie it never receives. This is OWASP's "signed
// double-submit cookie"; it needs no server-side state and no shared key
// for the anonymous forms (/login, /register).
package session
