package api

import (
	"bytes"
	"cmp"
	"embed"
	"fmt"
	"html/template"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/dynamo-rss/dynamo/storage"
)

//go:embed templates/*.html
var templateFS embed.FS

// parsePages parses the embedded pages, each in its own set with the shared
// layout (so that each page may define its own "alternates" block).
func parsePages() (map[string]*template.Template, error) {
	base, err := template.New("layout").Funcs(template.FuncMap{
		"duration": humanDuration,
		"bytes":    humanBytes,
		"args":     candidateArgs,
	}).ParseFS(templateFS, "templates/layout.html", "templates/formparts.html")
	if err != nil {
		return nil, err
	}
	pages := map[string]*template.Template{}
	for _, name := range []string{"home.html", "preview.html", "view.html", "feed.html", "login.html", "new.html", "offer.html", "register.html", "notice.html"} {
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

// subscribeFormat is one subscribe link format, from [feedFormats].
type subscribeFormat struct {
	Type  string // the type= value
	Label string
	MIME  string // its media type, for <link rel="alternate">
}

// homeLink is a subscribe link of a resource.
type homeLink struct {
	subscribeFormat
	Href string
}

// homeTime is a moment shown both absolutely and relatively to now.
type homeTime struct {
	Set      bool
	ISO      string // datetime attribute
	Absolute string
	Relative string // "3m ago", "in 2m"
}

// homeResource is one resource row of GET /.
type homeResource struct {
	ID          string
	URL         string
	Title       string
	Description string
	Configured  bool // the poller knows it (else: only stored history)
	Stored      bool
	Links       []homeLink // subscribe: the items feed in each format
	History     []homeLink // the versions feed (history of changes) in each format
	Versions    int
	Updated     homeTime // latest stored version
	LastPoll    homeTime
	NextPoll    homeTime
	Policy      string
	Interval    time.Duration
	Tau         time.Duration
	Alpha       string
	LastOutcome string
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
	Generated homeTime
	AllFeed   []homeLink     // the feed of all resources
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

// DiskSpace is the store's free-space state (see storage.min_free).
type DiskSpace struct {
	Low           bool
	Free, MinFree uint64
}

// defaultSubscribeMax is the N of the items feed ?max=N that subscribe
// links point at when Options.SubscribeMax is 0 (feeds.subscribe_max).
const defaultSubscribeMax = 50

// feedHref is the link to a feed in a format, absolute when a public URL is
// configured: id empty, the feed of all resources; else the resource's items
// feed (?max=N, what a reader wants: the page's articles) or, with history,
// its versions feed (the history of changes).
func (s *Server) feedHref(id, typ string, history bool) string {
	p := "/resources"
	switch {
	case id != "" && !history:
		p = s.itemsPath(id)
	case id != "":
		p = resourcePath(id)
	}
	if typ != "" {
		sep := "?"
		if strings.Contains(p, "?") {
			sep = "&"
		}
		p += sep + "type=" + url.QueryEscape(typ)
	}
	return strings.TrimSuffix(s.opts.PublicURL, "/") + p
}

// itemsPath is the path and query of a resource's items feed that subscribe
// links point at: ?max=feeds.subscribe_max.
func (s *Server) itemsPath(id string) string {
	return resourcePath(id) + "?max=" + strconv.Itoa(cmp.Or(s.opts.SubscribeMax, defaultSubscribeMax))
}

// feedLinks are the subscribe links of a resource in each format: its items
// feed (id empty: the feed of all resources).
func (s *Server) feedLinks(id string) []homeLink { return s.formatHrefs(id, false) }

// historyLinks are the links to a resource's versions feed, the history of
// its changes, in each format.
func (s *Server) historyLinks(id string) []homeLink { return s.formatHrefs(id, true) }

func (s *Server) formatHrefs(id string, history bool) []homeLink {
	links := make([]homeLink, 0, len(feedFormats))
	for _, f := range feedFormats { // RSS 2.0 first: the default
		mediaType, _, _ := strings.Cut(f.contentType, ";")
		sf := subscribeFormat{Type: f.name, Label: f.label, MIME: mediaType}
		links = append(links, homeLink{subscribeFormat: sf, Href: s.feedHref(id, f.name, history)})
	}
	return links
}

func (s *Server) homeTime(t, now time.Time) homeTime {
	if t.IsZero() {
		return homeTime{}
	}
	t = t.UTC()
	rel := string(appendRelative(nil, relativeSeconds(t, now)))
	return homeTime{Set: true, ISO: t.Format(time.RFC3339), Absolute: t.Format("2006-01-02 15:04:05 UTC"), Relative: rel}
}

// relativeSeconds is how far t is from now, as homeTime's Relative reads
// it: rounded to the second.
func relativeSeconds(t, now time.Time) time.Duration { return t.Sub(now).Round(time.Second) }

// appendRelative appends homeTime's Relative for a time d (whole seconds)
// from now: "now", "in 2m", "4m10s ago", "2h5m ago", "3d4h ago". Past an
// hour it shows no seconds, past a day no minutes (the absolute time is
// beside it): nobody reads the seconds of a time hours away, and a cached
// feed page, which is rendered again when its age reads otherwise
// (pageCurrent), then changes once a minute or an hour, not every second.
// It allocates nothing when dst has room.
func appendRelative(dst []byte, d time.Duration) []byte {
	switch {
	case d > 0:
		return appendHumanDuration(append(dst, "in "...), coarse(d))
	case d < 0:
		return append(appendHumanDuration(dst, coarse(-d)), " ago"...)
	}
	return append(dst, "now"...)
}

// coarse truncates a positive d to its two largest units of days, hours,
// minutes and seconds (2d3h, 1h30m, 4m10s).
func coarse(d time.Duration) time.Duration {
	switch {
	case d >= 24*time.Hour:
		return d.Truncate(time.Hour)
	case d >= time.Hour:
		return d.Truncate(time.Minute)
	}
	return d
}

// humanDuration prints a duration the way people read it: 1h30m, 45s, 2d3h.
func humanDuration(d time.Duration) string { return string(appendHumanDuration(nil, d)) }

// appendHumanDuration appends humanDuration(d) to dst.
func appendHumanDuration(dst []byte, d time.Duration) []byte {
	if d <= 0 {
		return append(dst, "0s"...)
	}
	if d < time.Second {
		return append(dst, d.Round(time.Millisecond).String()...)
	}
	d = d.Round(time.Second)
	days := d / (24 * time.Hour)
	d -= days * 24 * time.Hour
	h, m, sec := d/time.Hour, (d%time.Hour)/time.Minute, (d%time.Minute)/time.Second
	for _, p := range [...]struct {
		n    time.Duration
		unit byte
	}{{days, 'd'}, {h, 'h'}, {m, 'm'}, {sec, 's'}} {
		if p.n > 0 {
			dst = append(strconv.AppendInt(dst, int64(p.n), 10), p.unit)
		}
	}
	return dst
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
func (s *Server) fillStatus(r *homeResource, st ResourceStatus, now time.Time) {
	r.Configured = true
	r.URL = shownURL(st.URL)
	r.LastPoll = s.homeTime(st.LastPoll, now)
	r.NextPoll = s.homeTime(st.NextPoll, now)
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
	r.LastError = shownText(st.LastError)
	r.Diagnostics = shownTexts(st.Diagnostics)
	r.Polls, r.Changes, r.Errors = st.Polls, st.Changes, st.Errors
}

// fillStored sets what the store knows of a resource.
func (s *Server) fillStored(r *homeResource, info storage.ResourceInfo, now time.Time) {
	r.Stored = true
	if r.URL == "" {
		r.URL = shownURL(info.URL)
	}
	r.Title = info.Title
	r.Description = info.Description
	r.Versions = info.Versions
	r.Updated = s.homeTime(info.Updated, now)
}

// homeEntry is a resource as the poller and the store know it, before
// anything is formatted: / filters and pages these, and formats only the
// resources of the page it shows.
type homeEntry struct {
	id   string
	st   *ResourceStatus       // nil: not configured
	info *storage.ResourceInfo // nil: nothing stored
}

// homeEntries merges the configured resources (poller) with the stored ones
// (store), sorted by id.
func (s *Server) homeEntries(stored []storage.ResourceInfo) []homeEntry {
	var statuses []ResourceStatus
	if s.opts.Poller != nil {
		statuses = s.opts.Poller.Statuses()
	}
	byID := make(map[string]int, len(statuses)+len(stored))
	out := make([]homeEntry, 0, max(len(statuses), len(stored)))
	get := func(id string) *homeEntry {
		i, ok := byID[id]
		if !ok {
			i = len(out)
			byID[id] = i
			out = append(out, homeEntry{id: id})
		}
		return &out[i]
	}
	for i := range statuses {
		get(statuses[i].ID).st = &statuses[i]
	}
	for i := range stored {
		get(stored[i].ID).info = &stored[i]
	}
	slices.SortFunc(out, func(a, b homeEntry) int { return cmp.Compare(a.id, b.id) })
	return out
}

// resource formats an entry for a page.
func (s *Server) resource(e homeEntry, now time.Time) homeResource {
	r := homeResource{ID: e.id}
	if e.st != nil {
		s.fillStatus(&r, *e.st, now)
	}
	if e.info != nil {
		s.fillStored(&r, *e.info, now)
	}
	return r
}

// homeResources is every resource, formatted, sorted by id.
func (s *Server) homeResources(stored []storage.ResourceInfo, now time.Time) []homeResource {
	entries := s.homeEntries(stored)
	out := make([]homeResource, len(entries))
	for i, e := range entries {
		out[i] = s.resource(e, now)
	}
	return out
}

// getHome renders the page for people: every resource, its subscribe links
// and its poll state. A store that cannot be read still gets a page (with the
// configured resources and the error), since that is when operators look.
func (s *Server) getHome(c echo.Context) error {
	ctx := c.Request().Context()
	now := s.now()
	page := homePage{Title: "dynamo feeds", Generated: s.homeTime(now, now), AllFeed: s.feedLinks("")}
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
	page.Example = page.Base + s.itemsPath("news")
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
