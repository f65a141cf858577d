// Package config is dynamo's configuration: one YAML file (docs/configuration.md
// "Configuration"), read strictly, defaulted and validated, and reloaded at
// run time.
//
// # Reading
//
// [Load] reads the file ([Config]) strictly: unknown keys and bad values are
// errors that name the field and the line ([FieldError]), and a file with
// several problems reports every one of them (the errors are joined), which
// is what `dynamo check` prints. Durations are written "10m", sizes "5MiB".
// The file is read over [Default], then [Config.Validate] checks what spans
// fields. A resource's policy and retention fields override the poller
// default one by one ([PollerConfig.ResolvePolicy]); [PollerConfig.ResolveResource]
// adds a budget resource's weight (default 1, positive) and weight_readers.
// poller.budget defaults to polls_per_day 0, meaning
// [DefaultPollsPerResource] (24) polls a day per budget resource — a mean
// interval of one hour, so the budget grows with the resources that share
// it — and max_interval 48h (at least the 10-minute floor).
//
// Problems are for people (messages.go): each once, in file order, as
// FILE:LINE:COL: field: message; an unknown key names the closest known one
// ("did you mean workers?") and the field it was meant to be raises no
// knock-on problem; a YAML syntax error is worded (a tab, an indentation
// that does not line up); an admin API body that starts as JSON must be
// JSON, else its problem is worded in JSON's terms with its position.
// Before the YAML library reads anything (the file, an admin API body, a
// select block), [CheckNesting] refuses a document nested deeper than
// [MaxDepth] (64) levels in one linear pass over its bytes — the library
// has no depth option, and its cost grows with the square of the depth —
// and the parsed document's aliases may add at most four times its size
// (at least 64 KiB), so an alias bomb is refused, at the alias that goes
// past the bound, instead of being expanded.
// Relative paths in a file (storage.path, admin.token_file,
// storage.dsn_file) are taken from the file's directory.
//
// Secrets may live in files (admin.token_file, storage.dsn_file): only one
// trailing newline is taken off, so a token is compared byte for byte with
// what the file holds.
//
// # One resource model
//
// A resource comes from the file or from the admin API; both are a
// [ResourceEntry] validated by [PollerConfig.ValidateResource], and
// [ParseResource] reads an admin API body (JSON) with the same strict parser
// as the file, so a definition means the same wherever it comes from. Like
// the file, a body reports every problem, in body order, each with its
// line and column: the fields the decoder refuses (unknown, or of the
// wrong type) are taken out and the rest is validated, so a bad weight
// does not hide a bad timezone; a refused field raises no second problem
// of its own.
//
// A resource's filter (filter.Spec: include and exclude words or
// re: expressions) is compiled when it is validated; a bad entry is named
// by its list and position ("resources[2].filter.exclude[1]"). A list has
// at most 64 entries of at most 256 bytes, and an expression compiles to
// at most 1,000 instructions: a person's list of topics or advertising
// words fits, and a filter's cost stays linear in the items' text (see
// package extractor). [ParseFilter] reads a block alone (dynamo extract
// --filter, POST /preview) and [FilterLines] the include and exclude
// fields of a form, one entry a line.
//
// # Reload
//
// [Reloader] owns reloads: SIGHUP, POST /admin/reload through
// [Reloader.Reload], and changes of the file, whose directory is watched and
// whose events are debounced. The whole file is loaded and validated before
// any component applies it; an invalid file is logged and refused, and the
// old configuration stays in force.
//
// A *Config is read-only once loaded: pass it explicitly; nothing here keeps
// global state.
package config
