package api

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
)

// TestServeGracefulShutdown cancels Serve's ctx while a request is in
// flight: the listener closes at once, the request still completes, and
// Serve returns nil.
func TestServeGracefulShutdown(t *testing.T) {
	s := newSvcServer(t, Options{ShutdownTimeout: 5 * time.Second})
	entered, release := make(chan struct{}), make(chan struct{})
	s.e.GET("/test/hold", func(c echo.Context) error {
		close(entered)
		<-release
		return c.String(http.StatusOK, "finished")
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, ln) }()

	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	type answer struct {
		body string
		err  error
	}
	got := make(chan answer, 1)
	go func() {
		resp, err := client.Get("http://" + addr + "/test/hold")
		if err != nil {
			got <- answer{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		got <- answer{string(b), err}
	}()
	<-entered
	cancel()
	// Wait (bounded) until the listener is closed: new connections are refused.
	deadline := time.Now().Add(5 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			break
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatal("still accepting connections after ctx ended")
		}
		time.Sleep(5 * time.Millisecond)
	}
	select {
	case err := <-served:
		t.Fatalf("Serve returned %v before the in-flight request finished", err)
	default:
	}
	close(release)
	if a := <-got; a.err != nil || a.body != "finished" {
		t.Fatalf("in-flight request: %q, %v", a.body, a.err)
	}
	if err := <-served; err != nil {
		t.Fatalf("Serve: %v", err)
	}
}

// TestServeShutdownBound: a request that never finishes cannot hold the
// shutdown beyond Options.ShutdownTimeout.
func TestServeShutdownBound(t *testing.T) {
	s := newSvcServer(t, Options{ShutdownTimeout: 50 * time.Millisecond})
	entered, release := make(chan struct{}), make(chan struct{})
	defer close(release)
	s.e.GET("/test/stuck", func(c echo.Context) error {
		close(entered)
		<-release
		return nil
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, ln) }()
	go func() {
		resp, err := http.Get("http://" + ln.Addr().String() + "/test/stuck")
		if err == nil {
			resp.Body.Close()
		}
	}()
	<-entered
	cancel()
	select {
	case err := <-served:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Serve = %v, want the shutdown deadline", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return within its shutdown bound")
	}
}

func TestHTTPServerTimeouts(t *testing.T) {
	s := newSvcServer(t, Options{})
	srv := s.HTTPServer(context.Background())
	if srv.ReadHeaderTimeout <= 0 || srv.ReadTimeout <= 0 || srv.WriteTimeout <= s.opts.RequestTimeout ||
		srv.IdleTimeout <= 0 || srv.MaxHeaderBytes <= 0 {
		t.Errorf("http.Server limits not all set: %+v", srv)
	}
}
