package cluster

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dynamo-rss/dynamo/storage/postgres/pgtest"
)

// converge is how long another node may take to reflect a registry change
// made through one node (its NOTIFY, then one read of the registry): about
// a second, well under the 5 s periodic re-read.
const converge = 2 * time.Second

// churn changes the registry through random nodes, as operators would:
// registrations, redefinitions (each definition a page of its own, so that
// "no page polled twice within its interval" covers first polls too),
// deletions and concurrent PUTs of one id through two nodes. After each
// change it checks read-your-writes on the node that answered and
// convergence on the others.
type churn struct {
	org      *origin
	rnd      *rand.Rand
	nextPage int               // the next page number no definition used
	defs     map[string]string // id → URL, of the ids registered now
	n        int               // ids made so far
}

func newChurn(org *origin, firstPage int) *churn {
	return &churn{org: org, rnd: rand.New(rand.NewPCG(1, 2)), nextPage: firstPage, defs: map[string]string{}}
}

// newURL is the URL of a page no definition used before.
func (c *churn) newURL() string {
	u := c.org.url(c.nextPage)
	c.nextPage++
	return u
}

func definition(url string) string {
	return fmt.Sprintf(`{"url": %q, "policy": {"kind": "flat", "interval": "3s"}}`, url)
}

// adminURL is the URL a node polls for id ("" when it has no such resource).
func adminURL(t *testing.T, n *node, id string) string {
	t.Helper()
	r := n.do(t, http.MethodGet, "/admin/resources/"+id, "")
	if r.StatusCode == http.StatusNotFound {
		return ""
	}
	var st struct {
		URL string `json:"url"`
	}
	if r.StatusCode != http.StatusOK || json.Unmarshal([]byte(r.body), &st) != nil {
		t.Fatalf("GET /admin/resources/%s on %s: %d %s", id, n.id, r.StatusCode, r.body)
	}
	return st.URL
}

// expectEverywhere checks that the node that answered reflects id's state
// (url, "" for deleted) at once and every other node within converge.
func expectEverywhere(t *testing.T, answered *node, others []*node, id, url string) {
	t.Helper()
	if got := adminURL(t, answered, id); got != url {
		t.Errorf("read your writes: %s answered the change of %s but polls %q, want %q", answered.id, id, got, url)
	}
	for _, n := range others {
		deadline := time.Now().Add(converge)
		for got := adminURL(t, n, id); got != url; got = adminURL(t, n, id) {
			if time.Now().After(deadline) {
				t.Errorf("%s polls %q for %s %v after the change through %s, want %q", n.id, got, id, converge, answered.id, url)
				break
			}
			time.Sleep(20 * time.Millisecond) // another process: its notification is on its way
		}
	}
}

func without(nodes []*node, n *node) []*node {
	var out []*node
	for _, o := range nodes {
		if o != n {
			out = append(out, o)
		}
	}
	return out
}

// run makes rounds changes through random nodes of live.
func (c *churn) run(t *testing.T, live []*node, rounds int) {
	t.Helper()
	for range rounds {
		n := live[c.rnd.IntN(len(live))]
		var ids []string
		for id := range c.defs {
			ids = append(ids, id)
		}
		switch op := c.rnd.IntN(3); {
		case op == 0 || len(ids) == 0: // a new id
			id := fmt.Sprintf("c%d", c.n)
			c.n++
			url := c.newURL()
			if r := n.do(t, http.MethodPut, "/admin/resources/"+id, definition(url)); r.StatusCode != http.StatusCreated {
				t.Fatalf("PUT %s on %s: %d, want 201", id, n.id, r.StatusCode)
			}
			c.defs[id] = url
			expectEverywhere(t, n, without(live, n), id, url)
		case op == 1: // a redefinition, another page
			id := ids[c.rnd.IntN(len(ids))]
			url := c.newURL()
			if r := n.do(t, http.MethodPut, "/admin/resources/"+id, definition(url)); r.StatusCode != http.StatusOK {
				t.Fatalf("PUT %s again on %s: %d, want 200", id, n.id, r.StatusCode)
			}
			c.defs[id] = url
			expectEverywhere(t, n, without(live, n), id, url)
		default: // a deletion
			id := ids[c.rnd.IntN(len(ids))]
			if r := n.do(t, http.MethodDelete, "/admin/resources/"+id, ""); r.StatusCode != http.StatusNoContent {
				t.Fatalf("DELETE %s on %s: %d, want 204", id, n.id, r.StatusCode)
			}
			delete(c.defs, id)
			expectEverywhere(t, n, without(live, n), id, "")
			if r := n.do(t, http.MethodGet, "/resources/"+id, ""); r.StatusCode != http.StatusGone {
				t.Errorf("feed of %s deleted through %s: %d on that node, want 410", id, n.id, r.StatusCode)
			}
		}
	}
}

// race sends PUTs of one id to two nodes at once, races times: every node
// must end with the same definition, one of the two, within converge.
func (c *churn) race(t *testing.T, live []*node, races int) {
	t.Helper()
	for range races {
		id := fmt.Sprintf("c%d", c.n)
		c.n++
		a := live[c.rnd.IntN(len(live))]
		b := without(live, a)[c.rnd.IntN(len(live)-1)]
		urls := [2]string{c.newURL(), c.newURL()}
		var wg sync.WaitGroup
		codes := [2]int{}
		for i, n := range []*node{a, b} {
			wg.Go(func() { codes[i] = n.do(t, http.MethodPut, "/admin/resources/"+id, definition(urls[i])).StatusCode })
		}
		wg.Wait()
		for i, code := range codes {
			if code != http.StatusCreated && code != http.StatusOK {
				t.Fatalf("racing PUT %d of %s: %d", i, id, code)
			}
		}
		deadline := time.Now().Add(converge)
		for {
			var got []string
			for _, n := range live {
				got = append(got, adminURL(t, n, id))
			}
			same := got[0] == urls[0] || got[0] == urls[1]
			for _, g := range got {
				same = same && g == got[0]
			}
			if same {
				c.defs[id] = got[0]
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("racing PUTs of %s through %s and %s: nodes poll %q %v later, want one of %q everywhere", id, a.id, b.id, got, converge, urls)
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// outage stops the database for down while the nodes run, and checks what
// they answer meanwhile: each feed in rendered (path → ETag, rendered on
// every node just before) from its cache with its ETag (and 304 to a
// conditional request), a feed never rendered 503 with Retry-After,
// /readyz a short reason without the database's names, an admin PUT 503;
// never 500, each answer within 10 s. It returns when the database is back
// and every node is ready again, with the times of the stop and restart.
func outage(t *testing.T, srv *pgtest.Server, nodes []*node, rendered map[string]string, down time.Duration) (stopped, started time.Time) {
	t.Helper()
	stopped = time.Now()
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	check := func(n *node, method, path, body, header string, want ...int) response {
		t.Helper()
		start := time.Now()
		r := n.doWith(t, method, path, body, header)
		if took := time.Since(start); took > 10*time.Second {
			t.Errorf("database down, %s %s on %s took %v", method, path, n.id, took)
		}
		for _, w := range want {
			if r.StatusCode == w {
				return r
			}
		}
		t.Errorf("database down, %s %s on %s: %d, want %v\n%s", method, path, n.id, r.StatusCode, want, r.body)
		return r
	}
	for _, n := range nodes {
		for path, etag := range rendered {
			if r := check(n, http.MethodGet, path, "", "", http.StatusOK); r.StatusCode == http.StatusOK && r.etag != etag {
				t.Errorf("database down, %s on %s: ETag %s, want the one rendered before (%s)", path, n.id, r.etag, etag)
			}
			check(n, http.MethodGet, path, "", "If-None-Match: "+etag, http.StatusNotModified)
		}
		r := check(n, http.MethodGet, "/resources/r1?type=rss1&max=7", "", "", http.StatusServiceUnavailable)
		if r.retryAfter == "" {
			t.Errorf("database down, a feed never rendered on %s: 503 without Retry-After", n.id)
		}
		r = check(n, http.MethodGet, "/readyz", "", "", http.StatusServiceUnavailable)
		if !strings.Contains(r.body, "store unreachable") || strings.Contains(r.body, "postgres") || strings.Contains(r.body, "pgtest") {
			t.Errorf("database down, /readyz on %s: %s; want a short reason without the database's names", n.id, r.body)
		}
		check(n, http.MethodPut, "/admin/resources/during-outage", definition("http://127.0.0.1:9/x"), "", http.StatusServiceUnavailable)
	}
	time.Sleep(time.Until(stopped.Add(down))) // the database stays down that long
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	started = time.Now()
	for _, n := range nodes {
		deadline := time.Now().Add(30 * time.Second)
		for n.doWith(t, http.MethodGet, "/readyz", "", "").StatusCode != http.StatusOK {
			if time.Now().After(deadline) {
				t.Fatalf("%s not ready 30 s after the database came back", n.id)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return stopped, started
}
