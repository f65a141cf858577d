package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
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
		// A blank line or a comment line is no level of indentation: the
		// problem after it is still worded.
		{"a blank line before the problem", "listen: ':8080'\n\npoller:\n  workers: 4\n   timeout: 10s\n", []string{
			"FILE:5:4: the indentation does not line up: this line is indented 3 spaces, more than the line above (2)",
		}},
		// A document marker is no key: a document indented as a whole
		// after it lines up.
		{"a document under ---", "---\n  listen: ':8080'\n  poller:\n    workers: 4\n     timeout: 10s\n", []string{
			"FILE:5:6: the indentation does not line up: this line is indented 5 spaces, more than the line above (4)",
		}},
		// The lines of a folded block scalar (>) are the value's text, at
		// any depth: the problem named is the one after it.
		{"a folded dsn", "storage:\n  driver: postgres\n  dsn: >\n    host=db user=dynamo\n    dbname=dynamo\npoller:\n  workers: 4\n   timeout: 10s\n", []string{
			"FILE:8:4: the indentation does not line up: this line is indented 3 spaces, more than the line above (2)",
		}},
		// A flow collection ({...} or [...]) over several lines is not
		// judged by its indentation: the parser's problem is worded.
		{"a flow mapping over lines", "poller:\n  policy: {\n      kind: smart, alpha: 0.5 }\n  user_agent: \"dynamo/1.0\n", []string{
			"FILE:4:15: YAML syntax error: could not find end character of double-quoted text",
		}},
		{"a flow sequence over lines", "trusted_proxies: [\n    10.0.0.0/8,\n    192.168.0.0/16,\n  ]\nlisten: \"abc\n", []string{
			"FILE:5:9: YAML syntax error: could not find end character of double-quoted text",
		}},
		// A comment after a key leaves it a key whose value is the block
		// below it.
		{"a comment after a key", "poller:  # the engine\n  workers: 4\nlisten: \"abc\n", []string{
			"FILE:3:9: YAML syntax error: could not find end character of double-quoted text",
		}},
		// The field a typo was meant to be raises no knock-on problem
		// (storage.dsn missing), and the problems after it are still there.
		{"a knock-on before another problem", "storage:\n  driver: postgres\n  dns: \"host=db\"\npoller:\n  workers: 0\n", []string{
			"FILE:3:3: storage.dns: unknown field; did you mean dsn?",
			"FILE:5:12: poller.workers: must be between 1 and 1024, got 0",
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

// TestResourceBodyProblems checks admin API bodies with several problems or
// none written: the problems in body order, those with no place in the body
// (a url left out) last; an empty body is a resource with no url, not a
// crash.
func TestResourceBodyProblems(t *testing.T) {
	p := Default().Poller
	missingURL := `url: "" is not an absolute http(s) URL`
	tests := []struct {
		name, body string
		want       []string
	}{
		{"a typo and no url", `{"policy": {"kind": "smrt"}}`, []string{
			`line 1, column 21: policy.kind: unknown policy kind "smrt"`,
			missingURL,
		}},
		{"an empty body", "", []string{missingURL}},
		{"a comment only", "# to be filled in\n", []string{missingURL}},
		{"a document marker only", "---\n", []string{missingURL}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseResource([]byte(tt.body), "news", p)
			got := unjoin(err)
			if err == nil || len(got) != len(tt.want) {
				t.Fatalf("%d problems, want %d:\n%v", len(got), len(tt.want), err)
			}
			for i, w := range tt.want {
				if !strings.HasPrefix(got[i].Error(), w) {
					t.Errorf("problem %d:\n got %s\nwant %s…", i, got[i], w)
				}
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

// TestEditDistance: Levenshtein with an adjacent transposition as one edit.
func TestEditDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"workers", "workers", 0}, {"wrokers", "workers", 1}, {"ab", "ba", 1}, {"abc", "bca", 2},
		{"ulr", "url", 1}, {"", "abc", 3}, {"abc", "", 3}, {"kitten", "sitting", 3}, {"ca", "abc", 3},
	} {
		if got := editDistance(tc.a, tc.b); got != tc.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

// TestIndentProblem: well indented YAML, block scalars with lines of any
// depth and dedents to an enclosing key are not problems; a line deeper
// than a key whose value is given, or back to a depth no key has, is, at
// its line and column, also when the whole document is indented.
func TestIndentProblem(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		line, col int // 0: no problem
	}{
		{"nested and back", "a:\n  b:\n    c: 1\n  d: 2\ne: 3\n", 0, 0},
		{"sequence items", "r:\n  - id: a\n    url: x\n  - id: b\n    url: y\nz: 1\n", 0, 0},
		{"block scalar at the top", "d: |\n  one\n    two, deeper\n  three\nn: 1\n", 0, 0},
		{"block scalar nested", "a:\n  d: >-\n    one\n      two\n  e: 1\n", 0, 0},
		{"comments and blank lines", "a:\n  # note\n\n  b: 1\n", 0, 0},
		{"deeper than a given value", "a:\n  b: 1\n    c: 2\n", 3, 5},
		{"back to no key's depth", "a:\n    b:\n      c: 1\n  d: 2\n", 4, 3},
		{"a document indented as a whole", "  a:\n    b: 1\n      c: 2\n", 3, 7},
		{"back out of an indented first line", "  a: 1\nb: 2\n", 0, 0}, // left to the YAML parser's message
		{"after a block scalar ends", "d: |\n  one\nn: 1\n  x: 2\n", 4, 3},
	} {
		fe := indentProblem(strings.Split(tc.doc, "\n"))
		switch {
		case tc.line == 0 && fe != nil:
			t.Errorf("%s: %v, want no problem", tc.name, fe)
		case tc.line != 0 && (fe == nil || fe.Line != tc.line || fe.Col != tc.col):
			t.Errorf("%s: %+v, want a problem at %d:%d", tc.name, fe, tc.line, tc.col)
		}
	}
}

// TestTabIndentColumn: a tab in the indentation is reported where it is.
func TestTabIndentColumn(t *testing.T) {
	fe := syntaxProblem([]byte("poller:\n  \tworkers: 1\n"), errors.New("yaml"))
	if fe.Line != 2 || fe.Col != 3 || !strings.Contains(fe.Err.Error(), "tab") {
		t.Errorf("%+v, want a tab at 2:3", fe)
	}
}

// TestReloaderDebounceDefault: no debounce given is 300 ms.
func TestReloaderDebounceDefault(t *testing.T) {
	for _, d := range []time.Duration{0, -time.Second} {
		if rl := NewReloader("x.yaml", ReloaderOptions{Debounce: d}); rl.opts.Debounce != 300*time.Millisecond {
			t.Errorf("Debounce %v: %v, want 300ms", d, rl.opts.Debounce)
		}
	}
	if rl := NewReloader("x.yaml", ReloaderOptions{Debounce: time.Nanosecond}); rl.opts.Debounce != time.Nanosecond {
		t.Errorf("Debounce 1ns: %v", rl.opts.Debounce)
	}
}
