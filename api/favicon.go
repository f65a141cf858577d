package api

import (
	"bytes"
	_ "embed" // the icon's bytes
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
)

// favicon is the icon of GET /favicon.ico: a feed icon, 32×32, an ICO
// holding one PNG. Readers ask for it on every refresh, so it is served
// with a long max-age and answers conditional requests.
//
//go:embed static/favicon.ico
var favicon []byte

// faviconModTime is when the icon last changed, its Last-Modified.
var faviconModTime = time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)

// getFavicon serves GET /favicon.ico.
func (s *Server) getFavicon(c echo.Context) error {
	h := c.Response().Header()
	h.Set(echo.HeaderContentType, "image/x-icon")
	h.Set(echo.HeaderCacheControl, "public, max-age=604800")
	h.Set("ETag", `"favicon-1"`)
	http.ServeContent(c.Response(), c.Request(), "favicon.ico", faviconModTime, bytes.NewReader(favicon))
	return nil
}
