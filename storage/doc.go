// Package storage declares what Dynamo's storage drivers share: the
// [Store] interface, its data shapes ([SaveResult], [ResourceInfo],
// [VersionInfo], [Item], [Registration], the lease shapes) and its sentinel
// errors ([ErrNotFound], [ErrInvalid], [ErrInconsistent], [ErrDiskFull],
// [ErrLeaseLost]). It holds nothing driver-specific and does no I/O.
//
// The drivers live in sub-packages: storage/badger (embedded, the default,
// for one node) and storage/postgres (several nodes sharing one database).
// storage/storagetest is the contract suite every driver's tests run, so
// the two behave alike wherever this package documents a behaviour.
//
// Consumers (poller, api) keep declaring the few methods they use; cmd
// opens the configured driver and hands the [Store] to them.
package storage
