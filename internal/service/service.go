// Package service declares the services that the two HTTP packages, api
// (what machines call) and ui (the pages people use), both call: the store
// they read, the poller's state and history, the runtime registry and the
// guarded page fetcher. It holds contracts, so that both
// packages, and the fakes their tests share (internal/apitest), can name
// them without importing each other; besides them, only [ListResources],
// the one merge of the poller's and the store's resources that both list. Package api re-exports every type here
// under the same name (api.ResourceStatus is service.ResourceStatus), which
// is how cmd/dynamo and other callers name them.
package service

import (
	"context"
	"errors"
	"time"

	"github.com/dynamo-rss/dynamo/config"
	"github.com/dynamo-rss/dynamo/schema"
	"github.com/dynamo-rss/dynamo/storage"
)

// ResourceStatus is what the poller knows of a resource, as the api shows it
// (GET /, admin JSON, Cache-Control and <ttl> hints).
type ResourceStatus struct {
	ID          string        `json:"id"`
	URL         string        `json:"url"`
	Policy      string        `json:"policy"`   // "flat" or "smart"
	Interval    time.Duration `json:"interval"` // the interval the policy chose for the next poll
	Tau         time.Duration `json:"tau"`      // smart: estimate of the time between updates
	Alpha       float64       `json:"alpha"`
	AlphaAuto   bool          `json:"alpha_auto"`
	LastPoll    time.Time     `json:"last_poll"`
	NextPoll    time.Time     `json:"next_poll"`
	LastOutcome string        `json:"last_outcome"`
	LastError   string        `json:"last_error,omitempty"`
	Polls       int64         `json:"polls"`
	Changes     int64         `json:"changes"`
	Errors      int64         `json:"errors"`
	Since       time.Time     `json:"since"`                 // when the resource was first scheduled: declared or registered
	Diagnostics []string      `json:"diagnostics,omitempty"` // the last extraction's diagnostics (the first few), e.g. a selector that matched nothing
}

// Poller is the HTTP packages' view of the poller.
type Poller interface {
	Statuses() []ResourceStatus
	Status(id string) (ResourceStatus, bool)
	PollNow(ctx context.Context, id string) (ResourceStatus, error)
}

// FirstPoller is a [Poller] that can make sure a resource was polled once
// without polling it twice: a registration is polled at once by the
// poller itself, and the browser's Add waits for that poll rather than
// making another.
type FirstPoller interface {
	FirstPoll(ctx context.Context, id string) (ResourceStatus, error)
}

// PollRecord is one poll of a resource, as the charts show it.
type PollRecord struct {
	Time     time.Time
	Outcome  string        // changed, unchanged, not-modified, error, not-annotated, robots-denied, disk_full
	Wait     time.Duration // the wait chosen after the poll
	Tau      time.Duration // the estimate τ after the poll; 0: none
	Versions int           // versions stored after the poll
}

// PollHistory is what the pages need of a poller that remembers its polls
// (optional: a [Poller] may implement it). History returns a resource's
// recent polls, oldest first, and false for an unknown resource.
type PollHistory interface {
	History(ctx context.Context, id string) ([]PollRecord, bool)
}

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

// Store is what the HTTP packages read from storage (declared here, by its
// consumers); every storage.Store implements it. Implementations must be
// safe for concurrent use and return errors wrapping [storage.ErrNotFound]
// for an unknown resource or a version past the history.
type Store interface {
	Catalog
	History
}

// Registry is the view of the runtime registry: resources registered
// while the service runs, kept in the store. The poller implements it (cmd
// adapts it); its errors wrap [ErrDeclaredInFile] for an id the
// configuration file declares and storage.ErrNotFound for an unknown id.
type Registry interface {
	// Definitions lists every resource, declared and registered, by id.
	Definitions() []ResourceDefinition
	// Definition is one resource's definition, as Definitions lists it
	// (the registered one when the file shadows it).
	Definition(id string) (ResourceDefinition, bool)
	// Register registers or replaces a resource; created reports a new id.
	Register(ctx context.Context, entry config.ResourceEntry) (created bool, err error)
	// Unregister stops polling a registered resource and removes it and
	// its history; its feeds answer 410 Gone afterwards.
	Unregister(ctx context.Context, id string) error
	// PollerConfig is the poller configuration in force, under which a
	// definition is validated (policy defaults come from it).
	PollerConfig() config.PollerConfig
}

// ErrDeclaredInFile is wrapped by [Registry] errors for an id that the
// configuration file declares: the admin API cannot change it (409).
var ErrDeclaredInFile = errors.New("api: resource declared in the configuration file")

// ResourceDefinition is a resource as GET /admin/resources lists it.
type ResourceDefinition struct {
	Resource   config.ResourceEntry
	Source     string // "file" or "api"
	Registered time.Time
	Status     ResourceStatus
	Polled     bool // false: registered but not polled (shadowed by the file, or invalid under the configuration in force)
}

// PageFetcher fetches one page through the poller's guarded fetcher (SSRF
// guard, size and time limits, robots.txt, the host's politeness), for
// self-registration and the browser's /new.
type PageFetcher interface {
	FetchPage(ctx context.Context, url string) (Page, error)
}

// PageRenderer is a PageFetcher that can also render a page in the
// poller's browser (fetch: browser), through the same guard, robots.txt
// and politeness: the DOM once the page's scripts ran, read once waitFor (a
// CSS selector; "" = once the network is quiet) matches. Optional.
type PageRenderer interface {
	PageFetcher
	RenderPage(ctx context.Context, url, waitFor string) (Page, error)
}

// PagePicturer is a PageFetcher that can also fetch a page as a picture
// for /new's "point at the list": one visit of the page in the poller's
// browser (the same guard, robots.txt and politeness as RenderPage), which
// gives the page's bytes, a screenshot and every element's box. With
// scripts, the page is rendered as fetch: browser renders it (Page.Body is
// the DOM once waitFor matched or the network went quiet); without, its
// scripts do not run and Page.Body is the document as the server sent it
// (what a GET gives). Optional.
type PagePicturer interface {
	PageFetcher
	PicturePage(ctx context.Context, url, waitFor string, scripts bool) (Page, *PagePicture, error)
}

// PagePicture is a page as the browser drew it. Picture is nil when the
// document was not HTML (nothing to draw).
type PagePicture struct {
	Image     []byte // the screenshot, from the page's top, Width x Height CSS pixels at scale 1
	ImageType string // its media type (image/jpeg, image/png)
	Width     int
	Height    int
	// Marked is the DOM as the browser held it when drawn, each element
	// carrying data-dynamo-box="i", i its place in document order
	// (document.documentElement and then querySelectorAll("*")), from 0.
	Marked []byte
	// Boxes[i] is the border box of the element marked i, in CSS pixels
	// of the screenshot (page coordinates, scrolled to the top); a zero
	// width or height: not drawn.
	Boxes []Box
}

// Box is a rectangle in CSS pixels.
type Box struct{ X, Y, W, H float64 }

// Page is a fetched page.
type Page struct {
	Body        []byte
	ContentType string
	URL         string // after redirects
}

// DiskSpace is the store's free-space state (see storage.min_free).
type DiskSpace struct {
	Low           bool
	Free, MinFree uint64
}
