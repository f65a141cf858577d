package ui

import (
	"cmp"
	"errors"
	"fmt"
	"github.com/dynamo-rss/dynamo/internal/humantime"
	"github.com/dynamo-rss/dynamo/internal/versiondiff"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/dynamo-rss/dynamo/api"
	"github.com/dynamo-rss/dynamo/schema"
	"github.com/dynamo-rss/dynamo/storage"
)

// viewVersionsPerPage is how many versions (each with its diff) one page of
// /view/{rssId} shows.
const viewVersionsPerPage = 10

// viewDiffItems is how many items (added, removed, changed) a version shows
// in the list of versions; the rest are on the version's own page,
// /view/{rssId}?v=SEQ, paged by viewItemsPerPage (?items=N): a version of
// 10,000 items is not one page of megabytes.
const (
	viewDiffItems    = 50
	viewItemsPerPage = 200
)

// viewPage is the data of view.html.
type viewPage struct {
	Title     string
	Resource  homeResource
	Chart     template.HTML
	ChartNote string
	Versions  []viewVersion
	Pager     pager
	Alternate []api.Link // <link rel="alternate"> per format
	Single    bool       // one version (?v=SEQ) with all its changes, paged
	Hub       string     // the WebSub hub readers may subscribe at; "": none
	// Subscribe is the one address to copy: the items feed in RSS 2.0,
	// absolute; Others are the other formats of it.
	Subscribe string
	Others    []api.Link
}

// viewVersion is one stored version and what changed against the one before.
type viewVersion struct {
	Seq      uint64
	Href     string // its permalink
	Time     humantime.Time
	Title    string
	Items    int
	Compared bool   // there is a previous version to compare with
	Note     string // why there is no comparison
	versiondiff.Diff
	// The counts of the whole diff; Added, Removed and Changed may hold a
	// window of it (see window).
	NAdded, NRemoved, NChanged int
	More                       int    // changes not shown here
	AllHref                    string // the version's own page, with all its changes; "": all shown
}

// getView serves GET /view/{rssId}: one resource for people.
func (s *Server) getView(c echo.Context) error {
	ctx := c.Request().Context()
	id, err := url.PathUnescape(c.Param("rssId"))
	if err != nil {
		return notFound(nil, "the resource id %q is not correctly percent-encoded", c.Param("rssId"))
	}
	now := s.now()
	var st api.ResourceStatus
	known := false
	if s.opts.Poller != nil {
		st, known = s.opts.Poller.Status(id)
	}
	info, err := s.opts.Store.Resource(ctx, id)
	stored := err == nil
	switch {
	case errors.Is(err, storage.ErrNotFound):
		if !known {
			return notFound(err, "there is no resource %q; / lists the resources", id)
		}
	case err != nil:
		return fmt.Errorf("read resource %q: %w", id, err)
	}
	r := homeResource{ID: id, Links: s.api.FeedLinks(id), History: s.api.HistoryLinks(id), View: api.ViewHref(id)}
	if known {
		s.fillStatus(&r, st, now)
	}
	if stored {
		s.fillStored(&r, info, now)
	}
	page := viewPage{Title: cmp.Or(r.Title, id), Resource: r, Alternate: r.Links, Hub: s.opts.HubURL, Subscribe: s.absolute(c, s.api.FeedHref(id, "", false))}
	for _, l := range r.Links {
		if l.Type != "rss2" {
			page.Others = append(page.Others, l)
		}
	}

	history := s.pollHistory(c.Request().Context(), id)
	if len(history) == 0 && stored {
		// No poll history (a poller that keeps none, or a state from before
		// it did): the stored versions still tell when the page changed.
		if history, err = s.versionHistory(c, info, now); err != nil {
			return err
		}
		page.ChartNote = "No poll history is recorded for this resource: the chart shows when stored versions appeared."
	}
	if page.Chart, err = pollChart(history, now); err != nil {
		return fmt.Errorf("chart %q: %w", id, err)
	}

	if v := c.QueryParam("v"); v != "" && stored {
		// One version with all its changes, paged.
		seq, err := strconv.ParseUint(v, 10, 64)
		idx := int(info.LatestSeq) - int(seq) + 1 //nolint:gosec // seqs fit in int
		if err != nil || seq == 0 || idx < 1 || idx > info.Versions {
			return notFound(nil, "resource %q has no stored version %q; its versions are listed on %s", id, v, api.ViewHref(id))
		}
		if page.Versions, err = s.viewVersions(c, info, idx, idx, now); err != nil {
			return err
		}
		if len(page.Versions) != 1 || page.Versions[0].Seq != seq {
			return notFound(nil, "version %d of %q is no longer stored", seq, id)
		}
		vv := &page.Versions[0]
		base := api.ViewHref(id) + "?v=" + strconv.FormatUint(seq, 10)
		page.Pager = newPager(itemsNumber(c), len(vv.Added)+len(vv.Removed)+len(vv.Changed), viewItemsPerPage, func(n int) string {
			return base + "&items=" + strconv.Itoa(n) + "#v" + strconv.FormatUint(seq, 10)
		})
		vv.window((page.Pager.Page-1)*viewItemsPerPage, viewItemsPerPage, "")
		page.Single = true
	} else {
		total := 0
		if stored {
			total = info.Versions
		}
		page.Pager = newPager(pageNumber(c), total, viewVersionsPerPage, func(n int) string {
			return api.ViewHref(id) + "?page=" + strconv.Itoa(n) + "#versions"
		})
		if stored {
			first := (page.Pager.Page-1)*viewVersionsPerPage + 1
			last := min(first+viewVersionsPerPage-1, info.Versions)
			if page.Versions, err = s.viewVersions(c, info, first, last, now); err != nil {
				return err
			}
			for i := range page.Versions {
				vv := &page.Versions[i]
				vv.window(0, viewDiffItems, api.ViewHref(id)+"?v="+strconv.FormatUint(vv.Seq, 10)+"#v"+strconv.FormatUint(vv.Seq, 10))
			}
		}
	}
	c.Response().Header().Set(echo.HeaderCacheControl, "no-cache")
	return s.renderPage(c, http.StatusOK, "view.html", page)
}

// absolute makes a path of this site absolute, for a person to copy into
// a reader: hrefs are absolute already when a public URL is configured;
// else the request's own host (https when it came over TLS or through a
// trusted proxy that says so).
func (s *Server) absolute(c echo.Context, href string) string {
	if !strings.HasPrefix(href, "/") {
		return href
	}
	scheme := "http"
	if s.secureRequest(c.Request()) {
		scheme = "https"
	}
	return scheme + "://" + c.Request().Host + href
}

// versionHistory makes a poll history of the stored versions: one changed
// poll per version, the newest 500 at most.
func (s *Server) versionHistory(c echo.Context, info storage.ResourceInfo, now time.Time) ([]api.PollRecord, error) {
	vs, err := s.opts.Store.Versions(c.Request().Context(), info.ID, 0, min(max(info.Versions, 1), 500))
	if err != nil {
		return nil, fmt.Errorf("list versions of %q: %w", info.ID, err)
	}
	h := make([]api.PollRecord, len(vs))
	for i, v := range vs { // newest first
		next := now
		if i > 0 {
			next = vs[i-1].Timestamp
		}
		h[len(vs)-1-i] = api.PollRecord{Time: v.Timestamp, Outcome: "changed", Wait: next.Sub(v.Timestamp), Versions: info.Versions - i}
	}
	return h, nil
}

// itemsNumber reads ?items= as pageNumber reads ?page=.
func itemsNumber(c echo.Context) int {
	n, err := strconv.Atoi(c.QueryParam("items"))
	if err != nil || n < 1 {
		return 1
	}
	return n
}

// window keeps n of v's changes from the from-th (added, then removed, then
// changed), counting the whole diff first; all names the page with every
// change, linked when some are not shown ("": none).
func (v *viewVersion) window(from, n int, all string) {
	v.NAdded, v.NRemoved, v.NChanged = len(v.Added), len(v.Removed), len(v.Changed)
	total := v.NAdded + v.NRemoved + v.NChanged
	cut := func(l, offset int) (lo, hi int) { // the window within a list of l starting at offset
		lo = min(max(from-offset, 0), l)
		hi = min(max(from+n-offset, 0), l)
		return lo, hi
	}
	lo, hi := cut(v.NAdded, 0)
	v.Added = v.Added[lo:hi]
	lo, hi = cut(v.NRemoved, v.NAdded)
	v.Removed = v.Removed[lo:hi]
	lo, hi = cut(v.NChanged, v.NAdded+v.NRemoved)
	v.Changed = v.Changed[lo:hi]
	if shown := len(v.Added) + len(v.Removed) + len(v.Changed); shown < total && all != "" {
		v.More, v.AllHref = total-shown, all
	}
}

// viewVersions loads the versions at indexes first to last (1: the newest)
// and the one after the last, and compares each with the version before it.
func (s *Server) viewVersions(c echo.Context, info storage.ResourceInfo, first, last int, now time.Time) ([]viewVersion, error) {
	ctx := c.Request().Context()
	docs := map[int]*schema.Document{}
	infos := map[int]storage.VersionInfo{}
	for idx := first; idx <= min(last+1, info.Versions); idx++ {
		doc, vi, err := s.opts.Store.Version(ctx, info.ID, idx)
		if errors.Is(err, storage.ErrNotFound) {
			break // retention removed it meanwhile
		}
		if err != nil {
			return nil, fmt.Errorf("read version %d of %q: %w", idx, info.ID, err)
		}
		docs[idx], infos[idx] = doc, vi
	}
	var out []viewVersion
	for idx := first; idx <= last; idx++ {
		doc, ok := docs[idx]
		if !ok {
			break
		}
		vi := infos[idx]
		v := viewVersion{
			Seq:   vi.Seq,
			Href:  api.VersionPath(info.ID, vi.Seq),
			Time:  humantime.New(vi.Timestamp, now),
			Title: cmp.Or(doc.Channel.Title, info.ID),
			Items: len(doc.Items),
		}
		switch prev, ok := docs[idx+1]; {
		case ok:
			v.Compared = true
			versiondiff.DiffVersions(&v.Diff, prev, doc)
		case vi.Seq == 1:
			v.Note = "The first version: every item is new."
			versiondiff.DiffVersions(&v.Diff, &schema.Document{}, doc)
			v.Channel = nil // all of it is new: nothing to point out
		default:
			v.Note = "The versions before this one were removed by the retention policy: nothing to compare with."
		}
		out = append(out, v)
	}
	return out, nil
}
