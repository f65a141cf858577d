package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/dynamo-rss/dynamo/internal/redact"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/dynamo-rss/dynamo/config"
	"github.com/dynamo-rss/dynamo/extractor"
)

// definitionJSON is one entry of GET /admin/resources and the body of a
// PUT's answer.
type definitionJSON struct {
	ID         string               `json:"id"`
	Source     string               `json:"source"`
	Registered *time.Time           `json:"registered,omitempty"`
	Polled     bool                 `json:"polled"`
	Resource   config.ResourceEntry `json:"resource"` // headers redacted: names only
	Feed       string               `json:"feed"`
	Status     *adminStatus         `json:"status,omitempty"` // nil in a public answer
}

func (s *Server) definitionJSON(d ResourceDefinition) definitionJSON {
	st := newAdminStatus(d.Status)
	return definitionJSON{
		ID: d.Resource.ID, Source: d.Source, Registered: timePtr(d.Registered), Polled: d.Polled,
		Resource: redactedEntry(d.Resource), Feed: s.feedURL(d.Resource.ID), Status: &st,
	}
}

// redactedEntry is a definition as the admin JSON shows it: header values
// and the URL's credentials hidden. Secrets go in (PUT, the file) and never
// come out, so that a token holder's tools and logs never hold them.
func redactedEntry(e config.ResourceEntry) config.ResourceEntry {
	e = e.Redacted()
	e.URL = redact.URL(e.URL)
	return e
}

// feedURL is the absolute URL of a resource's feed.
func (s *Server) feedURL(id string) string {
	return strings.TrimSuffix(s.opts.PublicURL, "/") + "/resources/" + url.PathEscape(id)
}

func (s *Server) registry() (Registry, error) {
	if s.opts.Registry == nil {
		return nil, errNotImplemented("this server has no runtime registry")
	}
	return s.opts.Registry, nil
}

// getAdminResources lists every resource with its definition, source and state.
func (s *Server) getAdminResources(c echo.Context) error {
	reg, err := s.registry()
	if err != nil {
		return err
	}
	defs := reg.Definitions()
	out := struct {
		Resources []definitionJSON `json:"resources"`
	}{Resources: make([]definitionJSON, 0, len(defs))}
	for _, d := range defs {
		out.Resources = append(out.Resources, s.definitionJSON(d))
	}
	return c.JSON(http.StatusOK, out)
}

// putAdminResource registers or replaces a resource: 201 or 200 with its
// definition, 400 naming the field, 409 for an id of the file.
func (s *Server) putAdminResource(c echo.Context) error {
	reg, err := s.registry()
	if err != nil {
		return err
	}
	id := c.Param("rssId")
	body, err := io.ReadAll(c.Request().Body)
	if err != nil {
		return fmt.Errorf("read body: %w", err)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return problemf(http.StatusBadRequest, "the body must be a JSON resource definition, e.g. {\"url\": \"https://example.org/news.html\", \"policy\": {\"kind\": \"smart\"}}")
	}
	entry, created, err := RegisterDefinition(c.Request().Context(), reg, id, body)
	if err != nil {
		return err
	}
	code := http.StatusOK
	if created {
		code = http.StatusCreated
		c.Response().Header().Set(echo.HeaderLocation, s.feedURL(id))
	}
	if d, ok := reg.Definition(id); ok && d.Source == "api" {
		return c.JSON(code, s.definitionJSON(d))
	}
	return c.JSON(code, definitionJSON{ID: id, Source: "api", Resource: redactedEntry(entry), Feed: s.feedURL(id)})
}

// RegisterDefinition validates a resource definition (JSON or YAML) as the
// configuration file's resources are validated and registers it: the one
// path of PUT /admin/resources and of the browser's /new. Its errors are a
// *Problem 400 naming the field, or the registry's (errors.go maps
// ErrDeclaredInFile to 409, storage.ErrNotFound to 404).
func RegisterDefinition(ctx context.Context, reg Registry, id string, body []byte) (config.ResourceEntry, bool, error) {
	entry, err := config.ParseResource(body, id, reg.PollerConfig())
	if err != nil {
		return entry, false, badDefinition(err)
	}
	created, err := reg.Register(ctx, entry)
	return entry, created, err
}

// deleteAdminResource unregisters a resource: 204, 404, or 409 for the file's.
func (s *Server) deleteAdminResource(c echo.Context) error {
	reg, err := s.registry()
	if err != nil {
		return err
	}
	id := c.Param("rssId")
	if err := reg.Unregister(c.Request().Context(), id); err != nil {
		return err // errors.go maps ErrDeclaredInFile (409), config errors (400), storage.ErrNotFound (404)
	}
	return c.NoContent(http.StatusNoContent)
}

// badDefinition is the 400 of a definition the configuration refuses; the
// detail names every field at fault, parameter the first, and errors
// lists them all in body order, each with its line and column.
func badDefinition(err error) *Problem {
	p := problemf(http.StatusBadRequest, "invalid resource definition: %v", err)
	var fe *config.FieldError
	if errors.As(err, &fe) {
		p.Param = strings.TrimPrefix(strings.TrimPrefix(fe.Path, "$"), ".")
	}
	p.Errors = problemFields(err)
	p.Err = err
	return p
}

// problemFields lists the problems config joined in err, in its order.
func problemFields(err error) []problemField {
	list := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok { //nolint:errorlint // errors.Join's own shape
		list = j.Unwrap()
	}
	out := make([]problemField, 0, len(list))
	for _, e := range list {
		var fe *config.FieldError
		if !errors.As(e, &fe) {
			out = append(out, problemField{Detail: e.Error()})
			continue
		}
		out = append(out, problemField{Field: fe.Field(), Line: fe.Line, Column: fe.Col, Detail: fe.Err.Error()})
	}
	return out
}

// Self-registration.

// SelfRegistration is what POST /resources takes.
type SelfRegistration struct {
	URL string `json:"url" form:"url"`
	ID  string `json:"id" form:"id"`
}

// postResources is self-registration: a webmaster posts the URL of a page
// they annotated; dynamo fetches it once and registers it only when it is
// annotated (the annotations are the webmaster's consent).
func (s *Server) postResources(c echo.Context) error {
	if err := s.RegistrationOpen(); err != nil {
		return err
	}
	if err := checkJSONNesting(c); err != nil {
		return err
	}
	var in SelfRegistration
	if err := c.Bind(&in); err != nil {
		return problemf(http.StatusBadRequest, "the body must be a form or JSON with url (and optionally id): %v", bindCause(err))
	}
	out, err := s.SelfRegister(c.Request().Context(), c.RealIP(), in)
	var limited *RateLimited
	var refused *NotAnnotated
	switch {
	case errors.As(err, &limited):
		return TooManyRequests(c, limited.Wait, "too many registrations from your address; try again in %v", limited.Wait.Round(time.Second))
	case errors.As(err, &refused):
		res := previewResult{Type: "about:blank", Title: http.StatusText(http.StatusUnprocessableEntity), Status: http.StatusUnprocessableEntity,
			Detail: notAnnotatedDetail, Diagnostics: refused.Diagnostics}
		body, merr := json.Marshal(res)
		if merr != nil {
			return fmt.Errorf("encode registration problem: %w", merr)
		}
		return c.Blob(http.StatusUnprocessableEntity, problemContentType, body)
	case err != nil:
		return err
	}
	c.Response().Header().Set(echo.HeaderLocation, out.def.Feed)
	if out.created {
		return c.JSON(http.StatusCreated, out.def)
	}
	return c.JSON(http.StatusOK, out.def)
}

// RegistrationOpen is nil when webmasters may register pages (POST
// /resources, and the /register form of the pages), else the 403 that
// says how to allow it.
func (s *Server) RegistrationOpen() error {
	if !s.opts.OpenRegistration || s.opts.Registry == nil || s.opts.Fetch == nil {
		return problemf(http.StatusForbidden, "self-registration is off on this server; its operator can turn it on with registration: open")
	}
	return nil
}

// notFetchedDetail is why a page that could not be fetched was refused,
// whatever the cause (see SelfRegister).
const notFetchedDetail = "the page could not be fetched, so it was not registered; check that the URL is right and that the page is public (anyone on the internet can open it, and its robots.txt lets dynamo in), then try again"

// notAnnotatedDetail is why a page that is not annotated was refused.
const notAnnotatedDetail = "the page is not annotated (it has no channel:title annotation), so it was not registered; see the diagnostics and the annotation guide"

// RateLimited is SelfRegister's error past the per-client limit.
type RateLimited struct{ Wait time.Duration }

func (e *RateLimited) Error() string { return fmt.Sprintf("rate limited for %v", e.Wait) }

// NotAnnotated is SelfRegister's error for a page without annotations: the
// extractor's diagnostics say why.
type NotAnnotated struct{ Diagnostics []Diagnostic }

func (e *NotAnnotated) Error() string { return "page not annotated" }

// SelfRegistered is a registration that succeeded (created) or found the
// URL already registered.
type SelfRegistered struct {
	def     definitionJSON
	created bool
}

// ID is the id of the resource registered, or of the one registered
// earlier for the same URL.
func (r SelfRegistered) ID() string { return r.def.ID }

// SelfRegister registers an annotated page for a client: the path of POST
// /resources and of the /register form. Its errors are a *Problem, a
// *RateLimited or a *NotAnnotated.
func (s *Server) SelfRegister(ctx context.Context, client string, in SelfRegistration) (SelfRegistered, error) {
	in.URL = strings.TrimSpace(in.URL)
	if config.HasCredentials(in.URL) {
		p := problemf(http.StatusBadRequest, "url must not carry a user name or password (%s): a registered page is public, and so is its URL on this server's pages; register a page anyone can read", config.RedactURL(in.URL))
		p.Param = "url"
		return SelfRegistered{}, p
	}
	u, err := url.Parse(in.URL)
	if in.URL == "" || err != nil || !u.IsAbs() || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		p := problemf(http.StatusBadRequest, "url must be the absolute http(s) URL of an annotated page, got %q", in.URL)
		p.Param = "url"
		return SelfRegistered{}, p
	}
	if in.ID != "" && !config.ValidID(in.ID) {
		p := problemf(http.StatusBadRequest, "id %q is not valid: letters, digits, '.', '_', '-', at most 128, starting with a letter or digit", in.ID)
		p.Param = "id"
		return SelfRegistered{}, p
	}
	reg := s.opts.Registry
	defs := reg.Definitions()
	for _, d := range defs {
		// An already registered URL answers its existing feed, whatever
		// id was asked for: one page is polled once.
		if d.Resource.URL == in.URL {
			return SelfRegistered{def: s.publicDefinition(d)}, nil
		}
	}
	if ok, wait, _ := s.limiter.Take(client, s.now()); !ok {
		return SelfRegistered{}, &RateLimited{Wait: wait}
	}
	taken := func(id string) (string, bool) {
		for _, d := range defs {
			if d.Resource.ID == id {
				return d.Resource.URL, true
			}
		}
		return "", false
	}
	id := in.ID
	if id != "" {
		if other, ok := taken(id); ok {
			p := problemf(http.StatusConflict, "the id %q is taken by another page (%s); choose another id", id, config.RedactURL(other))
			p.Param = "id"
			return SelfRegistered{}, p
		}
	}
	page, err := s.opts.Fetch.FetchPage(ctx, in.URL)
	if err != nil {
		// One answer whatever the network said: refused, timed out, a
		// name that does not resolve or an address the guard refuses
		// would otherwise let a visitor map the networks this server
		// reaches. The cause is the operator's.
		s.log.WarnContext(ctx, "self-registration: page not fetched", slog.String("url", config.RedactURL(in.URL)), slog.Any("error", err))
		p := problemf(http.StatusUnprocessableEntity, "%s", notFetchedDetail)
		p.Param = "url"
		return SelfRegistered{}, p
	}
	res, err := extractor.Extract(bytes.NewReader(page.Body), extractor.Options{URL: page.URL, RSSID: "registration", ContentType: page.ContentType, Timestamp: s.now().UTC()})
	if errors.Is(err, extractor.ErrNotAnnotated) || (err == nil && (res == nil || res.Document == nil)) {
		refused := &NotAnnotated{Diagnostics: []Diagnostic{}}
		if res != nil {
			for _, d := range res.Diagnostics {
				refused.Diagnostics = append(refused.Diagnostics, Diagnostic{Line: d.Line, Col: d.Col, Severity: severityName(d.Severity), Message: d.Message})
			}
		}
		return SelfRegistered{}, refused
	}
	if err != nil {
		return SelfRegistered{}, fmt.Errorf("extract %s: %w", in.URL, err)
	}
	if id == "" {
		id = DeriveID(u, func(id string) bool { _, ok := taken(id); return ok })
	}
	entry, err := config.ParseResource(mustJSON(map[string]string{"url": in.URL}), id, reg.PollerConfig())
	if err != nil {
		return SelfRegistered{}, badDefinition(err)
	}
	if _, err := reg.Register(ctx, entry); err != nil {
		return SelfRegistered{}, err // errors.go maps ErrDeclaredInFile (409), config errors (400), storage.ErrNotFound (404)
	}
	d, ok := reg.Definition(id)
	if !ok {
		d = ResourceDefinition{Resource: entry, Source: "api"}
	}
	return SelfRegistered{def: s.publicDefinition(d), created: true}, nil
}

// publicDefinition is a registration as an anonymous client is answered:
// the feed and the page, not the poll state and its errors (those are
// behind the admin token: a first poll's error would tell the network's
// detail that SelfRegister keeps from visitors).
func (s *Server) publicDefinition(d ResourceDefinition) definitionJSON {
	return definitionJSON{ID: d.Resource.ID, Source: d.Source, Polled: d.Polled,
		Resource: config.ResourceEntry{ID: d.Resource.ID, URL: config.RedactURL(d.Resource.URL)}, Feed: s.feedURL(d.Resource.ID)}
}

// checkJSONNesting refuses a JSON body nested deeper than
// config.MaxDepth before any parser reads it (a 400 naming where), and
// leaves the body to be read again. Other bodies (forms) are flat.
func checkJSONNesting(c echo.Context) error {
	req := c.Request()
	if req.Body == nil || req.Body == http.NoBody || !strings.HasPrefix(req.Header.Get(echo.HeaderContentType), echo.MIMEApplicationJSON) {
		return nil
	}
	body, err := io.ReadAll(req.Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return errTooLarge(mbe.Limit)
		}
		return problemf(http.StatusBadRequest, "the body could not be read: %v", err)
	}
	if err := config.CheckNesting(body); err != nil {
		return fieldProblem("the JSON body is refused: ", err)
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	return nil
}

// bindCause is what went wrong in echo's Bind, without its HTTP error's
// wrapping ("code=400, message=…, internal=…").
func bindCause(err error) error {
	var he *echo.HTTPError
	if errors.As(err, &he) {
		if he.Internal != nil {
			return he.Internal
		}
		return fmt.Errorf("%v", he.Message)
	}
	return err
}

var nonID = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// DeriveID makes an id from a page URL (host and path, e.g.
// "example.org-news.html"), unique against taken by a numeric suffix.
func DeriveID(u *url.URL, taken func(string) bool) string {
	base := strings.Trim(nonID.ReplaceAllString(strings.ToLower(u.Host)+"-"+strings.Trim(u.Path, "/"), "-"), "-._")
	base = strings.TrimLeft(base, "._-")
	if len(base) > 120 {
		base = base[:120]
	}
	if base == "" {
		base = "page"
	}
	id := base
	for n := 2; taken(id); n++ {
		id = fmt.Sprintf("%s-%d", base, n)
	}
	return id
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // a map of strings always encodes
	}
	return b
}
