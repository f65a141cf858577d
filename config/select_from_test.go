package config

import (
	"errors"
	"strings"
	"testing"
)

// TestSelectFrom: select {from: schema.org} is a valid block; an unknown
// source is an error naming select.from and what it may be.
func TestSelectFrom(t *testing.T) {
	const head = "resources:\n  - id: s\n    url: https://example.org/\n"
	cfg, err := Parse([]byte(head + "    select: {from: schema.org}\n"))
	if err != nil {
		t.Fatalf("from schema.org: %v", err)
	}
	if got := cfg.Resources[0].Select.From; got != "schema.org" {
		t.Fatalf("from %q", got)
	}
	_, err = Parse([]byte(head + "    select: {from: microformats}\n"))
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Path != "$.resources[0].select.from" || !strings.Contains(err.Error(), `want "schema.org"`) {
		t.Fatalf("err %v, want a FieldError at select.from naming schema.org", err)
	}
	sel, err := ParseSelect([]byte("select:\n  from: schema.org\n"))
	if err != nil || sel.Spec().From != "schema.org" {
		t.Fatalf("ParseSelect: %v", err)
	}
}
