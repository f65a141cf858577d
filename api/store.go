package api

import "github.com/dynamo-rss/dynamo/internal/service"

// The services the api calls are declared in internal/service, below both
// HTTP packages (api and ui), and named here as the api's own: callers
// write api.Store, api.ResourceStatus and so on.
type (
	// Catalog lists the resources that have stored versions.
	Catalog = service.Catalog
	// History reads a resource's stored versions and its item index.
	History = service.History
	// Store is what the api reads from storage; every storage.Store
	// implements it.
	Store = service.Store
	// ResourceStatus is what the poller knows of a resource.
	ResourceStatus = service.ResourceStatus
	// Poller is the api's view of the poller.
	Poller = service.Poller
	// FirstPoller is a Poller that polls a new registration once.
	FirstPoller = service.FirstPoller
	// PollRecord is one poll of a resource, as the pages' charts show it.
	PollRecord = service.PollRecord
	// PollHistory is a Poller that remembers its polls (optional).
	PollHistory = service.PollHistory
	// Registry is the runtime registry.
	Registry = service.Registry
	// ResourceDefinition is a resource as GET /admin/resources lists it.
	ResourceDefinition = service.ResourceDefinition
	// PageFetcher fetches one page through the poller's guarded fetcher.
	PageFetcher = service.PageFetcher
	// PageRenderer is a PageFetcher that can render a page in the browser.
	PageRenderer = service.PageRenderer
	// PagePicturer is a PageFetcher that can draw a page (/new's picture).
	PagePicturer = service.PagePicturer
	// PagePicture is a page as the browser drew it.
	PagePicture = service.PagePicture
	// Box is a rectangle in CSS pixels of a PagePicture.
	Box = service.Box
	// Page is a fetched page.
	Page = service.Page
	// DiskSpace is the store's free-space state, which / shows when low.
	DiskSpace = service.DiskSpace
	// Listed is a resource as the poller and the store know it.
	Listed = service.Listed
)

// ListResources merges the poller's resources with the stored ones, by id.
var ListResources = service.ListResources

// ErrDeclaredInFile is wrapped by [Registry] errors for an id that the
// configuration file declares: the admin API cannot change it (409).
var ErrDeclaredInFile = service.ErrDeclaredInFile
