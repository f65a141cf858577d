package main

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// version is the release version, set at build time with
// -ldflags "-X main.version=v1.2.3"; otherwise the module version, or "devel".
var version = ""

func cmdVersion(_ context.Context, args []string, _ io.Reader, stdout, _ io.Writer) error {
	fs := newFlagSet("version", "", stdout)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	v, commit, modified := buildVersion()
	if modified {
		commit += " (modified)"
	}
	fmt.Fprintf(stdout, "dynamo %s\ncommit %s\n%s %s/%s\n", v, commit, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return nil
}

// buildVersion reads the version and VCS commit that the Go toolchain
// stamps into the binary.
func buildVersion() (v, commit string, modified bool) {
	v, commit = version, "unknown"
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		if v == "" {
			v = "devel"
		}
		return v, commit, false
	}
	if v == "" {
		v = bi.Main.Version
		if v == "" || v == "(devel)" {
			v = "devel"
		}
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			commit = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	return v, commit, modified
}
