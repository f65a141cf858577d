package api

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/dynamo-rss/dynamo/schema"
)

// TestPreviewSchemaOrg: POST /preview with select {from: schema.org} turns
// a page that publishes microdata items, and has no annotations, into a
// document, as the poller would.
func TestPreviewSchemaOrg(t *testing.T) {
	const page = `<html><head><title>Orchard</title></head><body>
<article itemscope itemtype="https://schema.org/BlogPosting"><h2 itemprop="headline"><a itemprop="url" href="/p/1">Pruning</a></h2>
<time itemprop="datePublished" datetime="2026-11-20">20 Nov</time></article>
<article itemscope itemtype="https://schema.org/BlogPosting"><h2 itemprop="headline"><a itemprop="url" href="/p/2">Cider</a></h2></article>
</body></html>`
	body, err := json.Marshal(map[string]any{"page": page, "url": "https://orchard.example/", "select": map[string]string{"from": "schema.org"}})
	if err != nil {
		t.Fatal(err)
	}
	s := newSvcServer(t, Options{})
	rec := svcDo(s, http.MethodPost, "/preview", strings.NewReader(string(body)), "Content-Type", "application/json", "Accept", "application/json")
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	var got previewResult
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	doc, err := schema.Unmarshal([]byte(got.Document))
	if err != nil {
		t.Fatalf("document: %v\n%s", err, rec.Body)
	}
	if len(doc.Items) != 2 || doc.Items[0].Title != "Pruning" || doc.Items[0].Link != "https://orchard.example/p/1" || doc.Items[1].Link != "https://orchard.example/p/2" {
		t.Fatalf("items %+v", doc.Items)
	}
}
