// Package storagetest is the contract suite of Dynamo's storage drivers:
// [Run] checks that a [storage.Store] behaves as package storage documents
// it, so storage/badger and storage/postgres are interchangeable. A driver's
// tests call it with a function that opens a fresh, empty store:
//
//	func TestContract(t *testing.T) {
//		storagetest.Run(t, func(t *testing.T) storage.Store { return openEmpty(t) })
//	}
//
// # What it covers
//
//   - Save: a version is stored only when its informational content
//     (schema.ContentHash) changed; an unchanged save reports Changed false
//     and takes no seq; seqs run 1, 2, 3… per resource and are never
//     reused, not after Prune, not after Unregister and Register again.
//   - Reads: Resources sorted by id; Resource's fields; Version(n) newest
//     first (the document as saved), ErrNotFound outside 1..count;
//     Versions paging by offset and limit, ErrInvalid for a negative
//     offset; Items aggregated over the kept history (one per item id,
//     newest first by first seen, ties to the later version then page
//     order), with Max, keyword Terms (folded as schema.Terms.Match does,
//     checked against it on random data), FirstSeen, LastSeen, Seq and
//     Index; Resource reflecting every save and prune at once.
//   - Poll state round trip, ErrNotFound when none, poll state alone is no
//     resource.
//   - Prune by MaxVersions and MaxAge (never the latest, even when every
//     version, the latest included, is older than MaxAge, with or without
//     MaxVersions, and for a resource of one version; surviving items keep
//     their first seen; items of pruned versions only leave the index) and
//     its errors.
//   - Check on a healthy store at every stage.
//   - Registry: Registrations sorted by id, created only for a new id,
//     Registered kept on replace, one created among concurrent first
//     registrations; ErrNotFound for an unknown id.
//   - Tombstones: after Unregister every read and write of the id fails
//     with storage.ErrGone (which matches ErrNotFound too), Resources and
//     Registrations omit it, other resources are untouched; Register clears
//     it; saves and poll-state writes racing an Unregister never bring the
//     resource back.
//   - Invalid input: ids refused by storage.ValidateID (reads also match
//     ErrNotFound), documents refused by schema.Document.Validate (also
//     matching schema.ErrInvalid), with the validators' messages, so a
//     driver must validate with those two functions.
//   - Concurrent saves of one resource (no seq handed out twice; the same
//     content saved at once is one change) and of many; a cancelled
//     context; Close twice.
//   - Times: every time returned is the instant given, to the nanosecond,
//     in UTC, on a fresh write, a cached read and a re-read; document
//     timestamps outside storage.MinTime…MaxTime (the zero time too) and
//     registration times outside it are ErrInvalid; Prune's MaxAge keeps a
//     version exactly that old; a zero retention is a no-op.
//   - Limits: resource ids of exactly storage.MaxIDLen bytes, and ids that
//     differ only by spaces around them kept apart; item ids up to
//     storage.MaxItemIDLen bytes; record kinds and
//     keys as storage.ValidateRecordKey says, prefixes as bytes, empty
//     values kept as empty.
//   - Sessions (storage.Sessions, which a driver must implement beside
//     Store): a revoked session id is revoked on every read until a later
//     RevokeSession's now reaches its until (then it is forgotten);
//     revoking again keeps the later until; concurrent revocations are
//     all kept; ids refused by storage.ValidateSessionID are ErrInvalid
//     (and never revoked); a cancelled context.
//   - Ordering: ids byte-wise (Resources, Registrations, record keys);
//     keyword terms with punctuation taken literally, and terms PostgreSQL
//     text cannot hold (a split UTF-8 sequence) matched as bytes, with Max.
//
// It assumes nothing of a driver's layout: it uses the [storage.Store]
// and [storage.Sessions] methods only, compares times with time.Time.Equal and their Location
// with time.UTC, and uses whole-second timestamps except where precision is
// the point. What only one
// driver has (Badger's reopen, crash durability and free-space guard;
// PostgreSQL's leases and several nodes) is tested in the driver's package.
package storagetest
