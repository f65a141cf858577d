package ui

import (
	"github.com/dynamo-rss/dynamo/api"
	"net/http"
	"strings"
	"testing"
)

// TestPreviewFormStatesLimit: the preview form says how large a page may
// be, in binary units when the limit is a whole number of them, else in
// bytes, never rounded down to a unit it is not.
func TestPreviewFormStatesLimit(t *testing.T) {
	for limit, want := range map[int64]string{
		5 << 20: "at most 5 MiB",
		1500:    "at most 1500 bytes",
		3 << 10: "at most 3 KiB",
		512:     "at most 512 bytes",
	} {
		s := newSvcServer(t, api.Options{MaxPreviewBytes: limit})
		rec := svcDo(s, http.MethodGet, "/preview", nil, "Accept", "text/html")
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), want) {
			t.Errorf("limit %d: %d, the form does not say %q", limit, rec.Code, want)
		}
	}
	if got := humanBytes(0); got != "0 bytes" {
		t.Errorf("humanBytes(0) = %q", got)
	}
}
