package poller

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

// Config is the whole dynamo configuration file (API.md "Configuration").
// Obtain one from [LoadConfig], [ParseConfig] or [Default]; treat it as
// read-only afterwards and pass it explicitly.
type Config struct {
	Listen    string          `yaml:"listen"`
	PublicURL string          `yaml:"public_url"` // base of absolute links in feeds
	Storage   StorageConfig   `yaml:"storage"`
	Admin     AdminConfig     `yaml:"admin"`
	Poller    PollerConfig    `yaml:"poller"`
	Resources []ResourceEntry `yaml:"resources"`
}

// StorageConfig locates the Badger store and says how durable a save is.
type StorageConfig struct {
	Path string `yaml:"path"`
	// SyncWrites (default true) syncs every stored version to disk before
	// the save is acknowledged, so it survives an OS crash or power loss.
	// false still survives kill -9 of the process (Badger writes through
	// mmap) and ingests about three times faster (BENCHMARKS.md, Storage).
	SyncWrites bool `yaml:"sync_writes"`
}

// AdminConfig holds the admin bearer token. With TokenFile set, [LoadConfig]
// reads the file and puts its trimmed content in Token; an empty Token after
// loading means the admin routes are off.
type AdminConfig struct {
	Token     string `yaml:"token"`
	TokenFile string `yaml:"token_file"`
}

// PollerConfig configures the engine and the retriever.
type PollerConfig struct {
	Workers         int             `yaml:"workers"`
	Timeout         Duration        `yaml:"timeout"`         // whole request, body included
	ConnectTimeout  Duration        `yaml:"connect_timeout"` // TCP (and TLS) connect
	HeaderTimeout   Duration        `yaml:"header_timeout"`  // until the response headers
	MaxBody         Size            `yaml:"max_body"`        // larger bodies are an error, never truncated
	MaxRedirects    int             `yaml:"max_redirects"`
	UserAgent       string          `yaml:"user_agent"`
	PerHostInterval Duration        `yaml:"per_host_interval"` // politeness; 0 = off
	Robots          bool            `yaml:"robots"`
	AllowPrivate    bool            `yaml:"allow_private"` // loopback/private/link-local targets allowed
	Policy          PolicySpec      `yaml:"policy"`        // the default policy
	Retention       RetentionConfig `yaml:"retention"`     // the default retention
}

// ResourceEntry is one polled page.
type ResourceEntry struct {
	ID        string          `yaml:"id"`
	URL       string          `yaml:"url"`
	Policy    PolicySpec      `yaml:"policy"`    // fields set here override the poller default
	Retention RetentionConfig `yaml:"retention"` // fields set here override the poller default
}

// PolicySpec is a policy as written in the file; zero fields are unset and
// inherit from the poller default. Resolve it with [PollerConfig.ResolvePolicy].
type PolicySpec struct {
	Kind     string   `yaml:"kind"`
	Interval Duration `yaml:"interval"`
	Alpha    Alpha    `yaml:"alpha"`
	Initial  Duration `yaml:"initial"`
	Min      Duration `yaml:"min"`
	Max      Duration `yaml:"max"`
}

// RetentionConfig bounds a resource's history; zero fields inherit (per
// resource) or mean unbounded (default).
type RetentionConfig struct {
	MaxVersions int      `yaml:"max_versions"`
	MaxAge      Duration `yaml:"max_age"`
}

// Duration is a time.Duration written like "10m" or "1h30m".
type Duration time.Duration

// Size is a byte count written like "5MiB", "512KiB", "2MB" or "1048576".
type Size int64

// Alpha is a smoothing factor written as a number in [0,1] or "auto".
type Alpha struct {
	Value float64
	Auto  bool
	Set   bool // present in the file
}

// Default returns the built-in configuration: the embedded default of
// `dynamo serve` without a file, and the base every file is read over.
func Default() Config {
	return Config{
		Listen:  ":8080",
		Storage: StorageConfig{Path: "./data", SyncWrites: true},
		Poller: PollerConfig{
			Workers:         8,
			Timeout:         Duration(20 * time.Second),
			ConnectTimeout:  Duration(5 * time.Second),
			HeaderTimeout:   Duration(10 * time.Second),
			MaxBody:         5 << 20,
			MaxRedirects:    5,
			UserAgent:       "dynamo/1.0",
			PerHostInterval: Duration(10 * time.Second),
			Robots:          true,
			Policy: PolicySpec{
				Kind:     KindSmart,
				Interval: Duration(15 * time.Minute),
				Alpha:    Alpha{Value: 0.5, Set: true},
				Initial:  Duration(10 * time.Minute),
				Min:      Duration(time.Minute),
				Max:      Duration(6 * time.Hour),
			},
		},
	}
}

// ConfigError is a configuration problem at a field: Path is the YAML path
// ("$.resources[1].url"), Line the 1-based line in the file (0 when unknown).
type ConfigError struct {
	Path string
	Line int
	Err  error
}

func (e *ConfigError) Error() string {
	field := strings.TrimPrefix(strings.TrimPrefix(e.Path, "$"), ".")
	switch {
	case e.Line > 0 && field != "":
		return fmt.Sprintf("config line %d: %s: %v", e.Line, field, e.Err)
	case e.Line > 0:
		return fmt.Sprintf("config line %d: %v", e.Line, e.Err)
	case field != "":
		return fmt.Sprintf("config: %s: %v", field, e.Err)
	}
	return fmt.Sprintf("config: %v", e.Err)
}

func (e *ConfigError) Unwrap() error { return e.Err }

// LoadConfig reads, strictly parses, defaults and validates the file at path;
// it also reads admin.token_file. Errors name the field and the line.
func LoadConfig(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	cfg, err := ParseConfig(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if cfg.Admin.TokenFile != "" {
		tok, err := os.ReadFile(cfg.Admin.TokenFile)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, &ConfigError{Path: "$.admin.token_file", Line: lineOf(data, "$.admin.token_file"), Err: err})
		}
		cfg.Admin.Token = strings.TrimSpace(string(tok))
		if cfg.Admin.Token == "" {
			return nil, fmt.Errorf("%s: %w", path, &ConfigError{Path: "$.admin.token_file", Line: lineOf(data, "$.admin.token_file"), Err: errors.New("token file is empty")})
		}
	}
	return cfg, nil
}

// ParseConfig parses a configuration document over [Default], rejecting
// unknown keys and bad values, then validates it. It reads no files.
func ParseConfig(data []byte) (*Config, error) {
	cfg := Default()
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		return nil, yamlError(err)
	}
	if len(f.Docs) > 1 {
		return nil, &ConfigError{Err: errors.New("want one YAML document, got several")}
	}
	if len(f.Docs) == 1 && f.Docs[0].Body != nil { // an empty file is the default
		if err := yaml.UnmarshalWithOptions(data, &cfg, yaml.DisallowUnknownField()); err != nil {
			return nil, yamlError(err)
		}
	}
	// Checked here, not in Validate: LoadConfig fills Token from TokenFile,
	// and the loaded config must still validate when a component applies it.
	if cfg.Admin.Token != "" && cfg.Admin.TokenFile != "" {
		return nil, &ConfigError{Path: "$.admin", Line: lineOf(data, "$.admin"), Err: errors.New("set token or token_file, not both")}
	}
	if err := cfg.Validate(); err != nil {
		var ce *ConfigError
		if errors.As(err, &ce) && ce.Line == 0 {
			ce.Line = lineOf(data, ce.Path)
		}
		return nil, err
	}
	return &cfg, nil
}

// yamlError turns a go-yaml error into a ConfigError with its line.
func yamlError(err error) error {
	var ce *ConfigError
	if errors.As(err, &ce) {
		return ce
	}
	var ye yaml.Error
	if errors.As(err, &ye) && ye.GetToken() != nil {
		tk := ye.GetToken()
		return &ConfigError{Line: tk.Position.Line, Err: errors.New(ye.GetMessage())}
	}
	return &ConfigError{Err: err}
}

// lineOf finds the line of the node at a YAML path; 0 when absent.
func lineOf(data []byte, path string) int {
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		return 0
	}
	for p := path; p != "" && p != "$"; {
		yp, err := yaml.PathString(p)
		if err == nil {
			if n, err := yp.FilterFile(f); err == nil && n != nil && n.GetToken() != nil {
				return n.GetToken().Position.Line
			}
		}
		// Fall back to the parent: a missing field is reported at its owner.
		i := strings.LastIndexAny(p, ".[")
		if i <= 0 {
			break
		}
		p = p[:i]
	}
	return 0
}

func nodeError(n ast.Node, err error) error {
	ce := &ConfigError{Path: n.GetPath(), Err: err}
	if tk := n.GetToken(); tk != nil {
		ce.Line = tk.Position.Line
	}
	return ce
}

func scalar(n ast.Node) (string, error) {
	var v any
	if err := yaml.NodeToValue(n, &v); err != nil {
		return "", err
	}
	switch x := v.(type) {
	case string:
		return x, nil
	case nil:
		return "", nil
	case map[string]any, []any:
		return "", errors.New("want a scalar value")
	default:
		return fmt.Sprint(x), nil
	}
}

// UnmarshalYAML reads a duration like "10m".
func (d *Duration) UnmarshalYAML(n ast.Node) error {
	s, err := scalar(n)
	if err != nil {
		return nodeError(n, err)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return nodeError(n, fmt.Errorf("invalid duration %q (want e.g. 30s, 10m, 6h)", s))
	}
	if v < 0 {
		return nodeError(n, fmt.Errorf("negative duration %q", s))
	}
	*d = Duration(v)
	return nil
}

// MarshalYAML writes the duration like "10m0s".
func (d Duration) MarshalYAML() (any, error) { return time.Duration(d).String(), nil }

// D returns the time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

var sizeRE = regexp.MustCompile(`^\s*([0-9]+)\s*([KMGT]i?B|B)?\s*$`)

// ParseSize parses "5MiB", "512KiB", "2MB", "100B" or a plain byte count.
func ParseSize(s string) (Size, error) {
	m := sizeRE.FindStringSubmatch(s)
	if m == nil {
		return 0, fmt.Errorf("invalid size %q (want e.g. 5MiB, 512KiB, 1048576)", s)
	}
	n, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("invalid size %q: %w", s, err)
	}
	mult := map[string]int64{"": 1, "B": 1, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12,
		"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}[m[2]]
	if n > (1<<62)/mult {
		return 0, fmt.Errorf("size %q too large", s)
	}
	return Size(n * mult), nil
}

// UnmarshalYAML reads a size like "5MiB".
func (s *Size) UnmarshalYAML(n ast.Node) error {
	str, err := scalar(n)
	if err != nil {
		return nodeError(n, err)
	}
	v, err := ParseSize(str)
	if err != nil {
		return nodeError(n, err)
	}
	*s = v
	return nil
}

// UnmarshalYAML reads a number in [0,1] or "auto".
func (a *Alpha) UnmarshalYAML(n ast.Node) error {
	s, err := scalar(n)
	if err != nil {
		return nodeError(n, err)
	}
	if s == "auto" {
		*a = Alpha{Auto: true, Set: true}
		return nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v < 0 || v > 1 {
		return nodeError(n, fmt.Errorf("alpha must be a number in [0,1] or auto, got %q", s))
	}
	*a = Alpha{Value: v, Set: true}
	return nil
}

// MarshalYAML writes the alpha as a number or "auto".
func (a Alpha) MarshalYAML() (any, error) {
	if a.Auto {
		return "auto", nil
	}
	return a.Value, nil
}

// ResolvePolicy merges a resource's policy over the poller default.
func (p PollerConfig) ResolvePolicy(r PolicySpec) PolicyConfig {
	d := p.Policy
	pick := func(v, def Duration) time.Duration {
		if v != 0 {
			return time.Duration(v)
		}
		return time.Duration(def)
	}
	c := PolicyConfig{
		Kind:     r.Kind,
		Interval: pick(r.Interval, d.Interval),
		Initial:  pick(r.Initial, d.Initial),
		Min:      pick(r.Min, d.Min),
		Max:      pick(r.Max, d.Max),
	}
	if c.Kind == "" {
		c.Kind = d.Kind
	}
	a := d.Alpha
	if r.Alpha.Set {
		a = r.Alpha
	}
	c.Alpha, c.AlphaAuto = a.Value, a.Auto
	if !a.Set {
		c.Alpha = 0.5
	}
	if c.Kind == KindFlat && c.Interval == 0 {
		// A flat resource under a smart default polls at the default's initial estimate.
		c.Interval = c.Initial
	}
	return c
}

// ResolveRetention merges a resource's retention over the poller default.
func (p PollerConfig) ResolveRetention(r RetentionConfig) RetentionConfig {
	if r.MaxVersions == 0 {
		r.MaxVersions = p.Retention.MaxVersions
	}
	if r.MaxAge == 0 {
		r.MaxAge = p.Retention.MaxAge
	}
	return r
}

var idRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// Validate checks what spans fields: unique ids that storage and URLs accept,
// absolute http(s) URLs, sane poller settings and every resolved policy.
func (c *Config) Validate() error {
	bad := func(path string, format string, args ...any) error {
		return &ConfigError{Path: path, Err: fmt.Errorf(format, args...)}
	}
	if c.PublicURL != "" {
		if u, err := url.Parse(c.PublicURL); err != nil || !u.IsAbs() || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return bad("$.public_url", "%q is not an absolute http(s) URL", c.PublicURL)
		}
	}
	if c.Listen == "" {
		return bad("$.listen", "must not be empty")
	}
	if c.Storage.Path == "" {
		return bad("$.storage.path", "must not be empty")
	}
	p := c.Poller
	switch {
	case p.Workers < 1 || p.Workers > 1024:
		return bad("$.poller.workers", "must be between 1 and 1024, got %d", p.Workers)
	case p.Timeout <= 0:
		return bad("$.poller.timeout", "must be positive")
	case p.ConnectTimeout <= 0:
		return bad("$.poller.connect_timeout", "must be positive")
	case p.HeaderTimeout <= 0:
		return bad("$.poller.header_timeout", "must be positive")
	case p.MaxBody <= 0:
		return bad("$.poller.max_body", "must be positive")
	case p.MaxRedirects < 0 || p.MaxRedirects > 20:
		return bad("$.poller.max_redirects", "must be between 0 and 20, got %d", p.MaxRedirects)
	case p.UserAgent == "":
		return bad("$.poller.user_agent", "must not be empty")
	case p.Retention.MaxVersions < 0:
		return bad("$.poller.retention.max_versions", "must not be negative")
	}
	if p.Policy.Kind != KindFlat && p.Policy.Kind != KindSmart {
		return bad("$.poller.policy.kind", "unknown policy kind %q (want flat or smart)", p.Policy.Kind)
	}
	if err := p.ResolvePolicy(PolicySpec{}).Validate(); err != nil {
		return bad("$.poller.policy", "%w", err)
	}
	seen := make(map[string]int, len(c.Resources))
	for i, r := range c.Resources {
		at := fmt.Sprintf("$.resources[%d]", i)
		if !idRE.MatchString(r.ID) {
			return bad(at+".id", "%q is not a valid id (letters, digits, '.', '_', '-'; at most 128; starts with a letter or digit)", r.ID)
		}
		if j, dup := seen[r.ID]; dup {
			return bad(at+".id", "duplicate id %q (also resources[%d])", r.ID, j)
		}
		seen[r.ID] = i
		u, err := url.Parse(r.URL)
		if err != nil || !u.IsAbs() || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return bad(at+".url", "%q is not an absolute http(s) URL", r.URL)
		}
		if r.Policy.Kind != "" && r.Policy.Kind != KindFlat && r.Policy.Kind != KindSmart {
			return bad(at+".policy.kind", "unknown policy kind %q (want flat or smart)", r.Policy.Kind)
		}
		if err := p.ResolvePolicy(r.Policy).Validate(); err != nil {
			return bad(at+".policy", "%w", err)
		}
		if r.Retention.MaxVersions < 0 {
			return bad(at+".retention.max_versions", "must not be negative")
		}
	}
	return nil
}
