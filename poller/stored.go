package poller

import (
	"context"
	"errors"
	"sync"

	"github.com/dynamo-rss/dynamo/schema"
	"github.com/dynamo-rss/dynamo/storage"
)

// versionReader reads a stored version (1 = the newest); every
// storage.Store has it.
type versionReader interface {
	Version(ctx context.Context, id string, n int) (*schema.Document, storage.VersionInfo, error)
}

// errNoVersions is newestStored's error for a store that cannot read
// versions: what a stored item had is then unknown.
var errNoVersions = errors.New("poller: the store does not read versions")

// newestStored returns a function that reads the newest stored version of
// resource id once, however many ask for it during a poll (relative dates
// kept at their first reading, articles already fetched): nil and no error
// when there is none yet.
func newestStored(ctx context.Context, store Store, id string) func() (*schema.Document, error) {
	return sync.OnceValues(func() (*schema.Document, error) {
		vr, ok := store.(versionReader)
		if !ok {
			return nil, errNoVersions
		}
		d, _, err := vr.Version(ctx, id, 1)
		if errors.Is(err, storage.ErrNotFound) {
			return nil, nil // the first version
		}
		return d, err
	})
}
