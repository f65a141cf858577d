package main

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/dynamo-rss/dynamo/config"
)

// adminTokenName is the file in storage.path that holds the admin token
// serve creates when the configuration names none.
const adminTokenName = "admin-token"

// adminTokenFile is where serve keeps the admin token it creates for cfg,
// or "" when it creates none: a token (or token_file) is configured,
// admin.enabled is false, or the store is PostgreSQL, where each node
// would make a token of its own and a session opened on one node would not
// open on another.
func adminTokenFile(cfg *config.Config) string {
	if cfg.Admin.Token != "" || cfg.Admin.TokenFile != "" || !cfg.AdminEnabled() || cfg.Storage.Driver == config.DriverPostgres {
		return ""
	}
	return filepath.Join(cfg.Storage.Path, adminTokenName)
}

// isCreatedTokenFile reports whether cfg's token file is the one serve
// creates (withAdminToken put it there), for messages that name it.
func isCreatedTokenFile(cfg *config.Config) bool {
	return cfg.Admin.TokenFile != "" && cfg.Admin.TokenFile == filepath.Join(cfg.Storage.Path, adminTokenName)
}

// withAdminToken returns cfg with the created admin token in force when
// cfg names no token and one is created for it (adminTokenFile): a copy
// whose admin.token_file is that file and admin.token its content, as if
// the file had named it, so that warnings and reloads treat it as any
// token file. created tells whether the file was made by this call. cfg
// itself is never changed.
func withAdminToken(cfg *config.Config) (out *config.Config, created bool, err error) {
	file := adminTokenFile(cfg)
	if file == "" {
		return cfg, false, nil
	}
	tok, created, err := ensureAdminToken(file)
	if err != nil {
		return nil, false, err
	}
	c := *cfg
	c.Admin.Token, c.Admin.TokenFile = tok, file
	return &c, created, nil
}

// ensureAdminToken reads the token in file, creating the file (and its
// directory) first when it does not exist: 32 random bytes in hex, mode
// 0600. The file appears whole or not at all (written under another name,
// then linked), and when several starts race, the first link wins and the
// others read its token. created tells whether this call made it.
func ensureAdminToken(file string) (token string, created bool, err error) {
	tok, err := readAdminToken(file)
	if !errors.Is(err, fs.ErrNotExist) {
		return tok, false, err
	}
	dir := filepath.Dir(file)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", false, fmt.Errorf("create the admin token: %w", err)
	}
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	tok = hex.EncodeToString(b)
	tmp, err := os.CreateTemp(dir, "."+adminTokenName+"-*") // mode 0600
	if err != nil {
		return "", false, fmt.Errorf("create the admin token: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, werr := tmp.WriteString(tok + "\n")
	if err := errors.Join(werr, tmp.Sync(), tmp.Close()); err != nil {
		return "", false, fmt.Errorf("create the admin token %s: %w", file, err)
	}
	if err := os.Link(tmp.Name(), file); errors.Is(err, fs.ErrExist) {
		tok, err := readAdminToken(file) // another start made it first
		return tok, false, err
	} else if err != nil {
		return "", false, fmt.Errorf("create the admin token %s: %w", file, err)
	}
	if d, err := os.Open(dir); err == nil { // the new name survives a crash
		_ = d.Sync()
		_ = d.Close()
	}
	return tok, true, nil
}

// readAdminToken reads a created token file as config reads a token_file:
// one trailing newline is not part of the token. The error wraps
// fs.ErrNotExist when there is no file; any other problem is a message
// that says what to do.
func readAdminToken(file string) (string, error) {
	b, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	if err != nil {
		return "", fmt.Errorf("admin token: %w (make it readable by dynamo's user, or delete it: a new token is then created)", err)
	}
	tok := strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
	if tok == "" {
		return "", fmt.Errorf("admin token file %s is empty: write a token in it, or delete it and a new token is created", file)
	}
	return tok, nil
}

// adminBanner is what serve prints about admin after its listening line:
// where to log in and where the token is (never the token itself), or why
// admin is off and how to turn it on. created: the token file was made
// just now. configPath is the configuration file, "" for the built-in one.
func adminBanner(cfg *config.Config, created bool, publicURL, configPath string) string {
	var b strings.Builder
	file := shownPath(cfg.Admin.TokenFile)
	if created {
		fmt.Fprintf(&b, "dynamo: admin token created in %s (mode 0600, kept across restarts; delete it for a new one)\n", file)
	}
	switch {
	case cfg.Admin.Token != "":
		where := "the token in " + file
		if cfg.Admin.TokenFile == "" {
			where = "the admin.token of " + cmp.Or(configPath, "the configuration")
		}
		fmt.Fprintf(&b, "dynamo: to add feeds in the browser, open %s/login and paste %s\n", publicURL, where)
	case !cfg.AdminEnabled():
		b.WriteString("dynamo: admin is off (admin.enabled: false): no /login, /new or /admin routes\n")
	default: // postgres: adminTokenFile creates none
		b.WriteString("dynamo: admin is off: with PostgreSQL no token is created (each node would make its own); " +
			"set admin.token_file, the same file on every node, and reload to turn it on\n")
	}
	return b.String()
}

// shownPath is p as messages show it: absolute, so that it can be found
// from wherever it is read.
func shownPath(p string) string {
	if abs, err := filepath.Abs(p); err == nil && p != "" {
		return abs
	}
	return p
}
