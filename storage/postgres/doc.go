// Package postgres is Dynamo's PostgreSQL store, for several nodes sharing
// one database (storage.driver: postgres). It keeps what the Badger store
// (package storage) keeps, with the same semantics, and adds what several
// nodes need: leases dividing the polling among nodes (the poller's
// Leaser), host politeness across nodes, and the runtime registry (the
// poller's Registry) every node sees.
//
// # Usage
//
// [Open] a DSN (a libpq URL or key=value string, as pgx parses it; pgx
// also reads PG* environment variables and ~/.pgpass), use the *Store like
// a storage.DB, and [Store.Close] it. [Options.NodeID] names the node in
// leases (default hostname:pid). Statements are prepared and cached per
// connection (pgx's default); behind a transaction-mode pooler such as
// PgBouncer, add default_query_exec_mode=exec to the DSN.
//
// # Schema
//
// The schema is migrations/*.sql, embedded in the binary and applied by
// [Open] with tern (github.com/jackc/tern/v2/migrate), which holds an
// advisory lock while it migrates, so nodes starting together apply each
// migration once; its version is in dynamo_schema_version. A database whose
// schema is newer than the binary's is refused. Tables:
//
//	dynamo_resources      one row per resource: the latest version's
//	                      metadata (url, created, updated, latest and oldest
//	                      kept seq, count, content hash, channel title and
//	                      description), the poll state, the lease (owner,
//	                      until), the next due time and the tombstone flag
//	dynamo_versions       one row per version: seq, timestamp, channel
//	                      title and description, item count, content hash
//	                      and the XMLData document (schema.Marshal's text;
//	                      PostgreSQL compresses it when it is large)
//	dynamo_items          the item index: per item id its first seen (time,
//	                      seq, position), last seen (time, seq, index), its
//	                      latest content (JSON) and its folded title, link
//	                      and description for keyword queries
//	dynamo_registrations  resources registered at run time
//	dynamo_hosts          per host, when it may next be requested
//	dynamo_revoked_sessions  browser sessions ended by a logout, until
//	                      their cookie would have expired
//	                      (storage.Sessions)
//
// Times are int64 nanoseconds since the Unix epoch (exact, like the Badger
// store's; storage.MinTime to storage.MaxTime, the years 1678–2262, others
// are refused with storage.ErrInvalid).
// Ids sort byte-wise (collation "C").
//
// # Transactions
//
// A save is one transaction: it locks the resource's row (SELECT … FOR
// UPDATE), so saves of one resource are serialized across all nodes, and
// writes the version, the items (one upsert of every item of the document:
// an item seen again gets its last seen, seq, index and content), and the
// row. An unchanged save (same schema.ContentHash as the latest version)
// writes nothing. Prune and Unregister are one transaction each, too.
// Reads of several statements run in one repeatable-read snapshot.
//
// # Info cache
//
// [Store.Resource] (which the REST layer calls on every feed request, for
// the ETag and the render cache key) and [Store.Resources] are served from
// memory. Every transaction that changes a resource's info (a save that
// stores a version, Complete storing one, Prune, Unregister, Register
// lifting a tombstone) runs pg_notify('dynamo_resources', id), which
// PostgreSQL sends on commit; each Store keeps one connection, outside the
// pool, LISTENing on that channel (in a goroutine the Store owns, stopped
// by Close) and drops the entry when the notification arrives. A node's
// own writes drop its entry at once; another node's write reaches it as
// soon as the notification is delivered (milliseconds): the cached ETag of
// a feed may lag another node's commit by that much, never more. Entries
// are served and kept only while the listener is connected: when its
// connection is lost, the whole cache is dropped, reads go to the database
// (never stale, only slower) and the listener reconnects with exponential
// backoff (100 ms to 1 s); behind a transaction-mode pooler, which does
// not support LISTEN, point the DSN at the server itself. A read fills
// the cache only if no invalidation came while it read (a generation
// check), so a read racing another node's commit leaves no stale entry.
//
// # Registry
//
// [Store.Register] and [Store.Unregister] run
// pg_notify('dynamo_registrations', node id) in their transaction. The
// listener of the info cache listens on that channel too and closes the
// channel [Store.RegistryChanged] handed out when another node's
// notification arrives (this node's own are ignored: its engine applied
// the change already), and whenever it connects (notifications sent
// while it was not listening are lost). The poller of each node waits on
// it and re-reads the registry at once, besides its periodic re-read (the
// safety net for notifications lost otherwise, e.g. by a server restart).
//
// # Connections
//
// The pool holds [DefaultMaxConns] connections (4 per CPU, 8 to 32) unless
// Options.MaxConns or the DSN's pool_max_conns says otherwise, plus the
// listener's: N nodes need N × (pool + 1) under the server's
// max_connections.
//
// # Leases
//
// [Store.Acquire] first reads the resource's committed row and its host's
// slot with one plain SELECT (no transaction, no lock): a lease another
// node holds, a resource not due yet (unless the request is forced) or a
// host slot not free yet is refused there, in that order of checks, with
// Retry = the other lease's end, the due time or the host's slot, so that
// a losing node's queue follows the winner's schedule. Only a resource that
// looks due and free is taken, in one statement that locks its row with
// SELECT … FOR UPDATE SKIP LOCKED, checks the same conditions under the
// lock, reserves the host's slot and writes the lease: a row another transaction holds (another
// node acquiring or committing it) is refused at once, never waited for,
// with Retry = now + the lease (when the lease being granted there ends,
// the earliest this node could have to take over). A grant moves the
// host's next allowed time to now + HostInterval (with no interval the
// host's row is only read, so it is no hot row every grant waits for) and
// sets the lease's owner and end. All times are the request's (the poller's clock),
// never the database's, so nodes need synchronized clocks (NTP), as any
// lease scheme does. [Store.Complete] checks in one transaction that the
// lease is still this node's (else storage.ErrLeaseLost and nothing is
// written), saves, asks the poller for the poll state and next due time,
// writes them and releases the lease. A lease that expired but that no
// other node took is still this node's: its Complete succeeds.
//
// # Tombstones
//
// Unregister deletes the versions, items, poll state and lease and marks
// the row gone: reads fail as gone, Save, SavePollState, Prune and Acquire
// are refused, until the id is registered again. The row keeps its latest
// seq, so a re-registered resource's versions go on numbering from there
// and a version number never names two documents.
package postgres
