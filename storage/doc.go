// Package storage declares what Dynamo's storage drivers share: the
// [Store] interface, its data shapes ([SaveResult], [ResourceInfo],
// [VersionInfo], [Item], [Registration], the lease shapes) and its sentinel
// errors ([ErrNotFound], [ErrGone], [ErrInvalid], [ErrInconsistent],
// [ErrDiskFull], [ErrLeaseLost]) and the input rules every driver applies
// ([ValidateID], [ValidateDocument], [ValidateRegistration],
// [ValidateRecordKey], and the limits they check), so both refuse the same
// input with the same errors. It holds nothing driver-specific and does no
// I/O.
//
// A resource is removed with [Store.Unregister], which leaves a tombstone:
// its reads and writes then fail with [ErrGone] (the api answers 410 Gone)
// until it is registered again. The tombstone keeps only the last sequence
// number the id used, so a new history continues after it and a seq never
// names two different versions of one id.
//
// The drivers live in sub-packages: storage/badger (embedded, the default,
// for one node) and storage/postgres (several nodes sharing one database).
// storage/storagetest is the contract suite every driver's tests run, so
// the two behave alike wherever this package documents a behaviour.
//
// [Sessions] (the browser sessions a logout ended, kept until they would
// have expired) is a small interface of its own beside [Store], which both
// drivers implement; the api asks for it alone.
//
// Consumers (poller, api) keep declaring the few methods they use; cmd
// opens the configured driver and hands the [Store] to them.
package storage
