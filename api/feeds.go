package api

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

func (s *Server) getResources(c echo.Context) error {
	return echo.NewHTTPError(http.StatusNotImplemented)
}
func (s *Server) getResource(c echo.Context) error {
	return echo.NewHTTPError(http.StatusNotImplemented)
}
