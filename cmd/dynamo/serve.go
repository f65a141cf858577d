package main

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	stdlog "log"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/dynamo-rss/dynamo/api"
	"github.com/dynamo-rss/dynamo/config"
	"github.com/dynamo-rss/dynamo/poller"
	"github.com/dynamo-rss/dynamo/storage"
	"github.com/dynamo-rss/dynamo/ui"
)

// defaultConfig is the configuration of `dynamo serve` without --config.
//
//go:embed default.yaml
var defaultConfig []byte

// serveHelp ends `dynamo serve --help`: where the configuration comes from
// and what it holds.
const serveHelp = `
Configuration: the YAML file given with --config (check it first with
'dynamo check --config FILE'). Without --config, the built-in default: Badger
under ./data, listen :8080, no resources. The file reloads on SIGHUP, on
POST /admin/reload and when it changes.

Admin: without admin.token or admin.token_file, a token is created on first
start in STORAGE.PATH/admin-token (mode 0600, kept across restarts; delete or
replace it and reload to rotate it), and serve prints the /login URL and the
file's path, never the token. admin.enabled: false keeps admin off. With
PostgreSQL no token is created: set admin.token_file, the same on every node.

Fields (every field, its default and meaning: docs/configuration.md):
  listen, public_url
  storage:  driver (badger|postgres), path, dsn, dsn_file, min_free, sync_writes
  admin:    token, token_file, enabled
  log:      level, format (text|json), access
  poller:   workers, timeout, connect_timeout, header_timeout, max_body,
            max_redirects, user_agent, per_host_interval, robots,
            allow_private, policy {kind (flat|smart|budget), interval, alpha,
            initial, min, max}, retention {max_versions, max_age},
            budget {polls_per_day, max_interval}
  websub:   enabled, lease_default, lease_min, lease_max, retry_for, workers, queue
  registration (closed|open), node_id, memory_limit
  resources: - {id, url, policy, retention, date_format, timezone, weight,
                weight_readers, select}
`

// pollerStopTimeout bounds how long shutdown waits for in-flight polls.
const pollerStopTimeout = 30 * time.Second

// readyTimeout bounds /readyz's check of the store: a probe wants an
// answer, and a store that takes longer is as good as unreachable.
const readyTimeout = 3 * time.Second

func cmdServe(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("serve", "[--config FILE] [--listen ADDR]", stdout, serveHelp)
	configPath := fs.String("config", "", "YAML configuration `file` (default: built in: Badger under ./data, listen :8080)")
	listen := fs.String("listen", "", "listen `address`, overriding the configuration's listen")
	logf := addLogFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return &exitError{code: 2, err: fmt.Errorf("serve: unexpected argument %q", fs.Arg(0))}
	}
	load := func() (*config.Config, error) { return config.Parse(defaultConfig) }
	if *configPath != "" {
		path := *configPath
		load = func() (*config.Config, error) { return config.Load(path) }
	}
	cfg, err := load()
	if err != nil {
		return &exitError{code: 1, err: err}
	}
	logger, err := logf.logger(stderr, cfg.Log)
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	defer routeStdLog(logger)()
	// Only cmd may install signal handlers: SIGHUP reloads the configuration.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	if err := serve(ctx, serveOptions{
		Config:     cfg,
		ConfigPath: *configPath,
		Load:       load,
		Listen:     *listen,
		Logger:     logger,
		Stdout:     stdout,
		Hup:        hup,
	}); err != nil {
		return &exitError{code: 1, err: err}
	}
	return nil
}

// routeStdLog sends what Go's own packages log through the standard logger
// (net/http's client: "Unsolicited response received on idle HTTP
// channel…", with bytes an origin chose) into the service's structured log,
// as warnings, until restore is called.
func routeStdLog(l *slog.Logger) (restore func()) {
	w, flags := stdlog.Writer(), stdlog.Flags()
	stdlog.SetFlags(0)
	stdlog.SetOutput(slog.NewLogLogger(l.Handler(), slog.LevelWarn).Writer())
	return func() { stdlog.SetOutput(w); stdlog.SetFlags(flags) }
}

// logFlags are the logging flags of serve and demo; set, they override the
// configuration's log section.
type logFlags struct {
	format, level *string
}

func addLogFlags(fs interface {
	String(name, value, usage string) *string
}) logFlags {
	return logFlags{
		format: fs.String("log-format", "", "log `format` on stderr: text or json (default: the configuration's log.format, text)"),
		level:  fs.String("log-level", "", "lowest log `level`: debug, info, warn or error (default: the configuration's log.level, info)"),
	}
}

// logger builds the process logger, slog to w, from the configuration's log
// section and the flags that override it.
func (f logFlags) logger(w io.Writer, lc config.LogConfig) (*slog.Logger, error) {
	format, lvl := lc.Format, lc.Level
	if *f.format != "" {
		format = *f.format
	}
	if *f.level != "" {
		lvl = *f.level
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(lvl)); err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	opts := &slog.HandlerOptions{Level: level}
	switch format {
	case "text", "":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("--log-format: %q is neither text nor json", format)
}

// serveOptions is everything serve needs; tests and demo fill it directly.
type serveOptions struct {
	Config     *config.Config
	ConfigPath string                         // "" when the configuration is not a file
	Load       func() (*config.Config, error) // how a reload reads the configuration
	Listen     string                         // overrides Config.Listen
	Logger     *slog.Logger
	Stdout     io.Writer        // the listening address and URLs are printed here
	Hup        <-chan os.Signal // SIGHUP; nil: none
	Poller     poller.Options   // Logger and Registerer are filled in
	// Ready, when set, is called with the base URL once the server accepts
	// connections (tests, demo).
	Ready func(baseURL string)
	// ShutdownTimeout bounds finishing in-flight requests; 0: api's default.
	ShutdownTimeout time.Duration
}

// serve runs the service until ctx ends: storage, poller, reloader and HTTP.
// Shutdown happens in order: stop accepting and finish in-flight requests,
// stop the poller (in-flight polls are cancelled and awaited), close Badger.
func serve(ctx context.Context, o serveOptions) (err error) {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	// Without a token configured, one is created in the data directory
	// (admintoken.go); each reload reads it again, as a token_file.
	cfg, tokenCreated, err := withAdminToken(o.Config)
	if err != nil {
		return err
	}
	if tokenCreated {
		log.Info("admin token created", slog.String("file", shownPath(cfg.Admin.TokenFile)))
	}
	warnConfig(log, cfg, o.ConfigPath)
	mem := applyMemory(cfg, nil)
	logMemory(log, mem)
	tctx, stopTuning := context.WithCancel(ctx)
	var tuning sync.WaitGroup
	tuning.Go(func() { tuneGC(tctx, mem) })
	defer func() { stopTuning(); tuning.Wait() }()
	addr := cfg.Listen
	if o.Listen != "" {
		addr = o.Listen
	}

	db, err := openStore(ctx, cfg, log)
	if err != nil {
		return err
	}
	pollerStuck := false // set when workers outlive the shutdown bound
	defer func() {
		if pollerStuck {
			// Closing Badger under live polls could fail their saves half-way;
			// the process is exiting, and Badger recovers on the next open.
			log.Error("storage left open: the poller did not stop")
			return
		}
		if cerr := db.Close(); cerr != nil {
			err = errors.Join(err, fmt.Errorf("close storage: %w", cerr))
		}
		log.Info("storage closed")
	}()

	reg := prometheus.NewRegistry()
	for _, c := range []prometheus.Collector{collectors.NewGoCollector(
		// the live heap (what the last GC kept), besides the memstats:
		// memory per resource is read from it
		collectors.WithGoCollectorRuntimeMetrics(collectors.GoRuntimeMetricsRule{Matcher: regexp.MustCompile(`^/gc/heap/live:bytes$`)}),
	), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})} {
		if err := reg.Register(c); err != nil {
			return fmt.Errorf("register runtime metrics: %w", err)
		}
	}
	if db.commits != nil {
		if err := registerCommitMetrics(reg, db.commits); err != nil {
			return err
		}
	}
	popts := o.Poller
	popts.Logger = log.With(slog.String("component", "poller"))
	popts.Registerer = reg
	var readers lateReaders // the api counts readers; it is built after the engine
	popts.Readers = &readers
	var changed changes // versions stored and resources deleted, for the WebSub hub
	popts.Registry = notifyingRegistry{Registry: db.registry(), c: &changed}
	if db.leaser != nil {
		popts.Leaser = notifyingLeaser{Leaser: db.leaser, c: &changed}
	}
	engine, err := poller.New(ctx, cfg, pollerStore(db, &changed), popts)
	if err != nil {
		return fmt.Errorf("start poller: %w", err)
	}
	var srv *api.Server // built below, before the reloader runs
	var pages *ui.Server
	var inForce atomic.Pointer[config.Config]
	inForce.Store(cfg)
	last := cfg // the last configuration applied; only the reloader goroutine touches it after start

	var publicURL string // set once listening, before the reloader runs
	load := o.Load
	if load == nil {
		load = func() (*config.Config, error) {
			if o.ConfigPath != "" {
				return config.Load(o.ConfigPath)
			}
			d := config.Default()
			return &d, nil
		}
	}
	reloader := config.NewReloader(o.ConfigPath, config.ReloaderOptions{
		Logger: log.With(slog.String("component", "reload")),
		Load: func() (*config.Config, error) {
			next, err := load()
			if err != nil {
				return nil, err
			}
			next, created, err := withAdminToken(next)
			if created { // the file was deleted: a new token, said as at start
				log.Info("admin token created", slog.String("file", shownPath(next.Admin.TokenFile)))
				fmt.Fprint(o.Stdout, adminBanner(next, true, publicURL, o.ConfigPath))
			}
			return next, err
		},
	}, engine.Apply, func(_ context.Context, next *config.Config) error {
		srv.SetAdminToken(next.Admin.Token)   // rotated token (or admin turned on/off) at once
		pages.SetAdminToken(next.Admin.Token) // and the browser sessions signed with it end
		warnConfig(log, next, o.ConfigPath)
		if changed := restartOnly(last, next); len(changed) > 0 {
			log.Warn("these settings take effect at the next restart", slog.String("fields", strings.Join(changed, ", ")))
		}
		last = next
		inForce.Store(next)
		return nil
	})

	ln, err := net.Listen("tcp", addr)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return fmt.Errorf("listen on %s: %w (another process has the port; choose another with --listen)", addr, err)
		}
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	base := baseURL(ln.Addr())
	publicURL = cfg.PublicURL
	if publicURL == "" {
		publicURL = base
	}

	var pollerRunning atomic.Bool
	registry := apiRegistry{e: engine, cfg: &inForce, stored: db}
	fetcher := apiFetcher{e: engine}
	// The pages for people (package ui), mounted by the api on its own
	// middleware: the same services, the same token.
	pages, err = ui.New(ui.Options{
		Store:            db,
		Poller:           apiPoller{engine},
		Registry:         registry,
		Fetch:            fetcher,
		Browser:          browserAvailable(cfg),
		AdminToken:       cfg.Admin.Token,
		TrustedProxies:   cfg.TrustedProxyPrefixes(),
		PublicURL:        publicURL,
		OpenRegistration: cfg.Registration == config.RegistrationOpen,
		HubURL:           hubURL(cfg, publicURL),
		Logger:           log.With(slog.String("component", "api")), // as before the split: one component for HTTP
	})
	if err != nil {
		_ = ln.Close() // nothing was served on it; the pages' error is the one to report
		return fmt.Errorf("build pages: %w", err)
	}
	srv, err = api.New(api.Options{
		Store:            db,
		Poller:           apiPoller{engine},
		Reload:           reloader.Reload,
		AdminToken:       cfg.Admin.Token,
		PublicURL:        publicURL,
		SubscribeMax:     cfg.Feeds.SubscribeMax,
		TrustedProxies:   cfg.TrustedProxyPrefixes(),
		HubURL:           hubURL(cfg, publicURL),
		Logger:           log.With(slog.String("component", "api")),
		AccessLog:        cfg.Log.Access,
		DateRules:        engine.DateRules, // resolved once per resource, not per render
		Registry:         registry,
		Fetch:            fetcher,
		Pages:            pages,
		OpenRegistration: cfg.Registration == config.RegistrationOpen,
		Registerer:       reg,
		Gatherer:         reg,
		Ready: func(ctx context.Context) error {
			if !pollerRunning.Load() {
				return &api.NotReady{Reason: "poller not running"}
			}
			ctx, cancel := context.WithTimeout(ctx, readyTimeout)
			defer cancel()
			if _, err := db.Resource(ctx, "readyz"); err != nil && !errors.Is(err, storage.ErrNotFound) {
				return &api.NotReady{Reason: "store unreachable", Err: err}
			}
			return nil
		},
		ShutdownTimeout: o.ShutdownTimeout,
	})
	if err != nil {
		_ = ln.Close() // nothing was served on it; the api error is the one to report
		return fmt.Errorf("build api: %w", err)
	}
	readers.srv.Store(srv)

	// The poller and the reloader run until pctx ends, which is after HTTP
	// has stopped (or failed).
	pctx, stopPoller := context.WithCancel(context.WithoutCancel(ctx))
	defer stopPoller()
	httpCtx, stopHTTP := context.WithCancel(ctx)
	defer stopHTTP()
	defer pages.Close() // first: the pages' background fetches and first polls, before the poller and the store
	var wg sync.WaitGroup
	var hub interface{ Run(context.Context) error }
	if u := hubURL(cfg, publicURL); u != "" {
		h, err := startHub(cfg, u, srv, db.Store, reg, log)
		if err != nil {
			_ = ln.Close()
			return err
		}
		changed.hub.Store(h)
		hub = h
	}
	var perr, rerr, werr error
	pollerRunning.Store(true)
	wg.Go(func() {
		perr = engine.Run(pctx)
		pollerRunning.Store(false)
		if pctx.Err() == nil { // the poller stopped on its own: stop serving too
			stopHTTP()
		}
	})
	wg.Go(func() { rerr = reloader.Run(pctx, o.Hup) })
	if hub != nil {
		wg.Go(func() {
			if werr = hub.Run(pctx); errors.Is(werr, context.Canceled) {
				werr = nil // stopped with the poller
			}
		})
	}

	log.Info("dynamo serving", slog.String("addr", ln.Addr().String()), slog.String("url", base),
		slog.Int("resources", len(cfg.Resources)), slog.String("storage", db.where))
	// One write, so that a reader of the first line has the others too.
	fmt.Fprint(o.Stdout, "dynamo: listening on "+base+"\n"+adminBanner(cfg, tokenCreated, publicURL, o.ConfigPath))
	if o.Ready != nil {
		o.Ready(base)
	}
	herr := srv.Serve(httpCtx, ln)
	log.Info("http stopped")

	stopPoller()
	stopped := make(chan struct{})
	go func() { wg.Wait(); close(stopped) }()
	select {
	case <-stopped:
		log.Info("poller stopped")
	case <-time.After(pollerStopTimeout):
		pollerStuck = true
		return errors.Join(herr, fmt.Errorf("poller did not stop within %v", pollerStopTimeout))
	}
	if perr != nil {
		perr = fmt.Errorf("poller: %w", perr)
	}
	if rerr != nil {
		rerr = fmt.Errorf("reloader: %w", rerr)
	}
	if werr != nil {
		werr = fmt.Errorf("websub: %w", werr)
	}
	return errors.Join(herr, perr, rerr, werr)
}

// baseURL is the http URL of a listening address, with a host a browser can
// open (the wildcard address becomes localhost).
func baseURL(a net.Addr) string {
	host, port, err := net.SplitHostPort(a.String())
	if err != nil {
		return "http://" + a.String()
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "localhost"
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return "http://" + host + ":" + port
}

// apiPoller shows the engine to the api: poller.Status and api.ResourceStatus
// have the same fields, so each converts with a plain conversion.
type apiPoller struct{ e *poller.Engine }

func (p apiPoller) Statuses() []api.ResourceStatus {
	sts := p.e.Statuses()
	out := make([]api.ResourceStatus, len(sts))
	for i, st := range sts {
		out[i] = api.ResourceStatus(st)
	}
	return out
}

func (p apiPoller) Status(id string) (api.ResourceStatus, bool) {
	st, ok := p.e.Status(id)
	return api.ResourceStatus(st), ok
}

func (p apiPoller) PollNow(ctx context.Context, id string) (api.ResourceStatus, error) {
	st, err := p.e.PollNow(ctx, id)
	return api.ResourceStatus(st), err
}

func (p apiPoller) FirstPoll(ctx context.Context, id string) (api.ResourceStatus, error) {
	st, err := p.e.FirstPoll(ctx, id)
	return api.ResourceStatus(st), err
}

// History shows the engine's poll history to the pages for people;
// poller.PollRecord and api.PollRecord have the same fields.
func (p apiPoller) History(ctx context.Context, id string) ([]api.PollRecord, bool) {
	h, ok := p.e.History(ctx, id)
	out := make([]api.PollRecord, len(h))
	for i, r := range h {
		out[i] = api.PollRecord(r)
	}
	return out, ok
}

var (
	_ api.Poller      = apiPoller{}
	_ api.FirstPoller = apiPoller{}
	_ api.PollHistory = apiPoller{}
)

// restartOnly lists the settings that changed from last to next and that
// only a restart applies.
func restartOnly(last, next *config.Config) []string {
	var out []string
	for _, f := range []struct {
		name    string
		changed bool
	}{
		{"listen", next.Listen != last.Listen},
		{"storage", next.Storage != last.Storage},
		{"public_url", next.PublicURL != last.PublicURL},
		{"poller.workers", next.Poller.Workers != last.Poller.Workers},
		{"log", next.Log != last.Log},
		{"registration", next.Registration != last.Registration},
		{"node_id", next.NodeID != last.NodeID},
		{"trusted_proxies", !slices.Equal(next.TrustedProxies, last.TrustedProxies)},
		{"memory_limit", next.MemoryLimit != last.MemoryLimit},
		{"websub", websubChanged(last, next)},
	} {
		if f.changed {
			out = append(out, f.name)
		}
	}
	return out
}

// websubChanged reports whether the hub's settings differ: the hub is
// built once, at start-up.
func websubChanged(last, next *config.Config) bool {
	a, b := last.WebSub, next.WebSub
	a.Enabled, b.Enabled = nil, nil
	return a != b || last.WebSubEnabled() != next.WebSubEnabled()
}

// lateReaders gives the poller the api's count of readers per resource
// (weight_readers) once the api exists; before, every resource has none.
type lateReaders struct{ srv atomic.Pointer[api.Server] }

func (r *lateReaders) Readers(id string) int {
	if s := r.srv.Load(); s != nil {
		return s.Readers(id)
	}
	return 0
}
