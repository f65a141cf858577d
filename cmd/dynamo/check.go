package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/dynamo-rss/dynamo/config"
)

// cmdCheck validates a configuration without starting anything: every
// problem is printed on its own line (FILE:LINE:COL: field: message), and
// the warnings serve would log of a valid one.
func cmdCheck(_ context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("check", "[--config FILE]", stdout)
	configPath := fs.String("config", "", "YAML configuration `file` (default: the built-in configuration of dynamo serve)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return &exitError{code: 2, err: fmt.Errorf("check: unexpected argument %q", fs.Arg(0))}
	}
	var cfg *config.Config
	var err error
	name := *configPath
	if name == "" {
		name = "built-in configuration"
		cfg, err = config.Parse(defaultConfig)
	} else {
		cfg, err = config.Load(name)
	}
	if err != nil {
		problems := unjoin(err)
		for _, p := range problems {
			fmt.Fprintln(stderr, p)
		}
		return &exitError{code: 1, err: fmt.Errorf("%s: %d problem(s)", name, len(problems))}
	}
	// What serve would warn of, from the same list.
	for _, w := range configWarnings(cfg, *configPath) {
		fmt.Fprintf(stderr, "%s: warning: %s\n", name, w)
	}
	fmt.Fprintf(stdout, "%s: ok (%d resources, storage %s)\n", name, len(cfg.Resources), cfg.Storage.Driver)
	return nil
}

// unjoin lists the errors that err joins, each with the file name that
// wraps them; err alone when it joins none.
func unjoin(err error) []error {
	var prefix string
	for e := err; e != nil; e = errors.Unwrap(e) {
		if j, ok := e.(interface{ Unwrap() []error }); ok { //nolint:errorlint // errors.Join's own shape
			if s := err.Error(); len(s) > len(e.Error()) {
				prefix = s[:len(s)-len(e.Error())]
			}
			var out []error
			for _, x := range j.Unwrap() {
				out = append(out, fmt.Errorf("%s%w", prefix, x))
			}
			return out
		}
	}
	return []error{err}
}
