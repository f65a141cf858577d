package badger_test

import (
	"context"
	"time"

	"github.com/dynamo-rss/dynamo/schema"
	"github.com/dynamo-rss/dynamo/storage"
	"github.com/dynamo-rss/dynamo/storage/badger"
)

// Look-alikes of the small interfaces storage's consumers declare (storage
// may not import them): *badger.DB must satisfy each, and another backend
// only has to implement these to replace Badger.

// versionSaver is the poller's: store a retrieved version.
type versionSaver interface {
	Save(ctx context.Context, doc *schema.Document) (storage.SaveResult, error)
}

// pollStateStore is the poller's: persist what it learned about a resource.
type pollStateStore interface {
	PollState(ctx context.Context, id string) ([]byte, error)
	SavePollState(ctx context.Context, id string, state []byte) error
}

// resourceLister is the api's: the /resources feed.
type resourceLister interface {
	Resources(ctx context.Context) ([]storage.ResourceInfo, error)
	Resource(ctx context.Context, id string) (storage.ResourceInfo, error)
}

// versionReader is the api's: /resources/{id} and ?index=n.
type versionReader interface {
	Version(ctx context.Context, id string, n int) (*schema.Document, storage.VersionInfo, error)
	Versions(ctx context.Context, id string, offset, limit int) ([]storage.VersionInfo, error)
}

// itemQuerier is the api's: ?max=n and keyword queries.
type itemQuerier interface {
	Items(ctx context.Context, id string, q storage.ItemQuery) ([]storage.Item, error)
}

// pruner is the service's retention job.
type pruner interface {
	Prune(ctx context.Context, id string, r storage.Retention, now time.Time) (int, error)
}

var (
	_ versionSaver   = (*badger.DB)(nil)
	_ pollStateStore = (*badger.DB)(nil)
	_ resourceLister = (*badger.DB)(nil)
	_ versionReader  = (*badger.DB)(nil)
	_ itemQuerier    = (*badger.DB)(nil)
	_ pruner         = (*badger.DB)(nil)
)

var _ storage.Store = (*badger.DB)(nil)
