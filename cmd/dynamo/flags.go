package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
)

// usageOutput is a flag set's output: its usage is kept until parsing tells
// whether it was asked for (--help: printed to stdout) or follows a bad
// flag (dropped: the error alone goes to stderr).
type usageOutput struct {
	stdout io.Writer
	buf    bytes.Buffer
}

func (u *usageOutput) Write(p []byte) (int, error) { return u.buf.Write(p) }

// newFlagSet returns a flag set that reports errors instead of exiting and
// prints its usage (with the given synopsis, then the flags, then the
// optional footer) to stdout for --help.
func newFlagSet(name, synopsis string, stdout io.Writer, footer ...string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(&usageOutput{stdout: stdout})
	fs.Usage = func() {
		out := fs.Output()
		fmt.Fprintf(out, "usage: dynamo %s %s\n", name, synopsis)
		fs.PrintDefaults()
		for _, f := range footer {
			fmt.Fprint(out, f)
		}
	}
	return fs
}

// parseFlags parses args; --help prints usage (flag.FlagSet.Parse calls
// fs.Usage itself) and returns errHelp, which run turns into success. A bad
// flag returns an exit error of code 2, without the usage on stdout.
func parseFlags(fs *flag.FlagSet, args []string) error {
	err := fs.Parse(args)
	if u, ok := fs.Output().(*usageOutput); ok {
		if errors.Is(err, flag.ErrHelp) {
			_, _ = u.stdout.Write(u.buf.Bytes()) // stdout gone: nothing to do
		}
		u.buf.Reset()
	}
	if errors.Is(err, flag.ErrHelp) {
		return errHelp
	}
	if err != nil {
		return &exitError{code: 2, err: fmt.Errorf("%s: %w", fs.Name(), err)}
	}
	return nil
}

var errHelp = errors.New("help requested")
