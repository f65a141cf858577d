package api

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestFeedGzip checks that a feed's gzip representation has its own strong
// ETag, decompresses to the identity body, is cached, and that either tag
// validates a conditional request.
func TestFeedGzip(t *testing.T) {
	store := fdFixture()
	s := newFDServer(t, store)
	const path = "/resources/news?max=2"
	plain := fdDo(s, http.MethodGet, path)
	if plain.Code != http.StatusOK || plain.Header().Get("Content-Encoding") != "" {
		t.Fatalf("plain: status %d, Content-Encoding %q", plain.Code, plain.Header().Get("Content-Encoding"))
	}
	zipped := fdDo(s, http.MethodGet, path, "Accept-Encoding", "br;q=1, gzip;q=0.8")
	if zipped.Code != http.StatusOK || zipped.Header().Get("Content-Encoding") != "gzip" {
		t.Fatalf("gzip: status %d, Content-Encoding %q", zipped.Code, zipped.Header().Get("Content-Encoding"))
	}
	pt, zt := plain.Header().Get("ETag"), zipped.Header().Get("ETag")
	if zt == pt || !strings.HasPrefix(zt, `"`) || !strings.HasSuffix(zt, `-gzip"`) {
		t.Errorf("gzip ETag %q must be strong and differ from the identity ETag %q", zt, pt)
	}
	if vary := strings.Join(zipped.Header().Values("Vary"), ","); !strings.Contains(vary, "Accept-Encoding") || !strings.Contains(vary, "Accept") {
		t.Errorf("Vary = %q", vary)
	}
	zr, err := gzip.NewReader(zipped.Body)
	if err != nil {
		t.Fatalf("gzip reader: %v", err)
	}
	body, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("gunzip: %v", err)
	}
	if !bytes.Equal(body, plain.Body.Bytes()) {
		t.Error("the gzip body does not decompress to the identity body")
	}
	reads := store.ReadCount()
	for _, tc := range []struct {
		name    string
		headers []string
		want    int
	}{
		{"gzip tag, gzip client", []string{"Accept-Encoding", "gzip", "If-None-Match", zt}, http.StatusNotModified},
		{"identity tag, gzip client", []string{"Accept-Encoding", "gzip", "If-None-Match", pt}, http.StatusNotModified},
		{"gzip tag, identity client", []string{"If-None-Match", zt}, http.StatusNotModified},
		{"gzip refused with q=0", []string{"Accept-Encoding", "gzip;q=0"}, http.StatusOK},
		{"again gzip, from cache", []string{"Accept-Encoding", "gzip"}, http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := fdDo(s, http.MethodGet, path, tc.headers...)
			if rec.Code != tc.want {
				t.Fatalf("status %d, want %d", rec.Code, tc.want)
			}
			if tc.name == "gzip refused with q=0" && rec.Header().Get("Content-Encoding") != "" {
				t.Error("compressed although gzip;q=0")
			}
			if tc.want == http.StatusNotModified && rec.Body.Len() != 0 {
				t.Error("304 with a body")
			}
		})
	}
	if n := store.ReadCount(); n != reads {
		t.Errorf("history read %d more times; the gzip feed should come from the render cache", n-reads)
	}
	head := fdDo(s, http.MethodHead, path, "Accept-Encoding", "gzip")
	if head.Header().Get("Content-Encoding") != "gzip" || head.Header().Get("ETag") != zt || head.Body.Len() != 0 {
		t.Errorf("HEAD: Content-Encoding %q, ETag %q, body %d bytes", head.Header().Get("Content-Encoding"), head.Header().Get("ETag"), head.Body.Len())
	}
}
