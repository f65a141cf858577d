package main

import (
	"io/fs"
	"log/slog"
	"os"

	"github.com/dynamo-rss/dynamo/config"
)

// minTokenBytes is the admin token length below which serve warns: failed
// attempts are not rate-limited (a limit per address would let anyone lock
// the operator out), so the token's length is what stops guessing.
const minTokenBytes = 16

// warnSecrets logs what makes the configured secrets easy to take: a token
// or DSN file (or the configuration file at path, when the token or the DSN
// is written in it) that every local user can read, a short admin token.
// Called at start and after each reload; it never logs a secret itself.
func warnSecrets(log *slog.Logger, cfg *config.Config, path string) {
	files := []struct{ field, name string }{
		{"admin.token_file", cfg.Admin.TokenFile},
		{"storage.dsn_file", cfg.Storage.DSNFile},
	}
	if cfg.Admin.TokenFile == "" && cfg.Admin.Token != "" {
		files = append(files, struct{ field, name string }{"admin.token", path})
	}
	if cfg.Storage.DSNFile == "" && cfg.Storage.DSN != "" {
		files = append(files, struct{ field, name string }{"storage.dsn", path})
	}
	for _, f := range files {
		if f.name == "" {
			continue
		}
		fi, err := os.Stat(f.name)
		if err != nil { // read a moment ago by config.Load; gone since: nothing to say
			continue
		}
		if perm := fi.Mode().Perm(); perm&0o004 != 0 {
			log.Warn("a secret file is readable by every user of this machine; chmod 600 it",
				slog.String("field", f.field), slog.String("file", f.name), slog.String("mode", fs.FileMode(perm).String()))
		}
	}
	if t := cfg.Admin.Token; t != "" && len(t) < minTokenBytes {
		log.Warn("the admin token is short enough to guess; use at least 16 random bytes, e.g. openssl rand -hex 32",
			slog.Int("bytes", len(t)), slog.Int("want_at_least", minTokenBytes))
	}
}
