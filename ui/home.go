package ui

import (
	"bytes"
	"embed"
	"fmt"
	"github.com/dynamo-rss/dynamo/internal/humantime"
	"github.com/dynamo-rss/dynamo/internal/redact"
	"html/template"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/dynamo-rss/dynamo/api"
	"github.com/dynamo-rss/dynamo/storage"
)

//go:embed templates/*.html
var templateFS embed.FS

// parsePages parses the embedded pages, each in its own set with the shared
// layout (so that each page may define its own "alternates" block).
func parsePages() (map[string]*template.Template, error) {
	base, err := template.New("layout").Funcs(template.FuncMap{
		"duration": humantime.Duration,
		"bytes":    humanBytes,
		"args":     candidateArgs,
		"plural":   plural,
	}).ParseFS(templateFS, "templates/layout.html", "templates/formparts.html", "templates/point.html")
	if err != nil {
		return nil, err
	}
	pages := map[string]*template.Template{}
	for _, name := range []string{"home.html", "preview.html", "view.html", "feed.html", "login.html", "new.html", "offer.html", "register.html", "notice.html", "wait.html"} {
		t, err := base.Clone()
		if err != nil {
			return nil, err
		}
		if pages[name], err = t.ParseFS(templateFS, "templates/"+name); err != nil {
			return nil, err
		}
	}
	return pages, nil
}

// homeResource is one resource row of GET /.
type homeResource struct {
	ID          string
	URL         string
	Title       string
	Description string
	Configured  bool // the poller knows it (else: only stored history)
	Stored      bool
	Links       []api.Link // subscribe: the items feed in each format
	History     []api.Link // the versions feed (history of changes) in each format
	Versions    int
	Updated     humantime.Time // latest stored version
	LastPoll    humantime.Time
	NextPoll    humantime.Time
	Policy      string // the poller's name of it: smart, flat, budget
	HowOften    string // how often to check, in words: "every 15 minutes"
	Interval    time.Duration
	Tau         time.Duration
	Alpha       string
	LastOutcome string
	Outcome     string // the last outcome in words
	LastError   string
	Diagnostics []string // the last extraction's diagnostics
	Polls       int64
	Changes     int64
	Errors      int64
	View        string        // its page for people, /view/{id}
	Spark       template.HTML // a small chart of its recent polls; "": none
}

// homePage is the data of the home template.
type homePage struct {
	Title     string
	Generated humantime.Time
	AllFeed   []api.Link     // the feed of all resources
	Resources []homeResource // the resources of this page
	Total     int            // every resource
	Matching  int            // the resources ?q= matches
	Query     string         // ?q=
	Pager     pager
	StoreErr  string
	DiskFull  string // set while versions are not stored for lack of disk space
	Base      string // this server's base URL, for the examples of an empty page
	Example   string // the items feed of the examples' resource "news", on this server
	Admin     bool   // admin routes are on (the empty page shows PUT /admin/resources)
	Open      bool   // self-registration is on
	LoggedIn  bool   // the admin's browser session: links to /new
}

// humanBytes prints a size in binary units: 5 MiB, 512 KiB, 100 bytes.
func humanBytes(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// fillStatus sets what the poller knows of a resource.
func (s *Server) fillStatus(r *homeResource, st api.ResourceStatus, now time.Time) {
	r.Configured = true
	r.URL = redact.URL(st.URL)
	r.LastPoll = humantime.New(st.LastPoll, now)
	r.NextPoll = humantime.New(st.NextPoll, now)
	r.Policy = st.Policy
	r.Interval = st.Interval
	r.Tau = st.Tau
	if st.Policy == "smart" {
		r.Alpha = strconv.FormatFloat(st.Alpha, 'g', 3, 64)
		if st.AlphaAuto {
			r.Alpha += " (auto)"
		}
	}
	r.LastOutcome = st.LastOutcome
	r.Outcome = outcomeWords(st.LastOutcome)
	r.HowOften = howOften(st.Policy, st.Interval)
	r.LastError = redact.Text(st.LastError)
	r.Diagnostics = redact.Texts(st.Diagnostics)
	r.Polls, r.Changes, r.Errors = st.Polls, st.Changes, st.Errors
}

// howOften says in words how often a policy checks the page, with the
// interval it chose for the next check: the poller's names (smart, flat,
// budget) mean nothing to a person.
func howOften(policy string, interval time.Duration) string {
	now := ""
	if interval > 0 {
		now = " (now " + everyWords(interval) + ")"
	}
	switch policy {
	case "smart":
		return "automatically, as often as the page changes" + now
	case "budget":
		return "from the shared daily budget" + now
	}
	if interval <= 0 {
		return "—"
	}
	return everyWords(interval)
}

// everyWords says a duration as a period: "every hour", "every 15
// minutes", "every 1 hour 30 minutes".
func everyWords(d time.Duration) string {
	d = d.Round(time.Second)
	units := []struct {
		d         time.Duration
		one, many string
	}{{24 * time.Hour, "day", "days"}, {time.Hour, "hour", "hours"}, {time.Minute, "minute", "minutes"}, {time.Second, "second", "seconds"}}
	var parts []string
	for _, u := range units {
		if n := int64(d / u.d); n > 0 {
			parts = append(parts, pluralN(n, u.one, u.many))
			d -= time.Duration(n) * u.d
		}
	}
	switch {
	case len(parts) == 0:
		return "continuously"
	case len(parts) == 1 && strings.HasPrefix(parts[0], "1 "):
		return "every " + strings.TrimPrefix(parts[0], "1 ") // every hour
	}
	return "every " + strings.Join(parts, " ")
}

// outcomeWords says the poller's outcome of a check in words.
func outcomeWords(outcome string) string {
	switch outcome {
	case "":
		return "not checked yet"
	case "changed":
		return "changed: a new version stored"
	case "unchanged":
		return "no change"
	case "not-modified":
		return "no change (the server said 304 Not Modified)"
	case "error":
		return "failed"
	case "not-annotated":
		return "failed: the page is not annotated"
	case "robots-denied":
		return "not fetched: the site's robots.txt forbids it"
	case "disk_full":
		return "changed, but not stored: the disk is full"
	}
	return outcome
}

// plural counts a thing in words: "1 problem", "2 problems". n is any
// integer a template has (len, int, int64).
func plural(n any, one, many string) (string, error) {
	switch v := n.(type) {
	case int:
		return pluralN(int64(v), one, many), nil
	case int64:
		return pluralN(v, one, many), nil
	case uint64:
		return pluralN(int64(v), one, many), nil //nolint:gosec // counts
	}
	return "", fmt.Errorf("plural: %T is not a count", n)
}

func pluralN(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.FormatInt(n, 10) + " " + many
}

// fillStored sets what the store knows of a resource.
func (s *Server) fillStored(r *homeResource, info storage.ResourceInfo, now time.Time) {
	r.Stored = true
	if r.URL == "" {
		r.URL = redact.URL(info.URL)
	}
	r.Title = info.Title
	r.Description = info.Description
	r.Versions = info.Versions
	r.Updated = humantime.New(info.Updated, now)
}

// homeEntries merges the configured resources (poller) with the stored ones
// (store), sorted by id.
func (s *Server) homeEntries(stored []storage.ResourceInfo) []api.Listed {
	var statuses []api.ResourceStatus
	if s.opts.Poller != nil {
		statuses = s.opts.Poller.Statuses()
	}
	return api.ListResources(statuses, stored)
}

// resource formats an entry for a page.
func (s *Server) resource(e api.Listed, now time.Time) homeResource {
	r := homeResource{ID: e.ID}
	if e.Status != nil {
		s.fillStatus(&r, *e.Status, now)
	}
	if e.Info != nil {
		s.fillStored(&r, *e.Info, now)
	}
	return r
}

// getHome renders the page for people: every resource, its subscribe links
// and its poll state. A store that cannot be read still gets a page (with the
// configured resources and the error), since that is when operators look.
func (s *Server) getHome(c echo.Context) error {
	ctx := c.Request().Context()
	now := s.now()
	page := homePage{Title: "dynamo feeds", Generated: humantime.New(now, now), AllFeed: s.api.FeedLinks("")}
	var stored []storage.ResourceInfo
	if s.opts.Store != nil {
		var err error
		if stored, err = s.opts.Store.Resources(ctx); err != nil {
			s.log.LogAttrs(ctx, slog.LevelError, "list stored resources", slog.Any("error", err))
			page.StoreErr = "the store could not be read: " + err.Error()
		}
	}
	all := s.homeEntries(stored)
	page.Total = len(all)
	page.Query = strings.TrimSpace(c.QueryParam("q"))
	all = filterEntries(all, page.Query)
	page.Matching = len(all)
	page.Pager = newPager(pageNumber(c), len(all), homePerPage, func(n int) string { return homeHref(page.Query, n) })
	from := (page.Pager.Page - 1) * homePerPage
	for _, e := range all[from:min(from+homePerPage, len(all))] {
		r := s.resource(e, now)
		s.decorate(ctx, &r, now)
		page.Resources = append(page.Resources, r)
	}
	if s.opts.DiskSpace != nil {
		if sp := s.opts.DiskSpace(); sp.Low {
			page.DiskFull = fmt.Sprintf("The disk is almost full (%s free, below storage.min_free %s): polls go on, but new versions are not stored until space returns. Feeds still serve what is stored.", humanBytes(int64(sp.Free)), humanBytes(int64(sp.MinFree))) //nolint:gosec // free bytes fit in int64
		}
	}
	page.Base = strings.TrimSuffix(s.opts.PublicURL, "/")
	if page.Base == "" {
		page.Base = "http://" + c.Request().Host
	}
	page.Example = page.Base + s.api.ItemsPath("news")
	page.Admin = *s.token.Load() != ""
	page.Open = s.opts.OpenRegistration
	page.LoggedIn = page.Admin && s.loggedIn(c)
	c.Response().Header().Set(echo.HeaderCacheControl, "no-cache")
	return s.renderPage(c, http.StatusOK, "home.html", page)
}

// renderPage executes a page template into a buffer first, so that a
// template error becomes a clean 500 rather than half a page.
func (s *Server) renderPage(c echo.Context, code int, name string, data any) error {
	body, err := s.executePage(name, data)
	if err != nil {
		return err
	}
	pageHeaders(c)
	return c.Blob(code, echo.MIMETextHTMLCharsetUTF8, body)
}

// executePage executes the page template name with data.
func (s *Server) executePage(name string, data any) ([]byte, error) {
	var buf bytes.Buffer
	t, ok := s.pages[name]
	if !ok {
		return nil, fmt.Errorf("render %s: no such page", name)
	}
	if err := t.ExecuteTemplate(&buf, name, data); err != nil {
		return nil, fmt.Errorf("render %s: %w", name, err)
	}
	return buf.Bytes(), nil
}
