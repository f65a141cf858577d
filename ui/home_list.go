package ui

import (
	"context"
	"github.com/dynamo-rss/dynamo/internal/redact"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/dynamo-rss/dynamo/api"
)

// homePerPage is how many resources one page of / shows: a server with
// thousands of resources answers / with one page of them, and ?q= finds
// the others.
const homePerPage = 50

// homeHref is the link to page n of / filtered by q.
func homeHref(q string, n int) string {
	v := url.Values{}
	if q != "" {
		v.Set("q", q)
	}
	if n > 1 {
		v.Set("page", strconv.Itoa(n))
	}
	if len(v) == 0 {
		return "/"
	}
	return "/?" + v.Encode()
}

// filterEntries keeps the resources whose id, title, page URL or
// description contain every word of q (case-insensitively).
func filterEntries(es []api.Listed, q string) []api.Listed {
	words := strings.Fields(strings.ToLower(q))
	if len(words) == 0 {
		return es
	}
	out := make([]api.Listed, 0, len(es))
	for _, e := range es {
		fields := []string{e.ID}
		if e.Status != nil {
			fields = append(fields, redact.URL(e.Status.URL)) // a search must not find a password
		}
		if e.Info != nil {
			fields = append(fields, e.Info.Title, redact.URL(e.Info.URL), e.Info.Description)
		}
		hay := strings.ToLower(strings.Join(fields, "\x00"))
		match := true
		for _, w := range words {
			if !strings.Contains(hay, w) {
				match = false
				break
			}
		}
		if match {
			out = append(out, e)
		}
	}
	return out
}

// decorate adds what only the resources of the page shown need: subscribe
// links, the link to its view and the sparkline of its recent polls.
func (s *Server) decorate(ctx context.Context, r *homeResource, now time.Time) {
	r.Links = s.api.FeedLinks(r.ID)
	r.History = s.api.HistoryLinks(r.ID)
	r.View = api.ViewHref(r.ID)
	h := s.pollHistory(ctx, r.ID)
	if len(h) == 0 {
		return
	}
	spark, err := s.people.sparkline(r.ID, h)
	if err != nil {
		s.log.LogAttrs(ctx, slog.LevelWarn, "draw sparkline", slog.String("resource", r.ID), slog.Any("error", err))
		return
	}
	r.Spark = spark
}
