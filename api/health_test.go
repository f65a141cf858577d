package api

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
)

func TestHealth(t *testing.T) {
	for _, tc := range []struct {
		name   string
		ready  func(context.Context) error
		path   string
		status int
	}{
		{"healthz", nil, "/healthz", http.StatusOK},
		{"healthz while not ready", func(context.Context) error { return errors.New("poller stopped") }, "/healthz", http.StatusOK},
		{"readyz without hook", nil, "/readyz", http.StatusOK},
		{"readyz ready", func(context.Context) error { return nil }, "/readyz", http.StatusOK},
		{"readyz not ready", func(context.Context) error { return errors.New("store: badger closed") }, "/readyz", http.StatusServiceUnavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSvcServer(t, Options{Ready: tc.ready})
			rec := svcDo(s, http.MethodGet, tc.path, nil)
			if tc.status != http.StatusOK {
				p := svcProblem(t, rec, tc.status)
				if !strings.Contains(p.Detail, "badger closed") {
					t.Errorf("detail %q does not say why", p.Detail)
				}
				return
			}
			if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"status"`) {
				t.Errorf("got %d %s", rec.Code, rec.Body)
			}
			if cc := rec.Header().Get("Cache-Control"); cc != "no-store" {
				t.Errorf("Cache-Control %q: a cache could answer for the process", cc)
			}
		})
	}
}
