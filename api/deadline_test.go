package api

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
)

// A request's context is canceled once it is answered, as with
// context.WithTimeout, whether or not the handler waited on it.
func TestRequestContextEndsWithRequest(t *testing.T) {
	s := newSvcServer(t, Options{})
	var kept []context.Context
	s.e.GET("/test/keep", func(c echo.Context) error {
		ctx := c.Request().Context()
		if d, ok := ctx.Deadline(); !ok || time.Until(d) > defaultRequestTimeout {
			t.Errorf("deadline %v, %v", d, ok)
		}
		if c.QueryParam("wait") != "" {
			_ = ctx.Done()
		}
		kept = append(kept, ctx)
		return c.NoContent(http.StatusNoContent)
	})
	svcDo(s, http.MethodGet, "/test/keep", nil)
	svcDo(s, http.MethodGet, "/test/keep?wait=1", nil)
	for i, ctx := range kept {
		if !errors.Is(ctx.Err(), context.Canceled) {
			t.Errorf("request %d: context Err %v after the answer", i, ctx.Err())
		}
	}
}
