package ui

import (
	"bytes"
	"context"
	"errors"
	"github.com/dynamo-rss/dynamo/api"
	"github.com/dynamo-rss/dynamo/internal/apitest"
	stdhtml "html"
	"net/http"
	"net/url"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/dynamo-rss/dynamo/config"
	"github.com/dynamo-rss/dynamo/schema/schematest"
)

// htmlAttr returns the value of an attribute of n.
func htmlAttr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

// htmlFind returns the elements under n that match.
func htmlFind(n *html.Node, match func(*html.Node) bool) []*html.Node {
	var out []*html.Node
	for d := range n.Descendants() {
		if d.Type == html.ElementNode && match(d) {
			out = append(out, d)
		}
	}
	return out
}

func htmlText(n *html.Node) string {
	var b strings.Builder
	for d := range n.Descendants() {
		if d.Type == html.TextNode {
			b.WriteString(d.Data)
			b.WriteByte(' ')
		}
	}
	return b.String()
}

func TestHomeListsEveryResource(t *testing.T) {
	store, poller := apitest.SvcFixture()
	s := newSvcServer(t, api.Options{Store: store, Poller: poller, PublicURL: "https://feeds.example.org/"})
	rec := svcDo(s, http.MethodGet, "/", nil)
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "text/html; charset=UTF-8" {
		t.Errorf("Content-Type = %q", ct)
	}
	doc, err := html.Parse(bytes.NewReader(rec.Body.Bytes()))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	if len(htmlFind(doc, func(n *html.Node) bool { return n.Data == "meta" && htmlAttr(n, "name") == "viewport" })) != 1 {
		t.Error("no viewport meta")
	}
	sections := htmlFind(doc, func(n *html.Node) bool { return n.Data == "section" && htmlAttr(n, "data-rssid") != "" })
	var ids []string
	for _, sec := range sections {
		ids = append(ids, htmlAttr(sec, "data-rssid"))
	}
	if want := []string{"forum", "news", "old"}; !slices.Equal(ids, want) {
		t.Fatalf("resources on the page = %v, want %v (configured and stored, by id)", ids, want)
	}
	for _, sec := range sections {
		id := htmlAttr(sec, "data-rssid")
		var got []string
		for _, a := range htmlFind(sec, func(n *html.Node) bool { return n.Data == "a" && strings.Contains(htmlAttr(n, "class"), "feed") }) {
			got = append(got, htmlAttr(a, "href"))
		}
		var want []string
		for _, typ := range []string{"rss2", "atom", "rss1", "json"} {
			want = append(want, "https://feeds.example.org/resources/"+id+"?max=50&type="+typ)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: subscribe links %v, want %v", id, got, want)
		}
	}
	alternates := htmlFind(doc, func(n *html.Node) bool { return n.Data == "link" && htmlAttr(n, "rel") == "alternate" })
	if len(alternates) != 1+3*4 {
		t.Errorf("%d <link rel=alternate>, want 13 (all resources + 4 formats × 3 resources)", len(alternates))
	}
	text := map[string]string{}
	for _, sec := range sections {
		text[htmlAttr(sec, "data-rssid")] = strings.Join(strings.Fields(htmlText(sec)), " ")
	}
	for id, wants := range map[string][]string{
		"news":  {"Our News & Views", "What happened <today>", "Stored 7 versions, latest 3m ago", "How often to check every 15 minutes", "Last checked 1m ago", "Next check in 14m", "changed", "9 checks, 7 changed, 0 failed"},
		"forum": {"How often to check automatically, as often as the page changes (now every 42 minutes)", "Next check in 40m", "Last error: GET https://example.org/forum/: 503", "3 checks, 0 changed, 3 failed", "Stored 0 versions"},
		"old":   {"Old page", "not configured any more", "Stored 2 versions, latest 2d ago"},
	} {
		for _, w := range wants {
			if !strings.Contains(text[id], w) {
				t.Errorf("%s: %q not in %q", id, w, text[id])
			}
		}
	}
	if strings.Contains(text["old"], "How often") {
		t.Errorf("old: says how often to check although not configured: %q", text["old"])
	}
}

func TestHomeStoreError(t *testing.T) {
	_, poller := apitest.SvcFixture()
	s := newSvcServer(t, api.Options{Store: &apitest.SvcStore{Err: errors.New("badger: closed")}, Poller: poller})
	rec := svcDo(s, http.MethodGet, "/", nil)
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d", rec.Code)
	}
	body := rec.Body.String()
	if !strings.Contains(body, "the store could not be read: badger: closed") || !strings.Contains(body, `data-rssid="forum"`) {
		t.Errorf("page does not show the configured resources and the store error:\n%s", body)
	}
}

func TestHomeHead(t *testing.T) {
	store, poller := apitest.SvcFixture()
	s := newSvcServer(t, api.Options{Store: store, Poller: poller})
	rec := svcDo(s, http.MethodHead, "/", nil)
	if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") {
		t.Errorf("HEAD /: %d %q", rec.Code, rec.Header().Get("Content-Type"))
	}
}

func TestHomeEmpty(t *testing.T) {
	s := newSvcServer(t, api.Options{})
	rec := svcDo(s, http.MethodGet, "/", nil)
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "No resources yet") {
		t.Errorf("got %d:\n%s", rec.Code, rec.Body)
	}
	// The empty page shows a minimal configuration that really works.
	body := rec.Body.String()
	i, j := strings.Index(body, "<pre><code>listen:"), strings.Index(body, "</code></pre>")
	if i < 0 || j < i {
		t.Fatalf("no configuration example:\n%s", body)
	}
	example := stdhtml.UnescapeString(body[i+len("<pre><code>") : j])
	example = strings.Replace(example, `token_file: "./admin.token"`, `token: "x"`, 1) // the file does not exist here
	if _, err := config.Parse([]byte(example)); err != nil {
		t.Fatalf("the example configuration on / does not parse: %v\n%s", err, example)
	}
	if !strings.Contains(body, "admin.token") {
		t.Error("the empty page does not say how to turn the admin API on")
	}
	admin := newSvcServer(t, api.Options{AdminToken: "t", PublicURL: "https://feeds.example.org"})
	if b := svcDo(admin, http.MethodGet, "/", nil).Body.String(); !strings.Contains(b, "https://feeds.example.org/admin/resources/news") {
		t.Errorf("with admin on, the empty page does not show how to register a page:\n%s", b)
	}
}

func TestHomeShowsDiskFull(t *testing.T) {
	store, poller := apitest.SvcFixture()
	low := true
	s := newSvcServer(t, api.Options{Store: store, Poller: poller}, func(o *Options) {
		o.DiskSpace = func() api.DiskSpace { return api.DiskSpace{Low: low, Free: 10 << 20, MinFree: 256 << 20} }
	})
	if b := svcDo(s, http.MethodGet, "/", nil).Body.String(); !strings.Contains(b, `id="disk-full"`) || !strings.Contains(b, "min_free") {
		t.Errorf("no disk-full notice:\n%s", b)
	}
	low = false
	if b := svcDo(s, http.MethodGet, "/", nil).Body.String(); strings.Contains(b, `id="disk-full"`) {
		t.Error("disk-full notice with space")
	}
}

// html5Tag matches xmllint's complaint about an element HTML 4 lacks.
var html5Tag = regexp.MustCompile(`HTML parser error : Tag (header|nav|main|section|footer|time) invalid`)

// TestPagesValidate checks the pages with real HTML checkers: tidy (HTML5
// aware) and xmllint's HTML parser.
func TestPagesValidate(t *testing.T) {
	store, poller := apitest.SvcFixture()
	s := newSvcServer(t, api.Options{Store: store, Poller: poller})
	pages := map[string][]byte{
		"home":    svcDo(s, http.MethodGet, "/", nil).Body.Bytes(),
		"preview": svcDo(s, http.MethodGet, "/preview", nil).Body.Bytes(),
		"preview-result": svcDo(s, http.MethodPost, "/preview", strings.NewReader(url.Values{"page": {apitest.PreviewPageHTML}}.Encode()),
			"Content-Type", "application/x-www-form-urlencoded", "Accept", "text/html").Body.Bytes(),
	}
	for name, page := range pages {
		t.Run(name+"/tidy", func(t *testing.T) {
			tidy := schematest.Tool(t, "tidy")
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, tidy, "-q", "-e", "--show-warnings", "yes", "--drop-empty-elements", "no", "-utf8")
			cmd.Stdin = bytes.NewReader(page)
			out, err := cmd.CombinedOutput()
			if err != nil || len(bytes.TrimSpace(out)) > 0 {
				t.Errorf("tidy: %v\n%s\npage:\n%s", err, out, page)
			}
		})
		t.Run(name+"/xmllint", func(t *testing.T) {
			xmllint := schematest.Tool(t, "xmllint")
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, xmllint, "--html", "--noout", "-")
			cmd.Stdin = bytes.NewReader(page)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("xmllint --html: %v\n%s", err, out)
			}
			// xmllint's parser is HTML 4: it reports HTML5 elements as
			// invalid tags, and nothing else may appear.
			for line := range strings.SplitSeq(string(out), "\n") {
				if strings.Contains(line, "HTML parser error") && !html5Tag.MatchString(line) {
					t.Errorf("xmllint --html: %s\n%s", line, out)
				}
			}
		})
	}
}

// TestHomeHref checks the links between pages of /: page 1 is / itself.
func TestHomeHref(t *testing.T) {
	for _, tc := range []struct {
		q    string
		n    int
		want string
	}{
		{"", 1, "/"}, {"", 0, "/"}, {"", 2, "/?page=2"}, {"town hall", 1, "/?q=town+hall"}, {"x&y", 3, "/?page=3&q=x%26y"},
	} {
		if got := homeHref(tc.q, tc.n); got != tc.want {
			t.Errorf("homeHref(%q, %d) = %q, want %q", tc.q, tc.n, got, tc.want)
		}
	}
}
