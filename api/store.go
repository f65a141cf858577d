package api

import (
	"context"

	"github.com/dynamo-rss/dynamo/schema"
	"github.com/dynamo-rss/dynamo/storage"
)

// Catalog lists the resources that have stored versions. The feeds compute
// their validators (ETag, Last-Modified) from it alone, so a conditional
// request costs one call and no rendering.
type Catalog interface {
	Resources(ctx context.Context) ([]storage.ResourceInfo, error)
	Resource(ctx context.Context, id string) (storage.ResourceInfo, error)
}

// History reads a resource's stored versions and its item index.
type History interface {
	Version(ctx context.Context, id string, n int) (*schema.Document, storage.VersionInfo, error)
	Versions(ctx context.Context, id string, offset, limit int) ([]storage.VersionInfo, error)
	Items(ctx context.Context, id string, q storage.ItemQuery) ([]storage.Item, error)
}

// Store is what the api reads from storage (declared here, by its consumer);
// every storage.Store implements it. Implementations must be safe for concurrent use
// and return errors wrapping [storage.ErrNotFound] for an unknown resource or
// a version past the history.
type Store interface {
	Catalog
	History
}
