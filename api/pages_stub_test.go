package api

import (
	"html/template"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
)

// stubPages stands for package ui in the api's own tests (which cannot
// import it): a feed's page shows what the api hands it (title, subscribe
// links, the age, the items, with their HTML escaped), and the preview
// page its document and diagnostics. The pages' own routes are ui's
// tests'.
type stubPages struct{}

var stubFeedPage = template.Must(template.New("feed").Parse(`<!DOCTYPE html><html><head><title>{{.Title}}</title>
{{range .Links}}<link rel="alternate" type="{{.MIME}}" href="{{.Href}}">
{{end}}</head><body><h1>{{.Title}}</h1>
<ul class="subscribe">{{range .Links}}<li><a class="feed" href="{{.Href}}" data-format="{{.Type}}">{{.Label}}</a></li>{{end}}</ul>
{{range .History}}<a class="history" href="{{.Href}}">{{.Label}}</a>{{end}}
{{with .View}}<a href="{{.}}">view</a>{{end}}
<p>{{len .Items}} items{{if .Updated.Set}} · updated <time datetime="{{.Updated.ISO}}" title="{{.Updated.Absolute}}">{{.Updated.Relative}}</time>{{end}}</p>
<ol id="items">{{range .Items}}<li class="item"><h3><a href="{{.Link}}">{{.Title}}</a></h3>{{.ContentHTML}}{{.Text}}</li>{{end}}</ol>
</body></html>`))

var stubPreviewPage = template.Must(template.New("preview").Parse(`<!DOCTYPE html><html><body>
{{with .Error}}<p class="error">{{.}}</p>{{end}}<pre id="document">{{.Document}}</pre>
<ul>{{range .Diagnostics}}<li>{{.Line}}:{{.Col}}: {{.Severity}}: {{.Message}}</li>{{end}}</ul></body></html>`))

// Routes mounts one page, /, of a few KiB: the routes of the pages go
// through the middleware of every request (gzip, security headers, the
// access log), which the api's tests check on it.
func (stubPages) Routes(_ *Server, add func(string, string, echo.HandlerFunc, ...echo.MiddlewareFunc)) {
	home := func(c echo.Context) error {
		c.Response().Header().Set("Content-Security-Policy", PageSecurityPolicy)
		return c.HTML(http.StatusOK, "<!DOCTYPE html><html><body><h1>dynamo feeds</h1>"+strings.Repeat("<p>A resource.</p>\n", 200)+"</body></html>")
	}
	add(http.MethodGet, "/", home)
	add(http.MethodHead, "/", home)
}

func (stubPages) FeedPage(p *FeedPage) ([]byte, error) {
	var b strings.Builder
	err := stubFeedPage.Execute(&b, p)
	return []byte(b.String()), err
}

func (stubPages) PreviewPage(c echo.Context, code int, p *PreviewPage) error {
	var b strings.Builder
	if err := stubPreviewPage.Execute(&b, p); err != nil {
		return err
	}
	c.Response().Header().Set("Content-Security-Policy", PageSecurityPolicy)
	c.Response().Header().Set("Referrer-Policy", "no-referrer")
	return c.HTML(code, b.String())
}

var _ Pages = stubPages{}
