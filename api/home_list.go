package api

import (
	"context"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"time"
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

// filterResources keeps the resources whose id, title, page URL or
// description contain every word of q (case-insensitively).
func filterResources(rs []homeResource, q string) []homeResource {
	words := strings.Fields(strings.ToLower(q))
	if len(words) == 0 {
		return rs
	}
	out := make([]homeResource, 0, len(rs))
	for _, r := range rs {
		hay := strings.ToLower(r.ID + "\x00" + r.Title + "\x00" + r.URL + "\x00" + r.Description)
		match := true
		for _, w := range words {
			if !strings.Contains(hay, w) {
				match = false
				break
			}
		}
		if match {
			out = append(out, r)
		}
	}
	return out
}

// decorate adds what only the resources of the page shown need: subscribe
// links, the link to its view and the sparkline of its recent polls.
func (s *Server) decorate(ctx context.Context, r *homeResource, now time.Time) {
	r.Links = s.feedLinks(r.ID)
	r.View = s.viewHref(r.ID)
	h := s.pollHistory(r.ID)
	if len(h) == 0 {
		return
	}
	spark, err := sparkline(h, now)
	if err != nil {
		s.log.LogAttrs(ctx, slog.LevelWarn, "draw sparkline", slog.String("resource", r.ID), slog.Any("error", err))
		return
	}
	r.Spark = spark
}
