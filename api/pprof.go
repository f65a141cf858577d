package api

import (
	"net/http/pprof"

	"github.com/labstack/echo/v4"
)

// getPprof serves Go's runtime profiles (heap, goroutine, CPU profile, trace)
// under /admin/debug/pprof/, behind the admin token: what an operator asks
// for when memory or CPU grows with the number of resources. A CPU profile
// or trace lasts at most the server's request timeout.
func getPprof(c echo.Context) error {
	w, r := c.Response(), c.Request()
	switch name := c.Param("*"); name {
	case "":
		pprof.Index(w, r)
	case "cmdline":
		pprof.Cmdline(w, r)
	case "profile":
		pprof.Profile(w, r)
	case "symbol":
		pprof.Symbol(w, r)
	case "trace":
		pprof.Trace(w, r)
	default:
		pprof.Handler(name).ServeHTTP(w, r)
	}
	return nil
}
