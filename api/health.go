package api

import (
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

// getReadyz answers 200 when Options.Ready says the store is reachable and
// the poller runs, 503 with the reason otherwise.
func (s *Server) getReadyz(c echo.Context) error {
	if s.opts.Ready != nil {
		if err := s.opts.Ready(c.Request().Context()); err != nil {
			return &Problem{Status: http.StatusServiceUnavailable, Detail: "not ready: " + err.Error(), Err: err}
		}
	}
	c.Response().Header().Set(echo.HeaderCacheControl, "no-store")
	return c.JSON(http.StatusOK, healthBody{Status: "ready"})
}
