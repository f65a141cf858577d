package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/dynamo-rss/dynamo/config"
)

// demoConfig is the demo's configuration file; %s are the listening
// address, the storage path and the simulated site's base URL. The smart policy's short initial estimate
// and minimum make its adaptation visible within a minute.
const demoConfig = `# dynamo demo: edit this file while the demo runs, it reloads by itself.
listen: %q
storage:
  path: %q   # the admin token is in admin-token here, as dynamo serve keeps it
poller:
  workers: 2
  timeout: 5s
  per_host_interval: 1s
  allow_private: true   # the simulated site is on loopback
  user_agent: "dynamo-demo/1.0"
  policy: {kind: smart, alpha: 0.5, initial: 8s, min: 2s, max: 2m}
resources:
  - id: harbour-news
    url: "%s/news.html"
    policy: {kind: smart, alpha: 0.5, initial: 8s, min: 2s, max: 2m}
  - id: cronaca
    url: "%s/cronaca.html"   # served as ISO-8859-1
    policy: {kind: flat, interval: 10s}
`

func cmdDemo(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("demo", "[--listen ADDR] [--data DIR] [--seed N]", stdout)
	listen := fs.String("listen", "127.0.0.1:8080", "listen `address` of the service")
	dataDir := fs.String("data", "", "keep the store and the demo configuration in `dir` (default: a temporary directory, removed at exit)")
	seed := fs.Uint64("seed", 4, "`seed` of the simulated site's news")
	logf := addLogFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return &exitError{code: 2, err: fmt.Errorf("demo: unexpected argument %q", fs.Arg(0))}
	}
	logger, err := logf.logger(stderr, config.Default().Log)
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	if err := demo(ctx, demoOptions{Listen: *listen, DataDir: *dataDir, Seed: *seed, Logger: logger, Stdout: stdout, Hup: hup}); err != nil {
		return &exitError{code: 1, err: err}
	}
	return nil
}

// demoOptions configure a demo run.
type demoOptions struct {
	Listen  string
	DataDir string // "": a temporary directory, removed at the end
	Seed    uint64
	Logger  *slog.Logger
	Stdout  io.Writer
	Hup     <-chan os.Signal
	Ready   func(baseURL string) // called once the service accepts connections
	Now     func() time.Time     // the simulated site's clock; nil: time.Now
}

// demo runs the simulated legacy site on a loopback port and the service
// configured to poll it, until ctx ends.
func demo(ctx context.Context, o demoOptions) (err error) {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	dir := o.DataDir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "dynamo-demo-"); err != nil {
			return fmt.Errorf("demo data directory: %w", err)
		}
		defer func() {
			if rerr := os.RemoveAll(dir); rerr != nil {
				err = errors.Join(err, fmt.Errorf("remove demo data: %w", rerr))
			}
		}()
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("demo data directory: %w", err)
	}

	// The legacy site: its own loopback listener and server, owned here.
	siteLn, err := listenSite(dir)
	if err != nil {
		return fmt.Errorf("listen for the demo site: %w", err)
	}
	site := newDemoSite(o.Seed, now(), now)
	siteSrv := &http.Server{Handler: site, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second,
		WriteTimeout: 10 * time.Second, IdleTimeout: time.Minute, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	siteDone := make(chan error, 1)
	go func() { siteDone <- siteSrv.Serve(siteLn) }()
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if serr := siteSrv.Shutdown(sctx); serr != nil {
			err = errors.Join(err, fmt.Errorf("stop demo site: %w", serr))
		}
		if serr := <-siteDone; !errors.Is(serr, http.ErrServerClosed) {
			err = errors.Join(err, fmt.Errorf("demo site: %w", serr))
		}
	}()
	siteURL := "http://" + siteLn.Addr().String()

	// The admin token is the one serve would create (and with --data, the
	// one of the last run): made here so that the banner can show it.
	storePath := filepath.Join(dir, "data")
	tokenFile := filepath.Join(storePath, adminTokenName)
	token, _, err := ensureAdminToken(tokenFile)
	if err != nil {
		return err
	}
	cfgPath := filepath.Join(dir, "dynamo-demo.yaml")
	yaml := fmt.Sprintf(demoConfig, o.Listen, storePath, siteURL, siteURL)
	if err := os.WriteFile(cfgPath, []byte(yaml), 0o600); err != nil {
		return fmt.Errorf("write demo configuration: %w", err)
	}
	cfg, err := config.Load(cfgPath)
	if err != nil {
		return fmt.Errorf("demo configuration: %w", err)
	}
	return serve(ctx, serveOptions{
		Config:     cfg,
		ConfigPath: cfgPath,
		Load:       func() (*config.Config, error) { return config.Load(cfgPath) },
		Logger:     log,
		Stdout:     io.Discard, // the demo prints its own, fuller, banner
		Hup:        o.Hup,
		Ready: func(base string) {
			data := "kept in " + dir
			if o.DataDir == "" {
				data = "in " + dir + ", a temporary directory removed at exit (--data DIR keeps them)"
			}
			fmt.Fprintf(o.Stdout, `dynamo demo is running. Open:

  %[1]s/                                 every resource, its feeds and its poll state
  %[1]s/resources/harbour-news?max=20    the smart-polled page's items (RSS 2.0)
  %[1]s/resources/cronaca?type=atom      the flat-polled Latin-1 page's versions (Atom)
  %[1]s/resources?type=json              all resources (JSON Feed)
  %[1]s/metrics                          Prometheus metrics
  %[1]s/preview                          try the extractor on your own page
  %[1]s/login                            log in with the admin token below, then
  %[1]s/new                              add a feed in the browser

The simulated legacy site is %[2]s/ (news arrive in bursts; within a minute
you see new versions and the smart interval adapting).
Admin token: %[3]s   (in %[5]s) e.g.
  curl -H 'Authorization: Bearer %[3]s' -X POST %[1]s/admin/resources/harbour-news/poll
Configuration: %[4]s (edit it: it reloads).
The store, the token and the configuration are %[6]s.
Ctrl-C stops.
`, base, siteURL, token, cfgPath, tokenFile, data)
			if o.Ready != nil {
				o.Ready(base)
			}
		},
	})
}

// listenSite listens for the simulated site on loopback, on the port it had
// the last time this data directory was used when that port is free, so
// that a restarted demo keeps its page and item links.
func listenSite(dir string) (net.Listener, error) {
	remember := filepath.Join(dir, "demo-site-address")
	if b, err := os.ReadFile(remember); err == nil {
		addr := strings.TrimSpace(string(b))
		if ap, err := netip.ParseAddrPort(addr); err == nil && ap.Addr().IsLoopback() {
			if ln, err := net.Listen("tcp", addr); err == nil {
				return ln, nil
			}
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	_ = os.WriteFile(remember, []byte(ln.Addr().String()+"\n"), 0o600) // a convenience: without it the next run takes another port
	return ln, nil
}
