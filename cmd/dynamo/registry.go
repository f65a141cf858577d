package main

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/dynamo-rss/dynamo/api"
	"github.com/dynamo-rss/dynamo/config"
	"github.com/dynamo-rss/dynamo/poller"
	"github.com/dynamo-rss/dynamo/storage"
)

// apiRegistry shows the engine's runtime registry to the api: definitions
// convert field for field, the poller's sentinel errors become the api's.
type apiRegistry struct {
	e   *poller.Engine
	cfg *atomic.Pointer[config.Config] // the configuration in force (updated on reload)
	// stored deletes a resource the poller does not know, whose history is
	// only stored (the file declared it once); nil: such a DELETE is a 404.
	stored interface {
		Unregister(ctx context.Context, id string) (storage.Revision, error)
	}
}

func (r apiRegistry) Definitions() []api.ResourceDefinition {
	defs := r.e.Definitions()
	out := make([]api.ResourceDefinition, len(defs))
	for i, d := range defs {
		out[i] = apiDefinition(d)
	}
	return out
}

func (r apiRegistry) Definition(id string) (api.ResourceDefinition, bool) {
	d, ok := r.e.Definition(id)
	return apiDefinition(d), ok
}

// apiDefinition converts a poller definition for the api.
func apiDefinition(d poller.Definition) api.ResourceDefinition {
	return api.ResourceDefinition{Resource: d.Resource, Source: d.Source, Registered: d.Registered,
		Status: api.ResourceStatus(d.Status), Polled: d.Polled}
}

func (r apiRegistry) Register(ctx context.Context, entry config.ResourceEntry) (bool, error) {
	created, err := r.e.Register(ctx, entry)
	return created, apiError(err)
}

// Unregister deletes a registered resource, or one whose history is only
// stored (removed from the file, history kept): neither is polled, so the
// store's delete is all there is to it. A file-declared id is refused.
func (r apiRegistry) Unregister(ctx context.Context, id string) error {
	err := r.e.Unregister(ctx, id)
	if errors.Is(err, poller.ErrUnknownResource) && r.stored != nil {
		// Its revision tells other nodes' registries of the deletion; this
		// node's poller never knew the id, so there is nothing to wait for.
		if _, serr := r.stored.Unregister(ctx, id); serr == nil || !errors.Is(serr, storage.ErrNotFound) {
			return serr
		}
	}
	return apiError(err)
}

func (r apiRegistry) PollerConfig() config.PollerConfig { return r.cfg.Load().Poller }

// apiError maps the poller's registry errors onto the api's.
func apiError(err error) error {
	switch {
	case errors.Is(err, poller.ErrDeclaredInFile):
		return fmt.Errorf("%w: %w", api.ErrDeclaredInFile, err)
	case errors.Is(err, poller.ErrUnknownResource):
		return fmt.Errorf("%w: %w", storage.ErrNotFound, err) // 404
	}
	return err
}

// apiFetcher lets self-registration fetch a page through the engine's
// fetcher (its robots.txt cache and politeness shared with the polls).
type apiFetcher struct{ e *poller.Engine }

func (f apiFetcher) FetchPage(ctx context.Context, url string) (api.Page, error) {
	p, err := f.e.FetchPage(ctx, url)
	return api.Page(p), err
}

// RenderPage renders a page in the engine's browser (fetch: browser), for
// /new's "Render with JavaScript".
func (f apiFetcher) RenderPage(ctx context.Context, url, waitFor string) (api.Page, error) {
	p, err := f.e.RenderPage(ctx, url, waitFor)
	return api.Page(p), err
}

var _ api.PageRenderer = apiFetcher{}

// PicturePage draws a page in the engine's browser for /new's "point at
// the list": the page, and its screenshot and element boxes (nil when the
// document was not HTML).
func (f apiFetcher) PicturePage(ctx context.Context, url, waitFor string, scripts bool) (api.Page, *api.PagePicture, error) {
	p, pic, err := f.e.PicturePage(ctx, url, waitFor, scripts)
	if err != nil || pic == nil {
		return api.Page(p), nil, err
	}
	return api.Page(p), apiPicture(pic), nil
}

// apiPicture converts the engine's picture of a page for the api.
func apiPicture(pic *poller.Picture) *api.PagePicture {
	boxes := make([]api.Box, len(pic.Boxes))
	for i, b := range pic.Boxes {
		boxes[i] = api.Box(b)
	}
	return &api.PagePicture{Image: pic.Image, ImageType: pic.ImageType, Width: pic.Width, Height: pic.Height,
		Marked: pic.Marked, Boxes: boxes}
}

var _ api.PagePicturer = apiFetcher{}

// PageWait is how long a fetch of url would wait for its host's slot.
func (f apiFetcher) PageWait(url string) time.Duration { return f.e.PageWait(url) }

var (
	_ api.Registry    = apiRegistry{}
	_ api.PageFetcher = apiFetcher{}
	_ api.PageWaiter  = apiFetcher{}
)
