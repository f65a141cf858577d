package main

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dynamo-rss/dynamo/config"
	"github.com/dynamo-rss/dynamo/internal/formclient"
	"github.com/dynamo-rss/dynamo/internal/syncbuf"
)

// startServe runs `dynamo ARGS` (serve or demo) until stop or the end of
// the test, and returns the first http://127.0.0.1:PORT URL it prints with
// what it printed on stdout and stderr. stop returns run's error.
func startServe(t *testing.T, args ...string) (base string, stdout, stderr *syncbuf.Buffer, stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stdout, stderr = new(syncbuf.Buffer), new(syncbuf.Buffer)
	done := make(chan error, 1)
	go func() { done <- run(ctx, args, strings.NewReader(""), stdout, stderr) }()
	url := regexp.MustCompile(`http://127\.0\.0\.1:\d+`)
	var exited error
	serveEventually(t, "the service's URL on stdout", 20*time.Second, func() bool {
		select {
		case exited = <-done:
			cancel()
			t.Fatalf("%s exited early: %v\nstdout:\n%s\nstderr:\n%s", args[0], exited, stdout.String(), stderr.String())
		default:
		}
		return url.MatchString(stdout.String())
	})
	var once sync.Once
	var err error
	stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case err = <-done:
			case <-time.After(30 * time.Second):
				err = errors.New("did not stop within 30s")
			}
		})
		return err
	}
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("%s: %v", args[0], err)
		}
	})
	return url.FindString(stdout.String()), stdout, stderr, stop
}

// login logs in at base's /login with token as a browser does and reports
// whether it landed on /new.
func login(t *testing.T, base, token string) bool {
	t.Helper()
	b := formclient.New(t, base)
	if code := b.Get("/login"); code != http.StatusOK {
		t.Fatalf("GET /login: %d\n%s", code, b.Body)
	}
	code := b.Submit(b.Form("/login", "token"), "token", token)
	return code == http.StatusOK && b.Last.Request.URL.Path == "/new"
}

// readToken reads the token file, checking that it is private.
func readToken(t *testing.T, file string) string {
	t.Helper()
	fi, err := os.Stat(file)
	if err != nil {
		t.Fatalf("no admin token file: %v", err)
	}
	if perm := fi.Mode().Perm(); perm != 0o600 {
		t.Errorf("%s has mode %v, want 0600", file, perm)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	tok, ok := strings.CutSuffix(string(b), "\n")
	if !ok || !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(tok) {
		t.Fatalf("%s holds %q, want 32 random bytes in hex and a newline", file, b)
	}
	return tok
}

// listenConfig writes a configuration listening on a loopback port, with
// rest after that line, to a new directory, and returns both.
func listenConfig(t *testing.T, rest string) (dir, cfgPath string) {
	t.Helper()
	dir = t.TempDir()
	cfgPath = filepath.Join(dir, "dynamo.yaml")
	if err := os.WriteFile(cfgPath, []byte("listen: \"127.0.0.1:0\"\n"+rest), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir, cfgPath
}

// TestServeCreatesAdminToken: `dynamo serve` with no configuration at all
// creates an admin token in its data directory on first start, prints
// where it is and the /login URL, and the pages take it; the next start
// uses the same token. The token itself is printed nowhere.
func TestServeCreatesAdminToken(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir) // the built-in configuration keeps its data under ./data
	file := filepath.Join(dir, "data", adminTokenName)

	base, stdout, stderr, stop := startServe(t, "serve", "--listen", "127.0.0.1:0")
	token := readToken(t, file)
	out := stdout.String()
	for _, want := range []string{base + "/login", file, "created"} {
		if !strings.Contains(out, want) {
			t.Errorf("the first start's stdout does not say %q:\n%s", want, out)
		}
	}
	if !login(t, base, token) {
		t.Error("/login refused the created token")
	}
	if login(t, base, token+"x") {
		t.Error("/login took a wrong token")
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if logs := stderr.String(); strings.Contains(out+logs, token) {
		t.Errorf("the token appears in serve's output:\n%s\n%s", out, logs)
	}
	if !strings.Contains(stderr.String(), "admin token created") {
		t.Errorf("the log does not record the creation:\n%s", stderr.String())
	}

	base, stdout, stderr, _ = startServe(t, "serve", "--listen", "127.0.0.1:0")
	if again := readToken(t, file); again != token {
		t.Fatal("the second start replaced the token")
	}
	out = stdout.String()
	if !strings.Contains(out, base+"/login") || !strings.Contains(out, file) || strings.Contains(out, "created") {
		t.Errorf("the second start's stdout should name /login and the file, not a creation:\n%s", out)
	}
	if !login(t, base, token) {
		t.Error("/login refused the kept token after a restart")
	}
	if strings.Contains(out+stderr.String(), token) {
		t.Error("the token appears in the second start's output")
	}
}

// TestServeAdminTokenBesideConfig: with a configuration that names no
// token, the token is created in storage.path (taken from the file's
// directory); replacing the file's content and reloading rotates it, and a
// deleted file is created again at the reload.
func TestServeAdminTokenBesideConfig(t *testing.T) {
	dir, cfgPath := listenConfig(t, "storage:\n  path: ./store\n")
	file := filepath.Join(dir, "store", adminTokenName)
	base, stdout, _, _ := startServe(t, "serve", "--config", cfgPath)
	token := readToken(t, file)
	if !strings.Contains(stdout.String(), file) {
		t.Errorf("stdout does not name %s:\n%s", file, stdout.String())
	}
	c := &e2eClient{t: t, base: base, token: token, c: &http.Client{Timeout: 10 * time.Second}}
	if resp, body := c.do(http.MethodGet, "/admin/resources", true); resp.StatusCode != http.StatusOK {
		t.Fatalf("admin API with the created token: %d %s", resp.StatusCode, body)
	}

	// Rotation: a new content, then a reload.
	const rotated = "a-new-token-of-the-operator-s-own"
	if err := os.WriteFile(file, []byte(rotated+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if resp, body := c.do(http.MethodPost, "/admin/reload", true); resp.StatusCode != http.StatusOK {
		t.Fatalf("reload: %d %s", resp.StatusCode, body)
	}
	if resp, _ := c.do(http.MethodGet, "/admin/resources", true); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("the old token after rotation: %d, want 401", resp.StatusCode)
	}
	c.token = rotated
	if !login(t, base, rotated) {
		t.Error("/login refused the rotated token")
	}

	// Deleted, then reloaded: a new token.
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	if resp, body := c.do(http.MethodPost, "/admin/reload", true); resp.StatusCode != http.StatusOK {
		t.Fatalf("reload: %d %s", resp.StatusCode, body)
	}
	fresh := readToken(t, file)
	if fresh == token || !login(t, base, fresh) {
		t.Error("a deleted token file is not replaced by a new token at the reload")
	}
}

// TestServeAdminOff: admin.enabled: false keeps admin off: no token file,
// /login absent, and stdout says so.
func TestServeAdminOff(t *testing.T) {
	dir, cfgPath := listenConfig(t, "storage:\n  path: ./data\nadmin:\n  enabled: false\n")
	base, stdout, _, _ := startServe(t, "serve", "--config", cfgPath)
	if _, err := os.Stat(filepath.Join(dir, "data", adminTokenName)); !os.IsNotExist(err) {
		t.Errorf("a token file was created with admin.enabled: false (%v)", err)
	}
	resp, err := http.Get(base + "/login")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("/login with admin off: %d, want 404", resp.StatusCode)
	}
	if !strings.Contains(stdout.String(), "admin is off") {
		t.Errorf("stdout does not say admin is off:\n%s", stdout.String())
	}
}

// TestServeAdminTokenBadFile: an empty token file (or one that is not a
// file) stops the start with a message naming it; one that other users
// can read is used, with a warning.
func TestServeAdminTokenBadFile(t *testing.T) {
	t.Run("empty", func(t *testing.T) {
		dir, cfgPath := listenConfig(t, "storage:\n  path: ./data\n")
		if err := os.MkdirAll(filepath.Join(dir, "data"), 0o700); err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(dir, "data", adminTokenName)
		if err := os.WriteFile(file, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		var stdout, stderr syncbuf.Buffer
		err := run(context.Background(), []string{"serve", "--config", cfgPath}, strings.NewReader(""), &stdout, &stderr)
		if code := exitCode(err, &stderr); code != 1 || !strings.Contains(stderr.String(), file) || !strings.Contains(stderr.String(), "empty") {
			t.Errorf("exit %d; stderr:\n%s", code, stderr.String())
		}
	})
	t.Run("readable by others", func(t *testing.T) {
		dir, cfgPath := listenConfig(t, "storage:\n  path: ./data\n")
		if err := os.MkdirAll(filepath.Join(dir, "data"), 0o700); err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(dir, "data", adminTokenName)
		if err := os.WriteFile(file, []byte("0123456789abcdef0123456789abcdef\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(file, 0o644); err != nil { // whatever the umask
			t.Fatal(err)
		}
		base, _, stderr, _ := startServe(t, "serve", "--config", cfgPath)
		if logs := stderr.String(); !strings.Contains(logs, "chmod 600") || !strings.Contains(logs, file) {
			t.Errorf("no warning naming the file:\n%s", logs)
		}
		if !login(t, base, "0123456789abcdef0123456789abcdef") {
			t.Error("/login refused the file's token")
		}
	})
}

// TestAdminTokenCreatedOnce: starts racing to create the token agree on
// one, and leave nothing but the token file behind.
func TestAdminTokenCreatedOnce(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "data", adminTokenName)
	const n = 8
	tokens := make([]string, n)
	created := make([]bool, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			var err error
			tokens[i], created[i], err = ensureAdminToken(file)
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	makers := 0
	for i := range n {
		if tokens[i] != tokens[0] {
			t.Fatalf("tokens differ: %q and %q", tokens[0], tokens[i])
		}
		if created[i] {
			makers++
		}
	}
	if makers != 1 {
		t.Errorf("%d calls say they created the token, want 1", makers)
	}
	if got := readToken(t, file); got != tokens[0] {
		t.Errorf("file holds %q, calls returned %q", got, tokens[0])
	}
	entries, err := os.ReadDir(filepath.Dir(file))
	if err != nil || len(entries) != 1 {
		t.Errorf("the directory holds %v (%v), want the token file alone", entries, err)
	}
}

// TestAdminTokenFile: where the token is created, and when it is not.
func TestAdminTokenFile(t *testing.T) {
	off := false
	for _, tc := range []struct {
		name   string
		change func(*config.Config)
		want   string
	}{
		{"badger, no token", func(*config.Config) {}, filepath.Join("/var/lib/dynamo", adminTokenName)},
		{"a token", func(c *config.Config) { c.Admin.Token = "t" }, ""},
		{"a token file", func(c *config.Config) { c.Admin.TokenFile = "/etc/dynamo/token"; c.Admin.Token = "t" }, ""},
		{"admin off", func(c *config.Config) { c.Admin.Enabled = &off }, ""},
		{"postgres: each node would make its own", func(c *config.Config) { c.Storage.Driver = config.DriverPostgres }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := config.Default()
			cfg.Storage.Path = "/var/lib/dynamo"
			tc.change(&cfg)
			if got := adminTokenFile(&cfg); got != tc.want {
				t.Errorf("adminTokenFile = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestDemoPrintsLogin: the demo prints the /login URL, the token and where
// it is kept, the token opens /new, and the demo's data is gone at exit.
func TestDemoPrintsLogin(t *testing.T) {
	base, stdout, stderr, stop := startServe(t, "demo", "--listen", "127.0.0.1:0")
	banner := regexp.MustCompile(`Admin token: (\S+)`)
	serveEventually(t, "the demo banner", 20*time.Second, func() bool { return banner.MatchString(stdout.String()) })
	out := stdout.String()
	token := banner.FindStringSubmatch(out)[1]
	if !strings.Contains(out, base+"/login") {
		t.Errorf("the banner does not give the /login URL:\n%s", out)
	}
	file := regexp.MustCompile(`\S+/` + adminTokenName).FindString(out)
	if file == "" || readToken(t, file) != token {
		t.Fatalf("the banner does not say where the token is kept:\n%s", out)
	}
	if !strings.Contains(out, "removed at exit") {
		t.Errorf("the banner does not say the data goes away at exit:\n%s", out)
	}
	if !login(t, base, token) {
		t.Error("/login refused the demo's token")
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(stderr.String(), token) {
		t.Error("the token appears in the demo's log")
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Errorf("the demo's token file outlived the demo (%v)", err)
	}
}
