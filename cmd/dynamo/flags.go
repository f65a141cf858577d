package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
)

// newFlagSet returns a flag set that reports errors instead of exiting and
// prints its usage (with the given synopsis, then the flags, then the
// optional footer) to stdout for --help.
func newFlagSet(name, synopsis string, stdout io.Writer, footer ...string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {
		fmt.Fprintf(stdout, "usage: dynamo %s %s\n", name, synopsis)
		fs.SetOutput(stdout)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
		for _, f := range footer {
			fmt.Fprint(stdout, f)
		}
	}
	return fs
}

// parseFlags parses args; --help prints usage (flag.FlagSet.Parse calls
// fs.Usage itself) and returns errHelp, which run turns into success.
func parseFlags(fs *flag.FlagSet, args []string) error {
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		return errHelp
	}
	if err != nil {
		return &exitError{code: 2, err: fmt.Errorf("%s: %w", fs.Name(), err)}
	}
	return nil
}

var errHelp = errors.New("help requested")
