package api

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/dynamo-rss/dynamo/internal/costtest"
)

// TestPreviewSelectorCostLinear: POST /preview with descendant combinators
// on 60 and 500 nested <span>s (cascadia's backtracking took 6.5 s for 60
// and seven compound selectors) costs no more than a few times extracting
// a flat page of the same size, measured in the same run; an XPath
// expression that costs too much is a 422 whose diagnostics say so.
func TestPreviewSelectorCostLinear(t *testing.T) {
	s := newSvcServer(t, Options{})
	for _, c := range []struct{ depth, spans int }{{60, 6}, {60, 12}, {500, 30}} {
		t.Run(fmt.Sprintf("depth %d, %d spans", c.depth, c.spans), func(t *testing.T) {
			page := "<html><head><title>T</title></head><body><b>" + strings.Repeat("<span>", c.depth) + "x" + strings.Repeat("</span>", c.depth) + "</b></body></html>"
			chain := "b" + strings.Repeat(" span", c.spans)
			miss := "i" + chain[1:] // its first compound matches nothing: cascadia tries every choice of ancestors
			bad := previewIn("form field", page, fmt.Sprintf("{item: b, title: %q, description: %q, date: %q}", chain[2:], ":has("+chain+") span", miss))
			ref := previewIn("form field", costtest.FlatPage(max(len(page), 2000)), `{item: li, title: a, link: "a @href"}`)
			refTime, _ := costtest.Best(5, func() {
				if rec := ref.do(s); rec.Code != http.StatusOK {
					t.Fatalf("flat page: %d %s", rec.Code, rec.Body)
				}
			})
			d, _ := costtest.Best(3, func() {
				if rec := bad.do(s); rec.Code != http.StatusOK {
					t.Fatalf("nested page: %d %s", rec.Code, rec.Body)
				}
			})
			t.Logf("%d-byte page: %v; flat page: %v", len(page), d, refTime)
			if d > 10*refTime {
				t.Fatalf("%q on %d nested spans took %v, more than 10× a flat page of the same size (%v)", chain, c.depth, d, refTime)
			}
		})
	}
	t.Run("xpath", func(t *testing.T) {
		var page strings.Builder
		page.WriteString("<html><head><title>T</title></head><body>")
		for page.Len() < 1<<20 {
			page.WriteString(strings.Repeat("<div>", 20) + "<b>x</b>" + strings.Repeat("</div>", 20))
		}
		page.WriteString("</body></html>")
		bad := previewIn("form field", page.String(), `{item: "xpath://*[count(.//*[count(.//*[.//b]) > 1]) > 1]"}`)
		ref := previewIn("form field", costtest.FlatPage(page.Len()), `{item: li, title: a, link: "a @href"}`)
		refTime, _ := costtest.Best(3, func() { ref.do(s) })
		var rec *httpRecorder
		d, _ := costtest.Best(1, func() { rec = bad.do(s) })
		t.Logf("1 MiB page: %v; flat page: %v", d, refTime)
		if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), "costs too much on this page") {
			t.Fatalf("%d %.500s", rec.Code, rec.Body)
		}
		if d > 40*refTime || d > 20*time.Second {
			t.Fatalf("took %v, more than 40× a flat page (%v)", d, refTime)
		}
	})
}
