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
		{"readyz store unreachable", func(context.Context) error {
			return &NotReady{Reason: "store unreachable", Err: errors.New(`failed to connect to host=db.internal user=dynamo database=feeds: dial tcp 10.0.0.7:5432: connect: connection refused (SQLSTATE 08006)`)}
		}, "/readyz", http.StatusServiceUnavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSvcServer(t, Options{Ready: tc.ready})
			rec := svcDo(s, http.MethodGet, tc.path, nil)
			if tc.status != http.StatusOK {
				// A short reason, never the cause: it may name hosts,
				// users, databases (the log has it).
				p := svcProblem(t, rec, tc.status)
				var nr *NotReady
				want := "not ready"
				if errors.As(tc.ready(t.Context()), &nr) {
					want = nr.Reason
				}
				if p.Detail != want {
					t.Errorf("detail %q, want %q", p.Detail, want)
				}
				for _, secret := range []string{"badger", "db.internal", "dynamo", "10.0.0.7", "5432", "SQLSTATE", "feeds"} {
					if strings.Contains(rec.Body.String(), secret) {
						t.Errorf("the answer %s shows %q of the cause", rec.Body, secret)
					}
				}
				if rec.Header().Get("Retry-After") == "" {
					t.Error("503 without Retry-After")
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
