// Package schematest helps tests check documents with real external
// validators: xmllint against the XMLData XSD, and any other command-line tool
// a test needs. A missing tool skips the test with a message, unless the
// environment sets DYNAMO_REQUIRE_VALIDATORS=1 (as CI does), where it fails.
package schematest

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/dynamo-rss/dynamo/schema"
)

// RequireValidatorsEnv names the variable that turns a missing validator into a failure.
const RequireValidatorsEnv = "DYNAMO_REQUIRE_VALIDATORS"

// Tool returns the path of an external program, or skips the test (fails it
// when validators are required) if it is not installed.
func Tool(t testing.TB, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err == nil {
		return path
	}
	if os.Getenv(RequireValidatorsEnv) == "1" {
		t.Fatalf("%s is required (%s=1) but not installed: %v", name, RequireValidatorsEnv, err)
	}
	t.Skipf("%s not installed; skipping (set %s=1 to make this a failure)", name, RequireValidatorsEnv)
	return ""
}

// Location loads an IANA time zone from the system's zone database, or skips
// the test (fails it when validators are required, as in CI, which installs
// tzdata) if the database is missing.
func Location(t testing.TB, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err == nil {
		return loc
	}
	if os.Getenv(RequireValidatorsEnv) == "1" {
		t.Fatalf("time zone %s is required (%s=1) but not loadable (install tzdata): %v", name, RequireValidatorsEnv, err)
	}
	t.Skipf("no time zone database: %v (set %s=1 to make this a failure)", err, RequireValidatorsEnv)
	return nil
}

var (
	xsdOnce sync.Once
	xsdPath string
	xsdErr  error
)

// xsdFile writes the embedded XSD once per test binary to a temporary file.
func xsdFile() (string, error) {
	xsdOnce.Do(func() {
		dir, err := os.MkdirTemp("", "dynamo-xsd-")
		if err != nil {
			xsdErr = err
			return
		}
		xsdPath = filepath.Join(dir, "xmldata.xsd")
		xsdErr = os.WriteFile(xsdPath, schema.XSD, 0o644)
	})
	return xsdPath, xsdErr
}

// ValidateXSD runs `xmllint --noout --schema xmldata.xsd` on doc and fails the
// test with xmllint's output when the document does not validate.
func ValidateXSD(t testing.TB, doc []byte) {
	t.Helper()
	xmllint := Tool(t, "xmllint")
	xsd, err := xsdFile()
	if err != nil {
		t.Fatalf("write xsd: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, xmllint, "--noout", "--schema", xsd, "-")
	cmd.Stdin = bytes.NewReader(doc)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("xmllint --schema rejects the document: %v\n%s\ndocument:\n%s", err, out, doc)
	}
}
