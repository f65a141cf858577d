package main

import (
	"context"
	"io/fs"
	"log/slog"
	"os"
	"strings"

	"github.com/dynamo-rss/dynamo/config"
)

// minTokenBytes is the admin token length below which serve warns: failed
// attempts are not rate-limited (a limit per address would let anyone lock
// the operator out), so the token's length is what stops guessing.
const minTokenBytes = 16

// configWarning is something about a valid configuration that an operator
// should change: serve logs it (at start and after each reload) and check
// prints it, from the same list.
type configWarning struct {
	msg   string
	attrs []slog.Attr
}

// String reads "msg (key=value …)", as check prints it.
func (w configWarning) String() string {
	var b strings.Builder
	b.WriteString(w.msg)
	for i, a := range w.attrs {
		if i == 0 {
			b.WriteString(" (")
		} else {
			b.WriteByte(' ')
		}
		b.WriteString(a.String())
	}
	if len(w.attrs) > 0 {
		b.WriteByte(')')
	}
	return b.String()
}

// warnConfig logs [configWarnings], at start and on every reload.
func warnConfig(log *slog.Logger, cfg *config.Config, path string) {
	for _, w := range configWarnings(cfg, path) {
		log.LogAttrs(context.Background(), slog.LevelWarn, w.msg, w.attrs...)
	}
}

// configWarnings are what serve warns of at start and check prints: the
// secrets' (secretWarnings) and a browser missing for fetch: browser.
func configWarnings(cfg *config.Config, path string) []configWarning {
	out := secretWarnings(cfg, path)
	if w := browserWarning(cfg); w != "" {
		out = append(out, configWarning{msg: w})
	}
	return out
}

// secretWarnings lists what makes the configured secrets easy to take: a
// token or DSN file (or the configuration file at path, when the token or
// the DSN is written in it) that every local user can read, a short admin
// token. It never names a secret itself.
func secretWarnings(cfg *config.Config, path string) []configWarning {
	var out []configWarning
	tokenField := "admin.token_file"
	if isCreatedTokenFile(cfg) {
		tokenField = "the admin token dynamo created"
	}
	files := []struct{ field, name string }{
		{tokenField, cfg.Admin.TokenFile},
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
			out = append(out, configWarning{"a secret file is world-readable (every user of this machine can read it); chmod 600 it",
				[]slog.Attr{slog.String("field", f.field), slog.String("file", f.name), slog.String("mode", fs.FileMode(perm).String())}})
		}
	}
	if t := cfg.Admin.Token; t != "" && len(t) < minTokenBytes {
		out = append(out, configWarning{"the admin token is short enough to guess; use at least 16 random bytes, e.g. openssl rand -hex 32",
			[]slog.Attr{slog.Int("bytes", len(t)), slog.Int("want_at_least", minTokenBytes)}})
	}
	return out
}
