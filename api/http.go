package api

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// Fixed limits of the HTTP server. The write timeout leaves the request
// deadline (Options.RequestTimeout) room to produce its error response.
const (
	readHeaderTimeout = 5 * time.Second
	readTimeout       = 60 * time.Second // preview bodies of several MiB on slow links
	idleTimeout       = 120 * time.Second
	maxHeaderBytes    = 64 << 10
)

// HTTPServer returns the http.Server that Serve uses, with every timeout set;
// its handler is s. Exposed so that a caller can serve TLS itself.
func (s *Server) HTTPServer(ctx context.Context) *http.Server {
	return &http.Server{
		Handler:           s,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      s.opts.RequestTimeout + 10*time.Second,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
		// Requests keep ctx's values but not its cancellation: when ctx ends,
		// in-flight requests still get Options.ShutdownTimeout to finish.
		BaseContext: func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
}

// Serve answers HTTP on ln until ctx ends, then shuts down gracefully: it
// stops accepting, lets in-flight requests finish within
// Options.ShutdownTimeout, then closes what remains. It returns nil after a
// clean shutdown. Serve closes ln.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	srv := s.HTTPServer(ctx)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve http: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.opts.ShutdownTimeout)
	defer cancel()
	err := srv.Shutdown(sctx)
	if err != nil {
		err = fmt.Errorf("shutdown http within %v: %w", s.opts.ShutdownTimeout, err)
		if cerr := srv.Close(); cerr != nil {
			err = errors.Join(err, fmt.Errorf("close http: %w", cerr))
		}
	}
	if serr := <-errc; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, fmt.Errorf("serve http: %w", serr))
	}
	return err
}
