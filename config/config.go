package config

import (
	"errors"
	"fmt"
	"math"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/dynamo-rss/dynamo/extractor"
	"github.com/dynamo-rss/dynamo/extractor/filter"
)

// Config is the whole dynamo configuration file (docs/configuration.md).
// Obtain one from [Load], [Parse] or [Default]; treat it as read-only
// afterwards and pass it explicitly.
type Config struct {
	Listen       string        `yaml:"listen"`
	PublicURL    string        `yaml:"public_url"` // base of absolute links in feeds
	Storage      StorageConfig `yaml:"storage"`
	Admin        AdminConfig   `yaml:"admin"`
	Poller       PollerConfig  `yaml:"poller"`
	Log          LogConfig     `yaml:"log"`
	Feeds        FeedsConfig   `yaml:"feeds"`
	Registration string        `yaml:"registration"` // RegistrationClosed (default) or RegistrationOpen
	NodeID       string        `yaml:"node_id"`      // postgres: this node's name in leases (default host:pid)
	// TrustedProxies are the addresses (an IP or a CIDR prefix each) of the
	// reverse proxies in front of dynamo: a request coming through one is
	// taken as the client's that X-Forwarded-For names (its last address
	// that is not a trusted proxy), for the per-client limits, the readers
	// count and the access log. Empty: the connection's address, whatever
	// the request's headers say.
	TrustedProxies []string `yaml:"trusted_proxies"`
	// MemoryLimit is the memory the Go runtime keeps the process under (as
	// GOMEMLIMIT); 0 chooses one: half the machine's (or the container's)
	// memory. Under a limit the garbage collector runs
	// rarely (as GOGC=400) while the live heap is small, which keeps the
	// tail latency of cached feeds low. The GOMEMLIMIT and GOGC environment
	// variables, when set, win.
	MemoryLimit Size            `yaml:"memory_limit"`
	WebSub      WebSubConfig    `yaml:"websub"`
	Resources   []ResourceEntry `yaml:"resources"`
}

// Storage drivers.
const (
	DriverBadger   = "badger"
	DriverPostgres = "postgres"
)

// Registration modes.
const (
	RegistrationClosed = "closed"
	RegistrationOpen   = "open"
)

// StorageConfig chooses and locates the store and says how durable a save is.
type StorageConfig struct {
	Driver  string `yaml:"driver"`   // DriverBadger (default) or DriverPostgres
	Path    string `yaml:"path"`     // badger: the data directory
	DSN     string `yaml:"dsn"`      // postgres: a libpq URL or key=value string
	DSNFile string `yaml:"dsn_file"` // postgres: a file holding the DSN ([Load] reads it into DSN)
	// MinFree is the free space below which versions are not written: polls
	// report disk_full, nothing crashes, serving goes on (default 256MiB; 0
	// turns the check off).
	MinFree Size `yaml:"min_free"`
	// SyncWrites (default true) syncs every stored version to disk before
	// the save is acknowledged, so it survives an OS crash or power loss.
	// false still survives kill -9 of the process (Badger writes through
	// mmap) and ingests about three times faster (BENCHMARKS.md, Storage).
	SyncWrites bool `yaml:"sync_writes"`
}

// AdminConfig holds the admin bearer token. With TokenFile set, [Load]
// reads the file and puts its content, less one trailing newline, in Token;
// an empty Token after loading means the admin routes are off.
type AdminConfig struct {
	Token     string `yaml:"token"`
	TokenFile string `yaml:"token_file"`
	// Enabled false keeps the admin routes and pages off. Unset (or true),
	// `dynamo serve` on Badger creates a token in storage.path when neither
	// Token nor TokenFile is set. Use [Config.AdminEnabled].
	Enabled *bool `yaml:"enabled"`
}

// AdminEnabled reports whether admin.enabled leaves admin on (the default).
func (c *Config) AdminEnabled() bool { return c.Admin.Enabled == nil || *c.Admin.Enabled }

// WebSubConfig configures the WebSub hub of dynamo's own feeds (API.md
// "Push (WebSub hub)"). Leases are what §5.3.1 of the Recommendation leaves
// to the hub: LeaseDefault is granted when a subscriber asks for none, a
// requested lease is clamped to [LeaseMin, LeaseMax].
type WebSubConfig struct {
	// Enabled turns the hub on; unset, it is on exactly when public_url is
	// set (the hub URL and topics must be absolute). Use [Config.WebSubEnabled].
	Enabled      *bool    `yaml:"enabled"`
	LeaseDefault Duration `yaml:"lease_default"` // default 240h (10 days, §8.2)
	LeaseMin     Duration `yaml:"lease_min"`     // default 1h
	LeaseMax     Duration `yaml:"lease_max"`     // default 720h (30 days)
	// RetryFor bounds the retries of one delivery (exponential backoff from
	// 10s, at most 1h apart); past it the notification is given up, the
	// subscription stays until its lease ends (default 24h).
	RetryFor Duration `yaml:"retry_for"`
	Workers  int      `yaml:"workers"` // callback requests at once (default 8)
	Queue    int      `yaml:"queue"`   // bound of the verification and delivery queues (default 1024)
}

// WebSubEnabled reports whether the hub runs: websub.enabled when set, else
// whether public_url is set.
func (c *Config) WebSubEnabled() bool {
	if c.WebSub.Enabled != nil {
		return *c.WebSub.Enabled
	}
	return c.PublicURL != ""
}

// FeedsConfig configures the feeds served.
type FeedsConfig struct {
	// SubscribeMax is the N of the items feed /resources/{rssId}?max=N that
	// subscribe links (pages, autodiscovery, OPML) point at (default 50).
	SubscribeMax int `yaml:"subscribe_max"`
}

// LogConfig says what is logged and how.
type LogConfig struct {
	Level  string `yaml:"level"`  // debug, info (default), warn, error
	Format string `yaml:"format"` // text (default) or json
	Access bool   `yaml:"access"` // one line per HTTP request (default false)
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
	Budget          BudgetConfig    `yaml:"budget"`        // shared by the resources with policy kind budget
	Browser         BrowserConfig   `yaml:"browser"`       // renders the resources with fetch: browser (fetch.go)
	FullPerPoll     int             `yaml:"full_per_poll"` // content: full: article fetches at most per poll
}

// ResourceEntry is one polled page, as the file (or the admin API) declares it.
type ResourceEntry struct {
	ID        string          `yaml:"id" json:"id"`
	URL       string          `yaml:"url" json:"url"`
	Policy    PolicySpec      `yaml:"policy" json:"policy,omitzero"`       // fields set here override the poller default
	Retention RetentionConfig `yaml:"retention" json:"retention,omitzero"` // fields set here override the poller default
	// DateFormat is a Go time layout for this page's dates, tried before
	// the lenient parser; Timezone (an IANA name) places dates that carry
	// no zone (default UTC).
	DateFormat string `yaml:"date_format" json:"date_format,omitempty"`
	Timezone   string `yaml:"timezone" json:"timezone,omitempty"`
	// Select, when set, says where the page's items are (SELECTORS.md):
	// the page is extracted with these selectors, not its annotations.
	Select extractor.SelectSpec `yaml:"select,omitzero" json:"select,omitzero"`
	// Filter keeps or drops the extracted items before a version is
	// stored (SELECTORS.md "filter"; [filter.Spec]), whatever
	// found them: annotations, selectors or schema.org.
	Filter filter.Spec `yaml:"filter,omitzero" json:"filter,omitzero"`
	// Weight is the resource's importance under policy kind budget (default
	// 1, must be positive); WeightReaders multiplies it by the number of
	// distinct clients that fetched its feeds in the last week. Both are
	// ignored by the other kinds.
	Weight        Weight `yaml:"weight" json:"weight,omitzero"`
	WeightReaders bool   `yaml:"weight_readers" json:"weight_readers,omitempty"`
	// Title, when set, replaces the channel title the page gives.
	Title string `yaml:"title" json:"title,omitempty"`
	// Headers are sent with every request for this page to its host
	// (cookies for a consent wall, Accept-Language). Their values are
	// secrets of a kind: never shown back ([ResourceEntry.Redacted]) nor
	// logged.
	Headers map[string]string `yaml:"headers" json:"headers,omitempty"`
	// Fetch is how the page is fetched: http (a plain GET, the default) or
	// browser (rendered with JavaScript; WaitFor, a CSS selector, is
	// waited for). Content full keeps each new item's article as its
	// content (fetch.go).
	Fetch   string `yaml:"fetch" json:"fetch,omitempty"`
	WaitFor string `yaml:"wait_for" json:"wait_for,omitempty"`
	Content string `yaml:"content" json:"content,omitempty"`
}

// RedactedValue replaces a header's value wherever a definition is shown.
const RedactedValue = "(redacted)"

// Redacted returns the entry as it may be shown (admin API, pages): its
// headers' names with their values replaced by [RedactedValue].
func (r ResourceEntry) Redacted() ResourceEntry {
	if len(r.Headers) == 0 {
		return r
	}
	h := make(map[string]string, len(r.Headers))
	for k := range r.Headers {
		h[k] = RedactedValue
	}
	r.Headers = h
	return r
}

// Weight is a budget resource's importance: a positive number; Set tells a
// written value from the default (so weight: 0 is refused, not defaulted).
type Weight struct {
	Value float64
	Set   bool
}

// PolicySpec is a policy as written in the file; zero fields are unset and
// inherit from the poller default. Resolve it with [PollerConfig.ResolvePolicy].
type PolicySpec struct {
	Kind     string   `yaml:"kind" json:"kind,omitempty"`
	Interval Duration `yaml:"interval" json:"interval,omitzero"`
	Alpha    Alpha    `yaml:"alpha" json:"alpha,omitzero"`
	Initial  Duration `yaml:"initial" json:"initial,omitzero"`
	Min      Duration `yaml:"min" json:"min,omitzero"`
	Max      Duration `yaml:"max" json:"max,omitzero"`
}

// RetentionConfig bounds a resource's history; zero fields inherit (per
// resource) or mean unbounded (default).
type RetentionConfig struct {
	MaxVersions int      `yaml:"max_versions" json:"max_versions,omitempty"`
	MaxAge      Duration `yaml:"max_age" json:"max_age,omitzero"`
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
		Listen:       ":8080",
		Storage:      StorageConfig{Driver: DriverBadger, Path: "./data", SyncWrites: true, MinFree: 256 << 20},
		Log:          LogConfig{Level: "info", Format: "text"},
		Feeds:        FeedsConfig{SubscribeMax: 50},
		Registration: RegistrationClosed,
		WebSub: WebSubConfig{
			LeaseDefault: Duration(10 * 24 * time.Hour),
			LeaseMin:     Duration(time.Hour),
			LeaseMax:     Duration(30 * 24 * time.Hour),
			RetryFor:     Duration(24 * time.Hour),
			Workers:      8,
			Queue:        1024,
		},
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
			Budget:      BudgetConfig{MaxInterval: Duration(DefaultMaxInterval)},
			Browser:     BrowserConfig{MaxTabs: DefaultBrowserTabs, Timeout: Duration(30 * time.Second)},
			FullPerPoll: DefaultFullPerPoll,
		},
	}
}

// FieldError is a configuration problem at a field: Path is the YAML path
// ("$.resources[1].url"), Line and Col its 1-based place in the file (0
// when unknown), File the file's name ("" for a document read alone, such
// as an admin API body).
type FieldError struct {
	File      string
	Path      string
	Line, Col int
	Err       error
}

// Error reads FILE:LINE:COL: field: message (API.md, Configuration), or
// line L, column C: field: message without a file.
func (e *FieldError) Error() string {
	var b strings.Builder
	switch {
	case e.File != "" && e.Line > 0:
		fmt.Fprintf(&b, "%s:%d:%d: ", e.File, e.Line, max(e.Col, 1))
	case e.File != "":
		b.WriteString(e.File + ": ")
	case e.Line > 0:
		fmt.Fprintf(&b, "line %d, column %d: ", e.Line, max(e.Col, 1))
	}
	if field := e.Field(); field != "" {
		b.WriteString(field + ": ")
	}
	b.WriteString(e.Err.Error())
	return b.String()
}

// Field is the field's name as people write it: "resources[1].url".
func (e *FieldError) Field() string { return strings.TrimPrefix(strings.TrimPrefix(e.Path, "$"), ".") }

func (e *FieldError) Unwrap() error { return e.Err }

// Load reads, strictly parses, defaults and validates the file at path; it
// also reads admin.token_file and storage.dsn_file. Relative paths in the
// file (storage.path, admin.token_file, storage.dsn_file) are taken from
// the file's directory, not the working directory. Errors are
// [*FieldError]s naming the file, the line, the column and the field; a file
// with several problems reports all of them, in file order.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	cfg, err := Parse(data)
	if err != nil {
		return nil, inFile(err, path)
	}
	cfg.resolvePaths(filepath.Dir(path))
	var problems []error
	if cfg.Admin.TokenFile != "" {
		tok, err := readSecret(data, "$.admin.token_file", cfg.Admin.TokenFile)
		if err != nil {
			problems = append(problems, err)
		}
		cfg.Admin.Token = tok
	}
	if cfg.Storage.DSNFile != "" {
		dsn, err := readSecret(data, "$.storage.dsn_file", cfg.Storage.DSNFile)
		if err != nil {
			problems = append(problems, err)
		}
		cfg.Storage.DSN = dsn
	}
	if len(problems) > 0 {
		return nil, inFile(errors.Join(problems...), path)
	}
	return cfg, nil
}

// inFile names the file in each problem of err.
func inFile(err error, path string) error {
	problems := unjoin(err)
	for _, p := range problems {
		var fe *FieldError
		if errors.As(p, &fe) {
			fe.File = path
		}
	}
	if len(problems) == 1 {
		return problems[0]
	}
	return errors.Join(problems...)
}

// resolvePaths makes the relative paths of the file absolute from dir, the
// file's directory, so that a configuration means the same from wherever
// dynamo is started.
func (c *Config) resolvePaths(dir string) {
	for _, p := range []*string{&c.Storage.Path, &c.Admin.TokenFile, &c.Storage.DSNFile} {
		if *p != "" && !filepath.IsAbs(*p) {
			*p = filepath.Join(dir, *p)
		}
	}
}

// readSecret reads a file that holds one secret (a token, a DSN). Only one
// trailing newline (LF or CRLF) is taken off: every other byte, white space
// included, is part of the secret, because it is compared byte for byte.
func readSecret(data []byte, field, name string) (string, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return "", atPath(data, field, err)
	}
	s := strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
	if s == "" {
		return "", atPath(data, field, fmt.Errorf("%s is empty", name))
	}
	return s, nil
}

// atPath is a FieldError at the node of path in data.
func atPath(data []byte, path string, err error) *FieldError {
	line, col := posOf(data, path)
	return &FieldError{Path: path, Line: line, Col: col, Err: err}
}

// ParseConfig parses a configuration document over [Default], rejecting
// unknown keys and bad values, then validates it. It reads no files.
func Parse(data []byte) (*Config, error) {
	cfg := Default()
	if fe := nestingProblem(data); fe != nil {
		return nil, fe
	}
	f, err := parseYAML(data)
	if err != nil {
		return nil, err
	}
	if len(f.Docs) > 1 {
		return nil, &FieldError{Err: errors.New("want one YAML document, got several")}
	}
	var problems []error
	meant := map[string]bool{}
	if len(f.Docs) == 1 && f.Docs[0].Body != nil { // an empty file is the default
		// Decoded from the tree already parsed: parsing is most of the cost
		// of a file with many resources.
		body := f.Docs[0].Body
		decode := func() error {
			cfg = Default()
			return yaml.NodeToValue(body, &cfg, yaml.DisallowUnknownField())
		}
		if err := decode(); err != nil {
			var rest bool
			if problems, rest = decodeProblems(body, reflect.TypeFor[Config](), decode, err, meant); !rest {
				return nil, errors.Join(tidy(problems, meant)...)
			}
		}
	}
	problems = append(problems, checkDecoded(data, &cfg)...)
	if len(problems) > 0 {
		return nil, errors.Join(tidy(problems, meant)...)
	}
	return &cfg, nil
}

// checkDecoded lists the problems of a decoded configuration, each with its
// line in data.
func checkDecoded(data []byte, cfg *Config) []error {
	// Checked here, not in Validate: LoadConfig fills Token from TokenFile,
	// and the loaded config must still validate when a component applies it.
	if cfg.Admin.Token != "" && cfg.Admin.TokenFile != "" {
		return []error{atPath(data, "$.admin", errors.New("set token or token_file, not both"))}
	}
	if !cfg.AdminEnabled() && (cfg.Admin.Token != "" || cfg.Admin.TokenFile != "") {
		return []error{atPath(data, "$.admin.enabled", errors.New("false turns admin off, and then takes no token: remove token or token_file, or this line"))}
	}
	if cfg.Admin.Enabled != nil && *cfg.Admin.Enabled && cfg.Storage.Driver == DriverPostgres && cfg.Admin.Token == "" && cfg.Admin.TokenFile == "" {
		return []error{atPath(data, "$.admin.enabled", errors.New("with storage.driver postgres no token is created (each node would make its own): set token_file, the same on every node"))}
	}
	if cfg.Storage.DSN != "" && cfg.Storage.DSNFile != "" {
		return []error{atPath(data, "$.storage", errors.New("set dsn or dsn_file, not both"))}
	}
	err := cfg.Validate()
	if err == nil {
		return nil
	}
	return placed(data, unjoin(err))
}

// placed sets the line and column of each problem that has none from its
// path in data.
func placed(data []byte, problems []error) []error {
	for _, e := range problems {
		var ce *FieldError
		if errors.As(e, &ce) && ce.Line == 0 {
			ce.Line, ce.Col = posOf(data, ce.Path)
		}
	}
	return problems
}

// maxProblems bounds the problems one Parse reports.
const maxProblems = 50

// decodeProblems lists every problem of a document that failed to decode
// with err, not only the first: each key the decoder refuses (unknown, or a
// value of the wrong type) is named, taken out of the tree and the rest
// decoded again into cfg. rest reports whether the rest decoded, so that
// its own problems can follow; a problem whose key cannot be located (or
// cannot go: it defines an anchor) ends the list.
func decodeProblems(body ast.Node, root reflect.Type, decode func() error, err error, meant map[string]bool) (problems []error, rest bool) {
	for len(problems) < maxProblems {
		problem := yamlError(err)
		problems = append(problems, problem)
		path, ok := dropKey(body, problemAt(err))
		if !ok {
			return problems, false
		}
		if ce, isField := problem.(*FieldError); isField && ce.Path == "" {
			ce.Path = path // name the field, e.g. of an unknown key
		}
		if ufe := (*yaml.UnknownFieldError)(nil); errors.As(err, &ufe) {
			if ce, isField := problem.(*FieldError); isField {
				msg, best := unknownField(root, ce.Path)
				ce.Err = errors.New(msg)
				if parent, _ := splitPath(ce.Path); best != "" && !hasPath(body, parent+"."+best) {
					meant[parent+"."+best] = true // its own errors would repeat the typo
				}
			}
		}
		if err = decode(); err == nil {
			return problems, true
		}
	}
	return problems, false
}

// hasPath reports whether the tree has a node at path.
func hasPath(body ast.Node, path string) bool {
	yp, err := yaml.PathString(path)
	if err != nil {
		return false
	}
	n, err := yp.FilterNode(body)
	return err == nil && n != nil
}

// problemAt returns what tells the node a decoding error is about: its
// path when one of our unmarshalers named it, else its token's position;
// nil when the error says neither.
func problemAt(err error) func(ast.Node) bool {
	var ce *FieldError
	if errors.As(err, &ce) && ce.Path != "" {
		return func(n ast.Node) bool { return n != nil && n.GetPath() == ce.Path }
	}
	var ye yaml.Error
	if errors.As(err, &ye) && ye.GetToken() != nil {
		pos := ye.GetToken().Position
		return func(n ast.Node) bool {
			if n == nil || n.GetToken() == nil {
				return false
			}
			p := n.GetToken().Position
			return p.Line == pos.Line && p.Column == pos.Column
		}
	}
	return nil
}

// dropKey removes from the tree the mapping key whose name or value is the
// node `is` picks; it returns that key's path, and whether it found one.
func dropKey(n ast.Node, is func(ast.Node) bool) (string, bool) {
	if is == nil {
		return "", false
	}
	switch n := n.(type) {
	case *ast.MappingNode:
		for i, mv := range n.Values {
			if is(mv.Key) || is(mv.Value) {
				if definesAnchor(mv.Value) {
					return "", false // aliases elsewhere would break: no guessing past this problem
				}
				n.Values = append(n.Values[:i], n.Values[i+1:]...)
				return mv.Value.GetPath(), true
			}
			if path, ok := dropKey(mv.Value, is); ok {
				return path, true
			}
		}
	case *ast.MappingValueNode:
		return dropKey(n.Value, is) // a one-key mapping: the key itself cannot go
	case *ast.SequenceNode:
		for _, v := range n.Values {
			if path, ok := dropKey(v, is); ok {
				return path, true
			}
		}
	case *ast.TagNode:
		return dropKey(n.Value, is)
	case *ast.AnchorNode:
		return dropKey(n.Value, is)
	}
	return "", false
}

// definesAnchor reports whether n or a node inside it defines an anchor.
func definesAnchor(n ast.Node) bool {
	if n == nil {
		return false
	}
	found := false
	ast.Walk(visitFunc(func(m ast.Node) bool {
		if _, ok := m.(*ast.AnchorNode); ok {
			found = true
		}
		return !found
	}), n)
	return found
}

// visitFunc is an ast.Visitor: it goes on into a node's children while it
// returns true.
type visitFunc func(ast.Node) bool

func (f visitFunc) Visit(n ast.Node) ast.Visitor {
	if f(n) {
		return f
	}
	return nil
}

// unjoin lists the errors joined in err (err itself when it joins none).
func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok { //nolint:errorlint // errors.Join's own shape
		return j.Unwrap()
	}
	return []error{err}
}

// yamlError turns a go-yaml error into a FieldError with its line and column.
func yamlError(err error) error {
	var ce *FieldError
	if errors.As(err, &ce) {
		return ce
	}
	var ye yaml.Error
	if errors.As(err, &ye) && ye.GetToken() != nil {
		pos := ye.GetToken().Position
		return &FieldError{Line: pos.Line, Col: pos.Column, Err: errors.New(ye.GetMessage())}
	}
	return &FieldError{Err: err}
}

// posOf finds the line and column of the node at a YAML path (of its key
// when it has one); 0, 0 when absent.
func posOf(data []byte, path string) (line, col int) {
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		return 0, 0
	}
	for p := path; p != "" && p != "$"; {
		yp, err := yaml.PathString(p)
		if err == nil {
			if n, err := yp.FilterFile(f); err == nil && n != nil && n.GetToken() != nil {
				if line, col := keyOf(f, p, n); line > 0 {
					return line, col
				}
				pos := n.GetToken().Position
				return pos.Line, pos.Column
			}
		}
		// Fall back to the parent: a missing field is reported at its owner.
		i := strings.LastIndexAny(p, ".[")
		if i <= 0 {
			break
		}
		p = p[:i]
	}
	return 0, 0
}

// keyOf is the place of the key whose value is the collection n at path
// (a problem of a whole mapping, such as admin's token and token_file,
// is shown at its key); 0, 0 for a scalar, shown where its value is.
func keyOf(f *ast.File, path string, n ast.Node) (line, col int) {
	switch n.(type) {
	case *ast.MappingNode, *ast.SequenceNode, *ast.MappingValueNode:
	default:
		return 0, 0
	}
	for _, d := range f.Docs {
		ast.Walk(visitFunc(func(m ast.Node) bool {
			if mv, ok := m.(*ast.MappingValueNode); ok && line == 0 && mv.Value != nil && mv.Value.GetPath() == path && mv.Key.GetToken() != nil {
				pos := mv.Key.GetToken().Position
				line, col = pos.Line, pos.Column
			}
			return line == 0
		}), d)
	}
	return line, col
}

func nodeError(n ast.Node, err error) error {
	ce := &FieldError{Path: n.GetPath(), Err: err}
	if tk := n.GetToken(); tk != nil {
		ce.Line, ce.Col = tk.Position.Line, tk.Position.Column
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

// UnmarshalYAML reads a weight (any number; [Config.Validate] wants it
// positive).
func (w *Weight) UnmarshalYAML(n ast.Node) error {
	s, err := scalar(n)
	if err != nil {
		return nodeError(n, err)
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) {
		return nodeError(n, fmt.Errorf("weight must be a positive number, got %q", s))
	}
	*w = Weight{Value: v, Set: true}
	return nil
}

// MarshalYAML writes the weight as a number.
func (w Weight) MarshalYAML() (any, error) { return w.Value, nil }

// TrustedProxyPrefixes returns [Config.TrustedProxies] as prefixes (an
// address is a prefix of its full length); entries that do not parse, which
// [Config.Validate] reports, are left out.
func (c *Config) TrustedProxyPrefixes() []netip.Prefix {
	var out []netip.Prefix
	for _, s := range c.TrustedProxies {
		if p, err := parseProxy(s); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// parseProxy reads an IP address or a CIDR prefix.
func parseProxy(s string) (netip.Prefix, error) {
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		return p.Masked(), err
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, err
	}
	a = a.Unmap()
	return netip.PrefixFrom(a, a.BitLen()), nil
}
