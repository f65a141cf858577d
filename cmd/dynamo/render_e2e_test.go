package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dynamo-rss/dynamo/internal/pointpages"
	"github.com/dynamo-rss/dynamo/schema/schematest"
)

// scriptBuiltApp is a page whose list its script builds: a plain fetch
// sees an empty root and a <noscript>.
const scriptBuiltApp = `<!DOCTYPE html><html><head><title>Harbour app</title></head><body>
<noscript>You need to enable JavaScript to run this app.</noscript><div id="root"></div>
<script src="/app.js"></script></body></html>`

const scriptBuiltJS = `var items = [["/n/3.html", "Ferry timetable changes for the winter season", "Fewer crossings on Sundays."],
 ["/n/2.html", "Quay 2 reopens after the storm repairs", "Mooring is allowed again."],
 ["/n/1.html", "New fees for visiting yachts from January", "The harbour board set them on Friday."]];
var ul = document.createElement("ul"); ul.className = "news";
items.forEach(function (it) {
  var li = document.createElement("li");
  li.innerHTML = '<h2><a href="' + it[0] + '">' + it[1] + '</a></h2><p>' + it[2] + '</p>';
  ul.appendChild(li);
});
document.getElementById("root").appendChild(ul);`

// TestAddScriptBuiltPageEndToEnd: in a real dynamo serve with Chromium on
// PATH, /new says that a page built by a script seems so and offers to
// render it; rendered, its list is proposed; Add registers fetch: browser
// and wait_for, and the first poll (rendered) stores its items.
func TestAddScriptBuiltPageEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser")
	}
	chromium := schematest.Tool(t, "chromium")
	t.Setenv("PATH", filepath.Dir(chromium)+string(os.PathListSeparator)+os.Getenv("PATH"))
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			w.Header().Set("Content-Type", "text/plain")
			_, _ = io.WriteString(w, "User-agent: *\nAllow: /\n")
		case "/app.html":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = io.WriteString(w, scriptBuiltApp)
		case "/app.js":
			w.Header().Set("Content-Type", "text/javascript")
			_, _ = io.WriteString(w, scriptBuiltJS)
		case "/news.html":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = io.WriteString(w, e2ePage("Harbour festival"))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(origin.Close)
	c, b := serveLoggedIn(t, origin.URL, "render-token", "")
	if !strings.Contains(b.Body, `name="render"`) {
		t.Fatalf("/new offers no Render with JavaScript although a browser is on PATH:\n%s", b.Body)
	}
	b.Submit(b.Form("/new", "url"), "url", origin.URL+"/app.html")
	if !strings.Contains(b.Body, "seems to be built by JavaScript") {
		t.Fatalf("a script-built page is not said to be one:\n%s", b.Body)
	}
	if code := followWaits(t, b, b.Submit(b.Form("/new", "url", "render", "wait_for"), "wait_for", "ul.news li")); code != http.StatusOK || !strings.Contains(b.Body, "rendered with JavaScript") {
		t.Fatalf("render from the form: %d\n%s", code, b.Body)
	}
	best := b.Body[strings.Index(b.Body, `id="p1"`):]
	best = best[:strings.Index(best, "</section>")]
	if !strings.Contains(best, "Ferry timetable changes for the winter season") {
		t.Fatalf("the best proposal of the rendered page is not its list:\n%s", best)
	}
	// The rendered page's picture: a click where its script drew the
	// first title gives the script's list.
	x, y := whereIs(t, ownBrowser(t, chromium), origin.URL+"/app.html", "Ferry timetable changes for the winter season")
	offer := b.Last.Request.URL.RequestURI()
	if h := pointpages.SmallestOver(b.Body, x, y); h == "" {
		t.Errorf("no region of the rendered page's picture over its first title")
	} else if b.Get(h); !slices.Contains(pointpages.Titles(b.Body, "chosen"), "Quay 2 reopens after the storm repairs") {
		t.Errorf("a click on the rendered list gave %q", pointpages.Titles(b.Body, "chosen"))
	}
	b.Get(offer)
	if code := followWaits(t, b, b.Submit(b.Form("/new/add", "id"), "id", "app")); code != http.StatusOK || b.Last.Request.URL.Path != "/view/app" {
		t.Fatalf("add: %d at %s\n%s", code, b.Last.Request.URL, b.Body)
	}
	resp, body := c.do(http.MethodGet, "/admin/resources", true)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /admin/resources: %d %s", resp.StatusCode, body)
	}
	var defs struct {
		Resources []struct {
			ID       string `json:"id"`
			Resource struct {
				Fetch   string `json:"fetch"`
				WaitFor string `json:"wait_for"`
			} `json:"resource"`
		} `json:"resources"`
	}
	if err := json.Unmarshal(body, &defs); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, d := range defs.Resources {
		if d.ID == "app" {
			found = true
			if d.Resource.Fetch != "browser" || d.Resource.WaitFor != "ul.news li" {
				t.Errorf("registered fetch %q wait_for %q, want browser and ul.news li", d.Resource.Fetch, d.Resource.WaitFor)
			}
		}
	}
	if !found {
		t.Errorf("app is not among the definitions: %s", body)
	}
	if f := c.feed("/resources/app?max=10"); len(f.Items) != 3 || f.Items[0].Title != "Ferry timetable changes for the winter season" {
		t.Errorf("the added feed has %d items (the first poll, rendered, stores the script's list)", len(f.Items))
	}
}
