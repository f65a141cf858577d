package main

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dynamo-rss/dynamo/config"
)

// TestWarnSecrets loads real configurations naming real token files and
// checks what serve warns about, and that no warning quotes the token.
func TestWarnSecrets(t *testing.T) {
	const strong = "0123456789abcdef0123456789abcdef"
	for _, tc := range []struct {
		name   string
		token  string
		inline bool // the token in the configuration file, not in a token file
		mode   os.FileMode
		want   []string // substrings of the log; nil: no warning
	}{
		{"private file, long token", strong, false, 0o600, nil},
		{"group-readable file", strong, false, 0o640, nil},
		{"world-readable file", strong, false, 0o644, []string{"world-readable", "field=admin.token_file", "mode=-rw-r--r--"}},
		{"short token", "hunter2", false, 0o600, []string{"short enough to guess", "bytes=7"}},
		{"inline token, private configuration", strong, true, 0o600, nil},
		{"inline token, world-readable configuration", strong, true, 0o604, []string{"world-readable", "field=admin.token ", "mode=-rw----r--"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			tokenFile := filepath.Join(dir, "token")
			if err := os.WriteFile(tokenFile, []byte(tc.token+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			cfgFile := filepath.Join(dir, "dynamo.yaml")
			yaml := "admin:\n  token_file: " + tokenFile + "\n"
			if tc.inline {
				yaml = "admin:\n  token: " + tc.token + "\n"
				tokenFile = cfgFile
			}
			if err := os.WriteFile(cfgFile, []byte(yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(tokenFile, tc.mode); err != nil {
				t.Fatal(err)
			}
			cfg, err := config.Load(cfgFile)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			warnConfig(slog.New(slog.NewTextHandler(&buf, nil)), cfg, cfgFile)
			out := buf.String()
			if tc.want == nil && out != "" {
				t.Errorf("unexpected warning:\n%s", out)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("log lacks %q:\n%s", w, out)
				}
			}
			if strings.Contains(out, tc.token) {
				t.Errorf("the log quotes the token:\n%s", out)
			}
		})
	}
}
