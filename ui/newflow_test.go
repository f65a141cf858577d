package ui

import (
	"context"
	"github.com/dynamo-rss/dynamo/api"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/dynamo-rss/dynamo/internal/formclient"
)

// fetchList logs in and fetches the list page on /new, as a browser does.
func fetchList(t *testing.T, env *pagesEnv) *formclient.Client {
	t.Helper()
	b := formclient.New(t, env.srv.URL)
	b.Get("/login")
	if b.Submit(b.Form("/login", "token"), "token", pagesToken); b.Last.Request.URL.Path != "/new" {
		t.Fatalf("login: at %s", b.Last.Request.URL)
	}
	if code := b.Submit(b.Form("/new", "url"), "url", env.origin.URL+"/list.html"); code != http.StatusOK {
		t.Fatalf("fetch: %d\n%s", code, b.Body)
	}
	return b
}

// section is the HTML of the section id of the last page.
func section(b *formclient.Client, id string) string {
	i := strings.Index(b.Body, `id="`+id+`"`)
	if i < 0 {
		return ""
	}
	rest := b.Body[i:]
	if j := strings.Index(rest, "</section>"); j >= 0 {
		rest = rest[:j]
	}
	return rest
}

// TestAddRefusesEmptyBlock: a block that finds nothing on the fetched page
// is refused beside the block, and nothing is registered.
func TestAddRefusesEmptyBlock(t *testing.T) {
	env := newPagesEnv(t)
	b := fetchList(t, env)
	block := "item: div.nothing-here\ntitle: a\n"
	if code := b.Submit(b.Form("/new/preview", "select"), "select", block); code != http.StatusOK {
		t.Fatalf("preview: %d", code)
	}
	add := b.Form("/new/add", "id", "select")
	id := add.Values.Get("id")
	if code := b.Submit(add); code != http.StatusUnprocessableEntity {
		t.Fatalf("add of an empty block: %d, want 422", code)
	}
	if _, ok := env.reg.Definition(id); ok {
		t.Fatalf("an empty block was registered as %q", id)
	}
	sec := section(b, "preview")
	ta := strings.Index(sec, `name="select"`)
	msg := strings.Index(sec, "no item")
	if ta < 0 || msg < 0 || !strings.Contains(sec, `id="select-preview-error"`) {
		t.Errorf("the refusal is not beside the block:\n%s", sec)
	}
}

// TestOfferSaysAlreadyFollowed: a page already followed (its URL written
// otherwise) is said so with a link to its view; a proposed id in use is
// an error beside the id field, never changed to another.
func TestOfferSaysAlreadyFollowed(t *testing.T) {
	env := newPagesEnv(t)
	ctx := context.Background()
	written := strings.Replace(env.origin.URL, "http://", "HTTP://", 1) + "/list.html/#top"
	if _, _, err := api.RegisterDefinition(ctx, env.reg, "town", []byte(`{"url":"`+written+`"}`)); err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(env.origin.URL + "/list.html")
	proposed := api.DeriveID(u, func(string) bool { return false })
	if _, _, err := api.RegisterDefinition(ctx, env.reg, proposed, []byte(`{"url":"https://example.org/other.html"}`)); err != nil {
		t.Fatal(err)
	}
	b := fetchList(t, env)
	if !strings.Contains(section(b, "page"), `href="/view/town"`) || !strings.Contains(b.Body, "already follow") {
		t.Errorf("the offer does not say the page is followed as town:\n%s", section(b, "page"))
	}
	add := b.Form("/new/add", "id", "select")
	if got := add.Values.Get("id"); got != proposed {
		t.Errorf("proposed id %q, want %q (never another)", got, proposed)
	}
	sec := section(b, "p1")
	if i, j := strings.Index(sec, `name="id"`), strings.Index(sec, "already the id of"); i < 0 || j < i {
		t.Errorf("no error beside the id field:\n%s", sec)
	}
	if code := b.Submit(add); code != http.StatusUnprocessableEntity {
		t.Errorf("add with the proposed id in use: %d, want 422", code)
	}
}

func TestSameURL(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{"https://Example.ORG:443/a/#x", "https://example.org/a", true},
		{"http://example.org:80", "http://example.org/", true},
		{"http://example.org/a?x=1", "http://example.org/a?x=2", false},
		{"http://example.org/a", "https://example.org/a", false},
		{"http://example.org:8080/a", "http://example.org/a", false},
		{"http://example.org/A", "http://example.org/a", false},
	} {
		if got := sameURL(tc.a, tc.b); got != tc.same {
			t.Errorf("sameURL(%q, %q) = %v", tc.a, tc.b, got)
		}
	}
}

// TestProposalSaysWhereAndCount: each proposal says where it sits and how
// many items it has, the same number wherever it is shown, plurals right.
func TestProposalSaysWhereAndCount(t *testing.T) {
	env := newPagesEnv(t)
	offer, err := suggestOffer(api.Page{Body: []byte(listPage), URL: env.origin.URL + "/list.html", ContentType: "text/html"})
	if err != nil || len(offer.Proposals) == 0 {
		t.Fatalf("suggest: %v, %d proposals", err, len(offer.Proposals))
	}
	best := offer.Proposals[0]
	b := fetchList(t, env)
	sec := regexp.MustCompile(`<[^>]*>`).ReplaceAllString(section(b, "p1"), "")
	want := countNoun(best.Count, "item", "items") + " " + html.EscapeString(best.Where)
	if best.Where == "" || !strings.Contains(sec, want) {
		t.Errorf("p1 does not say %q:\n%s", want, sec)
	}
	for _, m := range regexp.MustCompile(`(\d+) items?\b`).FindAllStringSubmatch(b.Body, -1) {
		if m[1] != "4" && !strings.Contains(m[0], "filtered") {
			// every count of the list is 4; the menu's proposals have their own
			if !strings.Contains(b.Body, `id="p2"`) {
				t.Errorf("a count %q on a page whose only list has 4", m[0])
			}
		}
	}
	if strings.Contains(b.Body, "1 items") {
		t.Error(`"1 items" on the page`)
	}
	b.Get("/new")
	b.Submit(b.Form("/new", "url"), "url", env.origin.URL+"/club.html")
	if !strings.Contains(section(b, "annotations"), "1 item;") {
		t.Errorf("the annotations' one item is not said so:\n%s", section(b, "annotations"))
	}
	for n, want := range map[int]string{0: "0 items", 1: "1 item", 2: "2 items"} {
		if got := countNoun(n, "item", "items"); got != want {
			t.Errorf("countNoun(%d) = %q", n, got)
		}
	}
}

// TestPreviewFilter: include / exclude on the preview form; the items
// filtered out are struck through and counted; Add registers the filter;
// a bad entry is an error beside its field, with its line.
func TestPreviewFilter(t *testing.T) {
	env := newPagesEnv(t)
	b := fetchList(t, env)
	block := "item: article.notice\ntitle: h3 a\nlink: h3 a @href\ndescription: p\ndate: time @datetime\n"
	f := b.Form("/new/preview", "select", "include", "exclude")
	if code := b.Submit(f, "select", block, "exclude", "\nTram\nre:(?i)^winter"); code != http.StatusOK {
		t.Fatalf("preview: %d", code)
	}
	sec := section(b, "preview")
	for _, want := range []string{"<s>Tram line 4 closed for works until March</s>", "<s>Winter opening hours of the town hall offices</s>", "2 items filtered out", "exclude: Tram"} {
		if !strings.Contains(sec, want) {
			t.Errorf("the preview lacks %q:\n%s", want, sec)
		}
	}
	if got := itemTitles(b, "preview"); len(got) != 2 {
		t.Errorf("preview items %q, want the 2 kept", got)
	}
	// A bad entry: beside its field, with its line.
	if code := b.Submit(b.Form("/new/preview", "include"), "select", block, "include", "budget\nre:(", "exclude", ""); code != http.StatusOK {
		t.Fatalf("preview with a bad include: %d", code)
	}
	if sec := section(b, "preview"); !strings.Contains(sec, `id="include-preview-error"`) || !strings.Contains(sec, "line 2") {
		t.Errorf("no error beside include naming line 2:\n%s", sec)
	}
	add := b.Form("/new/add", "include", "id")
	if code := b.Submit(add); code != http.StatusUnprocessableEntity {
		t.Errorf("add with a bad include: %d, want 422", code)
	}
	b.Submit(b.Form("/new/preview", "include"), "select", block, "include", "", "exclude", "Tram")
	add = b.Form("/new/add", "exclude", "id")
	if code := b.Submit(add); code != http.StatusOK {
		t.Fatalf("add with a filter: %d\n%s", code, b.Body)
	}
	d, ok := env.reg.Definition(add.Values.Get("id"))
	if !ok || strings.Join(d.Resource.Filter.Exclude, "|") != "Tram" || len(d.Resource.Filter.Include) != 0 {
		t.Errorf("registered filter %+v (%v), want exclude Tram", d.Resource.Filter, ok)
	}
}

// TestPreviewDates: the form's time zone and date layout read the items'
// dates in the preview, each saying how it reads (as lint --dates); items
// without a date say so; bad values are errors beside their fields; Add
// registers them.
func TestPreviewDates(t *testing.T) {
	env := newPagesEnv(t)
	b := fetchList(t, env)
	block := "item: article.notice\ntitle: h3 a\nlink: h3 a @href\ndate: time\n"
	f := b.Form("/new/preview", "select", "timezone", "date_format")
	if code := b.Submit(f, "select", block, "timezone", "Europe/Rome", "date_format", "02 Jan 2006"); code != http.StatusOK {
		t.Fatalf("preview: %d", code)
	}
	sec := html.UnescapeString(section(b, "preview"))
	if want := `"26 Nov 2026" reads as 2026-11-26T00:00:00+01:00 (date_format, Europe/Rome)`; !strings.Contains(sec, want) {
		t.Errorf("the preview does not say %s:\n%s", want, sec)
	}
	b.Submit(b.Form("/new/preview", "timezone"), "select", "item: article.notice\ntitle: h3 a\n", "timezone", "Mars/Olympus", "date_format", "yesterday")
	sec = section(b, "preview")
	for _, want := range []string{"dated when first seen", `id="timezone-preview-error"`, `id="date_format-preview-error"`} {
		if !strings.Contains(sec, want) {
			t.Errorf("the preview lacks %s:\n%s", want, sec)
		}
	}
	if code := b.Submit(b.Form("/new/add", "timezone", "id")); code != http.StatusUnprocessableEntity {
		t.Errorf("add with a bad zone: %d, want 422", code)
	}
	b.Submit(b.Form("/new/preview", "timezone"), "select", block, "timezone", "Europe/Rome", "date_format", "02 Jan 2006")
	add := b.Form("/new/add", "timezone", "date_format", "id")
	if code := b.Submit(add); code != http.StatusOK {
		t.Fatalf("add: %d\n%s", code, b.Body)
	}
	if d, ok := env.reg.Definition(add.Values.Get("id")); !ok || d.Resource.Timezone != "Europe/Rome" || d.Resource.DateFormat != "02 Jan 2006" {
		t.Errorf("registered %+v (%v), want the zone and layout", d.Resource, ok)
	}
}

// TestNewFormWords: the add form says how often to check in words, not
// policy names; its field names stay; diagnostics are counted with plurals.
func TestNewFormWords(t *testing.T) {
	env := newPagesEnv(t)
	b := fetchList(t, env)
	sec := section(b, "p1")
	for _, want := range []string{"How often to check", "automatically", "every N minutes", "from a shared daily budget"} {
		if !strings.Contains(sec, want) {
			t.Errorf("the add form lacks %q", want)
		}
	}
	for _, gone := range []string{">Policy<", "Interval (flat)", "Weight (budget)"} {
		if strings.Contains(sec, gone) {
			t.Errorf("the add form still says %q", gone)
		}
	}
	b.Form("/new/add", "policy", "interval", "weight", "id")
	b.Submit(b.Form("/new/preview", "select"), "select", "item: article.notice\ntitle: h3 a\nlink: h3 a @href\ndescription: p.none\n")
	if s := section(b, "preview"); regexp.MustCompile(`\b1 problems\b|\b1 diagnostics\b`).MatchString(s) {
		t.Errorf("a singular count with a plural noun:\n%s", s)
	}
	for n, want := range map[int]string{1: "1 problem", 2: "2 problems"} {
		if got := countNoun(n, "problem", "problems"); got != want {
			t.Errorf("countNoun(%d) = %q", n, got)
		}
	}
}
