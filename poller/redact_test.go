package poller

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/dynamo-rss/dynamo/internal/syncbuf"
)

func TestRedacted(t *testing.T) {
	const raw = "https://ann:s3cret@example.com/page"
	status := &StatusError{URL: raw, Code: http.StatusUnauthorized}
	for _, tc := range []struct {
		name string
		err  error
		url  string
		want string
	}{
		{"no credentials", errors.New("GET https://example.com/: refused"), "https://example.com/", "GET https://example.com/: refused"},
		{"the URL as written", status, raw, "GET https://***@example.com/page: HTTP 401 Unauthorized"},
		{"wrapped", fmt.Errorf("robots.txt: %w", status), raw, "robots.txt: GET https://***@example.com/page: HTTP 401 Unauthorized"},
		{"the password alone", errors.New("login s3cret refused"), raw, "login *** refused"},
		{"nothing to hide", errors.New("timeout"), raw, "timeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := redacted(tc.err, tc.url)
			if got.Error() != tc.want {
				t.Errorf("%q, want %q", got.Error(), tc.want)
			}
			if !errors.Is(got, tc.err) {
				t.Error("the redacted error does not wrap the original")
			}
		})
	}
	var se *StatusError
	if !errors.As(redacted(status, raw), &se) || se.Code != http.StatusUnauthorized {
		t.Error("errors.As does not find the StatusError behind the redacted one")
	}
	if redacted(nil, raw) != nil {
		t.Error("redacted(nil) is not nil")
	}
}

// A failing poll of a page whose URL carries credentials logs no password,
// and its status does not show it either.
func TestFailingPollLogsNoPassword(t *testing.T) {
	const password = "s3cretpw"
	o := newOrigin(t)
	o.handle("/private", func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "who are you?", http.StatusUnauthorized)
	})
	u := strings.Replace(o.url("/private"), "http://", "http://ann:"+password+"@", 1)
	clk := newFakeClock(t0)
	var logs syncbuf.Buffer
	cfg := testConfig(t, baseYAML(fmt.Sprintf("resources:\n  - {id: private, url: %q}\n", u)))
	e := newTestEngineOpts(t, cfg, newMemStore(), Options{Clock: clk, Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	st, err := e.PollNow(t.Context(), "private")
	if err != nil {
		t.Fatal(err)
	}
	if st.LastOutcome != OutcomeError || !strings.Contains(st.LastError, "401") {
		t.Fatalf("status %+v, want an error of HTTP 401", st)
	}
	if strings.Contains(st.LastError, password) {
		t.Errorf("the status shows the password: %q", st.LastError)
	}
	log := logs.String()
	if !strings.Contains(log, `msg="poll failed"`) {
		t.Fatalf("no poll failure logged:\n%s", log)
	}
	if strings.Contains(log, password) {
		t.Errorf("the log shows the password:\n%s", log)
	}
}
