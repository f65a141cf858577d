package poller

import (
	"context"
	"errors"
	"log/slog"
	"net/url"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/dynamo-rss/dynamo/config"
	"github.com/dynamo-rss/dynamo/schema"
)

// articleFetcher fetches an item's link as a page is fetched and returns its
// main text (fetch.Fetcher.Article: robots, politeness, guard, limits).
type articleFetcher interface {
	Article(ctx context.Context, link string, headers map[string]string) (string, error)
}

// articles is the article step of content: full: before a version is
// stored, its items get their linked articles as content:encoded. It keeps
// nothing between polls (what an item had is read from the newest stored
// version); safe for concurrent use.
type articles struct {
	fetch           articleFetcher
	log             *slog.Logger
	fetched, failed prometheus.Counter // dynamo_poller_articles_total by result
}

// newArticles returns the article step fetching through f, counting its
// fetches on fetched and failed.
func newArticles(f articleFetcher, log *slog.Logger, fetched, failed prometheus.Counter) *articles {
	return &articles{fetch: f, log: log, fetched: fetched, failed: failed}
}

// fill gives the items of doc (about to be stored for resource id,
// content: full) their articles. What an item had is decided from the
// newest stored version, not from memory, so that it holds across
// restarts and nodes: an item that carries a dynamo:article mark there
// keeps its mark and article and is not fetched again. The others with a
// link, in page order, get their article fetched, at most perPoll
// (poller.full_per_poll) of them; fill reports whether some were left
// over, for the next poll to fetch (see resource.articlesDone): the marks
// count in the document's content ([schema.SameContent]), so the articles
// a poll fetches are stored even when the page has not changed. An article
// that cannot be had marks its item failed: it keeps its summary and is
// not fetched again, and the poll goes on.
// newest reads the newest stored version (newestStored); a store that
// cannot read versions fetches nothing.
// entry's headers go with the articles on the page's own host.
func (a *articles) fill(ctx context.Context, id string, doc *schema.Document, perPoll int, newest func() (*schema.Document, error), entry *config.ResourceEntry) (left bool) {
	prev, err := newest()
	if errors.Is(err, errNoVersions) {
		return false
	}
	if err != nil {
		// Unknown what the items had: fetching now could fetch twice.
		a.log.WarnContext(ctx, "content: full: read the latest version", slog.String("resource", id), slog.Any("error", err))
		return true
	}
	had := make(map[string]*schema.Item)
	if prev != nil {
		for i := range prev.Items {
			had[prev.Items[i].ID] = &prev.Items[i]
		}
	}
	var todo []*schema.Item
	for i := range doc.Items {
		it := &doc.Items[i]
		if old := had[it.ID]; old != nil {
			if mark, ok := old.Extensions.ArticleMark(); ok {
				carryArticle(it, old, mark)
				continue
			}
		}
		if it.Link != "" {
			todo = append(todo, it)
		}
	}
	for _, it := range todo[:min(len(todo), perPoll)] {
		html, err := a.fetch.Article(ctx, it.Link, sameHostHeaders(entry, it.Link))
		if ctx.Err() != nil {
			return true // the poll ends: the items stay unmarked, fetched by a later poll
		}
		if err != nil {
			a.log.InfoContext(ctx, "content: full: article kept its summary", slog.String("resource", id), slog.String("link", config.RedactURL(it.Link)), slog.Any("error", err))
			a.failed.Inc()
			markArticle(it, schema.ArticleFailed, "")
			continue
		}
		a.fetched.Inc()
		markArticle(it, schema.ArticleFull, html)
	}
	return len(todo) > perPoll
}

// sameHostHeaders are entry's headers when link is on the host of
// entry's page (same scheme too), else none: a page's cookies are not
// sent to the sites its items link to.
func sameHostHeaders(entry *config.ResourceEntry, link string) map[string]string {
	if entry == nil || len(entry.Headers) == 0 {
		return nil
	}
	page, err1 := url.Parse(entry.URL)
	art, err2 := url.Parse(link)
	if err1 != nil || err2 != nil || page.Scheme != art.Scheme || !strings.EqualFold(page.Host, art.Host) {
		return nil
	}
	return entry.Headers
}

// carryArticle gives it the mark (and the article) old had.
func carryArticle(it, old *schema.Item, mark string) {
	html := ""
	if mark == schema.ArticleFull {
		html, _ = old.Extensions.ContentEncoded()
	}
	markArticle(it, mark, html)
}

// markArticle sets it's dynamo:article mark and, for an article, its
// content:encoded (replacing the description's).
func markArticle(it *schema.Item, mark, html string) {
	ext := it.Extensions[:0:0]
	for _, x := range it.Extensions {
		if x.URI == schema.ArticleNamespace || (html != "" && x.URI == schema.ContentNamespace && x.LocalName == "encoded") {
			continue
		}
		ext = append(ext, x)
	}
	if html != "" {
		ext = append(ext, schema.Extension{URI: schema.ContentNamespace, Prefix: "content", LocalName: "encoded", Value: html})
	}
	it.Extensions = append(ext, schema.Extension{URI: schema.ArticleNamespace, Prefix: "dynamo", LocalName: "article", Value: mark})
}
