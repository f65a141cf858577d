package ui

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/dynamo-rss/dynamo/api"
	"github.com/dynamo-rss/dynamo/internal/apitest"
)

// The pages are tested as they serve: mounted on an api.Server, with the
// fakes of internal/apitest, which the api's tests share.

const fdBase = "https://feeds.example.org"

// fdNow is the test clock of the feed fixture: an hour after its last
// stored version.
var fdNow = apitest.FDT0.Add(3 * time.Hour)

// mountBoth builds the pages with the services, token, clock and URLs of
// o (mod sets the pages' own options), and an api.Server with them
// mounted.
func mountBoth(t testing.TB, o api.Options, mod ...func(*Options)) (*api.Server, *Server) {
	t.Helper()
	uo := Options{
		Store: o.Store, Poller: o.Poller, Registry: o.Registry, Fetch: o.Fetch, AdminToken: o.AdminToken,
		TrustedProxies: o.TrustedProxies, PublicURL: o.PublicURL, OpenRegistration: o.OpenRegistration,
		HubURL: o.HubURL, MaxPreviewBytes: o.MaxPreviewBytes, Now: o.Now, Logger: o.Logger,
	}
	for _, m := range mod {
		m(&uo)
	}
	pages, err := New(uo)
	if err != nil {
		t.Fatalf("ui.New: %v", err)
	}
	o.Pages = pages
	if o.Registerer == nil {
		o.Registerer = prometheus.NewRegistry()
	}
	s, err := api.New(o)
	if err != nil {
		t.Fatalf("api.New: %v", err)
	}
	return s, pages
}

// mount is mountBoth's api.Server.
func mount(t testing.TB, o api.Options, mod ...func(*Options)) *api.Server {
	t.Helper()
	s, _ := mountBoth(t, o, mod...)
	return s
}

// newFDServer serves store with a fixed clock and a public URL.
func newFDServer(t testing.TB, store api.Store, mod ...func(*api.Options)) *api.Server {
	t.Helper()
	o := api.Options{Store: store, PublicURL: fdBase + "/", Now: func() time.Time { return fdNow }}
	for _, m := range mod {
		m(&o)
	}
	return mount(t, o)
}

// newSvcServer serves opts, its store an empty one unless set, its clock
// apitest.SvcNow's.
func newSvcServer(t testing.TB, opts api.Options, mod ...func(*Options)) *api.Server {
	t.Helper()
	if opts.Store == nil {
		opts.Store = &apitest.SvcStore{}
	}
	if opts.Now == nil {
		opts.Now = func() time.Time { return apitest.SvcNow }
	}
	return mount(t, opts, mod...)
}

// fdDo sends a request without a body; header holds name, value pairs.
func fdDo(s http.Handler, method, target string, header ...string) *httptest.ResponseRecorder {
	return apitest.Do(s, method, target, nil, header...)
}

var svcDo = apitest.Do

// feedFormat is a feed format as the pages' tests name it.
type feedFormat struct{ name, contentType string }

// feedFormats are the api's formats, in its order.
var feedFormats = func() []feedFormat {
	out := make([]feedFormat, 0, len(apitest.FeedFormats))
	for _, n := range apitest.FeedFormats {
		out = append(out, feedFormat{name: n, contentType: apitest.FeedContentTypes[n]})
	}
	return out
}()
