package versiondiff

import (
	"strings"
	"testing"
)

// TestClip: a changed field's value is shown whole up to maxDiffValue runes
// (multi-byte ones counted as one), cut with an ellipsis past it.
func TestClip(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string
	}{
		{strings.Repeat("a", maxDiffValue), strings.Repeat("a", maxDiffValue)},
		{strings.Repeat("é", maxDiffValue), strings.Repeat("é", maxDiffValue)},
		{strings.Repeat("a", maxDiffValue+1), strings.Repeat("a", maxDiffValue) + "…"},
		{strings.Repeat("é", maxDiffValue+1), strings.Repeat("é", maxDiffValue) + "…"},
		{strings.Repeat("a", maxDiffValue-1) + " b", strings.Repeat("a", maxDiffValue-1) + " …"},
		{"", ""},
	} {
		if got := clip(tc.in); got != tc.want {
			t.Errorf("clip(%d runes) = %d runes %.10q…, want %d runes", len([]rune(tc.in)), len([]rune(got)), got, len([]rune(tc.want)))
		}
	}
}
