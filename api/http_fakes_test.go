package api

import (
	"github.com/dynamo-rss/dynamo/internal/apitest"

	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// newSvcServer builds a Server for a test; opts.Store defaults to an empty store.
func newSvcServer(t testing.TB, opts Options) *Server {
	t.Helper()
	if opts.Store == nil {
		opts.Store = &svcStore{}
	}
	if opts.Now == nil {
		opts.Now = func() time.Time { return svcNow }
	}
	if opts.Pages == nil {
		opts.Pages = stubPages{}
	}
	s, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return s
}

// svcDo sends one request through the server and returns the recorded answer.
var svcDo = apitest.Do

// svcProblem decodes an application/problem+json answer, failing the test
// when the answer is not one with the wanted status.
var svcProblem = apitest.CheckProblem

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
