package api

import (
	"errors"
	"log/slog"
	"net/http"

	"github.com/labstack/echo/v4"
)

// healthBody is the JSON of /healthz and /readyz.
type healthBody struct {
	Status string `json:"status"`
	Error  string `json:"error,omitempty"`
}

// getHealthz answers 200 as long as the process serves HTTP.
func (s *Server) getHealthz(c echo.Context) error {
	c.Response().Header().Set(echo.HeaderCacheControl, "no-store") // a probe asks the process, never a cache
	return c.JSON(http.StatusOK, healthBody{Status: "ok"})
}

// NotReady is the error Options.Ready returns when the service is not
// ready: Reason is the short reason /readyz answers (such as "store
// unreachable"), Err the cause, which goes to the log only (a connection
// error names hosts, users and databases).
type NotReady struct {
	Reason string
	Err    error
}

func (e *NotReady) Error() string {
	if e.Err == nil {
		return e.Reason
	}
	return e.Reason + ": " + e.Err.Error()
}

func (e *NotReady) Unwrap() error { return e.Err }

// getReadyz answers 200 when Options.Ready says the store is reachable and
// the poller runs, 503 with a short reason otherwise (a NotReady's Reason;
// any other error's text is not shown). The cause is logged.
func (s *Server) getReadyz(c echo.Context) error {
	if s.opts.Ready != nil {
		ctx := c.Request().Context()
		if err := s.opts.Ready(ctx); err != nil {
			reason := "not ready"
			var nr *NotReady
			if errors.As(err, &nr) && nr.Reason != "" {
				reason = nr.Reason
			}
			s.log.WarnContext(ctx, "not ready", slog.String("reason", reason), slog.Any("error", err))
			return &Problem{Status: http.StatusServiceUnavailable, Detail: reason, RetryAfter: UnavailableRetry}
		}
	}
	c.Response().Header().Set(echo.HeaderCacheControl, "no-store")
	return c.JSON(http.StatusOK, healthBody{Status: "ready"})
}
