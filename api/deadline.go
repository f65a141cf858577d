package api

import (
	"context"
	"errors"
	"github.com/dynamo-rss/dynamo/internal/deadline"
	"time"

	"github.com/labstack/echo/v4"
)

// requestDeadline bounds each request's context by Options.RequestTimeout,
// as echo's ContextTimeout middleware does, with a context that arms its
// timer only when something waits on it: most answers (a cached feed, a
// health check) never do, and context.WithTimeout costs them a timer, its
// registration with the parent and four allocations.
func (s *Server) requestDeadline(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		ctx := deadline.New(req.Context(), time.Now().Add(s.opts.RequestTimeout))
		defer ctx.Stop()
		c.SetRequest(req.WithContext(ctx))
		if err := next(c); err != nil {
			if errors.Is(err, context.DeadlineExceeded) {
				return echo.ErrServiceUnavailable.WithInternal(err)
			}
			return err
		}
		return nil
	}
}
