package ui

// GET/POST /new: the admin pastes a page's URL; dynamo fetches it once
// through the poller's guarded fetcher (Options.Fetch), keeps the bytes
// for a few minutes (fetched.go), and shows on one page what the page offers
// (its annotations as the feed they make, its own feeds) and suggest's
// proposals, each with its first items and its select block. Preview
// re-extracts the kept bytes with an edited block; Add registers the block
// shown through the path of PUT /admin/resources, polls the resource at once
// and redirects to its /view.

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"github.com/dynamo-rss/dynamo/internal/humantime"
	"github.com/dynamo-rss/dynamo/internal/redact"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/dynamo-rss/dynamo/api"
	"github.com/dynamo-rss/dynamo/config"
	"github.com/dynamo-rss/dynamo/extractor"
	"github.com/dynamo-rss/dynamo/extractor/filter"
	"github.com/dynamo-rss/dynamo/internal/session"
	"github.com/dynamo-rss/dynamo/schema"
)

const (
	// firstItems is how many items each candidate shows.
	firstItems = 5
	// firstPollWait bounds how long Add waits for the first poll before
	// redirecting to the view (which then shows "not polled yet"): the
	// poll waits for the host's politeness slot (poller.per_host_interval,
	// 10 s by default, and the page was fetched just before) and takes up
	// to poller.timeout. The request's own deadline bounds it too.
	firstPollWait = 20 * time.Second
)

// newPage is the data of new.html: the form that asks for a page's URL.
type newPage struct {
	Title   string
	CSRF    string
	URL     string
	Error   string
	Browser bool   // a browser renders pages: the form offers render and wait_for
	Render  bool   // render was ticked
	WaitFor string // wait_for, with render
}

// offerPage is the data of offer.html: what a fetched page offers.
type offerPage struct {
	Title       string
	CSRF        string
	Fetch       string // the fetched page's id, a hidden field of every form
	Requested   string // the URL typed in
	PageURL     string // after redirects
	Fetched     humantime.Time
	Size        int64
	Rendered    bool   // fetched rendered with JavaScript
	WaitFor     string // the render's wait-for selector
	Annotations candidate
	Feeds       []pageFeed
	Preview     *candidate // the edited block's items, after Preview
	Proposals   []candidate
	Followed    []followedPage // resources that already follow this page
	SuggestErr  string
	ScriptBuilt string // why the page looks built by a script; "" = it does not
	CanRender   bool   // a browser can render it: the hint offers to
	Policies    []policyChoice
	Point       *pointView // pointing at the list (point.go); nil on a preview or an add
}

// candidate is one way to make a feed of the page: its annotations, a
// proposal or an edited block, with its first items and its add form.
type candidate struct {
	Anchor        string // the section's id: annotations, preview, p1…
	Label         string
	Reason        string
	Block         string // the select block; "" = the page's annotations
	Channel       string
	Items         []candidateItem
	Total         int            // the items the block yields: the one count shown
	Count         string         // Total for people: "1 item", "17 items"
	Where         string         // where the list sits ("under “The latest”"); "" unknown
	Diagnostics   []string       // LINE:COL: severity: message, as dynamo lint prints them
	Error         string         // why the block yields no feed
	Problems      string         // the diagnostics counted: "1 problem", "2 problems"
	Filtered      []filteredItem // the items the form's filter took out
	FilteredCount string         // "2 items filtered out"
	Add           addForm
}

// getNew shows the URL form, or, with ?fetch=, what the fetched page offers.
func (s *Server) getNew(c echo.Context) error {
	id := c.QueryParam(fieldFetch)
	if id == "" {
		return s.renderPage(c, http.StatusOK, "new.html", newPage{Title: "Add a feed", CSRF: s.csrfToken(c), URL: c.QueryParam(fieldURL), Browser: s.canRender()})
	}
	p, ok := s.fetchedPage(c, id)
	if !ok {
		return s.fetchExpired(c, "")
	}
	if done, err := s.pointAction(c, p); done {
		return err
	}
	return s.renderOffer(c, http.StatusOK, p, addForm{Errors: fieldErrors{}}, "pointing")
}

// postNew fetches the page once and redirects to what it offers (POST →
// 303 → GET: a reload shows the same bytes and fetches nothing).
func (s *Server) postNew(c echo.Context) error {
	page := newPage{Title: "Add a feed", Browser: s.canRender()}
	raw, err := pageURL(c.FormValue(fieldURL))
	page.URL = raw
	if err != nil {
		page.Error = err.Error()
		page.CSRF = s.csrfToken(c)
		return s.renderPage(c, http.StatusBadRequest, "new.html", page)
	}
	if s.opts.Fetch == nil {
		return problem(http.StatusNotImplemented, "this server has no retriever to fetch pages with")
	}
	render, waitFor := s.renderChoice(c)
	page.Render, page.WaitFor = render, waitFor
	if w, ok := s.opts.Fetch.(api.PageWaiter); ok {
		if d := w.PageWait(raw); d > 0 {
			return s.fetchLater(c, raw, render, waitFor, d) // the host's slot is not free: a page that waits
		}
	}
	fetched, pic, err := s.fetchOrRender(c.Request().Context(), raw, render, waitFor)
	if err != nil {
		page.Error = fmt.Sprintf("The page could not be fetched: %v", err)
		page.CSRF = s.csrfToken(c)
		return s.renderPage(c, http.StatusUnprocessableEntity, "new.html", page)
	}
	sess, _ := c.Get(sessionKey).(session.Session)
	id := s.fetched.put(&fetchedPage{SessionID: sess.ID, Requested: raw, Page: fetched, Render: render, WaitFor: waitFor, Picture: pic}, s.now())
	return c.Redirect(http.StatusSeeOther, "/new?"+url.Values{fieldFetch: {id}}.Encode())
}

// postNewPreview extracts the kept page with the edited block and shows
// its items and diagnostics beside the proposals. It fetches nothing.
func (s *Server) postNewPreview(c echo.Context) error {
	form := readAddForm(c)
	p, ok := s.fetchedPage(c, form.Fetch)
	if !ok {
		return s.fetchExpired(c, form.URL)
	}
	return s.renderOffer(c, http.StatusOK, p, form, "preview")
}

// postNewAdd registers the resource of the form exactly as PUT
// /admin/resources does, polls it at once (waiting at most firstPollWait)
// and redirects to its view. Mistakes come back on the form, next to their
// fields, with nothing registered.
func (s *Server) postNewAdd(c echo.Context) error {
	reg := s.opts.Registry
	if reg == nil {
		return problem(http.StatusNotImplemented, "this server has no runtime registry")
	}
	form := readAddForm(c)
	p, kept := s.fetchedPage(c, form.Fetch)
	if form.URL == "" && kept {
		form.URL = p.Requested
	}
	if kept { // registered as the page was fetched: rendered or not
		form.Render, form.WaitFor = p.Render, p.WaitFor
	}
	ctx := c.Request().Context()
	s.checkIDFree(&form)
	body := form.definition()
	if len(form.Errors) == 0 && kept {
		// A block that yields nothing here would register a feed that
		// never has an item: refused beside the block.
		if cd := s.tryBlock(p, form.Select, blockRules{}, s.now()); cd.Total == 0 {
			what := "This block yields no item on the fetched page"
			if form.Select == "" {
				what = "The page's annotations yield no item"
			}
			form.Errors.add(fieldSelect, what+"; nothing was added. "+cd.Error)
		}
	}
	if len(form.Errors) == 0 {
		if _, _, err := api.RegisterDefinition(ctx, reg, form.ID, body); err != nil {
			definitionErrors(err, form.Errors)
			if p := api.ProblemOf(err); p.Status >= http.StatusInternalServerError {
				return err // the store is down: 503 from errors.go, nothing registered
			}
		}
	}
	if len(form.Errors) > 0 {
		if !kept {
			return s.fetchExpired(c, form.URL)
		}
		return s.renderOffer(c, http.StatusUnprocessableEntity, p, form, c.FormValue("from"))
	}
	if s.opts.Poller != nil {
		if j := s.pollLater(c, form.ID, form.URL); j != nil {
			return s.renderWait(c, j) // the first poll takes long: a page that waits
		}
	}
	return c.Redirect(http.StatusSeeOther, api.ViewHref(form.ID))
}

// fetchedPage is the page id that this session fetched, while kept.
func (s *Server) fetchedPage(c echo.Context, id string) (*fetchedPage, bool) {
	sess, _ := c.Get(sessionKey).(session.Session)
	if id == "" {
		return nil, false
	}
	return s.fetched.get(id, sess.ID, s.now())
}

// fetchExpired answers a form about a page no longer kept: the URL form
// again, saying why (410: the page it names is gone from here).
func (s *Server) fetchExpired(c echo.Context, rawURL string) error {
	return s.renderPage(c, http.StatusGone, "new.html", newPage{Title: "Add a feed", CSRF: s.csrfToken(c), URL: rawURL, Browser: s.canRender(),
		Error: fmt.Sprintf("The fetched page is no longer kept (pages are kept %v after they are fetched); fetch it again.", fetchedTTL)})
}

// renderOffer shows what page p offers. form is the form just sent (its
// values and errors are shown on the candidate from names: "preview",
// "annotations", "p1"…); previewing adds the candidate of form's block.
func (s *Server) renderOffer(c echo.Context, code int, p *fetchedPage, form addForm, from string) error {
	now := s.now()
	page := offerPage{
		Title: "Add a feed", CSRF: s.csrfToken(c), Fetch: p.ID, Requested: p.Requested, PageURL: redact.URL(p.URL),
		Fetched: humantime.New(p.Fetched, now), Size: int64(len(p.Body)), Policies: policyKinds,
		Rendered: p.Render, WaitFor: p.WaitFor,
	}
	proposedID := s.proposeID(p.Requested)
	defaults := func(block string) addForm {
		f := addForm{Fetch: p.ID, URL: p.Requested, Select: block, ID: proposedID, Errors: fieldErrors{}}
		if form.Policy != "" || form.ID != "" || form.Weight != "" || form.Interval != "" {
			f.ID, f.Policy, f.Interval, f.Weight = cmp.Or(form.ID, proposedID), form.Policy, form.Interval, form.Weight
		}
		f.Include, f.Exclude, f.Timezone, f.DateFormat = form.Include, form.Exclude, form.Timezone, form.DateFormat
		f.Render, f.WaitFor = p.Render, p.WaitFor // as the page was fetched
		s.checkIDFree(&f)
		return f
	}
	page.Followed = s.following(p.Requested, p.URL)
	rules := form.rules()
	if from == "preview" && len(form.Errors) == 0 {
		form.filterSpec() // a preview's mistakes beside their fields, as Add's
		form.dateRules()
	}
	page.Annotations = s.tryBlock(p, "", rules, now)
	page.Annotations.Anchor, page.Annotations.Label = "annotations", "Its annotations"
	page.Annotations.Add = defaults("")
	offer, err := p.offered()
	if err != nil {
		page.SuggestErr = err.Error()
	}
	page.Feeds = offer.Feeds
	for i, pr := range offer.Proposals {
		cd := s.tryBlock(p, pr.Block, rules, now)
		cd.Anchor, cd.Where = fmt.Sprintf("p%d", i+1), pr.Where
		cd.Reason = reasonRest(pr.Reason, pr.Count, pr.Where)
		cd.Label = "Best proposal"
		if i > 0 {
			cd.Label = fmt.Sprintf("Alternative %d", i)
		}
		cd.Add = defaults(pr.Block)
		page.Proposals = append(page.Proposals, cd)
	}
	var target *candidate
	for i := range page.Proposals {
		if page.Proposals[i].Anchor == from {
			target = &page.Proposals[i]
		}
	}
	if from == "annotations" {
		target = &page.Annotations
	}
	switch {
	case from == "pointing": // GET: the page just fetched, pointed at or not
		s.point(c, p, &page)
	case from == "" && len(form.Errors) == 0:
	case target != nil: // an add form of the page sent back with its errors
		target.Add = defaults(target.Block)
		target.Add.Errors.merge(form.Errors)
	default: // a preview, or an add form of a preview
		cd := s.tryBlock(p, form.Select, rules, now)
		cd.Anchor, cd.Label = "preview", "Your block"
		cd.Add = defaults(form.Select)
		cd.Add.Errors.merge(form.Errors)
		page.Preview = &cd
	}
	page.ScriptBuilt, page.CanRender = s.scriptHint(p, len(page.Proposals)), s.canRender()
	return s.renderPage(c, code, "offer.html", page)
}

// proposeID proposes an id for a page from its URL (host and path, as
// self-registration derives it). It is never changed to make it unique:
// an id in use is an error beside the id field (checkIDFree), for the
// person to choose another.
func (s *Server) proposeID(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "page"
	}
	return api.DeriveID(u, func(string) bool { return false })
}

// checkIDFree adds the error of an id in use to the form's id field.
func (s *Server) checkIDFree(f *addForm) {
	if s.opts.Registry == nil || f.ID == "" {
		return
	}
	if d, ok := s.opts.Registry.Definition(f.ID); ok {
		f.Errors.add(fieldID, fmt.Sprintf("%q is already the id of %s; choose another", f.ID, redact.URL(d.Resource.URL)))
	}
}

// followedPage is a resource that already follows the page fetched.
type followedPage struct {
	ID   string
	View string // its /view href
}

// following lists the resources whose URL is, after normalization
// (sameURL), one of urls: the URL typed in or the one after redirects.
func (s *Server) following(urls ...string) []followedPage {
	if s.opts.Registry == nil {
		return nil
	}
	var out []followedPage
	for _, d := range s.opts.Registry.Definitions() {
		for _, u := range urls {
			if u != "" && sameURL(d.Resource.URL, u) {
				out = append(out, followedPage{ID: d.Resource.ID, View: api.ViewHref(d.Resource.ID)})
				break
			}
		}
	}
	return out
}

// sameURL reports whether two URLs name the same page for /new's "already
// followed": the same after the scheme and host are lower-cased, a default
// port (80 for http, 443 for https) and the fragment are dropped, and a
// trailing slash of the path is ignored ("" and "/" alike, "/a/" and "/a").
// The path's case and the query count: servers tell them apart.
func sameURL(a, b string) bool {
	na, okA := normalURL(a)
	nb, okB := normalURL(b)
	return okA && okB && na == nb
}

// normalURL is the form of raw that sameURL compares.
func normalURL(raw string) (string, bool) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" {
		return "", false
	}
	scheme, host := strings.ToLower(u.Scheme), strings.ToLower(u.Hostname())
	port := u.Port()
	if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
		port = ""
	}
	if port != "" {
		host = net.JoinHostPort(host, port)
	} else if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	path := strings.TrimSuffix(u.EscapedPath(), "/")
	return scheme + "://" + host + path + "?" + u.RawQuery, true
}

// tryBlock extracts the kept page with a select block ("" = with its
// annotations) as a poll would, and returns its first items and
// diagnostics.
func (s *Server) tryBlock(p *fetchedPage, block string, rules blockRules, now time.Time) candidate {
	cd := candidate{Block: block}
	var sel *extractor.Selectors
	if block != "" {
		var err error
		if sel, err = config.ParseSelect([]byte(block)); err != nil {
			cd.Error = "The block is not valid: " + err.Error()
			return cd
		}
	}
	res, err := extractor.Extract(bytes.NewReader(p.Body), extractor.Options{
		URL: p.URL, RSSID: api.PreviewRSSID, ContentType: p.ContentType, Timestamp: now.UTC(), Select: sel,
		Dates: rules.dates, ExplainDates: true,
	})
	switch {
	case errors.Is(err, extractor.ErrNotAnnotated):
		cd.Error = "The page is not annotated (it has no channel:title annotation)."
	case errors.Is(err, extractor.ErrNoItems):
		cd.Error = "The block finds no items on the page."
	case err != nil:
		cd.Error = "The page could not be read: " + err.Error()
	}
	if res == nil {
		return cd
	}
	for _, d := range res.Diagnostics {
		cd.Diagnostics = append(cd.Diagnostics, d.String())
	}
	cd.Problems = countNoun(len(cd.Diagnostics), "problem", "problems")
	if res.Document == nil {
		return cd
	}
	doc := res.Document
	used := make([]bool, len(res.Dates)) // the readings told already
	cd.Channel, cd.Total = doc.Channel.Title, len(doc.Items)
	cd.Count = countNoun(cd.Total, "item", "items")
	for _, out := range rules.filter.Apply(doc) {
		it := &out.Item
		cd.Filtered = append(cd.Filtered, filteredItem{Title: cmp.Or(it.Title, redact.URL(it.Link), redact.Text(it.ID)), Reason: out.Reason()})
	}
	if len(cd.Filtered) > 0 {
		cd.FilteredCount = countNoun(len(cd.Filtered), "item", "items") + " filtered out"
	}
	for i := range doc.Items[:min(firstItems, len(doc.Items))] {
		it := &doc.Items[i]
		link := redact.URL(it.Link) // resolved against the page's URL, with its credentials if it has any
		pi := candidateItem{feedPageItem: feedPageItem{Title: cmp.Or(it.Title, link, redact.Text(it.ID)), Link: link, Text: redact.Text(it.Description)}}
		if t, ok := rules.dates.Published(it.Extensions); ok {
			pi.Date = humantime.New(t, now)
		}
		pi.DateReads = dateReads(it.Extensions, res.Dates, used)
		if it.Image != nil {
			pi.Image = redact.URL(it.Image.URL)
		}
		cd.Items = append(cd.Items, pi)
	}
	return cd
}

// candidateItem is one of a candidate's first items, with how its date
// reads.
type candidateItem struct {
	feedPageItem
	DateReads string // `date "…" reads as TIME (RULE, ZONE)`, as lint --dates; "dated when first seen"
}

// dateReads says how an item's date reads, as `dynamo lint --dates` does
// (extractor.DateReading.Message): the reading of its date extension
// (matched by the text it kept, or the time it stored), or "dated when
// first seen" for an item without a date. used marks the readings told.
func dateReads(exts schema.Extensions, readings []extractor.DateReading, used []bool) string {
	for _, x := range exts {
		if x.LocalName != "date" && x.LocalName != "pubDate" {
			continue
		}
		for i, r := range readings {
			if used[i] || (r.Text != x.Value && (r.Time.IsZero() || r.Time.Format(time.RFC3339) != x.Value)) {
				continue
			}
			used[i] = true
			return r.Message()
		}
		return fmt.Sprintf("date %q", x.Value)
	}
	return "no date: dated when first seen"
}

// filteredItem is an item a filter took out, and why ("exclude: Tram").
type filteredItem struct {
	Title  string
	Reason string
}

// blockRules are what the form adds to a block's extraction: its filter
// (nil: none, or one with errors, which are shown beside its fields).
type blockRules struct {
	filter *filter.Filter
	dates  schema.DateRules // the resource's timezone and date_format
}

// rules reads the form's filter for the previews, its mistakes left for
// the form's own errors.
func (f addForm) rules() blockRules {
	var r blockRules
	check := addForm{Include: f.Include, Exclude: f.Exclude, Timezone: f.Timezone, DateFormat: f.DateFormat, Errors: fieldErrors{}}
	if spec, ok := check.filterSpec(); ok {
		r.filter, _ = filter.Compile(spec) // FilterLines compiled it already
	}
	r.dates, _ = check.dateRules()
	return r
}

// candidateView is what the candidate templates are given: the page (its
// hidden fields) and one candidate.
type candidateView struct {
	Page offerPage
	Cand candidate
}

// candidateArgs is the template function args.
func candidateArgs(page offerPage, cand candidate) candidateView {
	return candidateView{Page: page, Cand: cand}
}

// firstPoll polls a resource just registered once: through FirstPoll when
// the poller has it, else PollNow.
func (s *Server) firstPoll(ctx context.Context, id string) (api.ResourceStatus, error) {
	if fp, ok := s.opts.Poller.(api.FirstPoller); ok {
		return fp.FirstPoll(ctx, id)
	}
	return s.opts.Poller.PollNow(ctx, id)
}

// countNoun is n with its noun, singular or plural: "1 item", "2 items",
// "0 items".
func countNoun(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// reasonRest is a proposal's reason without what the page shows apart:
// its "best: " mark, its item count (suggest's, which the page replaces by
// the count of the items shown, one count everywhere) and where it sits.
func reasonRest(reason string, count int, where string) string {
	r := strings.TrimPrefix(reason, "best: ")
	r = strings.TrimPrefix(r, fmt.Sprintf("%d items", count))
	if where != "" {
		r = strings.TrimPrefix(strings.TrimPrefix(r, " "), where)
	}
	return strings.TrimSpace(strings.TrimPrefix(r, ","))
}
