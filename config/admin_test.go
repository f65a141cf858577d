package config

import (
	"strings"
	"testing"
)

// admin.enabled: unset or true leaves admin on (with a token, or one that
// serve creates), false turns it off and then takes no token; with
// PostgreSQL, true needs a token, since none is created there.
func TestAdminEnabled(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		want       string // "" when valid; else in the error
		enabled    bool
	}{
		{"unset", "admin: {}\n", "", true},
		{"true", "admin: {enabled: true}\n", "", true},
		{"false", "admin: {enabled: false}\n", "", false},
		{"false with a token", "admin:\n  enabled: false\n  token: 0123456789abcdef\n", "line 2, column 12: admin.enabled: false turns admin off", false},
		{"false with a token file", "admin: {enabled: false, token_file: /etc/dynamo/token}\n", "admin.enabled: false turns admin off", false},
		{"true on postgres without a token", "storage: {driver: postgres, dsn: x}\nadmin: {enabled: true}\n", "admin.enabled: with storage.driver postgres", true},
		{"true on postgres with a token", "storage: {driver: postgres, dsn: x}\nadmin: {enabled: true, token: 0123456789abcdef}\n", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := Parse([]byte(tc.yaml))
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("Parse: %v, want an error with %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := cfg.AdminEnabled(); got != tc.enabled {
				t.Errorf("AdminEnabled() = %v, want %v", got, tc.enabled)
			}
		})
	}
}
