package cluster

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mmcdole/gofeed"

	"github.com/dynamo-rss/dynamo/storage/postgres/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// Scenario parameters: 200 pages polled every 3 s by three nodes, each page
// changing every 7 s; the poll timeout is 2 s, so a dead node's leases
// expire within 4 s.
const (
	pages       = 200
	interval    = 3 * time.Second
	pollTimeout = 2 * time.Second
	changeEvery = 7 * time.Second
	phase       = 10 * time.Second // each of: all up, one dead, rejoined, after the database's restart
	adminToken  = "cluster-test-token"
	churnRounds = 15              // registry changes through random nodes, in each phase
	races       = 5               // concurrent PUTs of one id through two nodes
	outageFor   = 5 * time.Second // how long the database is down
)

// TestThreeNodes runs three nodes on one database against a logging origin,
// changes the registry through random nodes (registrations, redefinitions,
// deletions, racing PUTs of one id), kills one node with SIGKILL while it
// polls, restarts it, stops the database for a while and starts it again,
// and checks read-your-writes on the node that answered each change and
// convergence on the others, that no page was polled twice within its
// interval (a registration's first poll included), that every change
// fetched by a live node was stored exactly once, that the survivors took
// the dead node's pages over, that the restarted node polls again, what
// every node answers while the database is down, and that every node
// serves the same feeds.
func TestThreeNodes(t *testing.T) {
	if testing.Short() {
		t.Skip("several processes over 30 s; not in -short")
	}
	srv := pgtest.NewServer(t) // its own server: the test stops it
	dsn := srv.DSN()
	bin := buildDynamo(t)
	org := newOrigin(t)

	dir := t.TempDir()
	if d := os.Getenv("DYNAMO_CLUSTER_DIR"); d != "" { // to read the nodes' logs after a run
		dir = d
	}
	nodes := map[string]*node{}
	for _, id := range []string{"n1", "n2", "n3"} {
		nodes[id] = startNode(t, bin, dir, id, dsn)
	}
	// Register the pages on one node; every node sees the registry. The
	// node that answered knows each at once.
	for i := range pages {
		body := fmt.Sprintf(`{"url": %q, "policy": {"kind": "flat", "interval": "3s"}}`, org.url(i))
		id := "r" + strconv.Itoa(i)
		resp := nodes["n1"].do(t, http.MethodPut, "/admin/resources/"+id, body)
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("register r%d: %d", i, resp.StatusCode)
		}
		if got := adminURL(t, nodes["n1"], id); got != org.url(i) {
			t.Fatalf("read your writes: n1 answered 201 for %s, then polls %q", id, got)
		}
	}
	time.Sleep(phase)
	ch := newChurn(org, pages)
	all := func() []*node { return []*node{nodes["n1"], nodes["n2"], nodes["n3"]} }
	ch.run(t, all(), churnRounds)

	// Kill n2 while one of its requests is in flight at the origin: the
	// origin holds the next one until the kill closes its connection.
	victim := nodes["n2"]
	select {
	case <-org.holdNext("n2"):
	case <-time.After(10 * time.Second):
		t.Fatal("n2 sent no request within 10 s")
	}
	killedAt := time.Now()
	if err := victim.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = victim.cmd.Wait()
	t.Logf("n2 killed at %s, mid-poll", killedAt.Format(time.TimeOnly))
	ch.run(t, []*node{nodes["n1"], nodes["n3"]}, churnRounds)
	time.Sleep(time.Until(killedAt.Add(phase)))

	rejoinedAt := time.Now()
	nodes["n2"] = startNode(t, bin, dir, "n2", dsn)
	ch.run(t, all(), churnRounds)
	ch.race(t, all(), races)
	time.Sleep(time.Until(rejoinedAt.Add(phase)))

	// The database goes away and comes back.
	rendered := map[string]string{}
	for _, path := range []string{"/resources/r0?type=atom", "/resources/r5?max=3", "/resources?type=json"} {
		var etag string
		for _, n := range all() {
			r := n.do(t, http.MethodGet, path, "")
			if r.StatusCode != http.StatusOK {
				t.Fatalf("GET %s on %s: %d", path, n.id, r.StatusCode)
			}
			if etag == "" || r.etag == etag {
				etag = r.etag
			} else {
				etag = "" // a version stored meanwhile: not this path
				break
			}
		}
		if etag != "" {
			rendered[path] = etag
		}
	}
	dbStopped, dbStarted := outage(t, srv, all(), rendered, outageFor)
	t.Logf("database down from %s to %s", dbStopped.Format(time.TimeOnly), dbStarted.Format(time.TimeOnly))
	ch.run(t, all(), churnRounds)
	time.Sleep(time.Until(dbStarted.Add(phase)))
	// 5. Every node serves the same feed, with the same ETag.
	for p := 0; p < pages; p += 10 {
		path := fmt.Sprintf("/resources/r%d?type=atom", p)
		for attempt := 1; ; attempt++ {
			var bodies, etags []string
			for _, id := range []string{"n1", "n2", "n3"} {
				r := nodes[id].do(t, http.MethodGet, path, "")
				bodies, etags = append(bodies, r.body), append(etags, r.etag)
			}
			if bodies[0] == bodies[1] && bodies[1] == bodies[2] && etags[0] == etags[1] && etags[1] == etags[2] {
				break
			}
			if attempt == 3 { // a new version may land between two requests; not three times
				t.Errorf("%s differs between nodes: ETags %v\nn1:\n%s\nn3:\n%s", path, etags, bodies[0], bodies[2])
				break
			}
		}
	}
	// A version fetched is stored once its poll commits; on a starved
	// machine that can take longer than an interval, so wait (a bounded
	// while) until every change fetched before the cut-off is there.
	end := time.Now()
	mustStore := func(r request) bool {
		lost := r.node == "n2" && r.at.After(killedAt.Add(-pollTimeout)) && r.at.Before(rejoinedAt)
		// A poll that fetched before the database stopped may not have
		// committed: it is lost, and its page polled again later.
		lost = lost || r.at.After(dbStopped.Add(-pollTimeout-time.Second)) && r.at.Before(dbStarted)
		return !lost && !r.at.After(end.Add(-2*interval)) // else a poll the kill or the stop may have cut short
	}
	var stored map[int][]int
	for deadline := end.Add(time.Minute); ; time.Sleep(500 * time.Millisecond) {
		stored = storedMarkers(t, nodes["n1"])
		missing := 0
		for _, r := range org.requests() {
			if mustStore(r) && !slices.Contains(stored[r.page], r.marker) {
				missing++
			}
		}
		if missing == 0 || time.Now().After(deadline) {
			break
		}
	}
	for _, n := range nodes {
		n.stop(t)
	}
	org.close()

	log := org.requests()
	t.Logf("%d requests to the origin", len(log))
	byPage := map[int][]request{}
	for _, r := range log {
		byPage[r.page] = append(byPage[r.page], r)
	}

	// 1. No page polled twice within its interval (a killed poll is
	// retried only after its lease expired).
	const slack = 500 * time.Millisecond
	for p, rs := range byPage {
		for i := 1; i < len(rs); i++ {
			if gap := rs[i].at.Sub(rs[i-1].at); gap < interval-slack {
				t.Errorf("page %d polled by %s then %s only %v apart", p, rs[i-1].node, rs[i].node, gap)
			}
		}
	}

	// 2. Every change fetched by a live node is stored, once.
	for p := range pages {
		got := stored[p]
		if !slices.IsSorted(got) || len(slices.Compact(slices.Clone(got))) != len(got) {
			t.Errorf("page %d: stored versions %v are not each change once, in order", p, got)
		}
		for _, r := range byPage[p] {
			if !mustStore(r) {
				continue
			}
			if !slices.Contains(got, r.marker) {
				t.Errorf("page %d: version %d fetched by %s at %s was not stored (stored %v)", p, r.marker, r.node, r.at.Format(time.TimeOnly), got)
			}
		}
	}

	// 3. The survivors take n2's pages over within 2 × timeout + interval
	// (the registered pages; the churn's may have been deleted meanwhile).
	for p, rs := range byPage {
		if p >= pages {
			continue
		}
		var lastN2 *request
		for i := range rs {
			if rs[i].node == "n2" && rs[i].at.Before(killedAt) {
				lastN2 = &rs[i]
			}
		}
		if lastN2 == nil {
			continue
		}
		taken := false
		for _, r := range rs {
			if r.at.After(killedAt) && r.at.Before(killedAt.Add(2*pollTimeout+interval+2*time.Second)) && r.node != "n2" {
				taken = true
			}
		}
		if !taken {
			t.Errorf("page %d: last polled by n2 at %s, not taken over after the kill", p, lastN2.at.Format(time.TimeOnly))
		}
	}

	// 4. The restarted node polls again.
	rejoined := 0
	for _, r := range log {
		if r.node == "n2" && r.at.After(rejoinedAt) {
			rejoined++
		}
	}
	if rejoined == 0 {
		t.Error("n2 polled nothing after it restarted")
	}
	// Work was shared before the kill.
	share := map[string]int{}
	for _, r := range log {
		if r.at.Before(killedAt) {
			share[r.node]++
		}
	}
	t.Logf("polls before the kill by node: %v; n2 after rejoining: %d", share, rejoined)
	if len(share) != 3 {
		t.Errorf("polls before the kill by node: %v, want all three", share)
	}
}

// storedMarkers reads every page's stored versions through a node's feeds
// and returns the origin's version markers in storage order.
func storedMarkers(t *testing.T, n *node) map[int][]int {
	t.Helper()
	out := map[int][]int{}
	marker := regexp.MustCompile(`version (\d+) of page`)
	for p := range pages {
		resp := n.do(t, http.MethodGet, fmt.Sprintf("/resources/r%d?max=1000&type=json", p), "")
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("feed of r%d: %d", p, resp.StatusCode)
		}
		feed, err := gofeed.NewParser().ParseString(resp.body)
		if err != nil {
			t.Fatalf("feed of r%d: %v", p, err)
		}
		for _, it := range slices.Backward(feed.Items) { // oldest first
			if m := marker.FindStringSubmatch(it.Title); m != nil {
				v, _ := strconv.Atoi(m[1])
				out[p] = append(out[p], v)
			}
		}
	}
	return out
}

// buildDynamo builds the binary under test.
func buildDynamo(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "dynamo")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/dynamo-rss/dynamo/cmd/dynamo")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// node is one running dynamo process.
type node struct {
	id   string
	cmd  *exec.Cmd
	base string
}

func startNode(t *testing.T, bin, dir, id, dsn string) *node {
	t.Helper()
	cfg := filepath.Join(dir, id+".yaml")
	yaml := fmt.Sprintf(`listen: "127.0.0.1:0"
public_url: "http://feeds.test"
node_id: %s
storage: {driver: postgres, dsn: %q, path: %q}
admin: {token: %q}
log: {level: debug, format: json}
poller:
  workers: 8
  timeout: %s
  per_host_interval: 0s
  robots: false
  allow_private: true
  user_agent: "dynamo-cluster-test (%s)"
`, id, dsn, filepath.Join(dir, "data"), adminToken, pollTimeout, id)
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	logFile, err := os.Create(filepath.Join(dir, fmt.Sprintf("%s-%d.log", id, time.Now().UnixNano())))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", "--config", cfg)
	cmd.Stderr = logFile
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	n := &node{id: id, cmd: cmd}
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if u, ok := strings.CutPrefix(sc.Text(), "dynamo: listening on "); ok {
			n.base = u
			break
		}
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	if n.base == "" {
		_ = cmd.Wait()
		b, _ := os.ReadFile(logFile.Name())
		t.Fatalf("node %s did not start:\n%s", id, b)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return n
}

func (n *node) stop(t *testing.T) {
	t.Helper()
	if n.cmd.ProcessState != nil {
		return
	}
	_ = n.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- n.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("node %s exited: %v", n.id, err)
		}
	case <-time.After(30 * time.Second):
		t.Errorf("node %s did not stop within 30 s", n.id)
		_ = n.cmd.Process.Kill()
	}
}

type response struct {
	StatusCode             int
	body, etag, retryAfter string
}

func (n *node) do(t *testing.T, method, path, body string) response {
	t.Helper()
	return n.doWith(t, method, path, body, "")
}

// doWith is do with one more request header, "Name: value" ("" for none).
func (n *node) doWith(t *testing.T, method, path, body, header string) response {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, n.base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+adminToken)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if k, v, ok := strings.Cut(header, ": "); ok {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s on %s: %v", method, path, n.id, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 500 && resp.StatusCode != http.StatusServiceUnavailable {
		t.Logf("%s %s on %s: %d %s", method, path, n.id, resp.StatusCode, b)
	}
	return response{StatusCode: resp.StatusCode, body: string(b), etag: resp.Header.Get("ETag"), retryAfter: resp.Header.Get("Retry-After")}
}

// origin serves pages /p/{i} whose content changes every changeEvery
// (staggered by page), answers each request after a short delay (so nodes
// are often mid-poll), and logs every request with the polling node.
type origin struct {
	srv *http.Server
	ln  net.Listener
	t0  time.Time

	mu       sync.Mutex
	log      []request
	inflight map[string]int
	hold     map[string]chan struct{} // node → closed when its next request is held
}

type request struct {
	at     time.Time
	page   int
	node   string
	marker int // the page version served
}

var uaNode = regexp.MustCompile(`\((n\d)\)`)

func newOrigin(t *testing.T) *origin {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	o := &origin{ln: ln, t0: time.Now(), inflight: map[string]int{}, hold: map[string]chan struct{}{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /p/{i}", func(w http.ResponseWriter, r *http.Request) {
		p, err := strconv.Atoi(r.PathValue("i"))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		nodeID := ""
		if m := uaNode.FindStringSubmatch(r.UserAgent()); m != nil {
			nodeID = m[1]
		}
		now := time.Now()
		// Page p changes every changeEvery, staggered by p.
		v := int((now.Sub(o.t0) + time.Duration(p)*changeEvery/pages) / changeEvery)
		o.mu.Lock()
		o.log = append(o.log, request{at: now, page: p, node: nodeID, marker: v})
		o.inflight[nodeID]++
		held := o.hold[nodeID]
		delete(o.hold, nodeID)
		o.mu.Unlock()
		defer func() { o.mu.Lock(); o.inflight[nodeID]--; o.mu.Unlock() }()
		if held != nil { // in flight until the node goes away
			close(held)
			<-r.Context().Done()
			return
		}
		select { // nodes are mid-poll a good part of the time
		case <-time.After(150 * time.Millisecond):
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		var b bytes.Buffer
		fmt.Fprintf(&b, `<html><head><title>Page %d</title></head><body>
<!-- <channel:title> -->Page %d<!-- </channel:title> -->
<!-- <item:title index="1" id="v%d"> -->version %d of page %d<!-- </item:title> -->
<!-- <item:description index="1"> -->Changed at step %d.<!-- </item:description> -->
</body></html>`, p, p, v, v, p, v)
		_, _ = w.Write(b.Bytes())
	})
	o.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = o.srv.Serve(ln) }()
	t.Cleanup(o.close)
	return o
}

func (o *origin) url(p int) string { return fmt.Sprintf("http://%s/p/%d", o.ln.Addr(), p) }

// holdNext makes the origin hold the next request of nodeID, unanswered,
// until its connection closes (the node killed); the channel is closed
// once the request is held, so the node is then certainly mid-poll.
func (o *origin) holdNext(nodeID string) <-chan struct{} {
	o.mu.Lock()
	defer o.mu.Unlock()
	c := make(chan struct{})
	o.hold[nodeID] = c
	return c
}

func (o *origin) requests() []request {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.log)
}

func (o *origin) close() { _ = o.srv.Close() }
