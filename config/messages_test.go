package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestMessagesForPeople checks the words of configuration problems: each
// once, in file order, FILE:LINE:COL: field: message, a did-you-mean for a
// typo without a knock-on error, syntax errors in words.
func TestMessagesForPeople(t *testing.T) {
	tests := []struct {
		name, yaml string
		want       []string
	}{
		{"typos", "listen: ':8080'\npoller:\n  worker: 4\nresources:\n  - id: a\n    url: \"https://example.org/\"\n    policy: {kind: smrt}\n  - id: b\n    ulr: \"https://example.org/b\"\n", []string{
			"FILE:3:3: poller.worker: unknown field; did you mean workers?",
			`FILE:7:20: resources[0].policy.kind: unknown policy kind "smrt" (want flat, smart or budget)`,
			"FILE:9:5: resources[1].ulr: unknown field; did you mean url?",
		}},
		{"an unknown kind inherited is reported once", "poller:\n  policy: {kind: smrt}\nresources:\n  - id: a\n    url: \"https://example.org/\"\n  - id: b\n    url: \"https://example.org/\"\n", []string{
			`FILE:2:18: poller.policy.kind: unknown policy kind "smrt" (want flat, smart or budget)`,
		}},
		{"a tab", "listen: ':8080'\npoller:\n\tworkers: 4\n", []string{
			"FILE:3:1: a tab is not allowed for indentation in YAML; indent with spaces",
		}},
		{"indented too far", "listen: ':8080'\npoller:\n  workers: 4\n   timeout: 10s\n", []string{
			"FILE:4:4: the indentation does not line up: this line is indented 3 spaces, more than the line above (2)",
		}},
		{"back to no level", "listen: ':8080'\npoller:\n  workers: 4\n timeout: 10s\n", []string{
			"FILE:4:2: the indentation does not line up: this line is indented 1 space, the keys above it 2 and 0",
		}},
		{"a sequence lines up after its dash", "resources:\n  - id: a\n    url: \"https://example.org/\"\n     policy: {kind: flat}\n", []string{
			"FILE:4:6: the indentation does not line up",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "dynamo.yaml")
			if err := os.WriteFile(path, []byte(tt.yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := Load(path)
			if err == nil {
				t.Fatal("accepted")
			}
			got := unjoin(err)
			if len(got) != len(tt.want) {
				t.Fatalf("%d problems, want %d:\n%v", len(got), len(tt.want), err)
			}
			for i, w := range tt.want {
				w = strings.Replace(w, "FILE", path, 1)
				if !strings.HasPrefix(got[i].Error(), w) {
					t.Errorf("problem %d:\n got %s\nwant %s…", i, got[i], w)
				}
			}
		})
	}
}

// TestRelativePathsFromTheFile checks that relative paths in a file are
// taken from its directory, whatever the working directory.
func TestRelativePathsFromTheFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "admin.token"), []byte("0123456789abcdef0123\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "dynamo.yaml")
	if err := os.WriteFile(path, []byte("storage:\n  path: \"./data\"\nadmin:\n  token_file: \"./admin.token\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir()) // elsewhere
	cfg, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Storage.Path != filepath.Join(dir, "data") || cfg.Admin.TokenFile != filepath.Join(dir, "admin.token") || cfg.Admin.Token != "0123456789abcdef0123" {
		t.Errorf("storage.path %q, token_file %q, token %q: want them in %s", cfg.Storage.Path, cfg.Admin.TokenFile, cfg.Admin.Token, dir)
	}
}

// TestResourceBodyMessages checks the admin API's JSON bodies: a malformed
// one in JSON's terms with its position, a typo with a did-you-mean and no
// knock-on error.
func TestResourceBodyMessages(t *testing.T) {
	p := Default().Poller
	tests := []struct{ name, body, want string }{
		{"missing value", `{"url": }`, "line 1, column 9: malformed JSON: invalid character '}' looking for beginning of value"},
		{"unclosed", "{\"url\": \"https://example.org/\"", "line 1, column 31: malformed JSON: the body ends before the object is closed"},
		{"second line", "{\"url\": \"https://example.org/\",\n \"policy\" {}}", "line 2, column 11: malformed JSON: invalid character '{' after object key"},
		{"typo", `{"ulr": "https://example.org/"}`, "line 1, column 2: ulr: unknown field; did you mean url?"},
		{"bad value", `{"url": "https://example.org/", "policy": {"kind": "smrt"}}`, `line 1, column 52: policy.kind: unknown policy kind "smrt"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseResource([]byte(tt.body), "news", p)
			if err == nil {
				t.Fatal("accepted")
			}
			if got := unjoin(err); len(got) != 1 || !strings.HasPrefix(got[0].Error(), tt.want) {
				t.Errorf("got %v\nwant one problem: %s…", err, tt.want)
			}
		})
	}
}

// TestUnknownFieldSuggestion: the closest known field is suggested when it
// is at most max(2, len/3) edits away, the first in the file's order on a
// tie; farther, the known fields are listed.
func TestUnknownFieldSuggestion(t *testing.T) {
	type section struct {
		Alpha string `yaml:"alpha"`
		Alphb string `yaml:"alphb"`
		Wide  string `yaml:"wideness_of_field"`
	}
	root := reflect.TypeFor[struct {
		S section `yaml:"s"`
	}]()
	for _, tc := range []struct{ key, meant string }{
		{"alphx", "alpha"}, // one edit from alpha and from alphb: the first
		{"alxhx", "alpha"}, // two edits: at the bound for a short key
		{"xlxhx", ""},      // three: too far
		{"wxdxnxss_xf_fixld", "wideness_of_field"}, // five edits in 17 characters: at len/3
		{"wxdxnxss_xf_fxxld", ""},                  // six: too far
	} {
		msg, meant := unknownField(root, "$.s."+tc.key)
		if meant != tc.meant {
			t.Errorf("%s: meant %q (%s), want %q", tc.key, meant, msg, tc.meant)
		}
		if tc.meant == "" && !strings.Contains(msg, "alpha, alphb, wideness_of_field") {
			t.Errorf("%s: %q, want the known fields listed", tc.key, msg)
		}
	}
}
