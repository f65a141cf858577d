package config

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dynamo-rss/dynamo/internal/syncbuf"
)

const fullYAML = `listen: ":9090"
public_url: "https://feeds.example.org"
storage:
  path: "/var/lib/dynamo"
admin:
  token: "s3cret"
poller:
  workers: 4
  timeout: 20s
  connect_timeout: 3s
  header_timeout: 7s
  max_body: 5MiB
  max_redirects: 3
  user_agent: "dynamo/1.0 (+https://feeds.example.org)"
  per_host_interval: 10s
  robots: false
  allow_private: false
  policy: {kind: smart, alpha: 0.5, initial: 10m, min: 1m, max: 6h}
  retention: {max_versions: 100, max_age: 720h}
resources:
  - id: news
    url: "https://example.org/news.html"
    policy: {kind: flat, interval: 15m}
  - id: forum
    url: "https://example.org/forum/"
    policy: {kind: smart, alpha: auto}
    retention: {max_versions: 5}
`

func TestParseConfigFull(t *testing.T) {
	cfg, err := Parse([]byte(fullYAML))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Listen != ":9090" || cfg.PublicURL != "https://feeds.example.org" || cfg.Storage.Path != "/var/lib/dynamo" || cfg.Admin.Token != "s3cret" {
		t.Fatalf("top level: %+v", cfg)
	}
	p := cfg.Poller
	if p.Workers != 4 || p.Timeout.D() != 20*time.Second || p.ConnectTimeout.D() != 3*time.Second || p.HeaderTimeout.D() != 7*time.Second ||
		p.MaxBody != 5<<20 || p.MaxRedirects != 3 || p.PerHostInterval.D() != 10*time.Second || p.Robots || p.AllowPrivate {
		t.Fatalf("poller: %+v", p)
	}
	news := p.ResolvePolicy(cfg.Resources[0].Policy)
	if news != (Policy{Kind: KindFlat, Interval: 15 * time.Minute, Alpha: 0.5, Initial: 10 * time.Minute, Min: time.Minute, Max: 6 * time.Hour}) {
		t.Fatalf("news policy %+v", news)
	}
	forum := p.ResolvePolicy(cfg.Resources[1].Policy)
	if forum.Kind != KindSmart || !forum.AlphaAuto || forum.Initial != 10*time.Minute || forum.Max != 6*time.Hour {
		t.Fatalf("forum policy %+v", forum)
	}
	if r := p.ResolveRetention(cfg.Resources[1].Retention); r.MaxVersions != 5 || r.MaxAge.D() != 720*time.Hour {
		t.Fatalf("forum retention %+v", r)
	}
}

func TestDefaultConfigIsValid(t *testing.T) {
	d := Default()
	if err := d.Validate(); err != nil {
		t.Fatal(err)
	}
	cfg, err := Parse(nil)
	if err != nil || cfg.Listen != ":8080" || cfg.Storage.Path != "./data" || !cfg.Poller.Robots || !cfg.Storage.SyncWrites {
		t.Fatalf("empty file: %+v %v", cfg, err)
	}
	// The defaults docs/configuration.md gives.
	p := d.Poller
	if p.Workers != 8 || p.Timeout.D() != 20*time.Second || p.ConnectTimeout.D() != 5*time.Second || p.HeaderTimeout.D() != 10*time.Second ||
		p.MaxBody != 5<<20 || p.MaxRedirects != 5 || p.PerHostInterval.D() != 10*time.Second || p.Budget.MaxInterval.D() != 48*time.Hour {
		t.Errorf("poller defaults %+v", p)
	}
	if w := d.WebSub; w.LeaseDefault.D() != 240*time.Hour || w.LeaseMin.D() != time.Hour || w.LeaseMax.D() != 720*time.Hour || w.RetryFor.D() != 24*time.Hour {
		t.Errorf("websub defaults %+v", w)
	}
	// A file that names storage but not sync_writes keeps synced saves.
	cfg, err = Parse([]byte("storage:\n  path: /tmp/x\n"))
	if err != nil || !cfg.Storage.SyncWrites || cfg.Storage.Path != "/tmp/x" {
		t.Fatalf("storage without sync_writes: %+v %v", cfg.Storage, err)
	}
	cfg, err = Parse([]byte("storage:\n  sync_writes: false\n"))
	if err != nil || cfg.Storage.SyncWrites || cfg.Storage.Path != "./data" {
		t.Fatalf("sync_writes: false: %+v %v", cfg.Storage, err)
	}
}

func TestParseFieldErrors(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		line       int
		want       string // in the message: the field
	}{
		{"unknown key", "poller:\n  workers: 2\n  wrokers: 3\n", 3, "wrokers"},
		{"bad duration", "poller:\n  timeout: 10 minutes\n", 2, "poller.timeout"},
		{"bad size", "poller:\n  max_body: 5 MegaBytes\n", 2, "poller.max_body"},
		{"bad alpha", "poller:\n  policy:\n    alpha: 1.5\n", 3, "poller.policy.alpha"},
		{"workers", "listen: ':1'\npoller:\n  workers: 0\n", 3, "poller.workers"},
		{"min > initial", "poller:\n  policy: {kind: smart, initial: 1m, min: 5m, max: 1h}\n", 2, "poller.policy"},
		{"unknown kind", "resources:\n  - id: a\n    url: http://x/\n    policy: {kind: eager}\n", 4, "resources[0].policy.kind"},
		{"relative url", "resources:\n  - id: a\n    url: /news\n", 3, "resources[0].url"},
		{"ftp url", "resources:\n  - id: a\n    url: ftp://x/\n", 3, "resources[0].url"},
		{"bad id", "resources:\n  - id: 'a/b'\n    url: http://x/\n", 2, "resources[0].id"},
		{"duplicate id", "resources:\n  - id: a\n    url: http://x/\n  - id: a\n    url: http://y/\n", 4, "resources[1].id"},
		{"negative interval", "poller:\n  policy: {kind: flat, interval: -5m}\n", 2, "poller.policy.interval"},
		{"token and file", "admin:\n  token: x\n  token_file: /y\n", 1, "admin"},
		{"wrong type", "poller:\n  workers: many\n", 2, ""},
		{"websub without public_url", "websub:\n  enabled: true\n", 2, "websub.enabled"},
		{"websub lease bounds", "public_url: https://f.example\nwebsub:\n  lease_min: 48h\n  lease_max: 24h\n  lease_default: 24h\n", 3, "websub.lease_min"},
		{"websub workers", "websub:\n  workers: 0\n", 2, "websub.workers"},
		{"zero weight", "resources:\n  - id: a\n    url: http://x/\n    policy: {kind: budget}\n    weight: 0\n", 5, "resources[0].weight"},
		{"negative weight", "resources:\n  - id: a\n    url: http://x/\n    weight: -2\n", 4, "resources[0].weight"},
		{"text weight", "resources:\n  - id: a\n    url: http://x/\n    weight: heavy\n", 4, "resources[0].weight"},
		{"text weight quoted", "resources:\n  - id: a\n    url: http://x/\n    weight: heavy\n", 4, `weight must be a positive number, got "heavy"`},
		{"NaN weight", "resources:\n  - id: a\n    url: http://x/\n    policy: {kind: budget}\n    weight: NaN\n", 5, `weight must be a positive number, got "NaN"`},
		{"negative budget", "poller:\n  budget: {polls_per_day: -1}\n", 2, "poller.budget.polls_per_day"},
		{"infinite budget", "poller:\n  budget: {polls_per_day: .inf}\n", 2, "poller.budget.polls_per_day: must be a non-negative number (0: 24 per budget resource), got +Inf"},
		{"NaN budget", "poller:\n  budget: {polls_per_day: .nan}\n", 2, "poller.budget.polls_per_day: must be a non-negative number (0: 24 per budget resource), got NaN"},
		{"short max_interval", "poller:\n  budget:\n    max_interval: 5m\n", 3, "poller.budget.max_interval"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.yaml))
			var ce *FieldError
			if !errors.As(err, &ce) {
				t.Fatalf("err = %v, want a *FieldError", err)
			}
			if ce.Line != tc.line {
				t.Errorf("line %d, want %d (%v)", ce.Line, tc.line, err)
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "line") {
				t.Errorf("message %q does not name %q and its line", err, tc.want)
			}
		})
	}
}

// A file with several problems reports every one, each with its field and
// line: keys the decoder refuses (unknown, or a value of the wrong type) do
// not hide the others, nor what validation finds in the rest.
func TestParseReportsEveryProblem(t *testing.T) {
	doc := "listen: ':8080'\n" +
		"poller:\n" +
		"  workers: -1\n" +
		"  timeout: abc\n" +
		"  wrokers: 3\n" +
		"  max_body: lots\n" +
		"resources:\n" +
		"  - id: a\n" +
		"    url: https://example.org/\n" +
		"    bogus: 1\n" +
		"  - {id: b, url: /relative}\n"
	_, err := Parse([]byte(doc))
	if err == nil {
		t.Fatal("no error")
	}
	got := unjoin(err)
	// In file order, each once, with line and column.
	want := []string{
		"line 3, column 12: poller.workers: must be between 1 and 1024, got -1",
		`line 4, column 12: poller.timeout: invalid duration "abc"`,
		"line 5, column 3: poller.wrokers: unknown field; did you mean workers?",
		`line 6, column 13: poller.max_body: invalid size "lots"`,
		"line 10, column 5: resources[0].bogus: unknown field; the fields here are id, url,",
		`line 11, column 18: resources[1].url: "/relative" is not an absolute http(s) URL`,
	}
	if len(got) != len(want) {
		t.Fatalf("%d problems, want %d:\n%v", len(got), len(want), err)
	}
	for i, w := range want {
		if !strings.HasPrefix(got[i].Error(), w) {
			t.Errorf("problem %d = %q, want it to start with %q", i, got[i], w)
		}
	}
}

// Set-aside keys do not make problems up: a refused value that defines an
// anchor (used elsewhere) ends the list there; the checks across fields run
// on the rest too.
func TestParseProblemsEdgeCases(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		want       []string
	}{
		{"anchor in a refused value", "poller:\n  timeout: &t zzz\n  max_body: *t\n",
			[]string{"line 2, column 15: poller.timeout: invalid duration"}},
		{"two refused values on one line", "poller: {timeout: zzz, workers: many}\n",
			[]string{"line 1, column ", "line 1, column "}},
		{"more problems than are reported", manyUnknown(maxProblems + 5),
			slices.Repeat([]string{"line "}, maxProblems)},
		{"as many problems as are reported", manyUnknown(maxProblems),
			slices.Repeat([]string{"line "}, maxProblems)},
		// A selector of the wrong shape is refused by the extractor, whose
		// error carries no place: it is reported as it is (no line), and
		// ends the list.
		{"a selector that is a mapping", "resources:\n  - id: a\n    url: \"https://example.org/\"\n    select: {item: li, title: {select: {h2: 1}}}\n  - id: b\n    url: /relative\n",
			[]string{"select: want a selector or a list of selectors"}},
		{"token and token_file beside an unknown key", "admin:\n  token: x\n  token_file: /y\nlisten: ':1'\nbogus: 1\n",
			[]string{"line 5, column 1: bogus: unknown field", "line 1, column 1: admin: set token or token_file, not both"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.yaml))
			got := unjoin(err)
			if err == nil || len(got) != len(tc.want) {
				t.Fatalf("%d problems, want %d:\n%v", len(got), len(tc.want), err)
			}
			for _, w := range tc.want {
				if !slices.ContainsFunc(got, func(e error) bool { return strings.HasPrefix(e.Error(), w) }) {
					t.Errorf("no problem starts with %q:\n%v", w, err)
				}
			}
		})
	}
}

func TestLoadConfigTokenFile(t *testing.T) {
	dir := t.TempDir()
	tok := filepath.Join(dir, "token")
	if err := os.WriteFile(tok, []byte("abc\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "dynamo.yaml")
	if err := os.WriteFile(path, []byte("admin:\n  token_file: "+tok+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(path)
	if err != nil || cfg.Admin.Token != "abc" {
		t.Fatalf("%+v %v", cfg, err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("a loaded config must validate again (components re-check it on Apply): %v", err)
	}
	if err := os.WriteFile(path, []byte("admin:\n  token_file: "+tok+".missing\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); err == nil || !strings.HasPrefix(err.Error(), path+":2:15: admin.token_file: open ") {
		t.Fatalf("missing token file: %v", err)
	}
}

// manyUnknown is a file with n unknown keys: n problems.
func manyUnknown(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "unknown%d: 1\n", i)
	}
	return b.String()
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]Size{"5MiB": 5 << 20, "512KiB": 512 << 10, "2MB": 2e6, "100": 100, "1GiB": 1 << 30, "7B": 7,
		"4194304TiB": 1 << 62, "4611686018427387904": 1 << 62} { // the largest size, 2⁶², in any unit
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "-1", "5 parsecs", "1.5MiB", "99999999999999999999TiB", "4194305TiB", "4611686018427388MB"} {
		if _, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) accepted", in)
		}
	}
}

// reloadHarness runs a Reloader over a temp file and records applied configs.
type reloadHarness struct {
	path    string
	rl      *Reloader
	applied chan *Config
	cancel  context.CancelFunc
	done    chan error
	hup     chan os.Signal
}

func newReloadHarness(t *testing.T, initial string) *reloadHarness {
	return newReloadHarnessWith(t, initial, ReloaderOptions{Debounce: 20 * time.Millisecond})
}

func newReloadHarnessWith(t *testing.T, initial string, opts ReloaderOptions) *reloadHarness {
	h := &reloadHarness{path: filepath.Join(t.TempDir(), "dynamo.yaml"), applied: make(chan *Config, 10), done: make(chan error, 1), hup: make(chan os.Signal, 1)}
	h.write(t, initial)
	h.rl = NewReloader(h.path, opts, func(_ context.Context, c *Config) error {
		h.applied <- c
		return nil
	})
	ctx, cancel := context.WithCancel(t.Context())
	h.cancel = cancel
	go func() { h.done <- h.rl.Run(ctx, h.hup) }()
	t.Cleanup(func() {
		cancel()
		if err := <-h.done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return h
}

func (h *reloadHarness) write(t *testing.T, s string) {
	t.Helper()
	// Like an editor: write a temp file and rename it over the original.
	tmp := h.path + ".tmp"
	if err := os.WriteFile(tmp, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, h.path); err != nil {
		t.Fatal(err)
	}
}

func (h *reloadHarness) next(t *testing.T) *Config {
	t.Helper()
	select {
	case c := <-h.applied:
		return c
	case <-time.After(10 * time.Second):
		t.Fatal("no reload applied")
		return nil
	}
}

// sync reloads on request and takes the configuration applied: once it
// returns, Run is watching the file.
func (h *reloadHarness) sync(t *testing.T) *Config {
	t.Helper()
	if err := h.rl.Reload(t.Context()); err != nil {
		t.Fatal(err)
	}
	return h.next(t)
}

// noReload checks that nothing is applied for a while. A file event the
// Reloader ignores leaves no trace to wait for, so this waits: the correct
// Reloader passes however slow the machine, a wrong one fails unless the
// machine is slower than the wait.
func (h *reloadHarness) noReload(t *testing.T, why string) {
	t.Helper()
	select {
	case c := <-h.applied:
		t.Fatalf("%s: a reload applied workers %d", why, c.Poller.Workers)
	case <-time.After(500 * time.Millisecond):
	}
}

// TestReloaderWatchesOnlyItsFile: other files of the configuration's
// directory (a backup, a note) and a change of the file's mode alone
// reload nothing; a change of the file still does.
func TestReloaderWatchesOnlyItsFile(t *testing.T) {
	h := newReloadHarnessWith(t, "poller:\n  workers: 3\n", ReloaderOptions{Debounce: time.Millisecond})
	h.sync(t)
	if err := os.WriteFile(filepath.Join(filepath.Dir(h.path), "dynamo.yaml.bak"), []byte("poller:\n  workers: 4\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(h.path, 0o640); err != nil {
		t.Fatal(err)
	}
	h.noReload(t, "another file written, the file's mode changed")
	h.write(t, "poller:\n  workers: 5\n")
	if c := h.next(t); c.Poller.Workers != 5 {
		t.Fatalf("file change: workers %d", c.Poller.Workers)
	}
}

// TestReloaderWaitsForQuiet: a change of the file is applied once the file
// has been quiet for the debounce, not at its first event (an editor's save
// is several events, a file written in place is empty for a moment).
func TestReloaderWaitsForQuiet(t *testing.T) {
	h := newReloadHarnessWith(t, "poller:\n  workers: 3\n", ReloaderOptions{Debounce: time.Hour})
	h.sync(t)
	h.write(t, "poller:\n  workers: 5\n")
	h.noReload(t, "within the debounce")
	if c := h.sync(t); c.Poller.Workers != 5 {
		t.Fatalf("on request: workers %d", c.Poller.Workers)
	}
}

// TestReloaderWaitsForAReplacedFile: a file removed to be replaced (some
// editors and deployment tools do) is not reported as a refused
// configuration while it is missing; the new file is applied when it
// comes.
func TestReloaderWaitsForAReplacedFile(t *testing.T) {
	var logs syncbuf.Buffer
	h := newReloadHarnessWith(t, "poller:\n  workers: 3\n", ReloaderOptions{Debounce: time.Millisecond, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	h.sync(t)
	if err := os.Remove(h.path); err != nil {
		t.Fatal(err)
	}
	h.noReload(t, "the file removed")
	h.write(t, "poller:\n  workers: 5\n")
	if c := h.next(t); c.Poller.Workers != 5 {
		t.Fatalf("new file: workers %d", c.Poller.Workers)
	}
	if strings.Contains(logs.String(), "refused") {
		t.Errorf("the missing file was reported:\n%s", logs.String())
	}
}

func TestReloaderRequestAndBadFile(t *testing.T) {
	h := newReloadHarness(t, "poller:\n  workers: 3\n")
	if err := h.rl.Reload(t.Context()); err != nil {
		t.Fatal(err)
	}
	if c := h.next(t); c.Poller.Workers != 3 {
		t.Fatalf("workers %d", c.Poller.Workers)
	}
	// Drain the file-change reload the write may still trigger.
	h.write(t, "poller:\n  workers: 5\n")
	if c := h.next(t); c.Poller.Workers != 5 {
		t.Fatalf("file change: workers %d", c.Poller.Workers)
	}
	h.write(t, "poller:\n  workers: -1\n")
	err := h.rl.Reload(t.Context())
	if err == nil || !strings.Contains(err.Error(), "poller.workers") {
		t.Fatalf("bad file: %v", err)
	}
	select {
	case c := <-h.applied:
		t.Fatalf("a bad file was applied: %+v", c.Poller)
	default:
	}
	h.write(t, "poller:\n  workers: 6\n")
	h.hup <- os.Interrupt // any signal value: the cmd passes SIGHUP
	if c := h.next(t); c.Poller.Workers != 6 {
		t.Fatalf("after HUP workers %d", c.Poller.Workers)
	}
}

func TestReloaderReloadWaitsForCtx(t *testing.T) {
	rl := NewReloader("", ReloaderOptions{})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := rl.Reload(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Reload without Run: %v", err)
	}
}

func TestReloaderWithoutFileReappliesDefault(t *testing.T) {
	got := make(chan *Config, 1)
	rl := NewReloader("", ReloaderOptions{}, func(_ context.Context, c *Config) error { got <- c; return nil })
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- rl.Run(ctx, nil) }()
	if err := rl.Reload(t.Context()); err != nil {
		t.Fatal(err)
	}
	if c := <-got; c.Listen != ":8080" {
		t.Fatalf("%+v", c)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// apiExample is the example of docs/configuration.md, verbatim.
var apiExample = func() string {
	b, err := os.ReadFile("../testdata/config/api-example.yaml")
	if err != nil {
		panic(err)
	}
	return string(b)
}()

func TestParseConfigAPIExample(t *testing.T) {
	cfg, err := Parse([]byte(apiExample))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Admin.TokenFile != "/etc/dynamo/token" || len(cfg.Resources) != 2 || cfg.Poller.MaxBody != 5<<20 {
		t.Fatalf("%+v", cfg)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(fullYAML))
	f.Add([]byte(apiExample))
	f.Add([]byte("poller: {policy: {alpha: auto}}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := Parse(data)
		if err != nil {
			return
		}
		if err := cfg.Validate(); err != nil {
			t.Fatalf("Parse returned a config that does not validate: %v", err)
		}
	})
}

func TestWebSubEnabled(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		want       bool
	}{
		{"no public_url", "", false},
		{"public_url", "public_url: https://f.example\n", true},
		{"public_url, turned off", "public_url: https://f.example\nwebsub: {enabled: false}\n", false},
		{"public_url, explicitly on", "public_url: https://f.example\nwebsub:\n  enabled: true\n  retry_for: 2h\n", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := Parse([]byte(tc.yaml))
			if err != nil {
				t.Fatal(err)
			}
			if got := cfg.WebSubEnabled(); got != tc.want {
				t.Errorf("WebSubEnabled = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestParseBudget(t *testing.T) {
	cfg, err := Parse([]byte(`
poller:
  budget: {polls_per_day: 20000, max_interval: 24h}
resources:
  - id: townhall
    url: https://example.org/townhall/
    policy: {kind: budget}
    weight: 2.5
    weight_readers: true
  - id: plain
    url: https://example.org/plain/
    policy: {kind: budget}
  - id: news
    url: https://example.org/news/
    weight: 3
`))
	if err != nil {
		t.Fatal(err)
	}
	p := cfg.Poller
	if p.Budget.PollsPerDay != 20000 || p.Budget.MaxInterval.D() != 24*time.Hour || p.Budget.Total(5) != 20000 {
		t.Fatalf("budget %+v", p.Budget)
	}
	for i, want := range []Policy{
		{Kind: KindBudget, Interval: 15 * time.Minute, Alpha: 0.5, Initial: 10 * time.Minute, Min: time.Minute, Max: 6 * time.Hour, Weight: 2.5, WeightReaders: true},
		{Kind: KindBudget, Interval: 15 * time.Minute, Alpha: 0.5, Initial: 10 * time.Minute, Min: time.Minute, Max: 6 * time.Hour, Weight: 1},
		// A weight means nothing to smart: it stays out of the resolved policy.
		{Kind: KindSmart, Interval: 15 * time.Minute, Alpha: 0.5, Initial: 10 * time.Minute, Min: time.Minute, Max: 6 * time.Hour},
	} {
		if got := p.ResolveResource(cfg.Resources[i]); got != want {
			t.Errorf("resources[%d]: %+v, want %+v", i, got, want)
		}
	}
	def := Default().Poller.Budget
	if def.MaxInterval.D() != DefaultMaxInterval || def.Total(10) != 10*DefaultPollsPerResource {
		t.Errorf("default budget %+v", def)
	}
	// The admin API's JSON reads the same fields.
	r, err := ParseResource([]byte(`{"url": "https://example.org/a", "policy": {"kind": "budget"}, "weight": 2, "weight_readers": true}`), "a", p)
	if err != nil || r.Weight != (Weight{Value: 2, Set: true}) || !r.WeightReaders {
		t.Fatalf("ParseResource: %+v, %v", r, err)
	}
	if _, err := ParseResource([]byte(`{"url": "https://example.org/a", "weight": 0}`), "a", p); err == nil || !strings.Contains(err.Error(), "weight") {
		t.Errorf("weight 0 over the admin API: %v", err)
	}
}

func TestDecodeStoredResource(t *testing.T) {
	p := Default().Poller
	in, err := ParseResource([]byte(`{"url": "https://example.org/a", "policy": {"kind": "smart", "alpha": "auto", "min": "2m"}, "retention": {"max_versions": 5, "max_age": "720h"}, "date_format": "02.01.2006", "timezone": "Europe/Rome", "weight": 2}`), "a", p)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := DecodeStoredResource(b)
	if err != nil || !reflect.DeepEqual(out, in) {
		t.Fatalf("DecodeStoredResource(%s) = %+v, %v; want %+v", b, out, err, in)
	}
	if _, err := DecodeStoredResource([]byte(`{"url": "https://example.org/a", "colour": "red"}`)); err == nil {
		t.Error("an unknown field was accepted")
	}
}

// TestDecodeStoredResourceAlpha: a stored registration's alpha outside
// [0,1] (written by hand, or by an older version) is refused as the admin
// API refuses it, naming the field; one inside is read as written.
func TestDecodeStoredResourceAlpha(t *testing.T) {
	for _, tc := range []struct {
		alpha string
		want  float64 // read as; NaN: refused
	}{
		{"0.25", 0.25}, {"0", 0}, {"1", 1},
		{"1.5", math.NaN()}, {"-0.5", math.NaN()},
	} {
		r, err := DecodeStoredResource([]byte(`{"id": "a", "url": "https://example.org/a", "policy": {"kind": "smart", "alpha": ` + tc.alpha + `}}`))
		switch {
		case math.IsNaN(tc.want) && (err == nil || !strings.Contains(err.Error(), "policy.alpha: alpha must be a number in [0,1] or auto")):
			t.Errorf("alpha %s: %+v, %v; want it refused at policy.alpha", tc.alpha, r.Policy.Alpha, err)
		case !math.IsNaN(tc.want) && (err != nil || r.Policy.Alpha != (Alpha{Value: tc.want, Set: true})):
			t.Errorf("alpha %s: %+v, %v; want %v", tc.alpha, r.Policy.Alpha, err, tc.want)
		}
	}
}
