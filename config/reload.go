package config

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
)

// ReloaderOptions configure a Reloader; the zero value is valid.
type ReloaderOptions struct {
	Logger   *slog.Logger  // nil: discard
	Debounce time.Duration // quiet time after the last file event before reloading; 0: 300ms
	// Load replaces how the configuration is read (tests; an embedded
	// default). nil: Load(path), or Default() when path is "". The file
	// at path, if any, is watched either way.
	Load func() (*Config, error)
}

// Reloader re-reads the configuration and applies it to every component. One
// goroutine, Run, owns all reloads: SIGHUP, Reload calls (POST /admin/reload)
// and changes of the file are serialised through it.
type Reloader struct {
	path  string
	opts  ReloaderOptions
	log   *slog.Logger
	apply []func(context.Context, *Config) error
	reqs  chan chan<- error
}

// NewReloader returns a Reloader of the file at path ("" = no file: reloads
// re-apply the built-in default) that hands each valid configuration to the
// apply functions in order. Each apply function must check what it needs
// before changing anything, so that a refused configuration changes nothing.
func NewReloader(path string, opts ReloaderOptions, apply ...func(context.Context, *Config) error) *Reloader {
	rl := &Reloader{path: path, opts: opts, log: opts.Logger, apply: apply, reqs: make(chan chan<- error)}
	if rl.log == nil {
		rl.log = slog.New(slog.DiscardHandler)
	}
	if rl.opts.Debounce <= 0 {
		rl.opts.Debounce = 300 * time.Millisecond
	}
	return rl
}

// Reload asks the Run loop to reload now and returns its result: nil, or why
// the configuration was refused (the old one then stays in force). It waits
// for Run, so it blocks until ctx is done when Run is not running.
func (rl *Reloader) Reload(ctx context.Context) error {
	reply := make(chan error, 1) // buffered: the loop never blocks on a caller that gave up
	select {
	case rl.reqs <- reply:
	case <-ctx.Done():
		return fmt.Errorf("reload: %w", ctx.Err())
	}
	select {
	case err := <-reply:
		return err
	case <-ctx.Done():
		return fmt.Errorf("reload: %w", ctx.Err())
	}
}

// Run serves reloads until ctx is done: on every value from hup (the cmd
// passes a channel given to signal.Notify for SIGHUP; nil for none), every
// Reload call, and, when there is a file, every change of it (its directory is
// watched, since editors replace files; events are debounced).
func (rl *Reloader) Run(ctx context.Context, hup <-chan os.Signal) error {
	var events <-chan fsnotify.Event
	var werrs <-chan error
	if rl.path != "" {
		w, err := fsnotify.NewWatcher()
		if err != nil {
			rl.log.WarnContext(ctx, "config file not watched", slog.Any("error", err))
		} else {
			defer w.Close() //nolint:errcheck // closing a watcher we own; nothing to report
			if err := w.Add(filepath.Dir(rl.path)); err != nil {
				rl.log.WarnContext(ctx, "config file not watched", slog.String("path", rl.path), slog.Any("error", err))
			} else {
				events, werrs = w.Events, w.Errors
			}
		}
	}
	target := filepath.Clean(rl.path)
	var debounce *time.Timer
	var fire <-chan time.Time
	defer func() {
		if debounce != nil {
			debounce.Stop()
		}
	}()
	for {
		var reply chan<- error
		select {
		case <-ctx.Done():
			return nil
		case <-hup:
			rl.log.InfoContext(ctx, "reloading configuration", slog.String("trigger", "signal"))
		case reply = <-rl.reqs:
			rl.log.InfoContext(ctx, "reloading configuration", slog.String("trigger", "request"))
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			if filepath.Clean(ev.Name) != target || ev.Op == fsnotify.Chmod {
				continue
			}
			if debounce == nil {
				debounce = time.NewTimer(rl.opts.Debounce)
			} else {
				debounce.Reset(rl.opts.Debounce)
			}
			fire = debounce.C
			continue
		case err, ok := <-werrs:
			if !ok {
				werrs = nil
				continue
			}
			rl.log.WarnContext(ctx, "config watch error", slog.Any("error", err))
			continue
		case <-fire:
			fire = nil
			if _, err := os.Stat(rl.path); errors.Is(err, os.ErrNotExist) {
				continue // removed (mid-replace): wait for the new file's event
			}
			rl.log.InfoContext(ctx, "reloading configuration", slog.String("trigger", "file"))
		}
		err := rl.reload(ctx)
		if err != nil {
			rl.log.ErrorContext(ctx, "configuration refused; keeping the current one", slog.Any("error", err))
		} else {
			rl.log.InfoContext(ctx, "configuration reloaded")
		}
		if reply != nil {
			reply <- err
		}
	}
}

// reload loads and validates the configuration, then applies it everywhere.
func (rl *Reloader) reload(ctx context.Context) error {
	var cfg *Config
	var err error
	switch {
	case rl.opts.Load != nil:
		cfg, err = rl.opts.Load()
	case rl.path == "":
		d := Default()
		cfg, err = &d, d.Validate()
	default:
		cfg, err = Load(rl.path)
	}
	if err != nil {
		return fmt.Errorf("reload: %w", err)
	}
	for _, apply := range rl.apply {
		if err := apply(ctx, cfg); err != nil {
			return fmt.Errorf("reload: apply: %w", err)
		}
	}
	return nil
}
