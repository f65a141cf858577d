package ui

import (
	"net/http"
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
