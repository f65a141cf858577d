package poller

import (
	"fmt"
	"strings"
	"testing"

	"github.com/dynamo-rss/dynamo/extractor"
)

// TestDiagnosticStringsBound: a status keeps five diagnostics; a sixth is
// told as "… and 1 more", five are not.
func TestDiagnosticStringsBound(t *testing.T) {
	ds := func(n int) []extractor.Diagnostic {
		out := make([]extractor.Diagnostic, n)
		for i := range out {
			out[i] = extractor.Diagnostic{Line: i + 1, Col: 1, Severity: extractor.Warning, Message: fmt.Sprint("d", i)}
		}
		return out
	}
	if got := diagnosticStrings(ds(5)); len(got) != 5 || strings.Contains(strings.Join(got, "\n"), "more") {
		t.Errorf("five: %q", got)
	}
	got := diagnosticStrings(ds(6))
	if len(got) != 6 || got[5] != "… and 1 more (dynamo lint shows them all)" || !strings.Contains(got[4], "d4") {
		t.Errorf("six: %q", got)
	}
}
