package api

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dynamo-rss/dynamo/schema"
	"github.com/dynamo-rss/dynamo/storage"
)

// svcStore is an in-memory Store for the service handlers' tests (home,
// admin, health): resources only, no history.
type svcStore struct {
	resources []storage.ResourceInfo
	err       error
}

func (f *svcStore) Resources(ctx context.Context) ([]storage.ResourceInfo, error) {
	return slices.Clone(f.resources), f.err
}

func (f *svcStore) Resource(ctx context.Context, id string) (storage.ResourceInfo, error) {
	for _, r := range f.resources {
		if r.ID == id {
			return r, nil
		}
	}
	return storage.ResourceInfo{}, fmt.Errorf("resource %q: %w", id, storage.ErrNotFound)
}

func (f *svcStore) Version(ctx context.Context, id string, n int) (*schema.Document, storage.VersionInfo, error) {
	return nil, storage.VersionInfo{}, storage.ErrNotFound
}

func (f *svcStore) Versions(ctx context.Context, id string, offset, limit int) ([]storage.VersionInfo, error) {
	return nil, storage.ErrNotFound
}

func (f *svcStore) Items(ctx context.Context, id string, q storage.ItemQuery) ([]storage.Item, error) {
	return nil, storage.ErrNotFound
}

var _ Store = (*svcStore)(nil)

// svcPoller is a Poller whose statuses the test sets; PollNow counts polls.
type svcPoller struct {
	mu       sync.Mutex
	statuses []ResourceStatus
	pollErr  error
	polled   []string
	now      time.Time
}

func (p *svcPoller) Statuses() []ResourceStatus {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.statuses)
}

func (p *svcPoller) Status(id string) (ResourceStatus, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, st := range p.statuses {
		if st.ID == id {
			return st, true
		}
	}
	return ResourceStatus{}, false
}

func (p *svcPoller) PollNow(ctx context.Context, id string) (ResourceStatus, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pollErr != nil {
		return ResourceStatus{}, p.pollErr
	}
	for i := range p.statuses {
		if p.statuses[i].ID == id {
			p.polled = append(p.polled, id)
			p.statuses[i].Polls++
			p.statuses[i].LastPoll = p.now
			p.statuses[i].LastOutcome = "unchanged"
			return p.statuses[i], nil
		}
	}
	return ResourceStatus{}, fmt.Errorf("poll %q: unknown resource", id)
}

var _ Poller = (*svcPoller)(nil)

// svcNow is the fixed clock of the service tests.
var svcNow = time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)

// svcFixture returns a store and a poller with two configured resources
// (one flat, one smart), one of which has history, plus a stored resource
// that is no longer configured.
func svcFixture() (*svcStore, *svcPoller) {
	store := &svcStore{resources: []storage.ResourceInfo{
		{ID: "news", URL: "https://example.org/news.html", Versions: 7, LatestSeq: 7, Updated: svcNow.Add(-3 * time.Minute), Title: "Our News & Views", Description: "What happened <today>"},
		{ID: "old", URL: "https://example.org/old.html", Versions: 2, LatestSeq: 2, Updated: svcNow.Add(-48 * time.Hour), Title: "Old page"},
	}}
	poller := &svcPoller{now: svcNow, statuses: []ResourceStatus{
		{ID: "news", URL: "https://example.org/news.html", Policy: "flat", Interval: 15 * time.Minute,
			LastPoll: svcNow.Add(-time.Minute), NextPoll: svcNow.Add(14 * time.Minute), LastOutcome: "changed", Polls: 9, Changes: 7},
		{ID: "forum", URL: "https://example.org/forum/", Policy: "smart", Interval: 42 * time.Minute, Tau: 40 * time.Minute,
			Alpha: 0.37, AlphaAuto: true, LastPoll: svcNow.Add(-2 * time.Minute), NextPoll: svcNow.Add(40 * time.Minute),
			LastOutcome: "error", LastError: "GET https://example.org/forum/: 503 Service Unavailable", Polls: 3, Errors: 3},
	}}
	return store, poller
}

// newSvcServer builds a Server for a test; opts.Store defaults to an empty store.
func newSvcServer(t testing.TB, opts Options) *Server {
	t.Helper()
	if opts.Store == nil {
		opts.Store = &svcStore{}
	}
	if opts.Now == nil {
		opts.Now = func() time.Time { return svcNow }
	}
	s, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return s
}

// svcDo sends one request through the server and returns the recorded answer.
func svcDo(s *Server, method, target string, body io.Reader, header ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, target, body)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	return rec
}

// svcProblem decodes an application/problem+json answer, failing the test
// when the answer is not one with the wanted status.
func svcProblem(t testing.TB, rec *httptest.ResponseRecorder, status int) problemBody {
	t.Helper()
	if rec.Code != status {
		t.Fatalf("status = %d, want %d; body:\n%s", rec.Code, status, rec.Body)
	}
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/problem+json") {
		t.Fatalf("Content-Type = %q, want application/problem+json; body:\n%s", ct, rec.Body)
	}
	var p problemBody
	if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil {
		t.Fatalf("decode problem: %v\n%s", err, rec.Body)
	}
	if p.Status != status || p.Title == "" {
		t.Fatalf("problem = %+v, want status %d and a title", p, status)
	}
	return p
}

// svcDoChunkedAs posts a body of unknown length (no Content-Length) with a
// Content-Type.
func svcDoChunkedAs(s *Server, target string, body io.Reader, contentType string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, target, io.NopCloser(body))
	req.ContentLength = -1
	req.Header.Set("Content-Type", contentType)
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	return rec
}
