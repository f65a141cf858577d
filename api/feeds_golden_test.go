package api

import (
	"bytes"
	"flag"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/api")

// TestFeedGolden compares whole rendered feeds with golden files in
// testdata/api (rewrite them with go test ./api -run TestFeedGolden -update).
func TestFeedGolden(t *testing.T) {
	poller := &svcPoller{List: []ResourceStatus{
		{ID: "news", Interval: 15 * time.Minute, NextPoll: fdNow.Add(10 * time.Minute)},
		{ID: "forum", Interval: 2 * time.Hour, NextPoll: fdNow.Add(time.Hour)},
	}}
	s := newFDServer(t, fdFixture(), func(o *Options) { o.Poller = poller })
	forms := []struct{ name, target string }{
		{"resources", "/resources"},
		{"news-versions", "/resources/news"},
		{"news-index1", "/resources/news?index=1"},
		{"news-max2", "/resources/news?max=2"},
	}
	for _, form := range forms {
		for _, format := range fdFormats {
			name := form.name + "." + format
			t.Run(name, func(t *testing.T) {
				rec := fdDo(s, http.MethodGet, form.target+sep(form.target)+"type="+format)
				if rec.Code != http.StatusOK {
					t.Fatalf("status %d\n%s", rec.Code, rec.Body)
				}
				path := filepath.Join("..", "testdata", "api", name)
				if *update {
					if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(path, rec.Body.Bytes(), 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				want, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("read golden file (run with -update to create it): %v", err)
				}
				if !bytes.Equal(rec.Body.Bytes(), want) {
					t.Errorf("%s differs from %s (run with -update after checking):\ngot:\n%s", form.target, path, rec.Body)
				}
			})
		}
	}
}
