// Command dynamo gives RSS feeds to web sites that have none: it polls
// annotated legacy pages, keeps every changed version, and serves feeds.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(exitCode(err, os.Stderr))
}

// exitError carries a process exit code; a nil err means the command already
// said everything it had to say (lint's diagnostics, for one).
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// exitCode prints err (if it has something to say) and maps it to an exit code.
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	code := 2
	var ee *exitError
	if errors.As(err, &ee) {
		code = ee.code
		if ee.err == nil {
			return code
		}
	}
	fmt.Fprintf(stderr, "dynamo: %v\n", err)
	return code
}

type command struct {
	name, summary string
	run           func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error
}

func commands() []command {
	return []command{
		{"serve", "run the service: poller and REST API", cmdServe},
		{"demo", "run the service against a simulated legacy news site on loopback", cmdDemo},
		{"extract", "print the XMLData document of an annotated page", cmdExtract},
		{"lint", "print the diagnostics of an annotated page", cmdLint},
		{"suggest", "propose a select block for a page nobody annotated, with the items it yields", cmdSuggest},
		{"check", "validate a configuration file without starting anything", cmdCheck},
		{"version", "print the version, commit and Go version", cmdVersion},
		{"tune", "choose the smoothing factor α for a series of update times", cmdTune},
		{"simulate", "compare polling policies on a posting trace (freshness benchmark)", cmdSimulate},
	}
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: dynamo COMMAND [flags] [args]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "commands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run 'dynamo COMMAND --help' for a command's flags.")
}

// run is the whole program, testable end to end: args exclude the program name.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		usage(stderr)
		return &exitError{code: 2}
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		usage(stdout)
		return nil
	case "--version", "-version":
		return cmdVersion(ctx, nil, stdin, stdout, stderr)
	}
	for _, c := range commands() {
		if c.name == args[0] {
			err := c.run(ctx, args[1:], stdin, stdout, stderr)
			if errors.Is(err, errHelp) {
				return nil
			}
			return err
		}
	}
	usage(stderr)
	return &exitError{code: 2, err: fmt.Errorf("unknown command %q", args[0])}
}
